import { dispatchRun, releaseJob, settleFromJob } from '../domain/runs/lifecycle.js'
import { fromBatchState, type RunStatus } from '../domain/runs/status.js'
import type { RunRecord } from '../domain/runs/store.js'
import type { OrchestratorDeps } from './deps.js'

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

type Failed = (runId: string, step: ReconcileReport['errors'][number]['step'], err: unknown) => void

/**
 * Settles what events never did, in three sweeps: republishes runs recorded but never
 * dispatched, asks Batch about runs without news for a while, and finishes deleting the jobs of
 * cancelled runs. Each sweep is independent; a failure on one run is reported and the sweep goes on.
 */
export async function reconcile(deps: OrchestratorDeps): Promise<ReconcileReport> {
  const report: ReconcileReport = { republished: [], settled: [], jobs_deleted: [], errors: [] }
  const now = deps.clock.now()
  const failed: Failed = (run_id, step, err) => {
    deps.log.warn(`reconcile: ${step} failed`, { run_id, error: err })
    report.errors.push({ run_id, step, error: err instanceof Error ? err.message : String(err) })
  }
  report.republished = await republishUndispatched(deps, now, failed)
  report.settled = await settleStale(deps, now, failed)
  report.jobs_deleted = await releaseCancelledJobs(deps, failed)
  deps.log.info('reconcile done', {
    republished: report.republished.length,
    settled: report.settled.length,
    jobs_deleted: report.jobs_deleted.length,
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
      if (result?.changed && result.run) settled.push({ run_id: run.id, status: result.run.status })
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
