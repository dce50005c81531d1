import { randomInt } from 'node:crypto'
import { FieldPath, FieldValue, Timestamp, type DocumentSnapshot, type Query, type QuerySnapshot, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditInput, AuditScope, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { conflict, isAlreadyExists, notFound } from '../../lib/errors.js'
import { newId, sha256 } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { directReads, type DocReader } from '../../lib/reads.js'
import { failureOf, type RunFailure } from './failure.js'
import { advance, TERMINAL, type RunStatus } from './status.js'
import { orRefuse } from '../../lib/decision.js'
import { decideRelaunch, type RelaunchCommand } from './relaunch.js'
import { executionOf, type PipelineExecution, type PipelineType } from '../pipelines/model.js'

/**
 * The run records shared by the compute service (submit, list, cancel) and the orchestrator
 * (dispatch, job state, reconciliation). Every status change goes through `advance()` inside a
 * Firestore transaction together with its audit event.
 */
export interface RunJob {
  name: string
  uid?: string
  created_at: Timestamp
}

/** A run (Firestore doc runs/{id}). */
export interface RunRecord {
  id: string
  project_id: string
  org_id: string
  /** '<slug>-<UTC timestamp like 20261122T061530Z>' */
  name: string
  status: RunStatus
  pipeline_id: string
  pipeline_slug: string
  pipeline_version: string
  pipeline_type: PipelineType
  /** The pipeline's execution spec at submission: a later forced overwrite never changes a submitted run. */
  execution: PipelineExecution
  /** The id of the clinical order the run is for (or, for runs submitted before orders existed, the string given). */
  order_id?: string
  /** The order's accession (ORD-<year>-<6 digits>), for people. */
  order_accession?: string
  params: Record<string, unknown>
  tags: string[]
  profile?: string
  created: Timestamp
  started?: Timestamp
  finished?: Timestamp
  /** gs://<bucket>/runs/<id>/, set on success. */
  output?: string
  error_message?: string
  /** Set with error_message: whether the pipeline's own command failed, and its exit code (domain/runs/failure.ts). */
  failure?: RunFailure
  /** Why a run is still queued (quota, permissions, connectivity), for the user. */
  status_reason?: string
  created_by: string
  idempotency_key?: string
  bucket_name: string
  service_account_email: string
  job?: RunJob
  dispatch: { published_at?: Timestamp; attempts: number; last_error?: string; published: boolean }
  cancel?: { requested_at?: Timestamp; job_deleted_at?: Timestamp; requested_by?: string }
  updated: Timestamp
  /** Query helpers: Firestore cannot select on a missing field, so these mirror job / cancel state. */
  has_job: boolean
  job_cleanup_pending: boolean
  /**
   * Set with the success of a run linked to an order, cleared once its outputs were looked at for a
   * VCF to ingest (domain/variants/dispatch.ts): the outbox that lets the reconciler finish what a
   * crash between the two interrupted.
   */
  ingestion_pending?: boolean
  /** The ingestion of the run's VCF into its order's variant cache. */
  ingestion_id?: string
  /**
   * The work session the run works in: the id of the run that began it (the run's own id, or, for a
   * resumed relaunch, its first run's session). It names the work directory in the bucket and is
   * Nextflow's session id, so a resume finds the cache and the task folders. Absent on runs
   * submitted before relaunch existed, which cannot be resumed.
   */
  work_session?: string
  /** The run this one relaunches, and whether it resumed it. */
  relaunched_from?: { id: string; name: string; resume: boolean }
  /** The ids of this run's relaunches, oldest first. */
  relaunches?: string[]
  /** When a run last resumed the work session this run began: written by every resume, so that resumes of one session take turns. */
  session_resumed_at?: Timestamp
}

/** Where a run's outputs live. */
export const outputLocation = (bucket: string, runId: string) => `gs://${bucket}/runs/${runId}/`

/** 2026-11-22T06:15:30.123Z → 20261122T061530Z */
export const runTimestamp = (d: Date) =>
  d
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '')

/**
 * Another record a submission links the run to (a clinical order), handled inside the run's
 * transaction: `read` does its reads and checks before any write (Firestore's rule) and may throw
 * to refuse the run; the `write` it returns is made with the run, with the link's audit event in
 * `audit`'s chain. The transaction may run more than once, so neither has other side effects.
 */
export interface RunLink {
  read(tx: Transaction): Promise<RunLinkWrite>
}
export interface RunLinkWrite {
  order_id: string
  order_accession?: string
  /** The entity whose audit event `write` records, if any. */
  audit?: AuditScope
  write(tx: Transaction, run: RunRecord, audit: (input: AuditInput) => void): void
}

export interface SubmitInput {
  project: { id: string; org_id: string; bucket_name: string; service_account_email: string }
  pipeline: { id: string; slug: string; version: string } & PipelineExecution
  params: Record<string, unknown>
  tags: string[]
  profile?: string
  order_id?: string
  /** Links the run to an order in the same transaction (overrides order_id). */
  link?: RunLink
  created_by: string
  /** The client's Idempotency-Key and a hash of the request it came with. */
  idempotency?: { key: string; requestHash: string }
  /**
   * Makes the run a relaunch of a run of the project (`of`): its settings come from that run, read
   * in the transaction and changed as decideRelaunch says; `params`, `tags` and `profile` above are
   * then ignored, and the pipeline gives only its id.
   */
  relaunch?: Omit<RelaunchCommand, 'run'> & { of: string }
}

export interface RunFilters {
  order_id?: string
  status?: RunStatus
  /** The run's exact name (names are unique but for two submissions of one pipeline in the same second). */
  name?: string
}

/** The fields runs are counted by (RunStore.count). */
export interface RunCountFilter {
  status?: RunStatus
  job_cleanup_pending?: boolean
  'failure.kind'?: RunFailure['kind']
}

/** Idempotency keys are remembered this long (as Stripe does), then a key may be reused. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000

interface IdempotencyRecord {
  project_id: string
  user_id: string
  request_hash: string
  run_id: string
  created: Timestamp
  expires: Timestamp
}

export class RunStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }
  /** The run's document; a request declares it to have it read with its caller (RequestReads). */
  ref(id: string) {
    return this.db.col('runs').doc(id)
  }
  private static data(snap: DocumentSnapshot): RunRecord | undefined {
    return snap.exists ? (snap.data() as RunRecord) : undefined
  }

  // -------------------------------------------------------------------------------------------
  // The compute API

  /**
   * Records a queued run and its run.submitted event in one transaction. With an idempotency key,
   * a repeat of the same request returns the run made the first time (`replayed`), and the same
   * key with another request is a 409; concurrent repeats make one run, as the key document is
   * created in the same transaction as the run.
   */
  /**
   * A run's name is unique in its project, so that a person (or the CLI) can name a run by it: two
   * runs of a pipeline submitted in the same second are `<slug>-<time>` and `<slug>-<time>-2`. The
   * name is claimed by creating its key document, an atomic create outside the run's transaction:
   * concurrent submissions never wait on each other's locks (a read of the same keys inside each
   * transaction made 50 runs a second of one pipeline contend), and a lost create reads again. A
   * name claimed for a run that is then not created (an error after the claim) is a gap in the
   * -2, -3 … sequence, never a shared name. Within a batch the numbers follow no order of submission.
   */
  private async claimName(projectId: string, runId: string, base: string, now: Timestamp): Promise<string> {
    const keyOf = (value: string) => ({ value, ref: this.db.col('run_names').doc(sha256(`${projectId}\n${value}`)) })
    // The plain name first, then -2 … -11, -12 … -31, -32 … -71, … (batches doubling up to 100 names): one batched read per try.
    const batches: string[][] = [[base]]
    for (let first = 2, size = 10; batches.length <= 100; first += size, size = Math.min(2 * size, 100)) {
      batches.push(Array.from({ length: size }, (_, i) => `${base}-${first + i}`))
    }
    for (const names of batches) {
      const candidates = names.map(keyOf)
      for (;;) {
        const snaps = await this.db.firestore.getAll(...candidates.map((c) => c.ref))
        const frees = candidates.filter((_, i) => !snaps[i]!.exists)
        if (!frees.length) break
        // Any free name of the batch, not the first: submissions of the same second, which all read
        // the same batch, then mostly claim different names instead of all racing for one.
        const free = frees[randomInt(frees.length)]!
        try {
          await free.ref.create({ project_id: projectId, run_id: runId, created: now })
          return free.value
        } catch (err) {
          // Taken since the read: read the batch again.
          if (!isAlreadyExists(err)) throw err
        }
      }
    }
    throw conflict(`too many runs named ${base}; submit again in a second`)
  }

  async submit(ctx: AuditContext, input: SubmitInput): Promise<{ run: RunRecord; replayed: boolean }> {
    const keyRef = input.idempotency
      ? this.db.col('idempotency_keys').doc(sha256(`runs\n${input.project.id}\n${input.created_by}\n${input.idempotency.key}`))
      : undefined
    const id = newId()
    let name: string | undefined
    let attempts = 0
    return this.db.transaction(async (tx) => {
      const now = this.now()
      // A transaction runs again after a failed commit, and a commit can fail in flight after it was
      // applied: the run is then there under its id, and is this request's answer, never a second
      // run nor a 409 (its create would fail) that makes the client send it again. The first
      // attempt has nothing to look for: the id is new.
      if (attempts++ > 0) {
        const mine = RunStore.data(await tx.get(this.ref(id)))
        if (mine) return { run: mine, replayed: false }
      }
      // The key is read outside the transaction's locks and claimed under a precondition
      // (Db.writeIfUnchanged): repeats of one submission sent together never wait on each other for
      // it; the one that commits second runs again, finds the key, and answers the first one's run.
      const keySnap = keyRef ? await keyRef.get() : undefined
      if (keySnap && input.idempotency) {
        const key = keySnap.data() as IdempotencyRecord | undefined
        if (key && key.expires.toMillis() > now.toMillis()) {
          if (key.request_hash !== input.idempotency.requestHash) {
            throw conflict('this Idempotency-Key was already used with a different request; send a new key for a new run')
          }
          const run = RunStore.data(await tx.get(this.ref(key.run_id)))
          if (run) return { run, replayed: true }
        }
      }
      // Claimed once: a retried transaction keeps the run's id and its name.
      name ??= await this.claimName(input.project.id, id, `${input.pipeline.slug}-${runTimestamp(now.toDate())}`, now)
      const first = input.relaunch ? RunStore.data(await tx.get(this.ref(input.relaunch.of))) : undefined
      if (input.relaunch && first?.project_id !== input.project.id) throw notFound('run')
      // A resume reads its session's root run (every resume of the session writes it, so two resumes
      // sent together take turns) and then whether a run of the session is still at work.
      const session = first && input.relaunch?.resume && first.work_session ? first.work_session : undefined
      const root = session && session !== first?.id ? RunStore.data(await tx.get(this.ref(session))) : first
      const active = session
        ? (
            await tx.get(
              this.db
                .col('runs')
                .where('project_id', '==', input.project.id)
                .where('work_session', '==', session)
                .where('status', 'in', ['queued', 'running'])
                .limit(1),
            )
          ).docs[0]?.data()
        : undefined
      const relaunch =
        first && input.relaunch
          ? orRefuse(
              decideRelaunch(first, { ...input.relaunch, run: { id, name } }, { active: active && { name: active.name, status: active.status } }),
            )
          : undefined
      const link = input.link ? await input.link.read(tx) : undefined
      const chain = await this.audit.prepareMany(tx, [
        { project_id: input.project.id, entity: { type: 'run', id } },
        ...(link?.audit ? [link.audit] : []),
        ...(first ? [{ project_id: first.project_id, entity: { type: 'run', id: first.id } }] : []),
      ])
      const plan = relaunch?.changes
      const run: RunRecord = {
        id,
        project_id: input.project.id,
        org_id: input.project.org_id,
        name,
        status: 'queued',
        pipeline_id: first?.pipeline_id ?? input.pipeline.id,
        pipeline_slug: first?.pipeline_slug ?? input.pipeline.slug,
        pipeline_version: first?.pipeline_version ?? input.pipeline.version,
        pipeline_type: first?.pipeline_type ?? input.pipeline.type,
        // A relaunch runs what the first run ran, even if the pipeline version was overwritten since.
        execution: first?.execution ?? executionOf(input.pipeline),
        order_id: link?.order_id ?? first?.order_id ?? input.order_id,
        order_accession: link?.order_accession ?? first?.order_accession,
        params: plan?.params ?? input.params,
        tags: plan?.tags ?? input.tags,
        profile: plan ? plan.profile : (input.profile ?? input.pipeline.default_profile),
        work_session: plan?.work_session ?? id,
        ...(plan ? { relaunched_from: plan.relaunched_from } : {}),
        created: now,
        created_by: input.created_by,
        idempotency_key: input.idempotency?.key,
        // A resume works in the first run's work directory, in the first run's bucket.
        bucket_name: first?.bucket_name ?? input.project.bucket_name,
        service_account_email: input.project.service_account_email,
        dispatch: { attempts: 0, published: false },
        updated: now,
        has_job: false,
        job_cleanup_pending: false,
      }
      tx.create(this.ref(id), run)
      if (keySnap && input.idempotency) {
        const record: IdempotencyRecord = {
          project_id: input.project.id,
          user_id: input.created_by,
          request_hash: input.idempotency.requestHash,
          run_id: id,
          created: now,
          expires: Timestamp.fromMillis(now.toMillis() + IDEMPOTENCY_TTL_MS),
        }
        this.db.writeIfUnchanged(tx, keySnap, record)
      }
      if (first && relaunch) {
        const resumedAt = session ? { session_resumed_at: now } : {}
        tx.update(this.ref(first.id), { relaunches: FieldValue.arrayUnion(id), updated: now, ...(root?.id === first.id ? resumedAt : {}) })
        if (root && root.id !== first.id) tx.update(this.ref(root.id), resumedAt)
        for (const event of relaunch.events) chain.write(ctx, event)
      } else {
        chain.write(ctx, {
          action: 'run.submitted',
          org_id: run.org_id,
          project_id: run.project_id,
          entity: { type: 'run', id, parent: run.pipeline_id },
          change: { to: 'queued' },
        })
      }
      link?.write(tx, run, (event) => chain.write(ctx, event))
      return { run, replayed: false }
    })
  }

  /**
   * A run of this project; another project's run is absent, as if it did not exist. `reads` may
   * hold the run already, read with the request's caller (RequestReads).
   */
  async get(projectId: string, runId: string, reads: DocReader = directReads): Promise<RunRecord | undefined> {
    const run = RunStore.data(await reads.get(this.ref(runId)))
    return run?.project_id === projectId ? run : undefined
  }

  /** The project's runs, newest first. */
  async list(projectId: string, filters: RunFilters, query: PageQuery): Promise<Page<RunRecord>> {
    let q = this.db.col('runs').where('project_id', '==', projectId)
    if (filters.order_id !== undefined) q = q.where('order_id', '==', filters.order_id)
    if (filters.status !== undefined) q = q.where('status', '==', filters.status)
    if (filters.name !== undefined) q = q.where('name', '==', filters.name)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as RunRecord)
  }

  /**
   * How many of the project's runs match every field given (equality only: Firestore merges its
   * single-field indexes for these, no composite index needed). A count costs one read per 1,000 runs.
   */
  async count(projectId: string, where: RunCountFilter): Promise<number> {
    let q: Query = this.db.col('runs').where('project_id', '==', projectId)
    for (const [field, value] of Object.entries(where)) if (value !== undefined) q = q.where(field, '==', value)
    return RunStore.count(q)
  }

  /** The newest runs of an order (at most `limit`), for the order's page. */
  async listForOrder(projectId: string, orderId: string, limit: number): Promise<RunRecord[]> {
    const q = await this.db
      .col('runs')
      .where('project_id', '==', projectId)
      .where('order_id', '==', orderId)
      .orderBy('created', 'desc')
      .limit(limit)
      .get()
    return q.docs.map((d) => d.data() as RunRecord)
  }

  /**
   * Moves a queued or running run to cancelled with its run.cancelled event. A cancelled run is
   * returned as it is (a repeated cancel is harmless); a succeeded or failed one is a 409.
   * The caller deletes the Batch job after this commits, when `run.job` is set.
   */
  async cancel(ctx: AuditContext, projectId: string, runId: string, by: string): Promise<{ run: RunRecord; changed: boolean }> {
    return this.db.transaction(async (tx) => {
      const run = RunStore.data(await tx.get(this.ref(runId)))
      if (!run || run.project_id !== projectId) throw notFound('run')
      const next = advance(run.status, 'cancelled')
      if (!next) {
        if (run.status === 'cancelled') return { run, changed: false }
        throw conflict(`run ${run.name} has already ${run.status}; only a queued or running run can be cancelled`)
      }
      const chain = await this.audit.prepare(tx, { project_id: run.project_id, entity: { type: 'run', id: run.id } })
      const now = this.now()
      const patch = {
        status: next,
        finished: now,
        cancel: { requested_at: now, requested_by: by },
        job_cleanup_pending: run.has_job,
        updated: now,
      }
      tx.update(this.ref(runId), { ...patch, status_reason: FieldValue.delete() })
      chain.write(ctx, {
        action: 'run.cancelled',
        org_id: run.org_id,
        project_id: run.project_id,
        entity: { type: 'run', id: run.id, parent: run.pipeline_id },
        change: { from: run.status, to: next },
      })
      const { status_reason: _, ...rest } = run
      return { run: { ...rest, ...patch }, changed: true }
    })
  }

  // -------------------------------------------------------------------------------------------
  // The orchestrator

  async getById(runId: string): Promise<RunRecord | undefined> {
    return RunStore.data(await this.ref(runId).get())
  }

  /** Records the Batch job of a run, once (a second call is a no-op). A job made for a run cancelled meanwhile is marked for deletion. */
  async recordJob(runId: string, job: { name: string; uid?: string }): Promise<RunRecord | undefined> {
    return this.db.transaction(async (tx) => {
      const run = RunStore.data(await tx.get(this.ref(runId)))
      if (!run || run.job) return run
      const chain = await this.audit.prepare(tx, { project_id: run.project_id, entity: { type: 'run', id: run.id } })
      const now = this.now()
      const patch = {
        job: { name: job.name, ...(job.uid ? { uid: job.uid } : {}), created_at: now },
        has_job: true,
        job_cleanup_pending: run.status === 'cancelled',
        updated: now,
      }
      tx.update(this.ref(runId), { ...patch, status_reason: FieldValue.delete() })
      chain.write(SYSTEM_ORCHESTRATOR, {
        action: 'run.job_created',
        org_id: run.org_id,
        project_id: run.project_id,
        entity: { type: 'run', id: run.id, parent: run.pipeline_id },
        change: { reason: job.name },
      })
      const { status_reason: _, ...rest } = run
      return { ...rest, ...patch }
    })
  }

  /**
   * Applies a job state reported by Batch (or the reconciler) through `advance()`: started on
   * running; finished and output on success; finished and error_message on failure. A no-op when
   * the run is gone or the event would not move it forward. `job` is recorded (with its
   * run.job_created event) on a run that has none yet: the job's news came before the
   * orchestrator recorded it, or the process that made it died first.
   */
  async applyJobState(
    runId: string,
    event: { status: RunStatus; at: Date; output?: string; error_message?: string; source: string; job?: { name: string; uid?: string } },
  ): Promise<{ changed: boolean; run?: RunRecord }> {
    return this.db.transaction(async (tx) => {
      const run = RunStore.data(await tx.get(this.ref(runId)))
      if (!run) return { changed: false }
      const next = advance(run.status, event.status)
      if (!next) return { changed: false, run }
      const chain = await this.audit.prepare(tx, { project_id: run.project_id, entity: { type: 'run', id: run.id } })
      const at = Timestamp.fromDate(event.at)
      const patch: Partial<RunRecord> = { status: next, updated: this.now() }
      if (!run.job && event.job) {
        patch.job = { name: event.job.name, ...(event.job.uid ? { uid: event.job.uid } : {}), created_at: this.now() }
        patch.has_job = true
        chain.write(SYSTEM_ORCHESTRATOR, {
          action: 'run.job_created',
          org_id: run.org_id,
          project_id: run.project_id,
          entity: { type: 'run', id: run.id, parent: run.pipeline_id },
          change: { reason: event.job.name },
        })
      }
      if (next === 'running') patch.started = at
      if (TERMINAL.has(next)) patch.finished = at
      if (next === 'succeeded') patch.output = event.output ?? outputLocation(run.bucket_name, run.id)
      if (next === 'succeeded' && run.order_id) patch.ingestion_pending = true
      if (next === 'failed') {
        patch.error_message = event.error_message ?? 'the job failed without an error message'
        // Kept beside the message so that runs can be counted by it (WES's EXECUTOR_ERROR and SYSTEM_ERROR).
        patch.failure = failureOf(patch.error_message)
      }
      if (next === 'cancelled') patch.job_cleanup_pending = run.has_job && !run.cancel?.job_deleted_at
      tx.update(this.ref(runId), { ...patch, status_reason: FieldValue.delete() })
      const actor: AuditContext = { actor: { type: 'system', id: event.source } }
      chain.write(actor, {
        action: `run.${next}`,
        org_id: run.org_id,
        project_id: run.project_id,
        entity: { type: 'run', id: run.id, parent: run.pipeline_id },
        change: { from: run.status, to: next, reason: patch.error_message },
      })
      const { status_reason: _, ...rest } = run
      return { changed: true, run: { ...rest, ...patch } }
    })
  }

  /** The run.requested message of this run was published. */
  async markPublished(runId: string): Promise<void> {
    const now = this.now()
    await this.ref(runId).update({
      'dispatch.published': true,
      'dispatch.published_at': now,
      'dispatch.attempts': FieldValue.increment(1),
      'dispatch.last_error': FieldValue.delete(),
      updated: now,
    })
  }

  /** Keeps a queued run queued, saying why it has not started (quota, permissions, connectivity). */
  async markDispatchProblem(runId: string, reason: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const run = RunStore.data(await tx.get(this.ref(runId)))
      if (!run || run.status !== 'queued') return
      tx.update(this.ref(runId), {
        status_reason: reason,
        'dispatch.last_error': reason,
        'dispatch.attempts': FieldValue.increment(1),
        updated: this.now(),
      })
    })
  }

  /**
   * The reconciler's queries. Each returns one batch of at most `limit` runs in a fixed order and
   * takes the last run of the previous batch as its cursor (`after`), so a sweep pages through
   * every match exactly once even when some runs it handles stay matching (an error left them
   * unchanged). The `count*` twins say how many match in all, for the report of a sweep cut short.
   */
  private unpublishedQuery(olderThan: Date) {
    return this.db
      .col('runs')
      .where('status', '==', 'queued')
      .where('dispatch.published', '==', false)
      .where('created', '<', Timestamp.fromDate(olderThan))
  }

  /** Queued runs whose run.requested message was never published, created before `olderThan` (oldest first). */
  async listUnpublished(olderThan: Date, limit: number, after?: RunRecord): Promise<RunRecord[]> {
    let q = this.unpublishedQuery(olderThan).orderBy('created', 'asc').orderBy(FieldPath.documentId(), 'asc')
    if (after) q = q.startAfter(after.created, after.id)
    return RunStore.records(await q.limit(limit).get())
  }

  async countUnpublished(olderThan: Date): Promise<number> {
    return RunStore.count(this.unpublishedQuery(olderThan))
  }

  private inFlightQuery(olderThan: Date) {
    return this.db
      .col('runs')
      .where('status', 'in', ['queued', 'running'])
      .where('has_job', '==', true)
      .where('updated', '<', Timestamp.fromDate(olderThan))
  }

  /** Queued or running runs with a job whose record has not changed since `olderThan` (least recently updated first). */
  async listInFlight(olderThan: Date, limit: number, after?: RunRecord): Promise<RunRecord[]> {
    let q = this.inFlightQuery(olderThan).orderBy('updated', 'asc').orderBy(FieldPath.documentId(), 'asc')
    if (after) q = q.startAfter(after.updated, after.id)
    return RunStore.records(await q.limit(limit).get())
  }

  async countInFlight(olderThan: Date): Promise<number> {
    return RunStore.count(this.inFlightQuery(olderThan))
  }

  private stalledDispatchQuery(olderThan: Date) {
    return this.db
      .col('runs')
      .where('status', '==', 'queued')
      .where('has_job', '==', false)
      .where('dispatch.published', '==', true)
      .where('updated', '<', Timestamp.fromDate(olderThan))
  }

  /**
   * Queued runs without a job, published, whose record has not changed since `olderThan`: their
   * message never turned into a job, e.g. it was lost with a queue or dead-lettered. Job creation
   * is idempotent, so publishing again is always safe (least recently updated first). Runs never
   * published are listUnpublished's: the two lists never share a run.
   */
  async listStalledDispatch(olderThan: Date, limit: number, after?: RunRecord): Promise<RunRecord[]> {
    let q = this.stalledDispatchQuery(olderThan).orderBy('updated', 'asc').orderBy(FieldPath.documentId(), 'asc')
    if (after) q = q.startAfter(after.updated, after.id)
    return RunStore.records(await q.limit(limit).get())
  }

  async countStalledDispatch(olderThan: Date): Promise<number> {
    return RunStore.count(this.stalledDispatchQuery(olderThan))
  }

  /** The reconciler asked Batch about this run and nothing changed: it goes to the back of the in-flight sweep. */
  async markChecked(runId: string): Promise<void> {
    await this.ref(runId).update({ updated: this.now() })
  }

  private cancelledWithLiveJobQuery() {
    return this.db.col('runs').where('job_cleanup_pending', '==', true)
  }

  /** Cancelled runs whose Batch job has not been deleted yet (by id). */
  async listCancelledWithLiveJob(limit: number, after?: RunRecord): Promise<RunRecord[]> {
    let q = this.cancelledWithLiveJobQuery().orderBy(FieldPath.documentId(), 'asc')
    if (after) q = q.startAfter(after.id)
    return RunStore.records(await q.limit(limit).get())
  }

  async countCancelledWithLiveJob(): Promise<number> {
    return RunStore.count(this.cancelledWithLiveJobQuery())
  }

  private static records(snap: QuerySnapshot): RunRecord[] {
    return snap.docs.map((d) => d.data() as RunRecord)
  }

  private static async count(q: Query): Promise<number> {
    return (await q.count().get()).data().count
  }

  /** Succeeded runs of an order whose outputs have not been looked at for a VCF yet, last changed before `olderThan`. */
  async listIngestionPending(olderThan: Date, limit: number): Promise<RunRecord[]> {
    const q = await this.db
      .col('runs')
      .where('ingestion_pending', '==', true)
      .where('updated', '<', Timestamp.fromDate(olderThan))
      .orderBy('updated', 'asc')
      .limit(limit)
      .get()
    return q.docs.map((d) => d.data() as RunRecord)
  }

  /** The run's outputs were looked at for a VCF (and its ingestion requested, if there was one). */
  async clearIngestionPending(runId: string, ingestionId?: string): Promise<void> {
    await this.ref(runId).update({ ingestion_pending: false, ...(ingestionId ? { ingestion_id: ingestionId } : {}), updated: this.now() })
  }

  async markJobDeleted(runId: string): Promise<void> {
    const now = this.now()
    await this.ref(runId).update({ 'cancel.job_deleted_at': now, job_cleanup_pending: false, updated: now })
  }
}

const SYSTEM_ORCHESTRATOR: AuditContext = { actor: { type: 'system', id: 'orchestrator' } }
