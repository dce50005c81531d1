import type { BatchState } from './port.js'

/** Every state a Batch job reports (google.cloud.batch.v1.JobStatus.State). */
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
