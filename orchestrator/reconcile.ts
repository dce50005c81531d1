import { dispatchRun, releaseJob, settleFromJob } from '../domain/runs/lifecycle.js'
import { dispatchIngestion } from '../domain/variants/dispatch.js'
import { DEFAULT_TUNING } from '../domain/variants/ingest.js'
import { fromBatchState, type RunStatus } from '../domain/runs/status.js'
import type { RunRecord } from '../domain/runs/store.js'
import type { OrchestratorDeps } from './deps.js'
import { afterRunSucceeded } from './run-succeeded.js'

export interface ReconcileReport {
  republished: string[]
  settled: Array<{ run_id: string; status: RunStatus }>
  jobs_deleted: string[]
  /** Succeeded runs whose outputs were looked at for a VCF (their ingestion had not been requested). */
  runs_ingested: string[]
  /** Ingestions with steps left and no news, requested again (their runner died, or their message was lost). */
  ingestions_resumed: string[]
  errors: Array<{ run_id: string; step: 'republish' | 'settle' | 'delete_job' | 'ingest_run' | 'resume_ingestion'; error: string }>
}

/** Runs not yet published are left this long to the compute service's own publish before the reconciler steps in. */
export const UNPUBLISHED_GRACE_MS = 60_000
export const DEFAULT_STALE_AFTER_MS = 10 * 60_000
const RECONCILE_BATCH = 200
/** An ingestion whose record has not changed for this long has lost its runner: its lock's lease has run out by then. */
export const INGESTION_STALE_MS = DEFAULT_TUNING.leaseMs + 60_000

type Failed = (runId: string, step: ReconcileReport['errors'][number]['step'], err: unknown) => void

/**
 * Settles what events never did, in three sweeps: republishes runs recorded but never
 * dispatched, asks Batch about runs without news for a while, and finishes deleting the jobs of
 * cancelled runs. Each sweep is independent; a failure on one run is reported and the sweep goes on.
 */
export async function reconcile(deps: OrchestratorDeps): Promise<ReconcileReport> {
  const report: ReconcileReport = { republished: [], settled: [], jobs_deleted: [], runs_ingested: [], ingestions_resumed: [], errors: [] }
  const now = deps.clock.now()
  const failed: Failed = (run_id, step, err) => {
    deps.log.warn(`reconcile: ${step} failed`, { run_id, error: err })
    report.errors.push({ run_id, step, error: err instanceof Error ? err.message : String(err) })
  }
  report.republished = await republishUndispatched(deps, now, failed)
  report.settled = await settleStale(deps, now, failed)
  report.jobs_deleted = await releaseCancelledJobs(deps, failed)
  report.runs_ingested = await ingestSucceededRuns(deps, now, failed)
  report.ingestions_resumed = await resumeStalledIngestions(deps, now, failed)
  deps.log.info('reconcile done', {
    republished: report.republished.length,
    settled: report.settled.length,
    jobs_deleted: report.jobs_deleted.length,
    runs_ingested: report.runs_ingested.length,
    ingestions_resumed: report.ingestions_resumed.length,
    errors: report.errors.length,
  })
  return report
}

/** Never published; or published long ago with no job to show for it (the message was lost or dead-lettered). */
export async function republishUndispatched(deps: OrchestratorDeps, now: Date, failed: Failed): Promise<string[]> {
  const { runs } = deps
  const staleAfter = deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS
  const undispatched = new Map<string, RunRecord>()
  for (const run of await runs.listUnpublished(new Date(now.getTime() - UNPUBLISHED_GRACE_MS), RECONCILE_BATCH)) undispatched.set(run.id, run)
  for (const run of await runs.listStalledDispatch(new Date(now.getTime() - staleAfter), RECONCILE_BATCH)) undispatched.set(run.id, run)
  const republished: string[] = []
  for (const run of undispatched.values()) {
    const result = await dispatchRun(deps, run)
    if (result.ok) republished.push(run.id)
    else failed(run.id, 'republish', result.error)
  }
  return republished
}

/** Queued or running runs without news for the stale window: Batch says where their job is. */
export async function settleStale(deps: OrchestratorDeps, now: Date, failed: Failed): Promise<ReconcileReport['settled']> {
  const { runs, batch } = deps
  const staleAfter = deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS
  const settled: ReconcileReport['settled'] = []
  for (const run of await runs.listInFlight(new Date(now.getTime() - staleAfter), RECONCILE_BATCH)) {
    try {
      const job = run.job ? await batch.getJob(run.job.name) : undefined
      const status = job ? fromBatchState(job.state) : undefined
      let result
      if (job && status) {
        const endedAt = [...job.events].reverse().find((e) => e.newState === job.state)?.at
        result = await settleFromJob(deps, run, status, endedAt ?? now, job, 'reconciler')
      } else if (!job || ['DELETION_IN_PROGRESS', 'CANCELLATION_IN_PROGRESS', 'CANCELLED'].includes(job.state)) {
        // The job went away without the platform cancelling the run: the run can never finish otherwise.
        const error_message = job
          ? `the Batch job was cancelled or deleted outside the platform (state ${job.state})`
          : 'the Batch job no longer exists: it was deleted outside the platform'
        result = await runs.applyJobState(run.id, { status: 'failed', at: now, error_message, source: 'reconciler' })
      }
      if (result?.changed && result.run) {
        settled.push({ run_id: run.id, status: result.run.status })
        if (result.run.ingestion_pending) await afterRunSucceeded(deps, result.run)
      }
      // Still in flight: checked again after another stale window, behind the runs not yet checked.
      else await runs.markChecked(run.id)
    } catch (err) {
      failed(run.id, 'settle', err)
    }
  }
  return settled
}

/** Cancelled runs whose Batch job is not deleted yet (the deletion at cancel time failed). */
export async function releaseCancelledJobs(deps: OrchestratorDeps, failed: Failed): Promise<string[]> {
  const released: string[] = []
  for (const run of await deps.runs.listCancelledWithLiveJob(RECONCILE_BATCH)) {
    try {
      await releaseJob(deps, run)
      released.push(run.id)
    } catch (err) {
      failed(run.id, 'delete_job', err)
    }
  }
  return released
}

/** Succeeded runs of an order whose outputs were never looked at for a VCF (a crash came between the two). */
export async function ingestSucceededRuns(deps: OrchestratorDeps, now: Date, failed: Failed): Promise<string[]> {
  const done: string[] = []
  for (const run of await deps.runs.listIngestionPending(new Date(now.getTime() - UNPUBLISHED_GRACE_MS), RECONCILE_BATCH)) {
    try {
      await afterRunSucceeded(deps, run)
      done.push(run.id)
    } catch (err) {
      failed(run.id, 'ingest_run', err)
    }
  }
  return done
}

/**
 * Ingestions with a step left whose record has not changed for longer than a lock's lease: their
 * runner died (or their message was lost, or they wait behind another ingestion of the order).
 * Requested again, they resume after their last completed step (or give way to a newer one).
 */
export async function resumeStalledIngestions(deps: OrchestratorDeps, now: Date, failed: Failed): Promise<string[]> {
  const resumed: string[] = []
  for (const ingestion of await deps.ingestions.listStalled(new Date(now.getTime() - INGESTION_STALE_MS), RECONCILE_BATCH)) {
    try {
      await deps.ingestions.touch(ingestion.id)
      if (await dispatchIngestion(deps, ingestion)) resumed.push(ingestion.id)
    } catch (err) {
      failed(ingestion.id, 'resume_ingestion', err)
    }
  }
  return resumed
}
