import type { BatchState, BatchTaskState } from './port.js'

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

/** Every state a Batch task reports (google.cloud.batch.v1.TaskStatus.State), in enum order. */
export const TASK_STATES: readonly BatchTaskState[] = ['STATE_UNSPECIFIED', 'PENDING', 'ASSIGNED', 'RUNNING', 'FAILED', 'SUCCEEDED', 'UNEXECUTED']

export function isTaskState(s: string): s is BatchTaskState {
  return (TASK_STATES as readonly string[]).includes(s)
}
