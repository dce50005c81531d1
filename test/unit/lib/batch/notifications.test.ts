import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  jobOfTask,
  NOTIFICATION_ATTRIBUTES,
  notificationAttributes,
  readNotification,
  type BatchNotification,
} from '../../../../lib/batch/notifications.js'
import { BATCH_STATES, TASK_STATES } from '../../../../lib/batch/state.js'

/**
 * The attributes of the messages Cloud Batch publishes, as Google's "Monitor jobs using
 * notifications" page lists them (linked from https://cloud.google.com/batch/docs/enable-notifications):
 * a job-state message carries its job's name and UID, a task-state message its task's, and no job.
 * Written out here, apart from the module, so that changing the module alone cannot pass.
 */
const DOCUMENTED = {
  JOB_STATE_CHANGED: ['JobName', 'JobUID', 'NewJobState', 'Region', 'Type'],
  TASK_STATE_CHANGED: ['NewTaskState', 'Region', 'TaskName', 'TaskUID', 'Type'],
}

const JOB = 'projects/lab-prod/locations/europe-west4/jobs/run-3f0e2c1a-0b6d-4c57-9a31-2f1e8d7c6b5a'

const segment = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
const jobName = fc.tuple(segment, segment, segment).map(([p, l, j]) => `projects/${p}/locations/${l}/jobs/${j}`)
const notification: fc.Arbitrary<BatchNotification> = fc.oneof(
  fc.record({
    type: fc.constant('JOB_STATE_CHANGED' as const),
    jobName,
    jobUid: segment,
    state: fc.constantFrom(...BATCH_STATES),
    region: segment,
  }),
  fc.record({
    type: fc.constant('TASK_STATE_CHANGED' as const),
    taskName: fc.tuple(jobName, segment, fc.nat({ max: 999 })).map(([job, group, n]) => `${job}/taskGroups/${group}/tasks/${n}`),
    taskUid: segment,
    state: fc.constantFrom(...TASK_STATES),
    region: segment,
  }),
)

describe('the Batch notification attributes', () => {
  it('are, for each message type, the set Cloud Batch documents', () => {
    expect(Object.keys(NOTIFICATION_ATTRIBUTES).sort()).toEqual(Object.keys(DOCUMENTED).sort())
    for (const [type, attributes] of Object.entries(NOTIFICATION_ATTRIBUTES)) {
      expect([...attributes].sort(), type).toEqual(DOCUMENTED[type as keyof typeof DOCUMENTED])
    }
  })

  it('are exactly those of its type on every message built, no more', () => {
    fc.assert(
      fc.property(notification, (n) => {
        expect(Object.keys(notificationAttributes(n)).sort()).toEqual(DOCUMENTED[n.type])
      }),
    )
  })

  it('read back as the job they concern, for a task message from the task name alone', () => {
    fc.assert(
      fc.property(notification, (n) => {
        const read = readNotification(notificationAttributes(n))
        expect(read.ok).toBe(true)
        if (!read.ok) return
        expect(read.notification.type).toBe(n.type)
        expect(read.notification.state).toBe(n.state)
        expect(read.notification.jobName).toBe(n.type === 'JOB_STATE_CHANGED' ? n.jobName : n.taskName.split('/taskGroups/')[0])
      }),
    )
  })
})

describe('readNotification', () => {
  it('reads a task message as Cloud Batch sends it, without JobName', () => {
    const read = readNotification({
      Type: 'TASK_STATE_CHANGED',
      TaskName: `${JOB}/taskGroups/group0/tasks/0`,
      TaskUID: 'run-3f0e2c1a-0b6d-4c57-9-1a2b-group0-0',
      NewTaskState: 'FAILED',
      Region: 'europe-west4',
    })
    expect(read).toEqual({
      ok: true,
      notification: {
        type: 'TASK_STATE_CHANGED',
        taskName: `${JOB}/taskGroups/group0/tasks/0`,
        taskUid: 'run-3f0e2c1a-0b6d-4c57-9-1a2b-group0-0',
        jobName: JOB,
        state: 'FAILED',
      },
    })
  })

  it('leaves attributes it does not know alone', () => {
    const read = readNotification({ Type: 'JOB_STATE_CHANGED', JobName: JOB, NewJobState: 'RUNNING', SomethingNew: 'x' })
    expect(read).toEqual({ ok: true, notification: { type: 'JOB_STATE_CHANGED', jobName: JOB, state: 'RUNNING' } })
  })

  it.each<[string, Record<string, string>, RegExp]>([
    ['no attributes', {}, /^Type \(absent\)/],
    ['an unknown type', { Type: 'JOB_DELETED', JobName: JOB }, /^Type JOB_DELETED/],
    ['a job message without its job', { Type: 'JOB_STATE_CHANGED', NewJobState: 'RUNNING' }, /without JobName/],
    ['a job message with a task state', { Type: 'JOB_STATE_CHANGED', JobName: JOB, NewJobState: 'PENDING' }, /NewJobState PENDING/],
    ['a task message naming only the job', { Type: 'TASK_STATE_CHANGED', JobName: JOB, NewTaskState: 'FAILED' }, /TaskName \(absent\)/],
    ['a task message naming a job as its task', { Type: 'TASK_STATE_CHANGED', TaskName: JOB, NewTaskState: 'FAILED' }, /TaskName projects/],
    [
      'a task message with a job state',
      { Type: 'TASK_STATE_CHANGED', TaskName: `${JOB}/taskGroups/g/tasks/0`, NewTaskState: 'QUEUED' },
      /NewTaskState QUEUED/,
    ],
  ])('says what is wrong with %s', (_, attributes, problem) => {
    const read = readNotification(attributes)
    expect(read.ok).toBe(false)
    if (!read.ok) expect(read.problem).toMatch(problem)
  })
})

describe('jobOfTask', () => {
  it.each([
    [`${JOB}/taskGroups/group0/tasks/0`, JOB],
    [`${JOB}/taskGroups/group0/tasks/17`, JOB],
    [JOB, undefined],
    [`${JOB}/taskGroups/group0`, undefined],
    [`${JOB}/taskGroups/group0/tasks/0/extra`, undefined],
    ['tasks/0', undefined],
  ])('%s belongs to %s', (task, job) => {
    expect(jobOfTask(task)).toBe(job)
  })
})
