import { SYSTEM_ACTOR } from '../../lib/audit.js'
import { pipelineId, PLATFORM_SCOPE, type PipelineDefinition } from './model.js'
import { PipelineStore } from './store.js'
import { canonicalJson } from '../../lib/canonical.js'
import { TRIO_LOCAL_SCRIPT } from './trio-local.js'

/**
 * The platform-wide catalogue: the four pipelines the spec pre-registers, and two that really run
 * on the host under the local suite's executor (hello-local succeeds with a result file,
 * fail-local fails with a message, steps-local runs four steps that a resumed relaunch reuses, trio-local writes an annotated trio VCF from an order's samplesheet). Several versions of nextflow-minimal and hereditary-mock
 * show that "latest" is the highest semantic version, not the newest document.
 *
 * Container jobs see the run through the environment of lib/batch/jobs.ts (runEnvironment,
 * paramEnvironment): PLATFORM_RUN_ID, PLATFORM_OUTPUT_DIR (the run's output folder
 * gs://<bucket>/runs/<id>/ as mounted, ending in '/'), PLATFORM_PARAMS_FILE (the params as JSON,
 * written before the pipeline starts) and PARAM_<NAME> per param (strings as they are, other
 * values as JSON).
 */

/**
 * steps-local: each step writes its output into the session's work folder (PLATFORM_WORK_DIR),
 * whole or not at all (a temporary file renamed), and a resumed run (PLATFORM_RESUME set) reuses
 * the output of each step that has one, like a task found in Nextflow's cache.
 */
const STEPS_LOCAL_SCRIPT = [
  'set -eu',
  'mkdir -p "$PLATFORM_WORK_DIR" "$PLATFORM_OUTPUT_DIR"',
  'prev=""',
  'for step in 1 2 3 4; do',
  '  out="${PLATFORM_WORK_DIR}step-$step.out"',
  '  if [ -n "${PLATFORM_RESUME:-}" ] && [ -f "$out" ]; then',
  '    echo "steps-local: step $step reused from the work folder"',
  '    echo "$step reused" >> "${PLATFORM_OUTPUT_DIR}steps.txt"',
  '  else',
  '    echo "steps-local: step $step running"',
  '    if [ "${PARAM_FAIL_AT:-0}" = "$step" ]; then echo "steps-local: step $step failed (fail_at=$step)" >&2; exit 1; fi',
  '    { if [ -n "$prev" ]; then cat "$prev"; fi; echo "step $step by run $PLATFORM_RUN_ID"; } > "$out.tmp"',
  '    mv "$out.tmp" "$out"',
  '    echo "$step ran" >> "${PLATFORM_OUTPUT_DIR}steps.txt"',
  '  fi',
  '  prev="$out"',
  'done',
  'cp "$prev" "${PLATFORM_OUTPUT_DIR}result.txt"',
].join('\n')

const NEXTFLOW_IMAGE = 'nextflow/nextflow:24.10.0'
const CROMWELL_IMAGE = 'broadinstitute/cromwell:87'

const nextflowMinimal = (version: string, notes: string): PipelineDefinition => ({
  slug: 'nextflow-minimal',
  name: 'Nextflow minimal (tumor FASTQ smoke test)',
  type: 'container_entrypoint',
  container: NEXTFLOW_IMAGE,
  version,
  tags: ['nextflow', 'smoke-test', 'somatic'],
  description: `A minimal Nextflow pipeline run through the Nextflow container with a custom entrypoint: checks a pair of tumor FASTQ files and writes a per-sample summary. ${notes}`,
  inputs: [
    { name: 'nf_profile_name', type: 'string', required: true, description: 'Nextflow profile to run with (e.g. google, test)' },
    { name: 'analysis_name', type: 'string', required: true, description: 'Name of the analysis, used in output names' },
    { name: 'sample_id', type: 'string', required: true, description: 'Identifier of the tumor sample' },
    {
      name: 'fastq_tumor',
      type: 'array',
      items: 'storage_path',
      min_items: 2,
      max_items: 2,
      required: true,
      description: 'Tumor reads as two storage paths: R1 and R2 of the pair',
    },
  ],
  additional_params: false,
  entrypoint: '/bin/bash',
  commands: [
    '-c',
    [
      'set -euo pipefail',
      "cat > main.nf <<'NF'",
      'params.sample_id = null',
      'params.analysis_name = null',
      'params.fastq_tumor = []',
      'process SUMMARY {',
      '  publishDir params.outdir, mode: "copy"',
      '  output: path "${params.analysis_name}.${params.sample_id}.summary.txt"',
      '  script: "echo sample=${params.sample_id} reads=${params.fastq_tumor.join(",")} > ${params.analysis_name}.${params.sample_id}.summary.txt"',
      '}',
      'workflow { SUMMARY() }',
      'NF',
      'nextflow run main.nf -profile "$PARAM_NF_PROFILE_NAME" -params-file "$PLATFORM_PARAMS_FILE" --outdir "${PLATFORM_OUTPUT_DIR}results"',
    ].join('\n'),
  ],
  default_profile: 'google',
  resources: { cpu_milli: 2000, memory_mib: 4096, max_run_duration_seconds: 3600 },
})

const HEREDITARY_WDL = `version 1.0

workflow hereditary_mock {
  input {
    String case_id
    Array[File] child_fastq
    Array[File]? mother_fastq
    Array[File]? father_fastq
    String? patient_sex
    Int? patient_age_years
    Array[String] hpo_terms = []
  }
  call call_variants { input: case_id = case_id, reads = child_fastq, hpo_terms = hpo_terms }
  output {
    File vcf = call_variants.vcf
    File report = call_variants.report
  }
}

task call_variants {
  input {
    String case_id
    Array[File] reads
    Array[String] hpo_terms
  }
  command <<<
    printf '##fileformat=VCFv4.2\\n#CHROM\\tPOS\\tID\\tREF\\tALT\\tQUAL\\tFILTER\\tINFO\\n' > ~{case_id}.vcf
    echo "case ~{case_id}: mock analysis of ~{length(reads)} FASTQ files; HPO ~{sep=',' hpo_terms}" > ~{case_id}.report.txt
  >>>
  output {
    File vcf = "~{case_id}.vcf"
    File report = "~{case_id}.report.txt"
  }
  runtime { docker: "ubuntu:22.04" cpu: 1 memory: "2 GB" }
}
`

const hereditaryMock = (version: string, notes: string): PipelineDefinition => ({
  slug: 'hereditary-mock',
  name: 'Hereditary analysis (mock trio)',
  type: 'direct_wdl',
  container: CROMWELL_IMAGE,
  version,
  tags: ['wdl', 'germline', 'hereditary', 'trio', 'mock'],
  description: `A mock hereditary (germline) analysis in WDL, run by Cromwell: takes the proband's paired FASTQ files, optionally the parents', and the patient's phenotype, and writes an empty VCF and a report. ${notes}`,
  inputs: [
    { name: 'case_id', type: 'string', required: true, description: 'Case identifier (WDL String)' },
    {
      name: 'child_fastq',
      type: 'array',
      items: 'file',
      min_items: 2,
      max_items: 2,
      required: true,
      description: "Proband's reads: R1 and R2 (WDL Array[File])",
    },
    { name: 'mother_fastq', type: 'array', items: 'file', min_items: 2, max_items: 2, required: false, description: "Mother's reads: R1 and R2" },
    { name: 'father_fastq', type: 'array', items: 'file', min_items: 2, max_items: 2, required: false, description: "Father's reads: R1 and R2" },
    { name: 'patient_sex', type: 'string', required: false, description: 'Patient metadata: sex', enum: ['female', 'male', 'unknown'] },
    { name: 'patient_age_years', type: 'integer', required: false, description: 'Patient metadata: age in years' },
    { name: 'hpo_terms', type: 'array', items: 'string', required: false, description: 'Phenotype as HPO terms (e.g. HP:0001250)' },
  ],
  additional_params: false,
  workflow: { source: HEREDITARY_WDL },
  resources: { cpu_milli: 4000, memory_mib: 8192, max_run_duration_seconds: 6 * 3600 },
})

export const PLATFORM_PIPELINES: PipelineDefinition[] = [
  nextflowMinimal('1.2.0', 'Version 1.2.0.'),
  nextflowMinimal('1.10.0', 'Version 1.10.0: publishes the summary with the analysis name.'),
  {
    slug: 'wdl-minimal',
    name: 'WDL minimal (Cromwell smoke test)',
    type: 'direct_wdl',
    container: CROMWELL_IMAGE,
    version: '1.0.0',
    tags: ['wdl', 'smoke-test'],
    description: 'The smallest WDL workflow: Cromwell fetches, validates and runs one task that writes a greeting. Takes no inputs.',
    inputs: [],
    additional_params: false,
    workflow: {
      source: `version 1.0

workflow minimal {
  call hello
  output { File greeting = hello.out }
}

task hello {
  command <<< echo "hello from wdl-minimal" > greeting.txt >>>
  output { File out = "greeting.txt" }
  runtime { docker: "ubuntu:22.04" }
}
`,
    },
    resources: { cpu_milli: 1000, memory_mib: 2048, max_run_duration_seconds: 1800 },
  },
  hereditaryMock('0.9.0', 'Version 0.9.0.'),
  hereditaryMock('1.0.0', 'Version 1.0.0: adds patient age.'),
  {
    slug: 'nfcore-demo',
    name: 'nf-core/demo',
    type: 'direct_nextflow',
    container: NEXTFLOW_IMAGE,
    version: '1.0.1',
    tags: ['nextflow', 'nf-core', 'demo'],
    description:
      'The nf-core/demo pipeline (FastQC, seqtk trim, MultiQC) run by the Nextflow engine. Its inputs are not listed: every param is passed to Nextflow as --<name> <value> (input, outdir, …).',
    inputs: [],
    additional_params: true,
    workflow: { url: 'https://github.com/nf-core/demo', revision: '1.0.1' },
    default_profile: 'test,google',
    resources: { cpu_milli: 2000, memory_mib: 4096, max_run_duration_seconds: 4 * 3600 },
  },
  {
    slug: 'hello-local',
    name: 'Hello (runs on the local suite)',
    type: 'container_entrypoint',
    container: 'docker.io/library/busybox:1.36',
    version: '1.0.0',
    tags: ['local', 'demo', 'smoke-test'],
    description: 'Writes hello.txt (a greeting naming the run) into the run output folder, then succeeds. Runs on the host under the local suite.',
    inputs: [{ name: 'greeting', type: 'string', required: false, description: 'Text to write', default: 'hello' }],
    additional_params: false,
    entrypoint: '/bin/sh',
    commands: [
      '-c',
      'set -eu; mkdir -p "$PLATFORM_OUTPUT_DIR"; echo "${PARAM_GREETING:-hello} from run $PLATFORM_RUN_ID" > "${PLATFORM_OUTPUT_DIR}hello.txt"; echo "hello-local: wrote ${PLATFORM_OUTPUT_DIR}hello.txt"',
    ],
    resources: { cpu_milli: 250, memory_mib: 128, max_run_duration_seconds: 300 },
  },
  {
    slug: 'fail-local',
    name: 'Always fails (runs on the local suite)',
    type: 'container_entrypoint',
    container: 'docker.io/library/busybox:1.36',
    version: '1.0.0',
    tags: ['local', 'demo'],
    description: 'Exits with status 3 and a clear message on stderr, to show how a failed run looks. Runs on the host under the local suite.',
    inputs: [],
    additional_params: false,
    entrypoint: '/bin/sh',
    commands: ['-c', 'echo "fail-local: this pipeline always fails (exit status 3), to show a failed run" >&2; exit 3'],
    resources: { cpu_milli: 250, memory_mib: 128, max_run_duration_seconds: 300 },
  },
  {
    slug: 'steps-local',
    name: 'Four steps, resumable (runs on the local suite)',
    type: 'container_entrypoint',
    container: 'docker.io/library/busybox:1.36',
    version: '1.0.0',
    tags: ['local', 'demo', 'resume'],
    description:
      "Runs four steps, each reading the one before from the work folder, and records in steps.txt which ran and which were reused; fail_at makes a step fail. A resumed relaunch (POST /runs/{id}/relaunch with resume: true) reuses the steps its first run completed, as Nextflow's -resume does. Runs on the host under the local suite.",
    inputs: [{ name: 'fail_at', type: 'integer', required: false, description: 'The step (1 to 4) that fails; 0: none', default: 0 }],
    additional_params: false,
    entrypoint: '/bin/sh',
    commands: ['-c', STEPS_LOCAL_SCRIPT],
    resources: { cpu_milli: 250, memory_mib: 128, max_run_duration_seconds: 300 },
  },
  {
    slug: 'trio-local',
    name: 'Trio calls, annotated (runs on the local suite)',
    type: 'container_entrypoint',
    container: 'docker.io/library/node:20-alpine',
    version: '1.0.0',
    tags: ['local', 'demo', 'germline', 'trio'],
    description:
      "Given an order's samplesheet (GET /orders/{id}/samplesheet, saved in the project bucket), writes <case>.vep.vcf.gz to the run output folder: a synthetic, VEP-annotated GRCh38 trio VCF of the family's samples (a few hundred records over every chromosome, some multi-allelic, a de novo missense in SCN2A in the proband). Run with the order linked, its variants are ingested into the order's variant cache. Runs on the host under the local suite.",
    inputs: [
      { name: 'samplesheet', type: 'file', required: true, description: "The order's samplesheet (nf-core/raredisease CSV) in the project bucket" },
      { name: 'records', type: 'integer', required: false, description: 'How many VCF records to write (10 to 100000)', default: 300 },
    ],
    additional_params: false,
    entrypoint: 'node',
    commands: ['-e', TRIO_LOCAL_SCRIPT],
    resources: { cpu_milli: 500, memory_mib: 256, max_run_duration_seconds: 600 },
  },
]

/**
 * Registers the platform catalogue. Idempotent: a pipeline already stored as defined is left
 * alone (no write, no audit event); one that differs (an older seed) is overwritten in place.
 */
export async function seedPipelines(
  store: PipelineStore,
  definitions: PipelineDefinition[] = PLATFORM_PIPELINES,
): Promise<{ created: number; updated: number }> {
  let created = 0
  let updated = 0
  for (const d of definitions) {
    const existing = await store.getById(pipelineId(PLATFORM_SCOPE, d.slug, d.version))
    if (existing) {
      const stored = Object.fromEntries(Object.keys(d).map((k) => [k, existing[k as keyof typeof existing]]))
      if (canonicalJson(stored) === canonicalJson(d)) continue
    }
    await store.create(SYSTEM_ACTOR, { scope: PLATFORM_SCOPE, definition: d, force: true, createdBy: 'platform' })
    if (existing) updated += 1
    else created += 1
  }
  return { created, updated }
}
