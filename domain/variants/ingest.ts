import { randomUUID } from 'node:crypto'
import { FieldValue, Timestamp, type DocumentReference, type Query, type WriteBatch } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import type { Logger } from '../../lib/log.js'
import type { Queue } from '../../lib/queue.js'
import { parseGsUri, type ObjectStorage } from '../../lib/storage.js'
import { clinicalRefs, type OrderRecord } from '../clinical/model.js'
import type { OrderStore } from '../clinical/orders.js'
import { buildQuery, cacheRefs, toCacheDoc, type ActiveBuild, type BuildSample, type CacheHead, type CacheVariantDoc } from './cache.js'
import { catalogueRefs, catalogueRetract, catalogueWrite, SUMMARY_FIELDS } from './catalogue.js'
import {
  FINAL_INGESTION,
  INGESTION_STEPS,
  ingestionRefs,
  type IngestionError,
  type IngestionRecord,
  type IngestionSamples,
  type IngestionStatus,
  type IngestionStep,
  type StepState,
} from './ingestions.js'
import { failureOf, IngestionFailure, isRefusedWrite, messageOf, stepErrorOutcome } from './failures.js'
import { VCF_LIMITS, type VcfLimits } from './limits.js'
import { INGESTION_REQUESTED } from './messages.js'
import { readVariants } from './reader.js'
import type { Sex } from './records.js'
import { describeSampleMismatch, matchSamples, type OrderSample } from './sample-matching.js'

/**
 * The steps of an ingestion (ingestions.ts: INGESTION_STEPS), each idempotent and resumable:
 *
 * - validate: read the whole VCF once (format, samples matched to the order's, counts) and pin the
 *   version of the file read, which later steps read again;
 * - write_cache: write the build's documents (`<build>~<variant id>`: a retried write overwrites the
 *   same document), committed a batch at a time, the committed prefix checkpointed, so a resumed
 *   step skips what is already written;
 * - update_catalogue: write the order's observation of each variant of the build into the project's
 *   catalogue (one map entry per order: rewriting it is harmless), then remove the order's entries
 *   of variants that earlier builds had and this one has not;
 * - switch: in one transaction, make the build the order's active cache (readers see it whole from
 *   then on, and the old one whole until then);
 * - cleanup: after a grace period for readers in flight, delete the builds it replaced.
 *
 * Only one run of one ingestion takes steps for an order at a time: a lock on the order's cache head,
 * held for a lease renewed at each checkpoint. A duplicate of the same ingestion stops at the lock; an
 * ingestion of the same order waits for it, and when it goes, the newest requested ingestion runs
 * and older ones still waiting give way (superseded).
 */

export interface IngestionTuning {
  /** Writes per committed batch. */
  batchSize: number
  /** Batches committing at once. */
  concurrency: number
  /** How long a run's lock on the order lasts without being renewed. */
  leaseMs: number
  /** How often progress is recorded (and the lease renewed) while a step writes. */
  checkpointMs: number
  /** How long the builds a switch replaced are kept for readers that read the head just before it. */
  cleanupGraceMs: number
  /** What a VCF record may hold (domain/variants/limits.ts). */
  limits: VcfLimits
}

export const DEFAULT_TUNING: IngestionTuning = {
  batchSize: 400,
  concurrency: 4,
  leaseMs: 120_000,
  checkpointMs: 5_000,
  cleanupGraceMs: 30_000,
  limits: VCF_LIMITS,
}

/** Injected faults, for the crash tests: `beforeCommit` may throw to stop a step after some writes, as a crash would. */
export interface IngestionFaults {
  beforeCommit?(step: IngestionStep, written: number): void
  afterStep?(step: IngestionStep): void
}

export interface IngestionDeps {
  db: Db
  audit: AuditWriter
  clock: Clock
  log: Logger
  /** Reads the VCF (the platform's own identity: it may read the project buckets). */
  storage: ObjectStorage
  queue: Queue
  orders: Pick<OrderStore, 'samplesOf'>
  faults?: IngestionFaults
  tuning?: Partial<IngestionTuning>
}

/** This run no longer holds the order's lock (its lease ran out and another run took it): it stops. */
class LeaseLost extends Error {
  override name = 'LeaseLost'
}

export interface StepResult {
  /** done: the step is complete; more: call it again (a slice ended); stop: nothing more for this run to do. */
  outcome: 'done' | 'more' | 'stop'
  status: IngestionStatus | 'missing'
  /** With `more`: wait this long first. */
  waitMs?: number
}

const SYSTEM: AuditContext = { actor: { type: 'system', id: 'variant-ingestion' } }

interface Ctx {
  deps: IngestionDeps
  tuning: IngestionTuning
  ing: IngestionRecord
  step: IngestionStep
  holder: string
  deadline: number
  refs: {
    ingestion: DocumentReference
    head: DocumentReference
  }
  now(): Timestamp
}

/**
 * Takes one step of an ingestion (or one slice of it, when `budgetMs` runs out first): what a
 * Cloud Workflows execution calls, step after step, and what the local runner loops over. A step
 * already done answers `done` at once; `holder` names the run (an execution, a local loop).
 */
export async function runIngestionStep(
  deps: IngestionDeps,
  id: string,
  step: IngestionStep,
  holder: string,
  opts: { budgetMs?: number } = {},
): Promise<StepResult> {
  const tuning = { ...DEFAULT_TUNING, ...deps.tuning }
  const iRefs = ingestionRefs(deps.db)
  const ing = (await iRefs.ingestion(id).get()).data() as IngestionRecord | undefined
  if (!ing) return { outcome: 'stop', status: 'missing' }
  if (FINAL_INGESTION.has(ing.status)) return { outcome: 'stop', status: ing.status }
  if (ing.steps[step]?.finished) return { outcome: 'done', status: ing.status }
  const index = INGESTION_STEPS.indexOf(step)
  const missing = INGESTION_STEPS.slice(0, index).find((s) => !ing.steps[s]?.finished)
  if (missing) throw new Error(`ingestion ${id}: step ${step} cannot run before ${missing}`)

  const ctx: Ctx = {
    deps,
    tuning,
    ing,
    step,
    holder,
    deadline: Date.now() + (opts.budgetMs ?? Number.POSITIVE_INFINITY),
    refs: { ingestion: iRefs.ingestion(id), head: cacheRefs(deps.db).head(ing.order_id) },
    now: () => Timestamp.fromDate(deps.clock.now()),
  }
  try {
    if (step === 'cleanup') return await cleanup(ctx)
    const claimed = await claim(ctx)
    if (claimed) return claimed
    let more = false
    switch (step) {
      case 'validate':
        await validate(ctx)
        break
      case 'write_cache':
        more = await writeCache(ctx)
        break
      case 'update_catalogue':
        more = await updateCatalogue(ctx)
        break
      case 'switch':
        await switchCache(ctx)
        break
    }
    if (more) return { outcome: 'more', status: 'building' }
    deps.faults?.afterStep?.(step)
    return { outcome: 'done', status: step === 'switch' ? 'ready' : 'building' }
  } catch (error) {
    // What no retry could pass (a malformed or oversized record, a write Firestore refuses) ends the ingestion here.
    const failure = failureOf(error)
    if (failure) {
      await fail(ctx, { step, reason: failure.reason, ...(failure.line !== undefined ? { line: failure.line } : {}) })
      return { outcome: 'stop', status: 'failed' }
    }
    if (error instanceof LeaseLost) {
      deps.log.warn('ingestion: lock lost to another run; stopping', { ingestion_id: id, step })
      return { outcome: 'stop', status: ctx.ing.status }
    }
    throw error
  }
}

/** Attempts at a step that failed for a reason that may pass (Firestore or storage unreachable), before the run gives up to the reconciler. */
const LOCAL_ATTEMPTS = 5

/**
 * Every remaining step of an ingestion in this process (the local suite's runner, and tests):
 * what the Cloud Workflows execution does in the cloud, with the same retries of a failed step.
 */
export async function runIngestion(deps: IngestionDeps, id: string, holder = `local-${randomUUID()}`): Promise<IngestionStatus | 'missing'> {
  let status: StepResult['status'] = 'queued'
  for (const step of INGESTION_STEPS) {
    for (let attempt = 1; ;) {
      let result: StepResult
      try {
        result = await runIngestionStep(deps, id, step, holder)
      } catch (error) {
        if (attempt >= LOCAL_ATTEMPTS || stepErrorOutcome(error) !== 'retry') throw error
        deps.log.warn('ingestion: step failed; retrying', { ingestion_id: id, step, attempt, error })
        await sleep(500 * 2 ** attempt++)
        continue
      }
      status = result.status
      if (result.outcome === 'stop') return status
      if (result.outcome === 'done') break
      if (result.waitMs) await sleep(result.waitMs)
    }
  }
  return status
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// -------------------------------------------------------------------------------------------
// The lock

/**
 * Takes (or renews) the order's lock for this run before a step, in a transaction with the
 * ingestion: answers a StepResult when the run must not go on (superseded, waiting, or a duplicate).
 */
async function claim(ctx: Ctx): Promise<StepResult | undefined> {
  const { deps, refs, holder } = ctx
  let kick: string | undefined
  const result = await deps.db.transaction(async (tx): Promise<StepResult | undefined> => {
    kick = undefined
    const [ingSnap, headSnap] = await tx.getAll(refs.ingestion, refs.head)
    const ing = ingSnap!.data() as IngestionRecord | undefined
    const head = headSnap!.data() as CacheHead | undefined
    if (!ing || !head) return { outcome: 'stop', status: ing?.status ?? 'missing' }
    if (FINAL_INGESTION.has(ing.status) || ing.status === 'ready') return { outcome: 'stop', status: ing.status }
    const now = ctx.now()
    const lock = head.lock
    const live = lock !== undefined && lock.expires.toMillis() > now.toMillis()
    const mine = live && lock.ingestion_id === ing.id && lock.holder === holder
    // Another run of this very ingestion is at work (a duplicated message): it goes on, this one stops.
    if (live && lock.ingestion_id === ing.id && !mine) return { outcome: 'stop', status: ing.status }
    const latest = head.latest_ingestion
    if (!mine && latest && latest.id !== ing.id && latest.created.toMillis() > ing.created.toMillis()) {
      // A newer ingestion of the order was requested: the newest wins, and this one gives way.
      const chain = await deps.audit.prepare(tx, { project_id: ing.project_id, entity: { type: 'variant_ingestion', id: ing.id } })
      tx.update(refs.ingestion, {
        status: 'superseded',
        pending: false,
        finished: now,
        status_reason: `superseded by ingestion ${latest.id}, requested later for the same order`,
        updated: now,
      })
      if (lock?.ingestion_id === ing.id) tx.update(refs.head, { lock: FieldValue.delete(), updated: now })
      chain.write(SYSTEM, {
        action: 'variant_ingestion.superseded',
        project_id: ing.project_id,
        org_id: ing.org_id,
        entity: { type: 'variant_ingestion', id: ing.id, parent: ing.order_id },
        change: { from: ing.status, to: 'superseded', reason: `ingestion ${latest.id}` },
      })
      kick = latest.id
      return { outcome: 'stop', status: 'superseded' }
    }
    if (live && !mine) {
      tx.update(refs.ingestion, { status_reason: `waiting for ingestion ${lock.ingestion_id} of this order to finish`, updated: now })
      return { outcome: 'stop', status: ing.status }
    }
    tx.update(refs.head, { lock: { ingestion_id: ing.id, holder, expires: lease(ctx, now) }, updated: now })
    const patch: Record<string, unknown> = { [`steps.${ctx.step}.started`]: ing.steps[ctx.step]?.started ?? now, updated: now }
    if (ing.status === 'queued') Object.assign(patch, { status: 'building', started: now, status_reason: FieldValue.delete() })
    tx.update(refs.ingestion, patch)
    ctx.ing = { ...ing, status: 'building' }
    return undefined
  })
  if (kick) await requestNext(ctx, kick)
  return result
}

const lease = (ctx: Ctx, now: Timestamp) => Timestamp.fromMillis(now.toMillis() + ctx.tuning.leaseMs)

/**
 * Records a step's progress and renews the lock, in one transaction that first checks the lock is
 * still this run's (LeaseLost otherwise). `extra` is written to the ingestion too.
 */
async function checkpoint(ctx: Ctx, state: Partial<StepState>, extra: Record<string, unknown> = {}, head: Record<string, unknown> = {}) {
  const { deps, refs } = ctx
  await deps.db.transaction(async (tx) => {
    const [headSnap, ingSnap] = await tx.getAll(refs.head, refs.ingestion)
    const lock = (headSnap!.data() as CacheHead | undefined)?.lock
    const status = (ingSnap!.data() as IngestionRecord | undefined)?.status
    if (!lock || lock.ingestion_id !== ctx.ing.id || lock.holder !== ctx.holder || status !== 'building') throw new LeaseLost()
    const now = ctx.now()
    const patch: Record<string, unknown> = { updated: now, ...extra }
    for (const [k, v] of Object.entries(state)) patch[`steps.${ctx.step}.${k}`] = v
    tx.update(refs.ingestion, patch)
    tx.update(refs.head, { 'lock.expires': lease(ctx, now), updated: now, ...head })
  })
}

/** The step is done: its finish recorded with whatever it found (counts, matching), the lock renewed. */
const finishStep = (ctx: Ctx, extra: Record<string, unknown> = {}, head: Record<string, unknown> = {}) =>
  checkpoint(ctx, { finished: ctx.now() }, extra, head)

/** Publishes ingestion.requested for another ingestion of the order (the newest, once the lock is free). */
async function requestNext(ctx: Ctx, id: string) {
  const next = (await ingestionRefs(ctx.deps.db).ingestion(id).get()).data() as IngestionRecord | undefined
  if (!next || !next.pending || next.id === ctx.ing.id) return
  try {
    await ctx.deps.queue.publish(INGESTION_REQUESTED, { ingestion_id: next.id, project_id: next.project_id }, { ingestion_id: next.id })
  } catch (error) {
    ctx.deps.log.warn('ingestion: could not request the next ingestion of the order; the reconciler will', { ingestion_id: next.id, error })
  }
}

/** Ends an ingestion as failed, with the reason (and line), frees the lock, removes what it wrote, and lets the next one go. */
async function fail(ctx: Ctx, error: IngestionError) {
  const { deps, refs } = ctx
  let latest: string | undefined
  let wroteBuild = false
  await deps.db.transaction(async (tx) => {
    const [ingSnap, headSnap] = await tx.getAll(refs.ingestion, refs.head)
    const ing = ingSnap!.data() as IngestionRecord | undefined
    const head = headSnap!.data() as CacheHead | undefined
    if (!ing || FINAL_INGESTION.has(ing.status)) return
    const chain = await deps.audit.prepare(tx, { project_id: ing.project_id, entity: { type: 'variant_ingestion', id: ing.id } })
    const now = ctx.now()
    tx.update(refs.ingestion, { status: 'failed', pending: false, finished: now, error, status_reason: FieldValue.delete(), updated: now })
    if (head?.lock?.ingestion_id === ing.id) tx.update(refs.head, { lock: FieldValue.delete(), updated: now })
    chain.write(SYSTEM, {
      action: 'variant_ingestion.failed',
      project_id: ing.project_id,
      org_id: ing.org_id,
      entity: { type: 'variant_ingestion', id: ing.id, parent: ing.order_id },
      change: { from: ing.status, to: 'failed', reason: error.line !== undefined ? `line ${error.line}: ${error.reason}` : error.reason },
    })
    latest = head?.latest_ingestion?.id
    wroteBuild = head?.builds.includes(ing.build_id) === true && head.active?.build_id !== ing.build_id
  })
  deps.log.warn('ingestion failed', { ingestion_id: ctx.ing.id, step: error.step, reason: error.reason, line: error.line })
  if (wroteBuild) {
    await deleteBuild(ctx, ctx.ing.build_id).catch((e: unknown) =>
      deps.log.warn('ingestion: could not delete the build of a failed ingestion; a later cleanup will', { ingestion_id: ctx.ing.id, error: e }),
    )
  }
  if (latest) await requestNext(ctx, latest)
}

// -------------------------------------------------------------------------------------------
// Reading the source

function sourceOf(ing: IngestionRecord): { bucket: string; path: string } {
  try {
    const { bucket, path } = parseGsUri(ing.source_uri)
    if (!path) throw new Error('no object')
    return { bucket, path }
  } catch {
    throw new IngestionFailure(`${ing.source_uri} is not a gs:// URI of a file`)
  }
}

/** Opens the VCF as validated (that version of the file), with the build's samples and their subjects' sex. */
async function openSource(ctx: Ctx) {
  const { ing } = ctx
  const { bucket, path } = sourceOf(ing)
  const stream = await ctx.deps.storage.readStream(bucket, path, { generation: ing.source?.generation })
  if (!stream) throw new IngestionFailure(`${ing.source_uri} changed or was removed after it was validated; request a new ingestion`)
  return stream
}

/** The build's samples: every order sample, with the VCF column matched to it (or null). */
function buildSamples(samples: IngestionSamples): BuildSample[] {
  return [
    ...samples.matched.map((m) => ({ sample_id: m.sample_id, sample: m.sample, role: m.role, vcf_sample: m.vcf_sample })),
    ...samples.missing_order_samples.map((m) => ({ sample_id: m.sample_id, sample: m.sample, role: m.role, vcf_sample: null })),
  ]
}

/** The variants of the source, for a step after validation (which recorded the matching and the sexes). */
async function variantsOf(ctx: Ctx) {
  const stream = await openSource(ctx)
  const sexes = new Map(Object.entries(ctx.ing.sexes ?? {}))
  try {
    const reader = await readVariants(stream, { sexOf: (column) => sexes.get(column), limits: ctx.tuning.limits })
    return { reader, close: () => stream.destroy() }
  } catch (error) {
    stream.destroy()
    throw error
  }
}

// -------------------------------------------------------------------------------------------
// Steps

async function validate(ctx: Ctx): Promise<void> {
  const { deps, ing } = ctx
  const { bucket, path } = sourceOf(ing)
  const object = await deps.storage.stat(bucket, path)
  if (!object) throw new IngestionFailure(`${ing.source_uri} does not exist`)
  const order = (await clinicalRefs(deps.db).order(ing.order_id).get()).data() as OrderRecord | undefined
  if (!order || order.project_id !== ing.project_id) throw new IngestionFailure(`order ${ing.order_accession} no longer exists`)
  const views = await deps.orders.samplesOf(order)
  const orderSamples: OrderSample[] = views.map((v) => ({
    sample_id: v.sample.id,
    external_id: v.sample.external_id,
    role: v.entry.role,
    subject_external_id: v.subject?.external_id ?? null,
  }))
  const sexOfSample = new Map(views.map((v) => [v.sample.id, v.subject?.sex]))

  const stream = await deps.storage.readStream(bucket, path, { generation: object.generation })
  if (!stream) throw new IngestionFailure(`${ing.source_uri} changed while it was opened; request a new ingestion`)
  const sexes: Record<string, Sex> = {}
  try {
    const reader = await readVariants(stream, { sexOf: (column) => sexes[column], limits: ctx.tuning.limits })
    const matching = matchSamples(reader.header.samples, orderSamples)
    if (!matching.matched.length) {
      const vcf = reader.header.samples.length ? reader.header.samples.join(', ') : 'none: the VCF has no sample columns'
      const wanted = orderSamples.map((s) => `${s.external_id} (${s.role})`).join(', ') || 'none'
      throw new IngestionFailure(`no sample of the VCF matches a sample of order ${ing.order_accession}: VCF samples ${vcf}; order samples ${wanted}`)
    }
    for (const m of matching.matched) {
      const sex = sexOfSample.get(m.sample_id)
      if (sex) sexes[m.vcf_sample] = sex
    }
    const external = new Map(orderSamples.map((s) => [s.sample_id, s.external_id]))
    const samples: IngestionSamples = {
      matched: matching.matched.map((m) => ({ ...m, sample: external.get(m.sample_id)! })),
      unmatched_vcf_samples: matching.unmatched_vcf_samples,
      missing_order_samples: matching.missing_order_samples.map((m) => ({ sample_id: m.sample_id, sample: m.external_id, role: m.role })),
      ambiguous: matching.ambiguous,
    }
    // Validation reads the whole file in one call (about 30,000 records a second); the lock is renewed as it goes.
    const due = checkpointer(ctx, () => checkpoint(ctx, {}))
    let n = 0
    for await (const _ of reader.variants) if (++n % 5_000 === 0) await due()
    await finishStep(ctx, {
      source: { size: object.size, generation: object.generation, updated: object.updated },
      counts: { ...reader.stats },
      assembly: reader.header.build.assembly ?? null,
      assembly_reason: reader.header.build.reason,
      samples,
      sexes,
      sample_mismatch: describeSampleMismatch(matching) ?? null,
    })
  } finally {
    stream.destroy()
  }
}

/** A write of a batch, and the VCF line of what it writes (when it comes from one). */
interface PendingWrite {
  write: (b: WriteBatch) => void
  line?: number
}

/**
 * Writes a batch at a time, `concurrency` batches at once, and knows the prefix of units (variants)
 * whose batches have all committed: what a checkpoint may record as done. A batch Firestore refuses
 * as invalid is written again one write at a time, to name the VCF line of the one it refuses.
 */
class BatchCommitter {
  private batch: WriteBatch
  private writes: PendingWrite[] = []
  private units = 0
  private lastKey: string | undefined
  private sent = 0
  private readonly inflight = new Map<number, Promise<void>>()
  private readonly finished = new Map<number, { units: number; key?: string }>()
  private nextSeq = 0
  private confirmedSeq = 0
  /** Units in the contiguous prefix of committed batches, and the last key among them. */
  committed = 0
  committedKey: string | undefined
  private failure: unknown

  constructor(
    private readonly ctx: Ctx,
    start: number,
  ) {
    this.batch = ctx.deps.db.firestore.batch()
    this.committed = start
    this.sent = start
  }

  async add(write: (b: WriteBatch) => void, key?: string, units = 1, line?: number) {
    write(this.batch)
    this.writes.push({ write, line })
    this.units += units
    this.lastKey = key ?? this.lastKey
    if (this.units >= this.ctx.tuning.batchSize) await this.flush()
  }

  async flush() {
    if (this.failure) throw this.failure
    if (this.units === 0) return
    const batch = this.batch
    const writes = this.writes
    const units = this.units
    const key = this.lastKey
    this.batch = this.ctx.deps.db.firestore.batch()
    this.writes = []
    this.units = 0
    this.sent += units
    this.ctx.deps.faults?.beforeCommit?.(this.ctx.step, this.sent - units)
    const seq = this.nextSeq++
    const done = batch.commit().then(
      () => {
        this.inflight.delete(seq)
        this.finished.set(seq, { units, key })
        while (this.finished.has(this.confirmedSeq)) {
          const f = this.finished.get(this.confirmedSeq)!
          this.finished.delete(this.confirmedSeq++)
          this.committed += f.units
          this.committedKey = f.key ?? this.committedKey
        }
      },
      async (error: unknown) => {
        const failure = isRefusedWrite(error) ? await this.refusal(writes, error) : error
        this.inflight.delete(seq)
        this.failure ??= failure
      },
    )
    this.inflight.set(seq, done)
    while (this.inflight.size >= this.ctx.tuning.concurrency) await Promise.race(this.inflight.values())
    if (this.failure) throw this.failure
  }

  async drain() {
    await this.flush()
    await Promise.all(this.inflight.values())
    if (this.failure) throw this.failure
  }

  /**
   * The write of a refused batch that Firestore refuses on its own, as the failure of its VCF line;
   * each write is a set or a delete, so writing again the ones it accepts is harmless.
   */
  private async refusal(writes: PendingWrite[], error: unknown): Promise<unknown> {
    for (const { write, line } of writes) {
      const one = this.ctx.deps.db.firestore.batch()
      write(one)
      try {
        await one.commit()
      } catch (alone) {
        if (!isRefusedWrite(alone)) return alone
        return new IngestionFailure(
          `Firestore refused to store ${line === undefined ? 'a document' : "this line's variant"}: ${messageOf(alone)}`,
          line,
        )
      }
    }
    const lines = writes.flatMap((w) => (w.line === undefined ? [] : [w.line]))
    const which = lines.length ? `lines ${Math.min(...lines)}–${Math.max(...lines)}` : 'a batch'
    return new IngestionFailure(`Firestore refused to store the variants of ${which}: ${messageOf(error)}`)
  }
}

/** Calls `save` when a checkpoint is due. */
function checkpointer(ctx: Ctx, save: () => Promise<void>) {
  let last = Date.now()
  return async () => {
    if (Date.now() - last < ctx.tuning.checkpointMs) return
    last = Date.now()
    await save()
  }
}

async function writeCache(ctx: Ctx): Promise<boolean> {
  const { deps, ing } = ctx
  const head = { builds: FieldValue.arrayUnion(ing.build_id) }
  // The build is listed on the head before its first document, so whatever happens a cleanup finds it.
  await checkpoint(ctx, {}, {}, head)
  const samples = buildSamples(ing.samples!)
  const ids = { project_id: ing.project_id, order_id: ing.order_id, build_id: ing.build_id }
  const refs = cacheRefs(deps.db)
  const resumeAt = ing.steps.write_cache?.progress ?? 0
  const writer = new BatchCommitter(ctx, resumeAt)
  const save = () => checkpoint(ctx, { progress: writer.committed })
  const due = checkpointer(ctx, save)
  const { reader, close } = await variantsOf(ctx)
  let n = 0
  try {
    for await (const v of reader.variants) {
      if (n++ < resumeAt) continue
      const doc = toCacheDoc(v, ids, samples)
      await writer.add((b) => b.set(refs.variant(ing.build_id, v.id), doc), undefined, 1, v.source_line)
      await due()
      if (Date.now() > ctx.deadline) {
        await writer.drain()
        await save()
        return true
      }
    }
    await writer.drain()
  } finally {
    close()
  }
  // A VCF may hold the same variant twice (one document): the cache counts its documents.
  const count = (await buildQuery(deps.db, ing.build_id).count().get()).data().count
  await finishStep(ctx, { 'steps.write_cache.progress': n, variant_count: count })
  return false
}

/** The catalogue's view of a cache document: its summary and carriers. */
const CATALOGUE_FIELDS = [...SUMMARY_FIELDS, 'project_id', 'build_id', 'carriers', 'hom_carriers', 'source_line']

async function updateCatalogue(ctx: Ctx): Promise<boolean> {
  const { deps, ing } = ctx
  await checkpoint(ctx, {}, {}, { catalogued: FieldValue.arrayUnion(ing.build_id) })
  const head = (await ctx.refs.head.get()).data() as CacheHead
  const order = { id: ing.order_id, accession: ing.order_accession }
  const cat = catalogueRefs(deps.db)
  const state = ing.steps.update_catalogue ?? ({} as Partial<StepState>)

  // 1. The order's observation of each variant of this build.
  if (state.resume?.phase !== 'retract') {
    const writer = new BatchCommitter(ctx, state.progress ?? 0)
    const save = () =>
      checkpoint(ctx, { progress: writer.committed, resume: { phase: 'observe', after: writer.committedKey ?? state.resume?.after ?? '' } })
    const due = checkpointer(ctx, save)
    let q: Query = buildQuery(deps.db, ing.build_id)
      .select(...CATALOGUE_FIELDS)
      .orderBy('genome_order')
    if (state.resume?.after) q = q.startAfter(state.resume.after)
    for await (const snap of q.stream() as AsyncIterable<FirebaseFirestore.QueryDocumentSnapshot>) {
      const doc = snap.data() as CacheVariantDoc
      const now = ctx.now()
      await writer.add(
        (b) => b.set(cat.variant(ing.project_id, doc.variant_id), catalogueWrite(doc, order, now), { merge: true }),
        doc.genome_order,
        1,
        doc.source_line,
      )
      await due()
      if (Date.now() > ctx.deadline) {
        await writer.drain()
        await save()
        return true
      }
    }
    await writer.drain()
    state.resume = { phase: 'retract' }
    await checkpoint(ctx, { progress: writer.committed, resume: state.resume })
  }

  // 2. The order's entries of variants that only earlier builds had.
  const others = head.catalogued.filter((b) => b !== ing.build_id)
  for (const build of others) {
    const after = state.resume?.retracting === build ? state.resume.after : undefined
    if (await retract(ctx, build, after)) return true
    await checkpoint(ctx, { resume: { phase: 'retract' } }, {}, { catalogued: FieldValue.arrayRemove(build) })
  }
  await finishStep(ctx)
  return false
}

/** Removes the order's observations of the variants of `build` that this ingestion's build does not have. */
async function retract(ctx: Ctx, build: string, after: string | undefined): Promise<boolean> {
  const { deps, ing } = ctx
  const refs = cacheRefs(deps.db)
  const cat = catalogueRefs(deps.db)
  const writer = new BatchCommitter(ctx, 0)
  const save = () => checkpoint(ctx, { resume: { phase: 'retract', retracting: build, after: writer.committedKey ?? after ?? '' } })
  const due = checkpointer(ctx, save)
  let q: Query = buildQuery(deps.db, build).select('variant_id', 'genome_order').orderBy('genome_order')
  if (after) q = q.startAfter(after)
  let chunk: Array<{ variant_id: string; genome_order: string }> = []
  const settle = async () => {
    if (!chunk.length) return
    const mine = await deps.db.firestore.getAll(...chunk.map((c) => refs.variant(ing.build_id, c.variant_id)), { fieldMask: ['build_id'] })
    const now = ctx.now()
    for (const [i, snap] of mine.entries()) {
      const c = chunk[i]!
      if (snap.exists) continue
      await writer.add(
        (b) => b.set(cat.variant(ing.project_id, c.variant_id), catalogueRetract(ing.order_id, now), { merge: true }),
        c.genome_order,
        1,
      )
    }
    // The chunk's last key counts as settled even when none of it needed a write.
    await writer.add(() => undefined, chunk.at(-1)!.genome_order, 0)
    chunk = []
  }
  for await (const snap of q.stream() as AsyncIterable<FirebaseFirestore.QueryDocumentSnapshot>) {
    chunk.push(snap.data() as { variant_id: string; genome_order: string })
    if (chunk.length >= 300) {
      await settle()
      await due()
      if (Date.now() > ctx.deadline) {
        await writer.drain()
        await save()
        return true
      }
    }
  }
  await settle()
  await writer.drain()
  return false
}

async function switchCache(ctx: Ctx): Promise<void> {
  const { deps, refs, ing } = ctx
  let latest: string | undefined
  await deps.db.transaction(async (tx) => {
    const [ingSnap, headSnap] = await tx.getAll(refs.ingestion, refs.head)
    const current = ingSnap!.data() as IngestionRecord
    const head = headSnap!.data() as CacheHead
    if (!head.lock || head.lock.ingestion_id !== ing.id || head.lock.holder !== ctx.holder || current.status !== 'building') throw new LeaseLost()
    const chain = await deps.audit.prepare(tx, { project_id: ing.project_id, entity: { type: 'variant_ingestion', id: ing.id } })
    const now = ctx.now()
    const active: ActiveBuild = {
      build_id: ing.build_id,
      ingestion_id: ing.id,
      source_uri: ing.source_uri,
      run_id: ing.run_id,
      variant_count: current.variant_count ?? 0,
      samples: buildSamples(current.samples!),
      assembly: current.assembly ?? null,
      switched_at: now,
    }
    tx.update(refs.head, { active, lock: FieldValue.delete(), updated: now })
    tx.update(refs.ingestion, {
      status: 'ready',
      finished: now,
      replaced_build_id: head.active?.build_id ?? null,
      cleanup_builds: head.builds.filter((b) => b !== ing.build_id),
      'steps.switch.finished': now,
      status_reason: FieldValue.delete(),
      updated: now,
    })
    chain.write(SYSTEM, {
      action: 'variant_ingestion.completed',
      project_id: ing.project_id,
      org_id: ing.org_id,
      entity: { type: 'variant_ingestion', id: ing.id, parent: ing.order_id },
      change: { from: 'building', to: 'ready', reason: `${active.variant_count} variants from ${ing.source_uri}` },
    })
    latest = head.latest_ingestion?.id
  })
  ctx.ing = { ...ctx.ing, status: 'ready' }
  if (latest && latest !== ing.id) await requestNext(ctx, latest)
}

async function cleanup(ctx: Ctx): Promise<StepResult> {
  const { deps, refs, ing } = ctx
  if (ing.status !== 'ready') throw new Error(`ingestion ${ing.id} is ${ing.status}; only a ready ingestion cleans up`)
  const switchedAt = ing.steps.switch?.finished?.toMillis() ?? 0
  const wait = switchedAt + ctx.tuning.cleanupGraceMs - deps.clock.now().getTime()
  if (wait > 0) return { outcome: 'more', status: 'ready', waitMs: wait }
  const now = ctx.now()
  await refs.ingestion.update({ 'steps.cleanup.started': ing.steps.cleanup?.started ?? now, updated: now })
  for (const build of ing.cleanup_builds ?? []) {
    if (await deleteBuild(ctx, build)) return { outcome: 'more', status: 'ready' }
  }
  const done = ctx.now()
  await refs.ingestion.update({ 'steps.cleanup.finished': done, pending: false, updated: done })
  deps.faults?.afterStep?.('cleanup')
  return { outcome: 'done', status: 'ready' }
}

/**
 * Deletes a build's documents, then takes it off the head's list (never the active build).
 * Answers true when the budget ran out first (the rest is deleted by the next call).
 */
async function deleteBuild(ctx: Ctx, build: string): Promise<boolean> {
  const { deps, refs } = ctx
  const head = (await refs.head.get()).data() as CacheHead | undefined
  if (head?.active?.build_id === build) return false
  const writer = new BatchCommitter(ctx, 0)
  let touched = Date.now()
  for await (const snap of buildQuery(deps.db, build).select().stream() as AsyncIterable<FirebaseFirestore.QueryDocumentSnapshot>) {
    await writer.add((b) => b.delete(snap.ref))
    if (Date.now() - touched > ctx.tuning.checkpointMs) {
      touched = Date.now()
      await refs.ingestion.update({ updated: ctx.now() })
    }
    if (Date.now() > ctx.deadline) {
      await writer.drain()
      return true
    }
  }
  await writer.drain()
  await refs.head.update({ builds: FieldValue.arrayRemove(build), updated: ctx.now() })
  return false
}
