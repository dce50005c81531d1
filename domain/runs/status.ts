import { assertNever } from '../../lib/assert.js'
import type { BatchState, BatchTaskState } from '../../lib/batch/port.js'

/** A run's statuses, and the one rule of how they move. */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]
export const TERMINAL: ReadonlySet<RunStatus> = new Set<RunStatus>(['succeeded', 'failed', 'cancelled'])

const RANK: Record<RunStatus, number> = { queued: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2 }

/**
 * The next status when `incoming` is reported for a run in `current`, or undefined when the event
 * changes nothing: status only moves forward, a terminal status is final, and duplicate, late or
 * out-of-order events are no-ops (events are at-least-once and unordered).
 */
export function advance(current: RunStatus, incoming: RunStatus): RunStatus | undefined {
  if (TERMINAL.has(current)) return undefined
  return RANK[incoming] > RANK[current] ? incoming : undefined
}

/**
 * Batch job states in run terms, in one exhaustive place. Deletion and cancellation say nothing
 * about the run: the platform cancels runs itself (DELETE /runs/{id}) before it deletes their jobs.
 */
export function fromBatchState(s: BatchState): RunStatus | undefined {
  switch (s) {
    case 'QUEUED':
    case 'SCHEDULED':
      return 'queued'
    case 'RUNNING':
      return 'running'
    case 'SUCCEEDED':
      return 'succeeded'
    case 'FAILED':
      return 'failed'
    case 'DELETION_IN_PROGRESS':
    case 'CANCELLATION_IN_PROGRESS':
    case 'CANCELLED':
    case 'STATE_UNSPECIFIED':
      return undefined
    default:
      return assertNever(s)
  }
}

/**
 * What a task's new state says about its job's run, in one exhaustive place. A task waits or runs
 * only while its job does; but a task's end is not its job's (another task may still run, a
 * lifecycle policy may retry it), so for those the job's own state decides: `job`.
 */
export function fromTaskState(s: BatchTaskState): RunStatus | 'job' | undefined {
  switch (s) {
    case 'PENDING':
    case 'ASSIGNED':
      return 'queued'
    case 'RUNNING':
      return 'running'
    case 'SUCCEEDED':
    case 'FAILED':
    case 'UNEXECUTED':
      return 'job'
    case 'STATE_UNSPECIFIED':
      return undefined
    default:
      return assertNever(s)
  }
}
