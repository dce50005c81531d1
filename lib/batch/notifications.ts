import type { BatchState, BatchTaskState } from './port.js'
import { isBatchState, isTaskState } from './state.js'

/**
 * The Pub/Sub messages Cloud Batch publishes for a job's `notifications` (Google's "Monitor jobs
 * using notifications"), written down once: the local executor builds its messages here and the
 * orchestrator reads them here, so the two cannot drift apart, and a unit test holds these sets
 * against the documented ones.
 *
 * A job-state message names its job; a task-state message names only its task
 * (`projects/P/locations/L/jobs/J/taskGroups/G/tasks/N`), so the job is the task name's prefix.
 */
export const NOTIFICATION_ATTRIBUTES = {
  JOB_STATE_CHANGED: ['Type', 'JobName', 'JobUID', 'NewJobState', 'Region'],
  TASK_STATE_CHANGED: ['Type', 'TaskName', 'TaskUID', 'NewTaskState', 'Region'],
} as const

export interface JobStateChanged {
  type: 'JOB_STATE_CHANGED'
  jobName: string
  jobUid: string
  state: BatchState
  region: string
}

export interface TaskStateChanged {
  type: 'TASK_STATE_CHANGED'
  taskName: string
  taskUid: string
  state: BatchTaskState
  region: string
}

export type BatchNotification = JobStateChanged | TaskStateChanged

/** A notification as the orchestrator reads it: the job it concerns, whichever kind it is. */
export type ReadNotification = (
  (Omit<JobStateChanged, 'jobUid' | 'region'> & { jobUid?: string }) | (Omit<TaskStateChanged, 'taskUid' | 'region'> & { taskUid?: string })
) & { jobName: string }

/** The attributes Cloud Batch sets on the message of a notification: exactly those, no more. */
export function notificationAttributes(n: BatchNotification): Record<string, string> {
  switch (n.type) {
    case 'JOB_STATE_CHANGED':
      return { Type: n.type, JobName: n.jobName, JobUID: n.jobUid, NewJobState: n.state, Region: n.region }
    case 'TASK_STATE_CHANGED':
      return { Type: n.type, TaskName: n.taskName, TaskUID: n.taskUid, NewTaskState: n.state, Region: n.region }
  }
}

const TASK_NAME = /^(projects\/[^/]+\/locations\/[^/]+\/jobs\/[^/]+)\/taskGroups\/[^/]+\/tasks\/[^/]+$/

/** The job a task belongs to, from the task's resource name; undefined when it is not one. */
export function jobOfTask(taskName: string): string | undefined {
  return TASK_NAME.exec(taskName)?.[1]
}

/**
 * Reads the attributes of a message on the job-status topic, or says what is wrong with them.
 * Only what the run needs is required (the type, the job or task name, the new state); the UIDs
 * and the region are read when present, and attributes Batch may add later are left alone.
 */
export function readNotification(attributes: Record<string, string>): { ok: true; notification: ReadNotification } | { ok: false; problem: string } {
  const type = attributes.Type
  if (type === 'JOB_STATE_CHANGED') {
    const { JobName: jobName, NewJobState: state } = attributes
    if (!jobName) return { ok: false, problem: 'a job-state notification without JobName' }
    if (!state || !isBatchState(state)) return { ok: false, problem: `NewJobState ${state ?? '(absent)'} is no job state` }
    return { ok: true, notification: { type, jobName, state, ...(attributes.JobUID ? { jobUid: attributes.JobUID } : {}) } }
  }
  if (type === 'TASK_STATE_CHANGED') {
    const { TaskName: taskName, NewTaskState: state } = attributes
    const jobName = taskName ? jobOfTask(taskName) : undefined
    if (!taskName || !jobName) return { ok: false, problem: `TaskName ${taskName ?? '(absent)'} is no task name` }
    if (!state || !isTaskState(state)) return { ok: false, problem: `NewTaskState ${state ?? '(absent)'} is no task state` }
    return { ok: true, notification: { type, taskName, jobName, state, ...(attributes.TaskUID ? { taskUid: attributes.TaskUID } : {}) } }
  }
  return { ok: false, problem: `Type ${type ?? '(absent)'} is no notification type` }
}
