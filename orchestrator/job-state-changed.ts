import type { CloudEvent } from '@google-cloud/functions-framework'
import type { BatchJobView } from '../lib/batch/port.js'
import { isBatchState } from '../lib/batch/state.js'
import { runIdOfJob } from '../domain/runs/batch-job.js'
import { settleFromJob } from '../domain/runs/lifecycle.js'
import { advance, fromBatchState, TERMINAL } from '../domain/runs/status.js'
import type { OrchestratorDeps } from './deps.js'
import { eventTime, MessagePublishedData } from './pubsub-event.js'
import { afterRunSucceeded } from './run-succeeded.js'

const SOURCE = 'batch'

/** A Batch job notification (JOB_STATE_CHANGED, or TASK_STATE_CHANGED to FAILED) → the run's status. */
export async function onJobStateChanged(deps: OrchestratorDeps, event: CloudEvent<unknown>): Promise<void> {
  const { runs, batch, log, clock } = deps
  const envelope = MessagePublishedData.safeParse(event.data)
  const attributes = envelope.success ? (envelope.data.message.attributes ?? {}) : {}
  const jobName = attributes.JobName
  if (!envelope.success || !jobName || !attributes.Type) {
    log.warn('job state: malformed notification acknowledged', { event_id: event.id })
    return
  }
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

  let state = attributes.NewJobState
  if (attributes.Type === 'TASK_STATE_CHANGED') {
    // A task event says something happened; the job says what it means for the run.
    job ??= await batch.getJob(jobName, log)
    state = job?.state
  }
  if (!state || !isBatchState(state)) {
    log.warn('job state: unknown state acknowledged', { run_id: runId, state })
    return
  }
  const status = fromBatchState(state)
  // Nothing to apply (a QUEUED or SCHEDULED job, a duplicate, a late event): status only moves forward,
  // so this read settles it without a transaction.
  if (!status || !advance(run.status, status)) return
  if (status === 'failed' || (TERMINAL.has(status) && !run.started)) job ??= await batch.getJob(jobName, log)
  const result = await settleFromJob(deps, run, status, at, job, SOURCE, { name: jobName, uid: attributes.JobUID })
  log.info('job state applied', { run_id: runId, state, status, changed: result.changed })
  if (result.changed && result.run?.ingestion_pending) await afterRunSucceeded(deps, result.run)
}
