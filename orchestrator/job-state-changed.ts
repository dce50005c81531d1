import type { CloudEvent } from '@google-cloud/functions-framework'
import type { BatchJobView } from '../lib/batch/port.js'
import { readNotification } from '../lib/batch/notifications.js'
import { runIdOfJob } from '../domain/runs/batch-job.js'
import { settleFromJob } from '../domain/runs/lifecycle.js'
import { advance, fromBatchState, fromTaskState, TERMINAL, type RunStatus } from '../domain/runs/status.js'
import type { OrchestratorDeps } from './deps.js'
import { eventTime, MessagePublishedData } from './pubsub-event.js'
import { afterRunSucceeded } from './run-succeeded.js'

const SOURCE = 'batch'

/**
 * A Batch notification (lib/batch/notifications.ts) → the run's status. A job-state message names
 * its job and its new state; a task-state message names only its task, whose job is the prefix of
 * the task's name: a task that waits or runs says so of its run, and a task's end is read as what
 * its job's own state says.
 */
export async function onJobStateChanged(deps: OrchestratorDeps, event: CloudEvent<unknown>): Promise<void> {
  const { runs, batch, log, clock } = deps
  const envelope = MessagePublishedData.safeParse(event.data)
  const read = envelope.success ? readNotification(envelope.data.message.attributes ?? {}) : { ok: false as const, problem: 'not a Pub/Sub message' }
  if (!envelope.success || !read.ok) {
    log.warn('job state: malformed notification acknowledged', { event_id: event.id, problem: read.ok ? undefined : read.problem })
    return
  }
  const note = read.notification
  const { jobName } = note
  let runId = runIdOfJob({ name: jobName })
  let job: BatchJobView | undefined
  if (!runId) {
    job = await batch.getJob(jobName, log)
    runId = job ? runIdOfJob(job) : undefined
    if (!runId) return // not a platform job
  }
  const run = await runs.getById(runId)
  if (!run || TERMINAL.has(run.status)) return
  const at = eventTime(event, envelope.data.message, clock.now())

  let status: RunStatus | undefined
  if (note.type === 'JOB_STATE_CHANGED') {
    status = fromBatchState(note.state)
  } else {
    const meaning = fromTaskState(note.state)
    if (meaning === 'job') {
      job ??= await batch.getJob(jobName, log)
      status = job ? fromBatchState(job.state) : undefined
    } else {
      status = meaning
    }
  }
  // Nothing to apply (a waiting job, a duplicate, a late event): status only moves forward, so this
  // read settles it without a transaction.
  if (!status || !advance(run.status, status)) return
  if (status === 'failed' || (TERMINAL.has(status) && !run.started)) job ??= await batch.getJob(jobName, log)
  const uid = note.type === 'JOB_STATE_CHANGED' ? note.jobUid : job?.uid
  const result = await settleFromJob(deps, run, status, at, job, SOURCE, { name: jobName, uid })
  log.info('job state applied', { run_id: runId, type: note.type, state: note.state, status, changed: result.changed })
  if (result.changed && result.run?.ingestion_pending) await afterRunSucceeded(deps, result.run)
}
