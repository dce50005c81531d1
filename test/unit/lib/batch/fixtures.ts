import { randomUUID } from 'node:crypto'
import type { RunForJob, JobSettings } from '../../../../domain/runs/batch-job.js'
import type { PipelineExecution } from '../../../../domain/pipelines/model.js'

export const SETTINGS: JobSettings = { gcpProject: 'lab-prod', region: 'europe-west4', jobStatusTopic: 'batch-job-status' }

export const EXECUTIONS = {
  container_entrypoint: {
    type: 'container_entrypoint',
    container: 'ghcr.io/lab/nextflow-minimal:1.0.0',
    entrypoint: '/bin/sh',
    commands: ['-c', 'run-minimal --sample "$PARAM_SAMPLE_ID" --out "$PLATFORM_OUTPUT_DIR"'],
    resources: { cpu_milli: 2000, memory_mib: 4096 },
  },
  direct_nextflow: {
    type: 'direct_nextflow',
    container: 'nextflow/nextflow:24.10.0',
    workflow: { url: 'nf-core/demo', revision: '1.0.1' },
    default_profile: 'test,docker',
    resources: { cpu_milli: 4000, memory_mib: 8192, max_run_duration_seconds: 86400 },
  },
  direct_wdl: {
    type: 'direct_wdl',
    container: 'broadinstitute/cromwell:87',
    workflow: { url: 'https://example.org/wdl/hereditary.wdl' },
    resources: { cpu_milli: 4000, memory_mib: 16384 },
  },
} satisfies Record<string, PipelineExecution>

export function runFor(execution: PipelineExecution, over: Partial<RunForJob> = {}): RunForJob {
  const slug = over.pipeline_slug ?? `${execution.type.replace(/_/g, '-')}-test`
  return {
    id: randomUUID(),
    name: `${slug}-20261122T061530Z`,
    project_id: randomUUID(),
    pipeline_slug: slug,
    pipeline_version: '1.2.0',
    pipeline_type: execution.type,
    execution,
    params: { sample_id: 'S1', fastq: ['gs://lab-bucket/in/S1_R1.fq.gz', 'gs://lab-bucket/in/S1_R2.fq.gz'] },
    profile: execution.default_profile,
    bucket_name: 'lab-bucket',
    service_account_email: 'runner@lab-prod.iam.gserviceaccount.com',
    ...over,
  }
}
