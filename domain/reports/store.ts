import { FieldValue, Timestamp, type Query, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditInput, AuditWriter } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { badRequest, conflict, notFound } from '../../lib/errors.js'
import { newId, UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { directReads, type DocReader } from '../../lib/reads.js'
import type { OrderRecord } from '../clinical/model.js'
import type { OrderStore } from '../clinical/orders.js'
import type { OrderStatus } from '../clinical/order-status.js'
import type { AcmgClassification } from './acmg.js'
import {
  MAX_REPORT_COMMENTS,
  MAX_REPORT_SNAPSHOTS,
  MAX_REPORT_VARIANTS,
  MAX_SNAPSHOT_BYTES,
  reportRefs,
  type AmendmentKind,
  type CommentRecord,
  type CommentType,
  type Inheritance,
  type ReportRecord,
  type ReportVariantRecord,
  type SnapshotRecord,
  type StatusChange,
  type TemplateType,
  type UserRef,
} from './model.js'
import { sealContent, snapshotContent, type OrderContext, type SnapshotContent } from './snapshot.js'
import { availableTransitions, checkMove, CLOSED, DISCUSSABLE, GUARD_MESSAGES, type ReportShape, type ReportStatus } from './status.js'
import { freezeVariant, readVariants, type CachedVariant, type FrozenVariant, type VariantSource } from './variant-source.js'

export interface ReportProject {
  id: string
  org_id: string
}

export interface ReportFields {
  template_type: TemplateType
  summary?: string
  notes?: string
  conclusion?: string
}

/** PATCH: only the fields sent change; null clears an optional one. */
export type ReportPatch = { template_type?: TemplateType } & { [K in 'summary' | 'notes' | 'conclusion']?: string | null }

export interface ReportFilters {
  order_id?: string
  status?: ReportStatus
  template_type?: TemplateType
}

/** The per-report values of a report variant; on PATCH, null clears one. */
export interface VariantOverrides {
  acmg_classification?: AcmgClassification | null
  acmg_criteria?: string[]
  transcript?: string | null
  hgvs_c?: string | null
  hgvs_p?: string | null
  inheritance?: Inheritance | null
  interpretation?: string | null
  include_in_report?: boolean
}

type Can = (permission: Permission) => boolean

/** Why a caller may not do what the store was asked: a permission they lack, or a rule about them (the route answers 403 with an access.denied event). */
export type Refusal = { refused: 'permission'; permission: Permission } | { refused: 'rule'; reason: string; detail: string }
export const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'refused' in x

/** A report variant as read: the report's record joined with the variant's values in the order's current cache. */
export interface JoinedVariant {
  record: ReportVariantRecord
  cached: FrozenVariant | undefined
}

/** Statuses of an order a report may be written for: from signing on, and not cancelled or entered in error. */
const REPORTABLE_ORDERS: ReadonlySet<OrderStatus> = new Set<OrderStatus>(['signed', 'in_progress', 'in_review', 'on_hold', 'completed'])

const OVERRIDE_FIELDS = [
  'acmg_classification',
  'acmg_criteria',
  'transcript',
  'hgvs_c',
  'hgvs_p',
  'inheritance',
  'interpretation',
  'include_in_report',
] as const

const unclassified = (v: Pick<ReportVariantRecord, 'include_in_report' | 'acmg_classification'> | undefined) =>
  v && v.include_in_report && !v.acmg_classification ? 1 : 0

export const shapeOf = (r: ReportRecord): ReportShape => ({
  status: r.status,
  conclusion: r.conclusion,
  unclassified: r.unclassified_count,
})

export const reportTransitions = (r: ReportRecord, can: Can) => availableTransitions(shapeOf(r), can)

/**
 * Reports of orders (DOMAIN.md, Reports): drafts are edited, sent to review, signed in the browser
 * (see SignoffStore) and never edited afterwards; an amendment is a new revision. Every change to a
 * report, its variants and its comments reads and writes the report document in its transaction,
 * so concurrent changes to one report serialize, and each leaves its audit event in the same
 * transaction.
 */
export class ReportStore {
  readonly refs: ReturnType<typeof reportRefs>

  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    private readonly orders: OrderStore,
    private readonly variantSource: VariantSource,
  ) {
    this.refs = reportRefs(db)
  }

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }

  private event(project: ReportProject, report: Pick<ReportRecord, 'id' | 'order_id'>, action: string, change?: AuditInput['change']): AuditInput {
    return { action, project_id: project.id, org_id: project.org_id, entity: { type: 'report', id: report.id, parent: report.order_id }, change }
  }

  private chain(tx: Transaction, project: ReportProject, reportId: string) {
    return this.audit.prepare(tx, { project_id: project.id, entity: { type: 'report', id: reportId } })
  }

  /** A report of the project; another project's is absent. `reads` may hold it already (the request's prefetch). */
  async get(projectId: string, id: string, reads: DocReader = directReads): Promise<ReportRecord | undefined> {
    if (!UUID_RE.test(id)) return undefined
    const report = (await reads.get(this.refs.report(id))).data() as ReportRecord | undefined
    return report?.project_id === projectId ? report : undefined
  }

  /** A report by id alone, for the browser pages, which learn the project from the report. */
  async getAnywhere(id: string): Promise<ReportRecord | undefined> {
    if (!UUID_RE.test(id)) return undefined
    return (await this.refs.report(id).get()).data() as ReportRecord | undefined
  }

  async readReport(tx: Transaction, projectId: string, id: string): Promise<ReportRecord> {
    const report = (await tx.get(this.refs.report(id))).data() as ReportRecord | undefined
    if (!report || report.project_id !== projectId) throw notFound('report')
    return report
  }

  async list(projectId: string, filters: ReportFilters, query: PageQuery): Promise<Page<ReportRecord>> {
    let q = this.refs.reports().where('project_id', '==', projectId)
    if (filters.order_id !== undefined) q = q.where('order_id', '==', filters.order_id)
    if (filters.status !== undefined) q = q.where('status', '==', filters.status)
    if (filters.template_type !== undefined) q = q.where('template_type', '==', filters.template_type)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as ReportRecord)
  }

  /** An order of the project by id or accession (undefined otherwise). */
  resolveOrder(projectId: string, idOrAccession: string): Promise<OrderRecord | undefined> {
    return this.orders.resolve(projectId, idOrAccession)
  }

  async create(ctx: AuditContext, project: ReportProject, orderIdOrAccession: string, fields: ReportFields, author: UserRef): Promise<ReportRecord> {
    const order = await this.orders.resolve(project.id, orderIdOrAccession)
    if (!order) throw notFound(`order ${orderIdOrAccession}`)
    const id = newId()
    return this.db.transaction(async (tx) => {
      // Read in the transaction, so that an order cancelled meanwhile gets no new report.
      const current = (await tx.get(this.db.col('orders').doc(order.id))).data() as OrderRecord | undefined
      if (!current || current.project_id !== project.id) throw notFound(`order ${orderIdOrAccession}`)
      if (!REPORTABLE_ORDERS.has(current.status)) {
        throw conflict(
          `order ${current.accession} is ${current.status}; a report is written for a signed order (not a draft, cancelled or entered in error)`,
        )
      }
      const chain = await this.chain(tx, project, id)
      const now = this.now()
      const report: ReportRecord = {
        ...fields,
        id,
        project_id: project.id,
        org_id: project.org_id,
        order_id: current.id,
        order_accession: current.accession,
        status: 'draft',
        author,
        revision: 1,
        signatures: [],
        status_history: [],
        variant_count: 0,
        unclassified_count: 0,
        comment_count: 0,
        open_review_comments: 0,
        snapshot_count: 0,
        created: now,
        updated: now,
      }
      tx.create(this.refs.report(id), report)
      chain.write(ctx, this.event(project, report, 'report.created', { to: 'draft', fields: Object.keys(fields).sort() }))
      return report
    })
  }

  private assertDraft(report: ReportRecord, what: string) {
    if (report.status !== 'draft') {
      throw conflict(
        `report ${report.id} is ${report.status}; only a draft report ${what}${CLOSED.has(report.status) ? ' (amend a signed report to change it)' : ''}`,
      )
    }
  }

  async update(ctx: AuditContext, project: ReportProject, id: string, patch: ReportPatch): Promise<ReportRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      this.assertDraft(report, 'is updated')
      const changed = (Object.keys(patch) as Array<keyof ReportPatch>)
        .filter((k) => patch[k] !== undefined && (patch[k] ?? undefined) !== report[k])
        .sort()
      if (!changed.length) return report
      const chain = await this.chain(tx, project, id)
      const now = this.now()
      const next: Record<string, unknown> = { ...report, updated: now }
      const write: Record<string, unknown> = { updated: now }
      for (const k of changed) {
        const v = patch[k]
        if (v === null) {
          write[k] = FieldValue.delete()
          delete next[k]
        } else {
          write[k] = next[k] = v
        }
      }
      tx.update(this.refs.report(id), write)
      chain.write(ctx, this.event(project, report, 'report.updated', { fields: changed }))
      return next as unknown as ReportRecord
    })
  }

  /** Deletes a draft with its variants, comments and snapshots; a draft amendment frees the revision it would replace. */
  async delete(ctx: AuditContext, project: ReportProject, id: string): Promise<ReportRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      this.assertDraft(report, 'is deleted')
      const [variants, comments, snapshots] = await Promise.all([
        tx.get(this.refs.variants().where('report_id', '==', id)),
        tx.get(this.refs.comments().where('report_id', '==', id)),
        tx.get(this.refs.snapshots().where('report_id', '==', id)),
      ])
      const replaced = report.replaces ? ((await tx.get(this.refs.report(report.replaces))).data() as ReportRecord | undefined) : undefined
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'report', id } },
        ...(replaced ? [{ project_id: project.id, entity: { type: 'report', id: replaced.id } }] : []),
      ])
      for (const d of [...variants.docs, ...comments.docs, ...snapshots.docs]) tx.delete(d.ref)
      tx.delete(this.refs.report(id))
      audit.write(ctx, this.event(project, report, 'report.deleted', { from: report.status }))
      if (replaced?.pending_revision === id) {
        tx.update(this.refs.report(replaced.id), { pending_revision: FieldValue.delete() })
        audit.write(ctx, this.event(project, replaced, 'report.amendment_withdrawn', { reason: `revision ${report.revision} (${id}) deleted` }))
      }
      return report
    })
  }

  /**
   * Moves the report along REPORT_EDGES (never to signed: that is the browser sign-off's). A
   * cancelled or erroneous amendment frees the revision it would have replaced.
   */
  async transition(
    ctx: AuditContext,
    project: ReportProject,
    id: string,
    input: { to: ReportStatus; reason?: string },
    can: Can,
    by: string,
  ): Promise<ReportRecord | Refusal> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      const reason = input.reason?.trim() || undefined
      const shape = shapeOf(report)
      const check = checkMove(shape, input.to, can, reason)
      if (!check.ok) {
        if (check.kind === 'permission') return { refused: 'permission', permission: check.permission } satisfies Refusal
        if (check.kind === 'reason') throw badRequest(`reason: required to move report ${id} to ${input.to}`)
        if (check.kind === 'guard') {
          throw conflict(`report ${id} cannot move to ${input.to}: ${check.failed.map((g) => GUARD_MESSAGES[g](shape)).join('; ')}`)
        }
        const allowed = availableTransitions(shape, can)
        const signing = input.to === 'signed' ? ' (a report is signed in a browser, through its sign-off page)' : ''
        throw conflict(`cannot move report ${id} from ${report.status} to ${input.to}${signing}; allowed: ${allowed.join(', ') || 'none'}`)
      }
      const replaced =
        report.replaces && (input.to === 'cancelled' || input.to === 'entered_in_error')
          ? ((await tx.get(this.refs.report(report.replaces))).data() as ReportRecord | undefined)
          : undefined
      const frees = replaced?.pending_revision === id
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'report', id } },
        ...(frees && replaced ? [{ project_id: project.id, entity: { type: 'report', id: replaced.id } }] : []),
      ])
      const now = this.now()
      const change: StatusChange = { from: report.status, to: input.to, by, at: now, ...(reason ? { reason } : {}) }
      const history = [...report.status_history, change]
      tx.update(this.refs.report(id), { status: input.to, status_history: history, updated: now })
      audit.write(ctx, this.event(project, report, 'report.transitioned', { from: report.status, to: input.to, reason }))
      if (frees && replaced) {
        tx.update(this.refs.report(replaced.id), { pending_revision: FieldValue.delete() })
        audit.write(ctx, this.event(project, replaced, 'report.amendment_withdrawn', { reason: `revision ${report.revision} (${id}) ${input.to}` }))
      }
      return { ...report, status: input.to, status_history: history, updated: now }
    })
  }

  /**
   * Starts an amendment of a signed report: a new draft, revision n + 1, that replaces it, with its
   * fields, variants and comments copied as the starting point. The signed report is not changed
   * but for the link to its pending revision; one amendment at a time.
   */
  async amend(
    ctx: AuditContext,
    project: ReportProject,
    id: string,
    input: { reason: string; kind: AmendmentKind },
    author: UserRef,
  ): Promise<ReportRecord> {
    const newReportId = newId()
    return this.db.transaction(async (tx) => {
      const source = await this.readReport(tx, project.id, id)
      if (source.status !== 'signed') {
        throw conflict(
          `report ${id} is ${source.status}; only a signed report is amended${source.status === 'superseded' && source.superseded_by ? ` (its current revision is ${source.superseded_by})` : ''}`,
        )
      }
      if (source.pending_revision) throw conflict(`report ${id} already has an amendment in progress: report ${source.pending_revision}`)
      const [variants, comments] = await Promise.all([
        tx.get(this.refs.variants().where('report_id', '==', id)),
        tx.get(this.refs.comments().where('report_id', '==', id)),
      ])
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'report', id } },
        { project_id: project.id, entity: { type: 'report', id: newReportId } },
      ])
      const now = this.now()
      const variantRecords = variants.docs.map((d) => d.data() as ReportVariantRecord)
      const commentRecords = comments.docs.map((d) => d.data() as CommentRecord)
      const report: ReportRecord = {
        id: newReportId,
        project_id: project.id,
        org_id: project.org_id,
        order_id: source.order_id,
        order_accession: source.order_accession,
        status: 'draft',
        template_type: source.template_type,
        ...(source.summary !== undefined ? { summary: source.summary } : {}),
        ...(source.notes !== undefined ? { notes: source.notes } : {}),
        ...(source.conclusion !== undefined ? { conclusion: source.conclusion } : {}),
        author,
        revision: source.revision + 1,
        replaces: source.id,
        amendment: { kind: input.kind, reason: input.reason, by: author.id, at: now },
        signatures: [],
        status_history: [],
        variant_count: variantRecords.length,
        unclassified_count: variantRecords.reduce((n, v) => n + unclassified(v), 0),
        comment_count: commentRecords.length,
        open_review_comments: commentRecords.filter((c) => c.type === 'review' && !c.resolved).length,
        snapshot_count: 0,
        created: now,
        updated: now,
      }
      tx.create(this.refs.report(newReportId), report)
      for (const v of variantRecords) {
        tx.create(this.refs.variant(newReportId, v.variant_id), { ...v, report_id: newReportId, added_at: now, added_by: author.id, updated: now })
      }
      for (const c of commentRecords) {
        const copy = newId()
        tx.create(this.refs.comment(copy), { ...c, id: copy, report_id: newReportId, copied_from: c.id })
      }
      tx.update(this.refs.report(id), { pending_revision: newReportId })
      audit.write(
        ctx,
        this.event(project, report, 'report.created', { to: 'draft', reason: `revision ${report.revision}, ${input.kind}: amends report ${id}` }),
      )
      audit.write(
        ctx,
        this.event(project, source, 'report.amended', {
          reason: `${input.kind}: ${input.reason}; revision ${report.revision} is report ${newReportId}`,
        }),
      )
      return report
    })
  }

  // ------------------------------------------------------------------------------------------
  // Variants

  async listVariantRecords(reportId: string): Promise<ReportVariantRecord[]> {
    const q = await this.refs.variants().where('report_id', '==', reportId).get()
    return q.docs.map((d) => d.data() as ReportVariantRecord).sort((a, b) => a.added_at.toMillis() - b.added_at.toMillis())
  }

  /** Each record with the variant's values in the order's current cache (undefined when the cache no longer has it). */
  async join(report: Pick<ReportRecord, 'project_id' | 'order_id'>, records: ReportVariantRecord[]): Promise<JoinedVariant[]> {
    const cached = await readVariants(
      this.variantSource,
      report.project_id,
      report.order_id,
      records.map((r) => r.variant_id),
    )
    return records.map((record) => {
      const found = cached.get(record.variant_id)
      return { record, cached: found ? freezeVariant(found) : undefined }
    })
  }

  async listVariants(report: ReportRecord): Promise<JoinedVariant[]> {
    return this.join(report, await this.listVariantRecords(report.id))
  }

  async getVariant(report: ReportRecord, variantId: string): Promise<JoinedVariant | undefined> {
    const record = (await this.refs.variant(report.id, variantId).get()).data() as ReportVariantRecord | undefined
    if (!record) return undefined
    return (await this.join(report, [record]))[0]
  }

  /** Adds a variant of the order's current cache (404 naming it when the cache has no such variant), with its overrides. */
  async addVariant(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    variantId: string,
    overrides: VariantOverrides,
    by: string,
  ): Promise<JoinedVariant> {
    const cached: CachedVariant | undefined = await this.variantSource.getVariant(project.id, report.order_id, variantId)
    if (!cached) throw notFound(`variant ${variantId} in the variant cache of order ${report.order_accession}`)
    const record = await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      this.assertDraft(current, 'takes variants')
      const ref = this.refs.variant(report.id, variantId)
      if ((await tx.get(ref)).exists) throw conflict(`variant ${variantId} is already on report ${report.id}; PATCH it to change its overrides`)
      if (current.variant_count >= MAX_REPORT_VARIANTS) throw conflict(`report ${report.id} already has ${MAX_REPORT_VARIANTS} variants`)
      const chain = await this.chain(tx, project, report.id)
      const now = this.now()
      const added: ReportVariantRecord = {
        report_id: report.id,
        project_id: project.id,
        order_id: report.order_id,
        variant_id: variantId,
        acmg_criteria: [],
        include_in_report: true,
        added_by: by,
        added_at: now,
        updated: now,
      }
      for (const k of OVERRIDE_FIELDS) {
        const v = overrides[k]
        if (v !== undefined && v !== null) (added as unknown as Record<string, unknown>)[k] = v
      }
      tx.create(ref, added)
      tx.update(this.refs.report(report.id), {
        variant_count: current.variant_count + 1,
        unclassified_count: current.unclassified_count + unclassified(added),
        updated: now,
      })
      chain.write(
        ctx,
        this.event(project, current, 'report.variant_added', {
          reason: `variant ${variantId}`,
          fields: OVERRIDE_FIELDS.filter((k) => overrides[k] !== undefined && overrides[k] !== null),
        }),
      )
      return added
    })
    return { record, cached: freezeVariant(cached) }
  }

  async updateVariant(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    variantId: string,
    overrides: VariantOverrides,
  ): Promise<JoinedVariant> {
    const record = await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      const ref = this.refs.variant(report.id, variantId)
      const existing = (await tx.get(ref)).data() as ReportVariantRecord | undefined
      if (!existing) throw notFound(`variant ${variantId} on report ${report.id}`)
      this.assertDraft(current, "has its variants' overrides changed")
      const changed = OVERRIDE_FIELDS.filter(
        (k) => overrides[k] !== undefined && JSON.stringify(overrides[k] ?? null) !== JSON.stringify(existing[k] ?? null),
      )
      if (!changed.length) return existing
      const chain = await this.chain(tx, project, report.id)
      const now = this.now()
      const next: Record<string, unknown> = { ...existing, updated: now }
      const write: Record<string, unknown> = { updated: now }
      for (const k of changed) {
        const v = overrides[k]
        if (v === null) {
          write[k] = FieldValue.delete()
          delete next[k]
        } else {
          write[k] = next[k] = v
        }
      }
      const after = next as unknown as ReportVariantRecord
      tx.update(ref, write)
      tx.update(this.refs.report(report.id), {
        unclassified_count: current.unclassified_count - unclassified(existing) + unclassified(after),
        updated: now,
      })
      chain.write(ctx, this.event(project, current, 'report.variant_updated', { reason: `variant ${variantId}`, fields: [...changed] }))
      return after
    })
    return (await this.join(report, [record]))[0]!
  }

  async removeVariant(ctx: AuditContext, project: ReportProject, report: ReportRecord, variantId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      const ref = this.refs.variant(report.id, variantId)
      const existing = (await tx.get(ref)).data() as ReportVariantRecord | undefined
      if (!existing) throw notFound(`variant ${variantId} on report ${report.id}`)
      this.assertDraft(current, 'has variants removed')
      const chain = await this.chain(tx, project, report.id)
      const now = this.now()
      tx.delete(ref)
      tx.update(this.refs.report(report.id), {
        variant_count: current.variant_count - 1,
        unclassified_count: current.unclassified_count - unclassified(existing),
        updated: now,
      })
      chain.write(ctx, this.event(project, current, 'report.variant_removed', { reason: `variant ${variantId}` }))
    })
  }

  // ------------------------------------------------------------------------------------------
  // Comments

  async listComments(reportId: string, type: CommentType | undefined, query: PageQuery): Promise<Page<CommentRecord>> {
    let q = this.refs.comments().where('report_id', '==', reportId)
    if (type) q = q.where('type', '==', type)
    return paginate(q, { orderBy: [['created', 'asc']], filters: { type }, query }, (d) => d.data() as CommentRecord)
  }

  async getComment(reportId: string, id: string): Promise<CommentRecord | undefined> {
    if (!UUID_RE.test(id)) return undefined
    const c = (await this.refs.comment(id).get()).data() as CommentRecord | undefined
    return c?.report_id === reportId ? c : undefined
  }

  private assertDiscussable(report: ReportRecord) {
    if (!DISCUSSABLE.has(report.status))
      throw conflict(`report ${report.id} is ${report.status}; comments are written while a report is a draft or in review`)
  }

  async addComment(ctx: AuditContext, project: ReportProject, reportId: string, input: { type: CommentType; comment: string }, author: UserRef) {
    const id = newId()
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, reportId)
      this.assertDiscussable(report)
      if (report.comment_count >= MAX_REPORT_COMMENTS) throw conflict(`report ${reportId} already has ${MAX_REPORT_COMMENTS} comments`)
      const chain = await this.chain(tx, project, reportId)
      const now = this.now()
      const comment: CommentRecord = {
        id,
        report_id: reportId,
        project_id: project.id,
        type: input.type,
        comment: input.comment,
        author,
        created: now,
        updated: now,
      }
      tx.create(this.refs.comment(id), comment)
      tx.update(this.refs.report(reportId), {
        comment_count: report.comment_count + 1,
        open_review_comments: report.open_review_comments + (input.type === 'review' ? 1 : 0),
        updated: now,
      })
      chain.write(ctx, this.event(project, report, 'report.comment_added', { reason: `${input.type} comment ${id}` }))
      return comment
    })
  }

  /**
   * Edits a comment's text (its author only, with comment.write) or resolves or reopens it (with
   * comment.resolve). A resolved comment's text no longer changes.
   */
  async updateComment(
    ctx: AuditContext,
    project: ReportProject,
    reportId: string,
    commentId: string,
    input: { comment?: string; resolved?: boolean },
    caller: { id: string; can: Can },
  ): Promise<CommentRecord | Refusal> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, reportId)
      const existing = (await tx.get(this.refs.comment(commentId))).data() as CommentRecord | undefined
      if (!existing || existing.report_id !== reportId) throw notFound('comment')
      const editsText = input.comment !== undefined && input.comment !== existing.comment
      const resolves = input.resolved !== undefined && input.resolved !== Boolean(existing.resolved)
      if (editsText) {
        if (!caller.can('comment.write')) return { refused: 'permission', permission: 'comment.write' } satisfies Refusal
        if (existing.author.id !== caller.id) {
          return {
            refused: 'rule',
            reason: `edit of comment ${commentId} by someone other than its author`,
            detail: 'only its author edits a comment',
          } satisfies Refusal
        }
      }
      if (resolves && !caller.can('comment.resolve')) return { refused: 'permission', permission: 'comment.resolve' } satisfies Refusal
      if (!editsText && !resolves) return existing
      this.assertDiscussable(report)
      const reopens = resolves && input.resolved === false
      if (editsText && existing.resolved && !reopens) {
        throw conflict(`comment ${commentId} is resolved; reopen it (resolved: false) to edit its text`)
      }
      const chain = await this.chain(tx, project, reportId)
      const now = this.now()
      const next: CommentRecord = { ...existing, updated: now }
      const write: Record<string, unknown> = { updated: now }
      if (editsText) {
        write.comment = next.comment = input.comment!
        write.edited_at = next.edited_at = now
      }
      let open = report.open_review_comments
      if (resolves) {
        if (input.resolved) {
          write.resolved = next.resolved = { by: caller.id, at: now }
          if (existing.type === 'review') open -= 1
        } else {
          write.resolved = FieldValue.delete()
          delete next.resolved
          if (existing.type === 'review') open += 1
        }
      }
      tx.update(this.refs.comment(commentId), write)
      tx.update(this.refs.report(reportId), { open_review_comments: open, updated: now })
      if (editsText) chain.write(ctx, this.event(project, report, 'report.comment_edited', { reason: `comment ${commentId}` }))
      if (resolves) {
        chain.write(
          ctx,
          this.event(project, report, input.resolved ? 'report.comment_resolved' : 'report.comment_reopened', {
            reason: `${existing.type} comment ${commentId}`,
          }),
        )
      }
      return next
    })
  }

  // ------------------------------------------------------------------------------------------
  // Snapshots

  /** The order and its people as the report identifies them. */
  async orderContext(report: Pick<ReportRecord, 'project_id' | 'order_id'>): Promise<OrderContext> {
    const order = await this.orders.resolve(report.project_id, report.order_id)
    if (!order) throw conflict(`order ${report.order_id} of the report no longer exists`)
    const views = await this.orders.samplesOf(order)
    return {
      id: order.id,
      accession: order.accession,
      test_code: order.test_code,
      indication: order.indication ?? null,
      requester: order.requester ? { name: order.requester.name, organization: order.requester.organization ?? null } : null,
      samples: views.map((v) => ({
        sample_id: v.sample.id,
        external_id: v.sample.external_id,
        type: v.sample.type,
        role: v.entry.role,
        subject: v.subject
          ? {
              id: v.subject.id,
              external_id: v.subject.external_id,
              display_name: v.subject.display_name ?? null,
              sex: v.subject.sex,
              birth_date: v.subject.birth_date ?? null,
              affected_status: v.subject.affected_status,
              phenotypes: v.subject.phenotypes,
            }
          : null,
      })),
    }
  }

  /**
   * What the report says now. The cache and the order are read first; the report, its variants
   * and its comments are read in `tx` when given, so that a transaction that acts on the content
   * (a snapshot, a signature) sees exactly what it hashes, and fails if it changes meanwhile.
   */
  async currentContent(
    report: ReportRecord,
    tx?: Transaction,
  ): Promise<{ report: ReportRecord; content: SnapshotContent; json: string; sha256: string }> {
    const order = await this.orderContext(report)
    const cachedRecords = await this.listVariantRecords(report.id)
    const joined = new Map((await this.join(report, cachedRecords)).map((j) => [j.record.variant_id, j.cached]))
    const read = <T>(q: Query) => (tx ? tx.get(q) : q.get()).then((s) => s.docs.map((d) => d.data() as T))
    const current = tx ? await this.readReport(tx, report.project_id, report.id) : report
    const [records, comments] = await Promise.all([
      read<ReportVariantRecord>(this.refs.variants().where('report_id', '==', report.id)),
      read<CommentRecord>(this.refs.comments().where('report_id', '==', report.id)),
    ])
    // A variant added between the two reads has no cache values yet: read it now.
    const missing = records.filter((r) => !joined.has(r.variant_id))
    for (const j of await this.join(report, missing)) joined.set(j.record.variant_id, j.cached)
    const content = snapshotContent({
      report: current,
      order,
      variants: records.map((record) => ({ record, cached: joined.get(record.variant_id) })),
      comments,
    })
    return { report: current, content, ...sealContent(content) }
  }

  /** Takes an immutable snapshot of the report as it is now (or returns the latest one when the content has not changed and `reuse` is set). */
  async takeSnapshot(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    by: string,
    opts: { reuse?: boolean } = {},
  ): Promise<SnapshotRecord> {
    const id = newId()
    return this.db.transaction(async (tx) => {
      const { report: current, json, sha256 } = await this.currentContent(report, tx)
      if (opts.reuse && current.latest_snapshot?.sha256 === sha256) {
        const latest = (await tx.get(this.refs.snapshot(current.latest_snapshot.id))).data() as SnapshotRecord | undefined
        if (latest) return latest
      }
      if (Buffer.byteLength(json) > MAX_SNAPSHOT_BYTES)
        throw conflict(`report ${report.id} is too large to snapshot (${Math.ceil(Buffer.byteLength(json) / 1024)} KiB)`)
      if (current.snapshot_count >= MAX_REPORT_SNAPSHOTS) throw conflict(`report ${report.id} already has ${MAX_REPORT_SNAPSHOTS} snapshots`)
      const chain = await this.chain(tx, project, report.id)
      const now = this.now()
      const seq = current.snapshot_count + 1
      const snapshot: SnapshotRecord = {
        id,
        report_id: report.id,
        project_id: project.id,
        seq,
        content: json,
        sha256,
        taken_by: by,
        taken_at: now,
        report_status: current.status,
      }
      tx.create(this.refs.snapshot(id), snapshot)
      // Not `updated`: a snapshot records the report, it does not change it.
      tx.update(this.refs.report(report.id), { snapshot_count: seq, latest_snapshot: { id, seq, sha256, taken_at: now } })
      chain.write(ctx, this.event(project, current, 'report.snapshot_taken', { reason: `snapshot ${seq} sha256:${sha256}` }))
      return snapshot
    })
  }

  async listSnapshots(reportId: string, query: PageQuery): Promise<Page<SnapshotRecord>> {
    return paginate(
      this.refs.snapshots().where('report_id', '==', reportId),
      { orderBy: [['seq', 'asc']], filters: {}, query },
      (d) => d.data() as SnapshotRecord,
    )
  }

  async getSnapshot(reportId: string, id: string): Promise<SnapshotRecord | undefined> {
    if (!UUID_RE.test(id)) return undefined
    const s = (await this.refs.snapshot(id).get()).data() as SnapshotRecord | undefined
    return s?.report_id === reportId ? s : undefined
  }
}
