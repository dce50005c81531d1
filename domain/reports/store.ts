import type { DocumentReference, Query, Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse, type Allowed, type DeniedOn } from '../../lib/decision.js'
import { conflict, notFound } from '../../lib/errors.js'
import { newId, UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { directReads, readBatch, type DocReader } from '../../lib/reads.js'
import { clinicalRefs, type OrderRecord } from '../clinical/model.js'
import type { OrderStore } from '../clinical/orders.js'
import {
  decideAddComment,
  decideAddVariant,
  decideAmend,
  decideCommentUpdate,
  decideCreate,
  decideDelete,
  decideRemoveVariant,
  decideSnapshot,
  decideTransition,
  decideUpdate,
  decideUpdateVariant,
  type Can,
  type OrderFacts,
  type ReportFields,
  type ReportPatch,
  type ReportProject,
  type SnapshotState,
  type VariantOverrides,
} from './decide.js'
import {
  reportRefs,
  type AmendmentKind,
  type CommentRecord,
  type CommentType,
  type ReportRecord,
  type ReportVariantRecord,
  type SnapshotRecord,
  type TemplateType,
  type UserRef,
} from './model.js'
import { sealContent, snapshotContent, type OrderContext, type SnapshotContent } from './snapshot.js'
import type { ReportStatus } from './status.js'
import { freezeVariant, readVariants, type CachedVariant, type FrozenVariant, type VariantSource } from './variant-source.js'

export interface ReportFilters {
  order_id?: string
  status?: ReportStatus
  template_type?: TemplateType
}

/** A report variant as read: the report's record joined with the variant's values in the order's current cache. */
export interface JoinedVariant {
  record: ReportVariantRecord
  cached: FrozenVariant | undefined
}

/** Where a refusal of a report's change is recorded (a 403's access.denied event): on the report. */
const on = (project: ReportProject, reportId: string): DeniedOn => ({
  scope: { project_id: project.id, org_id: project.org_id },
  entity: { type: 'report', id: reportId },
})

/**
 * Reports of orders (DOMAIN.md, Reports): drafts are edited, sent to review, signed in the browser
 * (see SignoffStore) and never edited afterwards; an amendment is a new revision. The rules are
 * decide.ts's: each change reads the report and its order in one transaction, asks the decision,
 * and writes the records it returns with their audit events, so that concurrent changes to one
 * report serialize and a refusal writes nothing.
 */
export class ReportStore {
  readonly refs: ReturnType<typeof reportRefs>
  private readonly orderRef: (id: string) => DocumentReference

  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    private readonly orders: OrderStore,
    private readonly variantSource: VariantSource,
  ) {
    this.refs = reportRefs(db)
    this.orderRef = clinicalRefs(db).order
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

  /** The report's order as the rules see it, read in `tx`: absent when it no longer exists (or is not the report's project's). */
  async readOrder(tx: Transaction, report: Pick<ReportRecord, 'project_id' | 'order_id'>): Promise<OrderFacts | undefined> {
    const order = (await tx.get(this.orderRef(report.order_id))).data() as OrderRecord | undefined
    return order?.project_id === report.project_id ? order : undefined
  }

  /** The orders of these reports, in one read, by order id (for the API's view of what a caller may do now). */
  async ordersOf(reports: Array<Pick<ReportRecord, 'project_id' | 'order_id'>>): Promise<Map<string, OrderFacts>> {
    const ids = [...new Set(reports.map((r) => r.order_id))]
    const snaps = await readBatch(
      this.db.firestore,
      ids.map((id) => this.orderRef(id)),
    )
    const projects = new Set(reports.map((r) => r.project_id))
    const found = snaps.map((s) => s?.data() as OrderRecord | undefined).filter((o): o is OrderRecord => !!o && projects.has(o.project_id))
    return new Map(found.map((o) => [o.id, o]))
  }

  /**
   * Writes an allowed decision in `tx`: prepares the audit chains of its events (reads, so after
   * every other read of the transaction), runs `write` (its records), and records its events.
   */
  async commit<C>(tx: Transaction, ctx: AuditContext, decision: Allowed<C>, write: (changes: C) => void): Promise<void> {
    const audit = await this.audit.prepareMany(
      tx,
      decision.events.map((e) => ({ project_id: e.project_id, entity: e.entity })),
    )
    write(decision.changes)
    for (const e of decision.events) audit.write(ctx, e)
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
    const found = await this.orders.resolve(project.id, orderIdOrAccession)
    if (!found) throw notFound(`order ${orderIdOrAccession}`)
    const id = newId()
    return this.db.transaction(async (tx) => {
      // Read in the transaction, so that an order cancelled meanwhile gets no new report.
      const order = (await tx.get(this.orderRef(found.id))).data() as OrderRecord | undefined
      const decision = orRefuse(decideCreate(order, { project, orderRef: orderIdOrAccession, id, fields, author, now: this.clock.now() }))
      await this.commit(tx, ctx, decision, ({ report }) => tx.create(this.refs.report(id), report))
      return decision.changes.report
    })
  }

  async update(ctx: AuditContext, project: ReportProject, id: string, patch: ReportPatch, by: string): Promise<ReportRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      const order = await this.readOrder(tx, report)
      const decision = orRefuse(decideUpdate(report, order, { patch, by, now: this.clock.now() }), on(project, id))
      await this.commit(tx, ctx, decision, (c) => c.report && tx.set(this.refs.report(id), c.report))
      return decision.changes.report ?? report
    })
  }

  /** Deletes a draft with its variants, comments and snapshots; a draft amendment frees the revision it would replace. */
  async delete(ctx: AuditContext, project: ReportProject, id: string): Promise<ReportRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      const [variants, comments, snapshots] = await Promise.all([
        tx.get(this.refs.variants().where('report_id', '==', id)),
        tx.get(this.refs.comments().where('report_id', '==', id)),
        tx.get(this.refs.snapshots().where('report_id', '==', id)),
      ])
      const replaced = report.replaces ? ((await tx.get(this.refs.report(report.replaces))).data() as ReportRecord | undefined) : undefined
      const decision = orRefuse(decideDelete(report, replaced), on(project, id))
      await this.commit(tx, ctx, decision, (c) => {
        for (const d of [...variants.docs, ...comments.docs, ...snapshots.docs]) tx.delete(d.ref)
        tx.delete(this.refs.report(id))
        if (c.replaced) tx.set(this.refs.report(c.replaced.id), c.replaced)
      })
      return report
    })
  }

  /** Moves the report along REPORT_EDGES (decideTransition); never to signed: that is the browser sign-off's. */
  async transition(
    ctx: AuditContext,
    project: ReportProject,
    id: string,
    input: { to: ReportStatus; reason?: string },
    can: Can,
    by: string,
  ): Promise<ReportRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, id)
      const order = await this.readOrder(tx, report)
      // The revision an amendment would replace is freed when the amendment is withdrawn.
      const withdraws = input.to === 'cancelled' || input.to === 'entered_in_error'
      const replaced =
        report.replaces && withdraws ? ((await tx.get(this.refs.report(report.replaces))).data() as ReportRecord | undefined) : undefined
      const decision = orRefuse(decideTransition(report, order, replaced, { ...input, can, by, now: this.clock.now() }), on(project, id))
      await this.commit(tx, ctx, decision, (c) => {
        tx.set(this.refs.report(id), c.report)
        if (c.replaced) tx.set(this.refs.report(c.replaced.id), c.replaced)
      })
      return decision.changes.report
    })
  }

  /**
   * Starts an amendment of a signed report (decideAmend): a new draft revision with the signed
   * one's fields, variants and comments copied; the signed report only gains the link to it.
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
      const order = await this.readOrder(tx, source)
      const [variants, comments] = await Promise.all([
        tx.get(this.refs.variants().where('report_id', '==', id)),
        tx.get(this.refs.comments().where('report_id', '==', id)),
      ])
      const decision = orRefuse(
        decideAmend(source, order, {
          ...input,
          id: newReportId,
          author,
          now: this.clock.now(),
          variants: variants.docs.map((d) => d.data() as ReportVariantRecord),
          comments: comments.docs.map((d) => d.data() as CommentRecord),
          commentIds: comments.docs.map(() => newId()),
        }),
        on(project, id),
      )
      await this.commit(tx, ctx, decision, (c) => {
        tx.create(this.refs.report(newReportId), c.report)
        for (const v of c.variants) tx.create(this.refs.variant(newReportId, v.variant_id), v)
        for (const comment of c.comments) tx.create(this.refs.comment(comment.id), comment)
        tx.set(this.refs.report(id), c.source)
      })
      return decision.changes.report
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
    const ref = this.refs.variant(report.id, variantId)
    const record = await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      const order = await this.readOrder(tx, current)
      const onReport = (await tx.get(ref)).exists
      const decision = orRefuse(
        decideAddVariant(current, order, { variantId, overrides, onReport, by, now: this.clock.now() }),
        on(project, report.id),
      )
      await this.commit(tx, ctx, decision, (c) => {
        tx.create(ref, c.variant)
        tx.set(this.refs.report(report.id), c.report)
      })
      return decision.changes.variant
    })
    return { record, cached: freezeVariant(cached) }
  }

  async updateVariant(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    variantId: string,
    overrides: VariantOverrides,
    by: string,
  ): Promise<JoinedVariant> {
    const ref = this.refs.variant(report.id, variantId)
    const record = await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      const order = await this.readOrder(tx, current)
      const existing = (await tx.get(ref)).data() as ReportVariantRecord | undefined
      const decision = orRefuse(
        decideUpdateVariant(current, order, existing, { variantId, overrides, by, now: this.clock.now() }),
        on(project, report.id),
      )
      await this.commit(tx, ctx, decision, (c) => {
        if (!c.report) return
        tx.set(ref, c.variant)
        tx.set(this.refs.report(report.id), c.report)
      })
      return decision.changes.variant
    })
    return (await this.join(report, [record]))[0]!
  }

  async removeVariant(ctx: AuditContext, project: ReportProject, report: ReportRecord, variantId: string, by: string): Promise<void> {
    const ref = this.refs.variant(report.id, variantId)
    await this.db.transaction(async (tx) => {
      const current = await this.readReport(tx, project.id, report.id)
      const order = await this.readOrder(tx, current)
      const existing = (await tx.get(ref)).data() as ReportVariantRecord | undefined
      const decision = orRefuse(decideRemoveVariant(current, order, existing, { variantId, by, now: this.clock.now() }), on(project, report.id))
      await this.commit(tx, ctx, decision, (c) => {
        tx.delete(ref)
        tx.set(this.refs.report(report.id), c.report)
      })
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

  async addComment(ctx: AuditContext, project: ReportProject, reportId: string, input: { type: CommentType; comment: string }, author: UserRef) {
    const id = newId()
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, reportId)
      const decision = orRefuse(decideAddComment(report, { ...input, id, author, now: this.clock.now() }), on(project, reportId))
      await this.commit(tx, ctx, decision, (c) => {
        tx.create(this.refs.comment(id), c.comment)
        tx.set(this.refs.report(reportId), c.report)
      })
      return decision.changes.comment
    })
  }

  /** Edits a comment's text, or resolves or reopens it (decideCommentUpdate). */
  async updateComment(
    ctx: AuditContext,
    project: ReportProject,
    reportId: string,
    commentId: string,
    input: { comment?: string; resolved?: boolean },
    caller: { id: string; can: Can },
  ): Promise<CommentRecord> {
    return this.db.transaction(async (tx) => {
      const report = await this.readReport(tx, project.id, reportId)
      const existing = (await tx.get(this.refs.comment(commentId))).data() as CommentRecord | undefined
      const decision = orRefuse(decideCommentUpdate(report, existing, { ...input, commentId, caller, now: this.clock.now() }), on(project, reportId))
      await this.commit(tx, ctx, decision, (c) => {
        if (!c.report) return
        tx.set(this.refs.comment(commentId), c.comment)
        tx.set(this.refs.report(reportId), c.report)
      })
      return decision.changes.comment
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

  /**
   * What a snapshot of the report needs, read in `tx`: its content now and, with `reuse`, the latest
   * snapshot when it says the same (decideSnapshot reuses it).
   */
  async snapshotState(tx: Transaction, report: ReportRecord, reuse: boolean): Promise<SnapshotState> {
    const { report: current, json, sha256 } = await this.currentContent(report, tx)
    const latestId = reuse && current.latest_snapshot?.sha256 === sha256 ? current.latest_snapshot.id : undefined
    const latest = latestId ? ((await tx.get(this.refs.snapshot(latestId))).data() as SnapshotRecord | undefined) : undefined
    return { report: current, json, sha256, ...(latest ? { latest } : {}) }
  }

  /** Writes what decideSnapshot allowed (after every read of `tx`). */
  writeSnapshot(tx: Transaction, changes: { snapshot: SnapshotRecord; report?: ReportRecord }): void {
    if (!changes.report) return
    tx.create(this.refs.snapshot(changes.snapshot.id), changes.snapshot)
    tx.set(this.refs.report(changes.report.id), changes.report)
  }

  /** Takes an immutable snapshot of the report as it is now. */
  async takeSnapshot(ctx: AuditContext, project: ReportProject, report: ReportRecord, by: string): Promise<SnapshotRecord> {
    const id = newId()
    return this.db.transaction(async (tx) => {
      const state = await this.snapshotState(tx, report, false)
      const decision = orRefuse(decideSnapshot(state, { id, by, now: this.clock.now() }), on(project, report.id))
      await this.commit(tx, ctx, decision, (c) => this.writeSnapshot(tx, c))
      return decision.changes.snapshot
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
