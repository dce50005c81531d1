import type { RunRecord } from '../../../domain/runs/store.js'
import {
  engineVersionOf,
  failureOfRun,
  tagsToWes,
  WES_WORKFLOW_TYPES,
  wesState,
  wesTime,
  workflowUrlOf,
  type WesState,
} from '../../../domain/runs/wes.js'

/**
 * The bodies of the WES 1.1 answers (GA4GH's RunSummary, RunLog, TaskLog, ServiceInfo), built
 * from the platform's records. `base` is the service's public address, which the addresses they
 * hand out start with.
 */

/** Where WES is served, below the service's address. */
export const WES_PREFIX = '/ga4gh/wes/v1'

const time = (t: RunRecord['started']) => (t ? wesTime(t.toDate()) : undefined)

/** A finished run's exit code: 0 on success, the failing task's when its job reported one. */
function exitCodeOf(run: RunRecord): number | undefined {
  if (run.status === 'succeeded') return 0
  return run.status === 'failed' ? failureOfRun(run).exit_code : undefined
}

/** The run's own logs in the platform API (GET /api/v1/runs/{id}/logs), one stream each. */
const logsUrl = (base: string, run: RunRecord, stream: 'stdout' | 'stderr') => `${base}/api/v1/runs/${run.id}/logs?stream=${stream}`

export function runSummary(run: RunRecord) {
  return { run_id: run.id, state: wesState(run), start_time: time(run.started), end_time: time(run.finished), tags: tagsToWes(run.tags) }
}

export const runStatus = (run: RunRecord): { run_id: string; state: WesState } => ({ run_id: run.id, state: wesState(run) })

/** The request the run answers, as WES would have sent it (a run submitted through the platform API reads the same). */
function runRequest(run: RunRecord) {
  const wes = WES_WORKFLOW_TYPES[run.pipeline_type]
  return {
    workflow_url: workflowUrlOf(run),
    workflow_type: wes.type,
    workflow_type_version: wes.versions[0]!,
    workflow_params: run.params,
    tags: tagsToWes(run.tags),
    workflow_engine: wes.engine,
    workflow_engine_version: engineVersionOf(run.execution.container),
    workflow_engine_parameters: run.profile ? { profile: run.profile } : {},
  }
}

/** What the platform says about a run beside its state: why it failed, why it still waits. */
const systemLogs = (run: RunRecord) => [run.error_message, run.status_reason].filter((m): m is string => !!m)

export function runLog(run: RunRecord, base: string) {
  return {
    run_id: run.id,
    request: runRequest(run),
    state: wesState(run),
    run_log: {
      name: run.name,
      start_time: time(run.started),
      end_time: time(run.finished),
      stdout: logsUrl(base, run, 'stdout'),
      stderr: logsUrl(base, run, 'stderr'),
      exit_code: exitCodeOf(run),
      system_logs: systemLogs(run),
    },
    task_logs_url: `${base}${WES_PREFIX}/runs/${run.id}/tasks`,
    // WES's outputs are named by the workflow; the platform knows the one folder every run writes to.
    outputs: run.output ? { output: run.output } : {},
  }
}

/**
 * A run's tasks: its Batch job runs one task (index 0, Batch's BATCH_TASK_INDEX), the pipeline's
 * engine or container, which runs the workflow's own steps inside it. None before the job exists.
 */
export function taskLogs(run: RunRecord, base: string) {
  if (!run.job) return []
  return [
    {
      id: '0',
      name: run.pipeline_slug,
      start_time: time(run.started),
      end_time: time(run.finished),
      stdout: logsUrl(base, run, 'stdout'),
      stderr: logsUrl(base, run, 'stderr'),
      exit_code: exitCodeOf(run),
      // The Batch task's resource name, for an operator looking it up in Google Cloud.
      system_logs: [`${run.job.name}/taskGroups/group0/tasks/0`, ...systemLogs(run)],
    },
  ]
}
