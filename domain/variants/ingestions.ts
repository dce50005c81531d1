import { FieldValue, Timestamp } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { conflict, notFound } from '../../lib/errors.js'
import { newId, sha256, UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { clinicalRefs, type OrderRecord } from '../clinical/model.js'
import type { Assembly } from './assembly.js'
import { cacheRefs, type BuildSample, type CacheHead } from './cache.js'
import type { VariantStats } from './reader.js'

/**
 * A variant ingestion: one VCF (a run's output, or a gs:// URI of the project's bucket) made into
 * an order's variant cache, in steps that each record their completion here, so that a retried or
 * duplicated ingestion takes only the steps not done yet (domain/variants/ingest.ts runs them).
 *
 *   queued → building → ready | failed        (and superseded: a newer ingestion of the order won)
 */
export const INGESTION_STATUSES = ['queued', 'building', 'ready', 'failed', 'superseded'] as const
export type IngestionStatus = (typeof INGESTION_STATUSES)[number]
/** No step will run again (a ready ingestion may still have its cleanup to finish: `pending`). */
export const FINAL_INGESTION: ReadonlySet<IngestionStatus> = new Set(['failed', 'superseded'])

/**
 * The steps, in order: read and validate the file; write the new build; update the catalogue's
 * observations; switch the order's cache to the new build (the ingestion is ready then); delete
 * the builds it replaced.
 */
export const INGESTION_STEPS = ['validate', 'write_cache', 'update_catalogue', 'switch', 'cleanup'] as const
export type IngestionStep = (typeof INGESTION_STEPS)[number]

export interface StepState {
  started: Timestamp
  finished?: Timestamp
  /** How far the step got (variants written, observations updated), for a resumed step and for people. */
  progress?: number
  /**
   * Where a resumed catalogue step picks up: its phase (writing the build's observations, then
   * retracting those of earlier builds), the build being retracted, and the last genome order key committed.
   */
  resume?: { phase?: 'observe' | 'retract'; retracting?: string; after?: string }
}

/** The VCF's samples matched to the order's (domain/variants/sample-matching.ts), by sample name. */
export interface IngestionSamples {
  matched: Array<BuildSample & { vcf_sample: string; matched_by: 'sample_external_id' | 'subject_external_id' }>
  /** VCF samples that match no sample of the order: their calls are not attributed to anyone. */
  unmatched_vcf_samples: string[]
  /** Order samples with no column in the VCF: their calls show `in_vcf: false`. */
  missing_order_samples: Array<{ sample_id: string; sample: string; role: string }>
  ambiguous: Array<{ vcf_sample: string; sample_ids: string[] }>
}

export interface IngestionError {
  step: IngestionStep
  reason: string
  /** The VCF line (1-based, of the decompressed file) of a malformed record. */
  line?: number
}

/** An ingestion (Firestore `variant_ingestions/<id>`). Its build id is its own id. */
export interface IngestionRecord {
  id: string
  project_id: string
  org_id: string
  order_id: string
  order_accession: string
  build_id: string
  source_uri: string
  run_id: string | null
  /** `run`: a run linked to the order succeeded with a VCF; `request`: POST /orders/{id}/ingestions. */
  trigger: 'run' | 'request'
  requested_by: string
  status: IngestionStatus
  /** Why a queued ingestion waits (another ingestion of the order is building; the queue could not be reached). */
  status_reason?: string
  /** True while a step remains (including a ready ingestion's cleanup): what the reconciler looks at. */
  pending: boolean
  created: Timestamp
  updated: Timestamp
  started?: Timestamp
  finished?: Timestamp
  /** The version of the file validated; later steps read that version only. */
  source?: { size: number; generation?: string; updated: string }
  steps: Partial<Record<IngestionStep, StepState>>
  counts?: VariantStats
  /** Variants in the cache (distinct ids). */
  variant_count?: number
  assembly?: Assembly | null
  assembly_reason?: string
  samples?: IngestionSamples
  /** One line naming every sample that did not match, or null when all did. */
  sample_mismatch?: string | null
  /** The sex of the subject of each matched VCF column, for hemizygous calls on X and Y. */
  sexes?: Record<string, 'female' | 'male' | 'unknown' | 'other'>
  error?: IngestionError
  /** At the switch: the build replaced, and the builds the cleanup deletes. */
  replaced_build_id?: string | null
  cleanup_builds?: string[]
  dispatch: { published: boolean; attempts: number; last_error?: string; execution?: string; started_at?: Timestamp }
}

/** The id of the ingestion of a run's VCF: one per run, however often its success is reported. */
export function ingestionIdForRun(runId: string): string {
  const h = sha256(`variant-ingestion\nrun\n${runId}`)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** Orders whose variants may be ingested: from signing on, and not cancelled or entered in error. */
const INGESTIBLE = new Set(['signed', 'in_progress', 'in_review', 'on_hold', 'completed'])

export interface RequestInput {
  project: { id: string; org_id: string }
  order: Pick<OrderRecord, 'id' | 'accession'>
  source_uri: string
  run_id?: string
  trigger: IngestionRecord['trigger']
  requested_by: string
  /** A fixed id (a run's ingestion); a new one otherwise. */
  id?: string
}

export const ingestionRefs = (db: Db) => ({
  ingestion: (id: string) => db.col('variant_ingestions').doc(id),
  all: () => db.col('variant_ingestions'),
  order: (id: string) => clinicalRefs(db).order(id),
})

export class IngestionStore {
  readonly refs: ReturnType<typeof ingestionRefs>
  private readonly heads: ReturnType<typeof cacheRefs>
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {
    this.refs = ingestionRefs(db)
    this.heads = cacheRefs(db)
  }

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }

  async get(id: string): Promise<IngestionRecord | undefined> {
    if (!UUID_RE.test(id)) return undefined
    return (await this.refs.ingestion(id).get()).data() as IngestionRecord | undefined
  }

  /** An ingestion of the project; another project's is absent. */
  async getInProject(projectId: string, id: string): Promise<IngestionRecord | undefined> {
    const found = await this.get(id)
    return found?.project_id === projectId ? found : undefined
  }

  /**
   * Records a queued ingestion of an order, with its audit event, and makes it the order's newest
   * (an older one still waiting will give way to it). With a fixed id (a run's), an ingestion
   * already recorded is returned as it is (`created: false`): success reported twice is one
   * ingestion. The caller then publishes ingestion.requested.
   */
  async request(ctx: AuditContext, input: RequestInput): Promise<{ ingestion: IngestionRecord; created: boolean }> {
    const id = input.id ?? newId()
    const ref = this.refs.ingestion(id)
    const headRef = this.heads.head(input.order.id)
    return this.db.transaction(async (tx) => {
      const [existingSnap, headSnap, orderSnap] = await tx.getAll(ref, headRef, this.refs.order(input.order.id))
      const existing = existingSnap!.data() as IngestionRecord | undefined
      if (existing) {
        if (existing.project_id !== input.project.id) throw notFound('ingestion')
        return { ingestion: existing, created: false }
      }
      const order = orderSnap!.data() as OrderRecord | undefined
      if (!order || order.project_id !== input.project.id) throw notFound('order')
      if (!INGESTIBLE.has(order.status)) {
        throw conflict(
          `order ${order.accession} is ${order.status}; variants are ingested for an order from its signing on (not a draft, cancelled or entered in error)`,
        )
      }
      const chain = await this.audit.prepare(tx, { project_id: input.project.id, entity: { type: 'variant_ingestion', id } })
      const now = this.now()
      const ingestion: IngestionRecord = {
        id,
        project_id: input.project.id,
        org_id: input.project.org_id,
        order_id: order.id,
        order_accession: order.accession,
        build_id: id,
        source_uri: input.source_uri,
        run_id: input.run_id ?? null,
        trigger: input.trigger,
        requested_by: input.requested_by,
        status: 'queued',
        pending: true,
        created: now,
        updated: now,
        steps: {},
        dispatch: { published: false, attempts: 0 },
      }
      tx.create(ref, ingestion)
      const head = headSnap!.data() as CacheHead | undefined
      if (head) tx.update(headRef, { latest_ingestion: { id, created: now }, updated: now })
      else {
        const fresh: CacheHead = {
          project_id: order.project_id,
          order_id: order.id,
          order_accession: order.accession,
          latest_ingestion: { id, created: now },
          builds: [],
          catalogued: [],
          updated: now,
        }
        tx.create(headRef, fresh)
      }
      chain.write(ctx, {
        action: 'variant_ingestion.requested',
        project_id: input.project.id,
        org_id: input.project.org_id,
        entity: { type: 'variant_ingestion', id, parent: order.id },
        change: { to: 'queued', reason: input.run_id ? `run ${input.run_id}: ${input.source_uri}` : input.source_uri },
      })
      return { ingestion, created: true }
    })
  }

  /** An order's ingestions, newest first. */
  async listForOrder(projectId: string, orderId: string, query: PageQuery): Promise<Page<IngestionRecord>> {
    const q = this.refs.all().where('project_id', '==', projectId).where('order_id', '==', orderId)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { order_id: orderId }, query }, (d) => d.data() as IngestionRecord)
  }

  /** The ingestion.requested message of this ingestion was published. */
  async markPublished(id: string): Promise<void> {
    await this.refs.ingestion(id).update({
      'dispatch.published': true,
      'dispatch.attempts': FieldValue.increment(1),
      'dispatch.last_error': FieldValue.delete(),
      updated: this.now(),
    })
  }

  /** Keeps a queued ingestion queued, saying why (the reconciler publishes it again). */
  async markDispatchProblem(id: string, reason: string): Promise<void> {
    await this.refs.ingestion(id).update({
      status_reason: reason,
      'dispatch.last_error': reason,
      'dispatch.attempts': FieldValue.increment(1),
      updated: this.now(),
    })
  }

  /**
   * Records who runs the ingestion (a Cloud Workflows execution), once: answers false when a
   * runner was started within `freshMs`, so that a duplicated message starts no second execution.
   */
  async claimRunner(id: string, freshMs: number, runner: () => string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const ing = (await tx.get(this.refs.ingestion(id))).data() as IngestionRecord | undefined
      if (!ing || !ing.pending) return false
      const now = this.now()
      const started = ing.dispatch.started_at?.toMillis()
      if (started !== undefined && now.toMillis() - started < freshMs) return false
      tx.update(this.refs.ingestion(id), { 'dispatch.started_at': now, 'dispatch.execution': runner(), updated: now })
      return true
    })
  }

  /** The runner could not be started: the next attempt may start one at once. */
  async releaseRunner(id: string): Promise<void> {
    await this.refs.ingestion(id).update({ 'dispatch.started_at': FieldValue.delete(), 'dispatch.execution': FieldValue.delete() })
  }

  async recordExecution(id: string, execution: string): Promise<void> {
    await this.refs.ingestion(id).update({ 'dispatch.execution': execution })
  }

  /** Ingestions with a step left whose record has not changed since `olderThan` (their runner died, or their message was lost). */
  async listStalled(olderThan: Date, limit: number): Promise<IngestionRecord[]> {
    const q = await this.refs
      .all()
      .where('pending', '==', true)
      .where('updated', '<', Timestamp.fromDate(olderThan))
      .orderBy('updated', 'asc')
      .limit(limit)
      .get()
    return q.docs.map((d) => d.data() as IngestionRecord)
  }

  /** The reconciler republished it: it goes to the back of the sweep. */
  async touch(id: string): Promise<void> {
    await this.refs.ingestion(id).update({ updated: this.now() })
  }
}
