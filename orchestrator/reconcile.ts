import { dispatchRun, releaseJob, settleFromJob } from '../domain/runs/lifecycle.js'
import { dispatchIngestion } from '../domain/variants/dispatch.js'
import { publishDue } from '../domain/webhooks/messages.js'
import { DEFAULT_TUNING } from '../domain/variants/ingest.js'
import { fromBatchState, type RunStatus } from '../domain/runs/status.js'
import type { RunRecord } from '../domain/runs/store.js'
import type { OrchestratorDeps } from './deps.js'
import { afterRunSucceeded } from './run-succeeded.js'

/** The paged sweeps over runs; the two variant sweeps take one batch a pass. */
type Sweep = 'republish' | 'settle' | 'delete_job'
type Step = Sweep | 'ingest_run' | 'resume_ingestion' | 'webhook_delivery'

/** The message of the line each pass ends with (the local suite's terminal leaves out those of passes that found nothing). */
export const RECONCILE_DONE = 'reconcile done'

export interface ReconcileReport {
  republished: string[]
  settled: Array<{ run_id: string; status: RunStatus }>
  jobs_deleted: string[]
  /** Succeeded runs whose outputs were looked at for a VCF (their ingestion had not been requested). */
  runs_ingested: string[]
  /** Ingestions with steps left and no news, requested again (their runner died, or their message was lost). */
  ingestions_resumed: string[]
  /** Webhook deliveries due (a retry whose time has come, or a first attempt whose message was never published), published again. */
  deliveries_published: string[]
  errors: Array<{ run_id: string; step: Step; error: string }>
  /**
   * Runs each sweep left for the next pass because the pass's time budget ran out: 0 when the
   * sweep went through every run it matched. Runs reported in `errors` still match and count here.
   */
  remaining: Record<Sweep, number>
}

export interface ReconcileOptions {
  /**
   * Runs whose record has not changed since this instant count as abandoned, whatever the windows
   * say: the local suite passes its own start, as its executor's jobs and the queue's messages
   * did not survive the previous process. Only ever widens the sweeps.
   */
  abandonedBefore?: Date
  /** Runs read per query (default 200). */
  batchSize?: number
  /**
   * Wall time after which a sweep stops starting new batches (default 20 s, within the 30 s
   * schedule). Every sweep handles at least one batch, so none is starved by the others.
   */
  budgetMs?: number
}

/** Runs not yet published are left this long to the compute service's own publish before the reconciler steps in. */
export const UNPUBLISHED_GRACE_MS = 60_000
/**
 * A queued run without a job and without news this long is published again: its message was lost
 * (a queue restarted, a message dead-lettered). Job creation is idempotent, so a duplicate costs
 * one read. Longer than the orchestrator takes to make a job when it keeps up. The window doubles
 * with each publication of the run (90 s, 3, 6, then 10 minutes): a run waiting behind a long
 * backlog looks the same as a lost message, and must not add a duplicate to the backlog every 90 s.
 */
export const DEFAULT_DISPATCH_AFTER_MS = 90_000
/** An ingestion whose record has not changed for this long has lost its runner: its lock's lease has run out by then. */
export const INGESTION_STALE_MS = DEFAULT_TUNING.leaseMs + 60_000

/** How long a run published `attempts` times waits without news before it is published again. */
export function dispatchWindow(attempts: number, baseMs = DEFAULT_DISPATCH_AFTER_MS): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), Math.max(baseMs, DEFAULT_STALE_AFTER_MS))
}
/** A run with a job and no news this long is checked with Batch. */
export const DEFAULT_STALE_AFTER_MS = 10 * 60_000
export const RECONCILE_BATCH = 200
export const RECONCILE_BUDGET_MS = 20_000
/** Runs of one batch handled at the same time: Firestore and Batch calls overlap, each run stays one transaction. */
const CONCURRENCY = 8

type Failed = (runId: string, step: Step, err: unknown) => void

interface Pass {
  now: Date
  /** Runs untouched since this instant (epoch ms) are abandoned: no window applies to them. */
  abandoned: number
  deadline: number
  batchSize: number
  failed: Failed
  /** The later of `now - window` and `abandonedBefore`. */
  cutoff(windowMs: number): Date
}

/**
 * Settles what events never did, in six sweeps: republishes runs recorded but never
 * dispatched, asks Batch about runs without news for a while, finishes deleting the jobs of
 * cancelled runs, looks at succeeded runs' outputs for a VCF, requests stalled ingestions
 * again, and publishes the webhook deliveries that are due. Each of the first three pages through every run it matches, in batches, until done or the
 * pass's time budget is spent; a failure on one run is reported and the sweep goes on.
 */
export async function reconcile(deps: OrchestratorDeps, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    republished: [],
    settled: [],
    jobs_deleted: [],
    runs_ingested: [],
    ingestions_resumed: [],
    deliveries_published: [],
    errors: [],
    remaining: { republish: 0, settle: 0, delete_job: 0 },
  }
  const now = deps.clock.now()
  const abandoned = opts.abandonedBefore?.getTime() ?? -Infinity
  const pass: Pass = {
    now,
    abandoned,
    deadline: performance.now() + (opts.budgetMs ?? RECONCILE_BUDGET_MS),
    batchSize: opts.batchSize ?? RECONCILE_BATCH,
    failed: (run_id, step, err) => {
      deps.log.warn(`reconcile: ${step} failed`, { run_id, error: err })
      report.errors.push({ run_id, step, error: err instanceof Error ? err.message : String(err) })
    },
    cutoff: (windowMs) => new Date(Math.max(now.getTime() - windowMs, abandoned)),
  }
  const republish = await republishUndispatched(deps, pass)
  report.republished = republish.done
  report.remaining.republish = republish.remaining
  const settle = await settleStale(deps, pass)
  report.settled = settle.done
  report.remaining.settle = settle.remaining
  const release = await releaseCancelledJobs(deps, pass)
  report.jobs_deleted = release.done
  report.remaining.delete_job = release.remaining
  report.runs_ingested = await ingestSucceededRuns(deps, pass)
  report.ingestions_resumed = await resumeStalledIngestions(deps, pass)
  report.deliveries_published = await publishDueDeliveries(deps, pass)
  deps.log.info(RECONCILE_DONE, {
    republished: report.republished.length,
    settled: report.settled.length,
    jobs_deleted: report.jobs_deleted.length,
    runs_ingested: report.runs_ingested.length,
    ingestions_resumed: report.ingestions_resumed.length,
    deliveries_published: report.deliveries_published.length,
    errors: report.errors.length,
    remaining: report.remaining,
  })
  return report
}

/**
 * Pages through a query's matches with a cursor, handling each batch a few runs at a time, until a
 * batch comes back short (done) or the deadline has passed (cut short: `count` says how many still
 * match). The first batch is taken whatever the deadline unless `atLeastOne` is false.
 */
async function sweep(
  pass: Pass,
  page: (after: RunRecord | undefined) => Promise<RunRecord[]>,
  handle: (run: RunRecord) => Promise<void>,
  count: () => Promise<number>,
  atLeastOne = true,
): Promise<{ remaining: number }> {
  let after: RunRecord | undefined
  for (let first = atLeastOne; ; first = false) {
    if (!first && performance.now() >= pass.deadline) return { remaining: await count() }
    const runs = await page(after)
    await eachLimited(runs, CONCURRENCY, handle)
    if (runs.length < pass.batchSize) return { remaining: 0 }
    after = runs.at(-1)
  }
}

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i]!)
    }),
  )
}

/** Never published; or published a while ago (the dispatch window) with no job to show for it (the message was lost or dead-lettered). */
async function republishUndispatched(deps: OrchestratorDeps, pass: Pass): Promise<{ done: string[]; remaining: number }> {
  const { runs } = deps
  const done: string[] = []
  const handle = async (run: RunRecord) => {
    const result = await dispatchRun(deps, run)
    if (result.ok) done.push(run.id)
    else pass.failed(run.id, 'republish', result.error)
  }
  const unpublishedBefore = pass.cutoff(UNPUBLISHED_GRACE_MS)
  const unpublished = await sweep(
    pass,
    (after) => runs.listUnpublished(unpublishedBefore, pass.batchSize, after),
    handle,
    () => runs.countUnpublished(unpublishedBefore),
  )
  // The two lists never share a run; they are one sweep, so the second takes no batch past the deadline when the first was cut short.
  const base = deps.dispatchAfterMs ?? DEFAULT_DISPATCH_AFTER_MS
  const stalledBefore = pass.cutoff(base)
  const stalled = await sweep(
    pass,
    (after) => runs.listStalledDispatch(stalledBefore, pass.batchSize, after),
    async (run) => {
      const quiet = pass.now.getTime() - run.updated.toMillis()
      if (run.updated.toMillis() < pass.abandoned || quiet >= dispatchWindow(run.dispatch.attempts, base)) await handle(run)
    },
    () => runs.countStalledDispatch(stalledBefore),
    unpublished.remaining === 0,
  )
  return { done, remaining: unpublished.remaining + stalled.remaining }
}

/** Queued or running runs without news for the stale window: Batch says where their job is. */
async function settleStale(deps: OrchestratorDeps, pass: Pass): Promise<{ done: ReconcileReport['settled']; remaining: number }> {
  const { runs, batch } = deps
  const before = pass.cutoff(deps.staleAfterMs ?? DEFAULT_STALE_AFTER_MS)
  const done: ReconcileReport['settled'] = []
  const handle = async (run: RunRecord) => {
    try {
      const job = run.job ? await batch.getJob(run.job.name, deps.log) : undefined
      const status = job ? fromBatchState(job.state) : undefined
      let result
      if (job && status) {
        const endedAt = [...job.events].reverse().find((e) => e.newState === job.state)?.at
        result = await settleFromJob(deps, run, status, endedAt ?? pass.now, job, 'reconciler')
      } else if (!job || ['DELETION_IN_PROGRESS', 'CANCELLATION_IN_PROGRESS', 'CANCELLED'].includes(job.state)) {
        // The job went away without the platform cancelling the run: the run can never finish otherwise.
        const error_message = job
          ? `the Batch job was cancelled or deleted outside the platform (state ${job.state})`
          : 'the Batch job no longer exists: it was deleted outside the platform'
        result = await runs.applyJobState(run.id, { status: 'failed', at: pass.now, error_message, source: 'reconciler' })
      }
      if (result?.changed && result.run) {
        done.push({ run_id: run.id, status: result.run.status })
        if (result.run.ingestion_pending) await afterRunSucceeded(deps, result.run)
      }
      // Still in flight: checked again after another stale window, behind the runs not yet checked.
      else await runs.markChecked(run.id)
    } catch (err) {
      pass.failed(run.id, 'settle', err)
    }
  }
  const { remaining } = await sweep(
    pass,
    (after) => runs.listInFlight(before, pass.batchSize, after),
    handle,
    () => runs.countInFlight(before),
  )
  return { done, remaining }
}

/** Cancelled runs whose Batch job is not deleted yet (the deletion at cancel time failed). */
async function releaseCancelledJobs(deps: OrchestratorDeps, pass: Pass): Promise<{ done: string[]; remaining: number }> {
  const done: string[] = []
  const { remaining } = await sweep(
    pass,
    (after) => deps.runs.listCancelledWithLiveJob(pass.batchSize, after),
    async (run) => {
      try {
        await releaseJob(deps, run)
        done.push(run.id)
      } catch (err) {
        pass.failed(run.id, 'delete_job', err)
      }
    },
    () => deps.runs.countCancelledWithLiveJob(),
  )
  return { done, remaining }
}

/**
 * Succeeded runs of an order whose outputs were never looked at for a VCF (a crash came between
 * the two). One batch a pass: each run handled leaves the list.
 */
async function ingestSucceededRuns(deps: OrchestratorDeps, pass: Pass): Promise<string[]> {
  const done: string[] = []
  for (const run of await deps.runs.listIngestionPending(pass.cutoff(UNPUBLISHED_GRACE_MS), pass.batchSize)) {
    try {
      await afterRunSucceeded(deps, run)
      done.push(run.id)
    } catch (err) {
      pass.failed(run.id, 'ingest_run', err)
    }
  }
  return done
}

/**
 * Ingestions with a step left whose record has not changed for longer than a lock's lease: their
 * runner died (or their message was lost, or they wait behind another ingestion of the order).
 * Requested again, they resume after their last completed step (or give way to a newer one). One
 * batch a pass: each one requested again is touched, and leaves the list for a lease.
 */
async function resumeStalledIngestions(deps: OrchestratorDeps, pass: Pass): Promise<string[]> {
  const resumed: string[] = []
  for (const ingestion of await deps.ingestions.listStalled(pass.cutoff(INGESTION_STALE_MS), pass.batchSize)) {
    try {
      await deps.ingestions.touch(ingestion.id)
      if (await dispatchIngestion(deps, ingestion)) resumed.push(ingestion.id)
    } catch (err) {
      pass.failed(ingestion.id, 'resume_ingestion', err)
    }
  }
  return resumed
}

/**
 * Webhook deliveries whose next attempt is due: the retries of the schedule (Pub/Sub delivers no
 * message later than asked, so the sweep is the clock of every retry longer than the dispatcher
 * waits for itself), and first attempts whose message was never published (a crash right after
 * the change committed), left UNPUBLISHED_GRACE_MS to their own publish. One batch a pass, oldest
 * due first; one a dispatcher holds is left to it. A duplicate costs the dispatcher one read.
 */
async function publishDueDeliveries(deps: OrchestratorDeps, pass: Pass): Promise<string[]> {
  const now = pass.now.getTime()
  const published: string[] = []
  try {
    const due = (await deps.webhooks.listDue(pass.now, pass.batchSize)).filter(
      (d) =>
        (d.round_attempts > 0 || d.next_attempt_at!.toMillis() <= pass.cutoff(UNPUBLISHED_GRACE_MS).getTime()) &&
        !(d.lease_until && d.lease_until.toMillis() > now),
    )
    for (const d of due) {
      await publishDue(deps, d.project_id, [d.id])
      published.push(d.id)
    }
  } catch (err) {
    pass.failed('-', 'webhook_delivery', err)
  }
  return published
}
