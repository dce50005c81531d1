import type { RunStatus } from '../runs.js'
import type { BatchState } from './port.js'

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`)
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

export const BATCH_STATES: readonly BatchState[] = [
  'STATE_UNSPECIFIED',
  'QUEUED',
  'SCHEDULED',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'DELETION_IN_PROGRESS',
  'CANCELLATION_IN_PROGRESS',
  'CANCELLED',
]

export function isBatchState(s: string): s is BatchState {
  return (BATCH_STATES as readonly string[]).includes(s)
}
