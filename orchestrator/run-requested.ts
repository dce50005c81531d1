import type { CloudEvent } from '@google-cloud/functions-framework'
import { toBatchError } from '../lib/batch/cloud.js'
import { BatchError, type BatchProblem } from '../lib/batch/port.js'
import { buildRunJob, JobBuildError, type JobSettings } from '../domain/runs/batch-job.js'
import { releaseJob, settleFromJob } from '../domain/runs/lifecycle.js'
import { RUN_REQUESTED } from '../domain/runs/messages.js'
import { fromBatchState, TERMINAL } from '../domain/runs/status.js'
import type { RunRecord } from '../domain/runs/store.js'
import type { OrchestratorDeps } from './deps.js'
import { decodeJson, MessagePublishedData } from './pubsub-event.js'

/** Why a run is still queued, in words a user can act on. */
export function dispatchReason(problem: BatchProblem, detail: string, run: Pick<RunRecord, 'service_account_email'>, region: string): string {
  switch (problem) {
    case 'quota':
      return `waiting for Batch quota in ${region}; the job is retried automatically (${detail})`
    case 'permissions':
      return `Batch refused the job for lack of permissions: check that the project's service account ${run.service_account_email} may run Batch jobs and that the platform may act as it (${detail})`
    case 'connectivity':
      return `cannot reach Cloud Batch (connectivity); the job is retried automatically (${detail})`
    case 'invalid':
    case 'unknown':
      return `could not create the Batch job; it is retried automatically (${detail})`
  }
}

export const jobSettings = (deps: Pick<OrchestratorDeps, 'config'>): JobSettings => ({
  gcpProject: deps.config.gcpProject,
  region: deps.config.batch.region,
  jobStatusTopic: deps.config.topics.jobStatus,
})

/** run.requested → the run's Batch job, once, however often the message comes. */
export async function onRunRequested(deps: OrchestratorDeps, event: CloudEvent<unknown>): Promise<void> {
  const { runs, batch, log, clock, config } = deps
  const envelope = MessagePublishedData.safeParse(event.data)
  const body = envelope.success ? RUN_REQUESTED.schema.safeParse(decodeJson(envelope.data.message.data)) : undefined
  if (!envelope.success || !body?.success) {
    // Redelivering a message that can never be read would only fill the logs: acknowledge it.
    log.warn('run.requested: malformed message acknowledged', {
      event_id: event.id,
      problem: envelope.success ? body?.error?.message : envelope.error.message,
    })
    return
  }
  const { run_id, project_id } = body.data
  const run = await runs.getById(run_id)
  if (!run || run.project_id !== project_id) {
    log.warn('run.requested: no such run', { run_id, project_id })
    return
  }
  if (TERMINAL.has(run.status) || run.job) return

  let request
  try {
    request = buildRunJob(jobSettings(deps), run)
  } catch (err) {
    if (!(err instanceof JobBuildError)) throw err
    await runs.applyJobState(run.id, { status: 'failed', at: clock.now(), error_message: err.message, source: 'orchestrator' })
    return
  }

  let created
  try {
    created = await batch.createJob(request, log)
  } catch (err) {
    const e = err instanceof BatchError ? err : toBatchError(err, 'create the Batch job')
    if (!e.retryable) {
      await runs.applyJobState(run.id, {
        status: 'failed',
        at: clock.now(),
        error_message: `Batch rejected the job: ${e.message}`,
        source: 'orchestrator',
      })
      return
    }
    await runs.markDispatchProblem(run.id, dispatchReason(e.problem, e.message, run, config.batch.region))
    // Pub/Sub redelivers with backoff: quota frees up, permissions get fixed, the network comes back.
    throw e
  }
  log.info('run.requested: job created', { run_id, job: created.name, already_existed: created.alreadyExisted })
  const recorded = await runs.recordJob(run.id, { name: created.name, uid: created.uid })
  if (recorded?.status === 'cancelled' && recorded.job_cleanup_pending) {
    // Cancelled while the job was being made: DELETE /runs found no job to delete.
    await releaseJob(deps, recorded).catch((err: unknown) =>
      log.warn('could not delete the job of a cancelled run; the reconciler retries', { run_id, error: err }),
    )
    return
  }
  if (created.alreadyExisted && recorded && !TERMINAL.has(recorded.status)) await catchUp(deps, recorded, created.name)
}

/**
 * A job made by an earlier delivery (or before a restart) may have moved on, or ended, while its
 * notifications went astray: the run takes its state from the job now rather than after the
 * reconciler's stale window. Later notifications are no-ops if this got there first, and the other way round.
 */
async function catchUp(deps: OrchestratorDeps, run: RunRecord, jobName: string) {
  const job = await deps.batch.getJob(jobName, deps.log)
  const status = job ? fromBatchState(job.state) : undefined
  if (!job || !status || status === 'queued') return
  const at = [...job.events].reverse().find((e) => e.newState === job.state)?.at ?? deps.clock.now()
  const result = await settleFromJob(deps, run, status, at, job, 'orchestrator')
  deps.log.info('run.requested: run caught up with its existing job', { run_id: run.id, state: job.state, changed: result.changed })
}
