import type { JobLogReader } from '../../lib/batch/logs.js'
import type { BatchBackend, BatchJobEvent, BatchJobView } from '../../lib/batch/port.js'
import type { Logger } from '../../lib/log.js'
import type { Queue } from '../../lib/queue.js'
import { RUN_REQUESTED } from './messages.js'
import { TERMINAL, type RunStatus } from './status.js'
import { outputLocation, type RunRecord, type RunStore } from './store.js'

/**
 * The steps of a run's life that both the compute service and the orchestrator take, written
 * once: dispatching a recorded run (publish run.requested, mark it published), settling it from
 * what its Batch job says, and releasing its job (delete it, mark it deleted).
 */

export interface DispatchDeps {
  runs: RunStore
  queue: Queue
  log: Logger
}

/** Why a run waits when its message could not be published. */
export const QUEUE_UNREACHABLE = 'waiting to be dispatched: the run queue could not be reached; retrying'

/**
 * Publishes run.requested for a recorded run and marks it published. A run that already has a
 * job was dispatched, whatever its record says about the message, so only the mark is written.
 * When publishing fails the run stays queued with a reason, and the reconciler publishes it again.
 */
export async function dispatchRun(deps: DispatchDeps, run: RunRecord): Promise<{ ok: true } | { ok: false; error: unknown }> {
  try {
    if (!run.job) await deps.queue.publish(RUN_REQUESTED, { run_id: run.id, project_id: run.project_id }, { run_id: run.id })
  } catch (error) {
    deps.log.warn('run.requested publish failed; the reconciler will publish it again', { run_id: run.id, error })
    await deps.runs
      .markDispatchProblem(run.id, QUEUE_UNREACHABLE)
      .catch((e: unknown) => deps.log.error('could not record the dispatch problem', { run_id: run.id, error: e }))
    return { ok: false, error }
  }
  try {
    await deps.runs.markPublished(run.id)
  } catch (error) {
    // The message is out; at worst the reconciler publishes it again and the orchestrator ignores the duplicate.
    deps.log.warn('could not mark the run published', { run_id: run.id, error })
  }
  return { ok: true }
}

/** Deletes the Batch job of a cancelled run and records that it is gone (a run without a job is only marked). */
export async function releaseJob(deps: { runs: RunStore; batch: Pick<BatchBackend, 'deleteJob'>; log: Logger }, run: RunRecord): Promise<void> {
  if (run.job) await deps.batch.deleteJob(run.job.name, deps.log)
  await deps.runs.markJobDeleted(run.id)
}

export const ERROR_MESSAGE_MAX = 2000
/** How many of the failing task's last stderr lines a failed run's error message ends with. */
export const STDERR_TAIL_LINES = 20
const STDERR_HEADING = '\nLast lines of stderr:\n'

/** The event that says why a job failed: the one naming an exit code or error, else its last FAILED event, else its last event. */
export function failureEventOf(job: BatchJobView | undefined): BatchJobEvent | undefined {
  const events = job?.events ?? []
  return (
    [...events].reverse().find((e) => e.newState === 'FAILED' && /exit code|error|failed/i.test(e.description)) ??
    [...events].reverse().find((e) => e.newState === 'FAILED') ??
    events.at(-1)
  )
}

/**
 * The user-facing error of a failed job: the failure event, which names the exit code, then the
 * last lines the failing task wrote to stderr. Within ERROR_MESSAGE_MAX characters, the end of
 * stderr is what is kept (that is where a tool says what went wrong): the description is cut
 * first, then the start of the stderr tail.
 */
export function errorMessageOf(job: BatchJobView | undefined, stderr?: string): string {
  const failure = failureEventOf(job)
  const head = failure?.description ? `the Batch job failed: ${failure.description}` : 'the Batch job failed without an error message'
  const tail = (failure?.stderr ?? stderr ?? '').trimEnd()
  if (!tail) return cut(head, ERROR_MESSAGE_MAX)
  const room = ERROR_MESSAGE_MAX - STDERR_HEADING.length
  const keptTail = tail.length > room / 2 ? `…${tail.slice(tail.length - Math.floor(room / 2) + 1)}` : tail
  return `${cut(head, room - keptTail.length)}${STDERR_HEADING}${keptTail}`
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** The failing task's last stderr lines from the job's log, when the failure event does not carry them (Cloud Batch). */
async function stderrTail(deps: { logs: JobLogReader; log: Logger }, job: BatchJobView | undefined, run: RunRecord): Promise<string | undefined> {
  if (!job || failureEventOf(job)?.stderr) return undefined
  try {
    const lines = await deps.logs.tail(
      { name: job.name, uid: job.uid, created: (run.job?.created_at ?? run.created).toDate() },
      STDERR_TAIL_LINES,
      'stderr',
      deps.log,
    )
    return lines.map((l) => l.text).join('\n')
  } catch (error) {
    // The error message is still worth having without the tail (the log may be unreadable: permissions, an outage).
    deps.log.warn("could not read the failed job's stderr for its error message", { job: job.name, error })
    return undefined
  }
}

/**
 * Moves a run forward to where its job is; status only ever moves forward, so replays and
 * reorders are harmless. Events are unordered: a job's end can arrive before its start, and the
 * job's own history says when it started, so the run keeps a start time and a duration.
 * `jobRef` names the job, for a run that has not recorded it yet.
 */
export async function settleFromJob(
  deps: { runs: RunStore; batch: Pick<BatchBackend, 'getJob'>; logs: JobLogReader; log: Logger },
  run: RunRecord,
  status: RunStatus,
  at: Date,
  job: BatchJobView | undefined,
  source: string,
  jobRef?: { name: string; uid?: string },
) {
  const ref = run.job ? undefined : (jobRef ?? (job ? { name: job.name, uid: job.uid } : undefined))
  if (status === 'failed' && !job && run.job) job = await deps.batch.getJob(run.job.name, deps.log)
  const startedAt = job && [...job.events].reverse().find((e) => e.newState === 'RUNNING')?.at
  if (TERMINAL.has(status) && !run.started && startedAt) {
    await deps.runs.applyJobState(run.id, { status: 'running', at: startedAt, source, job: ref })
  }
  return deps.runs.applyJobState(run.id, {
    status,
    at,
    job: ref,
    ...(status === 'succeeded' ? { output: outputLocation(run.bucket_name, run.id) } : {}),
    ...(status === 'failed' ? { error_message: errorMessageOf(job, await stderrTail(deps, job, run)) } : {}),
    source,
  })
}
