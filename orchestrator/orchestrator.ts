import type { CloudEvent } from '@google-cloud/functions-framework'
import { z } from 'zod'
import { buildRunJob, JobBuildError, type JobSettings } from '../lib/batch/jobs.js'
import { BatchError, runIdOfJob, type BatchBackend, type BatchJobView, type BatchProblem } from '../lib/batch/port.js'
import { fromBatchState, isBatchState } from '../lib/batch/state.js'
import { toBatchError } from '../lib/batch/cloud.js'
import type { Clock } from '../lib/clock.js'
import type { Config } from '../lib/config.js'
import type { Logger } from '../lib/log.js'
import type { PipelineStore } from '../lib/pipelines.js'
import { MESSAGES, type Queue } from '../lib/queue.js'
import { outputLocation, TERMINAL, type RunRecord, type RunStatus, type RunStore } from '../lib/runs.js'

export interface OrchestratorDeps {
  runs: RunStore
  /** Not read when dispatching: a run carries the execution spec it was submitted with. */
  pipelines: PipelineStore
  batch: BatchBackend
  queue: Queue
  log: Logger
  clock: Clock
  config: Config
  /** How long a queued or running run may go without news before the reconciler asks Batch (default 10 minutes). */
  staleAfterMs?: number
}

/** The shape of a Pub/Sub message in a CloudEvent (google.cloud.pubsub.topic.v1.messagePublished). */
export const MessagePublishedData = z.object({
  message: z.object({
    data: z.string().optional(),
    attributes: z.record(z.string(), z.string()).optional(),
    messageId: z.string().optional(),
    publishTime: z.string().optional(),
  }),
  subscription: z.string().optional(),
})
export type MessagePublishedData = z.infer<typeof MessagePublishedData>

export interface ReconcileReport {
  republished: string[]
  settled: Array<{ run_id: string; status: RunStatus }>
  jobs_deleted: string[]
  errors: Array<{ run_id: string; step: 'republish' | 'settle' | 'delete_job'; error: string }>
}

/** Runs not yet published are left this long to the compute service's own publish before the reconciler steps in. */
export const UNPUBLISHED_GRACE_MS = 60_000
export const DEFAULT_STALE_AFTER_MS = 10 * 60_000
const RECONCILE_BATCH = 200
const SOURCE = 'batch'
const ERROR_MESSAGE_MAX = 2000

const RunRequested = MESSAGES['run.requested']

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

/** The user-facing error of a failed job: the failure event, which names the exit code (and, locally, the end of stderr). */
export function errorMessageOf(job: BatchJobView | undefined): string {
  const events = job?.events ?? []
  const failure =
    [...events].reverse().find((e) => e.newState === 'FAILED' && /exit code|error|failed/i.test(e.description)) ??
    [...events].reverse().find((e) => e.newState === 'FAILED') ??
    events.at(-1)
  const text = failure?.description ? `the Batch job failed: ${failure.description}` : 'the Batch job failed without an error message'
  return text.length > ERROR_MESSAGE_MAX ? `${text.slice(0, ERROR_MESSAGE_MAX - 1)}…` : text
}

function decodeJson(data: string | undefined): unknown {
  if (!data) return undefined
  try {
    return JSON.parse(Buffer.from(data, 'base64').toString('utf8'))
  } catch {
    return undefined
  }
}

function eventTime(event: CloudEvent<unknown>, message: MessagePublishedData['message'], fallback: Date): Date {
  const t = new Date(message.publishTime ?? event.time ?? '')
  return Number.isNaN(t.getTime()) ? fallback : t
}

export function createOrchestrator(deps: OrchestratorDeps) {
  const { runs, batch, queue, log, clock, config } = deps
  const settings: JobSettings = { gcpProject: config.gcpProject, region: config.batch.region, jobStatusTopic: config.topics.jobStatus }

  async function deleteJobOf(run: RunRecord): Promise<void> {
    if (run.job) await batch.deleteJob(run.job.name)
    await runs.markJobDeleted(run.id)
  }

  /** run.requested → the run's Batch job, once, however often the message comes. */
  async function onRunRequested(event: CloudEvent<unknown>): Promise<void> {
    const envelope = MessagePublishedData.safeParse(event.data)
    const body = envelope.success ? RunRequested.safeParse(decodeJson(envelope.data.message.data)) : undefined
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
      request = buildRunJob(settings, run)
    } catch (err) {
      if (!(err instanceof JobBuildError)) throw err
      await runs.applyJobState(run.id, { status: 'failed', at: clock.now(), error_message: err.message, source: 'orchestrator' })
      return
    }

    let created
    try {
      created = await batch.createJob(request)
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
      await deleteJobOf(recorded).catch((err: unknown) =>
        log.warn('could not delete the job of a cancelled run; the reconciler retries', { run_id, error: err }),
      )
    }
  }

  /** Moves a run forward to where its job is; status only ever moves forward, so replays and reorders are harmless. */
  async function settleFromJob(run: RunRecord, status: RunStatus, at: Date, job: BatchJobView | undefined, source: string) {
    // Events are unordered: a job's end can arrive before its start. The job's own history says
    // when it started, so the run keeps a start time and a duration.
    const startedAt = job && [...job.events].reverse().find((e) => e.newState === 'RUNNING')?.at
    if (TERMINAL.has(status) && !run.started && startedAt) await runs.applyJobState(run.id, { status: 'running', at: startedAt, source })
    return runs.applyJobState(run.id, {
      status,
      at,
      ...(status === 'succeeded' ? { output: outputLocation(run.bucket_name, run.id) } : {}),
      ...(status === 'failed' ? { error_message: errorMessageOf(job ?? (run.job ? await batch.getJob(run.job.name) : undefined)) } : {}),
      source,
    })
  }

  /** A Batch job notification (JOB_STATE_CHANGED, or TASK_STATE_CHANGED to FAILED) → the run's status. */
  async function onJobStateChanged(event: CloudEvent<unknown>): Promise<void> {
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
      job = await batch.getJob(jobName)
      runId = job ? runIdOfJob(job) : undefined
      if (!runId) return // not a platform job
    }
    const run = await runs.getById(runId)
    if (!run || TERMINAL.has(run.status)) return
    const at = eventTime(event, envelope.data.message, clock.now())

    let state = attributes.NewJobState
    if (attributes.Type === 'TASK_STATE_CHANGED') {
      // A task event says something happened; the job says what it means for the run.
      job ??= await batch.getJob(jobName)
      state = job?.state
    }
    if (!state || !isBatchState(state)) {
      log.warn('job state: unknown state acknowledged', { run_id: runId, state })
      return
    }
    const status = fromBatchState(state)
    if (!status) return
    if (status === 'failed' || (TERMINAL.has(status) && !run.started)) job ??= await batch.getJob(jobName)
    const result = await settleFromJob(run, status, at, job, SOURCE)
    log.info('job state applied', { run_id: runId, state, status, changed: result.changed })
  }

  /**
   * Settles what events never did: republishes runs recorded but never published, asks Batch
   * about runs without news for a while, and finishes deleting the jobs of cancelled runs.
   */
  async function reconcile(): Promise<ReconcileReport> {
    const report: ReconcileReport = { republished: [], settled: [], jobs_deleted: [], errors: [] }
    const now = clock.now()
    const failed = (run_id: string, step: ReconcileReport['errors'][number]['step'], err: unknown) => {
      log.warn(`reconcile: ${step} failed`, { run_id, error: err })
      report.errors.push({ run_id, step, error: err instanceof Error ? err.message : String(err) })
    }

    const staleAfter = deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS
    // Never published; or published long ago with no job to show for it (the message was lost).
    const undispatched = new Map<string, RunRecord>()
    for (const run of await runs.listUnpublished(new Date(now.getTime() - UNPUBLISHED_GRACE_MS), RECONCILE_BATCH)) undispatched.set(run.id, run)
    for (const run of await runs.listStalledDispatch(new Date(now.getTime() - staleAfter), RECONCILE_BATCH)) undispatched.set(run.id, run)
    for (const run of undispatched.values()) {
      try {
        // A run with a job was dispatched already, whatever the record says about its message.
        if (!run.job) await queue.publish('run.requested', { run_id: run.id, project_id: run.project_id })
        await runs.markPublished(run.id)
        report.republished.push(run.id)
      } catch (err) {
        failed(run.id, 'republish', err)
      }
    }

    for (const run of await runs.listInFlight(new Date(now.getTime() - staleAfter), RECONCILE_BATCH)) {
      try {
        const job = run.job ? await batch.getJob(run.job.name) : undefined
        const status = job ? fromBatchState(job.state) : undefined
        let result
        if (job && status) {
          const endedAt = [...job.events].reverse().find((e) => e.newState === job.state)?.at
          result = await settleFromJob(run, status, endedAt ?? now, job, 'reconciler')
        } else if (!job || ['DELETION_IN_PROGRESS', 'CANCELLATION_IN_PROGRESS', 'CANCELLED'].includes(job.state)) {
          // The job went away without the platform cancelling the run: the run can never finish otherwise.
          const error_message = job
            ? `the Batch job was cancelled or deleted outside the platform (state ${job.state})`
            : 'the Batch job no longer exists: it was deleted outside the platform'
          result = await runs.applyJobState(run.id, { status: 'failed', at: now, error_message, source: 'reconciler' })
        }
        if (result?.changed && result.run) report.settled.push({ run_id: run.id, status: result.run.status })
        // Still in flight: checked again after another stale window, behind the runs not yet checked.
        else await runs.markChecked(run.id)
      } catch (err) {
        failed(run.id, 'settle', err)
      }
    }

    for (const run of await runs.listCancelledWithLiveJob(RECONCILE_BATCH)) {
      try {
        await deleteJobOf(run)
        report.jobs_deleted.push(run.id)
      } catch (err) {
        failed(run.id, 'delete_job', err)
      }
    }
    log.info('reconcile done', {
      republished: report.republished.length,
      settled: report.settled.length,
      jobs_deleted: report.jobs_deleted.length,
      errors: report.errors.length,
    })
    return report
  }

  return { onRunRequested, onJobStateChanged, reconcile }
}

export type Orchestrator = ReturnType<typeof createOrchestrator>
