import { FieldValue, Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { badRequest, conflict, notFound } from '../../lib/errors.js'
import { newId, UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import type { RunLink, RunLinkWrite, RunRecord } from '../runs/store.js'
import { GERMLINE_ID, startState, takeTransition, type LabflowStore, type LabflowVersion } from './labflows.js'
import {
  ACCESSION_RE,
  accessionOf,
  clinicalRefs,
  readAll,
  MAX_ORDER_SAMPLES,
  type OrderRecord,
  type OrderSampleEntry,
  type Outcome,
  type Priority,
  type SampleRecord,
  type SampleRole,
  type StatusChange,
  type SubjectRecord,
} from './model.js'
import { availableTransitions, checkMove, FROZEN, LAB_ACTIVE, RUNNABLE, type OrderStatus } from './order-status.js'
import { familyProblems } from './pedigree.js'
import { samplesheetRows, type SamplesheetRow } from './samplesheet.js'
import type { ClinicalProject } from './subjects.js'

export interface OrderFields {
  priority: Priority
  test_code: string
  indication?: string
  requester?: { name: string; organization?: string }
  assignee?: string
  due_date?: string
  notes?: string
  labflow_id?: string
}

export interface OrderInput extends OrderFields {
  samples: Array<{ sample_id: string; role: SampleRole }>
}

/** PUT: the fields sent replace the stored ones; null clears an optional field. */
export type OrderUpdate = { [K in keyof OrderFields]?: OrderFields[K] | null } & { outcome?: Outcome }

export interface OrderFilters {
  status?: OrderStatus
  priority?: Priority
  assignee?: string
}

/** Fields that may change once an order is signed (outcome only in review or once completed). */
const MUTABLE_AFTER_SIGNING = new Set(['assignee', 'due_date', 'outcome'])

type Can = (permission: Permission) => boolean
export type Refusal = { refused: 'permission'; permission: Permission }
export const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'refused' in x

/** One sample of an order as the API shows it: the sample, its role and its subject. */
export interface OrderSampleView {
  entry: OrderSampleEntry
  sample: SampleRecord
  subject?: SubjectRecord
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

/**
 * Orders (FHIR ServiceRequest): an accession from a per-project, per-year counter (never reused),
 * status moves along ORDER_EDGES only, samples with roles added while the order is a draft and
 * frozen from signing on. Every change to an order and its samples meets on the documents both
 * write (the order, and each sample's `orders` list), so concurrent changes serialize.
 */
export class OrderStore {
  private readonly refs: ReturnType<typeof clinicalRefs>
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    private readonly labflows: LabflowStore,
  ) {
    this.refs = clinicalRefs(db)
  }

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }

  /** An order of the project by id or accession; another project's is absent. */
  async resolve(projectId: string, idOrAccession: string): Promise<OrderRecord | undefined> {
    if (ACCESSION_RE.test(idOrAccession)) {
      const q = await this.refs.orders().where('project_id', '==', projectId).where('accession', '==', idOrAccession).limit(1).get()
      return q.docs[0]?.data() as OrderRecord | undefined
    }
    if (!UUID_RE.test(idOrAccession)) return undefined
    const order = (await this.refs.order(idOrAccession).get()).data() as OrderRecord | undefined
    return order?.project_id === projectId ? order : undefined
  }

  async list(projectId: string, filters: OrderFilters, query: PageQuery): Promise<Page<OrderRecord>> {
    let q = this.refs.orders().where('project_id', '==', projectId)
    if (filters.status !== undefined) q = q.where('status', '==', filters.status)
    if (filters.priority !== undefined) q = q.where('priority', '==', filters.priority)
    if (filters.assignee !== undefined) q = q.where('assignee', '==', filters.assignee)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as OrderRecord)
  }

  private async readOrder(tx: Transaction, projectId: string, id: string): Promise<OrderRecord> {
    const order = (await tx.get(this.refs.order(id))).data() as OrderRecord | undefined
    if (!order || order.project_id !== projectId) throw notFound('order')
    return order
  }

  private async readSample(tx: Transaction, projectId: string, id: string): Promise<SampleRecord | undefined> {
    const s = (await tx.get(this.refs.sample(id))).data() as SampleRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  /** Samples of the project by id, in one read; absent (or another project's) ones are undefined. */
  private async readSamples(tx: Transaction, projectId: string, ids: readonly string[]): Promise<Array<SampleRecord | undefined>> {
    const found = await readAll<SampleRecord>(
      tx,
      ids.map((id) => this.refs.sample(id)),
    )
    return found.map((s) => (s?.project_id === projectId ? s : undefined))
  }

  async create(ctx: AuditContext, project: ClinicalProject, input: OrderInput, by: string): Promise<OrderRecord> {
    if (input.samples.length > MAX_ORDER_SAMPLES) throw badRequest(`samples: at most ${MAX_ORDER_SAMPLES} samples in one order`)
    const ids = input.samples.map((s) => s.sample_id)
    const dup = ids.find((s, i) => ids.indexOf(s) !== i)
    if (dup) throw badRequest(`samples: sample ${dup} appears twice`)
    const id = newId()
    return this.db.transaction(async (tx) => {
      const now = this.now()
      const year = now.toDate().getUTCFullYear()
      const counterRef = this.refs.counter(project.id, year)
      const counter = await tx.get(counterRef)
      const found = await this.readSamples(tx, project.id, ids)
      const missing = found.findIndex((s) => !s)
      if (missing >= 0) throw badRequest(`samples.${missing}.sample_id: no such sample in this project`)
      const samples = found as SampleRecord[]
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      const n = ((counter.get('last') as number | undefined) ?? 0) + 1
      const accession = accessionOf(year, n)
      const { samples: _, labflow_id, ...fields } = input
      const order: OrderRecord = {
        ...fields,
        id,
        project_id: project.id,
        org_id: project.org_id,
        accession,
        status: 'draft',
        outcome: 'pending',
        labflow: { id: labflow_id ?? GERMLINE_ID },
        samples: input.samples.map((s) => ({ sample_id: s.sample_id, role: s.role, added_at: now, added_by: by })),
        sample_ids: ids,
        frozen: false,
        ever_signed: false,
        status_history: [],
        created: now,
        updated: now,
        created_by: by,
      }
      tx.set(counterRef, { project_id: project.id, year, last: n, updated: now })
      tx.create(this.refs.order(id), order)
      for (const s of samples) tx.update(this.refs.sample(s.id), { orders: [...s.orders, { order_id: id, accession, frozen: false }] })
      chain.write(ctx, {
        action: 'order.created',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: accession },
        change: { to: 'draft', fields: Object.keys(input).sort() },
      })
      return order
    })
  }

  /**
   * PUT: a draft takes any field; once signed only assignee and due_date change (and, in review
   * or once completed, the outcome, by someone who may sign reports). Fields sent unchanged are
   * accepted, so a client may send the whole order back.
   */
  async update(ctx: AuditContext, project: ClinicalProject, id: string, update: OrderUpdate, can: Can): Promise<OrderRecord | Refusal> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const current: Record<string, unknown> = { ...order, labflow_id: order.labflow.id }
      const changed = (Object.keys(update) as Array<keyof OrderUpdate>)
        .filter((k) => update[k] !== undefined && !sameValue(k === 'labflow_id' ? (update[k] ?? GERMLINE_ID) : update[k], current[k]))
        .sort()
      if (order.status !== 'draft') {
        const frozen = changed.filter((k) => !MUTABLE_AFTER_SIGNING.has(k))
        if (frozen.length) {
          throw conflict(
            `order ${order.accession} is ${order.status}; only assignee and due_date can change once an order is signed (sent: ${frozen.join(', ')})`,
          )
        }
      }
      if (changed.includes('outcome')) {
        if (order.status !== 'in_review' && order.status !== 'completed') {
          throw conflict(`order ${order.accession} is ${order.status}; the outcome is recorded in review or once completed`)
        }
        if (!can('report.sign')) return { refused: 'permission', permission: 'report.sign' } satisfies Refusal
      }
      if (!changed.length) return order
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      const now = this.now()
      const patch: Record<string, unknown> = { updated: now }
      const next: Record<string, unknown> = { ...order, updated: now }
      for (const k of changed) {
        const v = update[k]
        if (k === 'labflow_id') {
          patch.labflow = { id: (v as string | null) ?? GERMLINE_ID }
          next.labflow = patch.labflow
        } else if (v === null) {
          patch[k] = FieldValue.delete()
          delete next[k]
        } else {
          patch[k] = v
          next[k] = v
        }
      }
      tx.update(this.refs.order(id), patch)
      chain.write(ctx, {
        action: 'order.updated',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { fields: changed },
      })
      return next as unknown as OrderRecord
    })
  }

  /** Deletes an order that was never signed (409 otherwise); its accession is never given again. */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      if (order.ever_signed) throw conflict(`order ${order.accession} has been signed and cannot be deleted; cancel it instead`)
      const samples = (await this.readSamples(tx, project.id, order.sample_ids)).filter((s): s is SampleRecord => !!s)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      for (const s of samples) tx.update(this.refs.sample(s.id), { orders: s.orders.filter((o) => o.order_id !== id) })
      tx.delete(this.refs.order(id))
      chain.write(ctx, {
        action: 'order.deleted',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { from: order.status },
      })
      return order
    })
  }

  /**
   * Moves the order to `to` along ORDER_EDGES in one transaction that re-reads it, so two
   * concurrent moves never both succeed. Signing checks the family roles against the samples'
   * subjects read in the same transaction, freezes the samples and starts the labflow at its first
   * stage (pinning its latest version); entered_in_error unfreezes them.
   */
  async transition(
    ctx: AuditContext,
    project: ClinicalProject,
    id: string,
    input: { to: OrderStatus; reason?: string },
    can: Can,
    by: string,
  ): Promise<OrderRecord | Refusal> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const reason = input.reason?.trim() || undefined
      const check = checkMove(order, input.to, can, reason)
      if (!check.ok) {
        if (check.kind === 'permission') return { refused: 'permission', permission: check.permission } satisfies Refusal
        if (check.kind === 'reason') throw badRequest(`reason: required to move order ${order.accession} to ${input.to}`)
        const allowed = availableTransitions(order, can)
        throw conflict(`cannot move order ${order.accession} from ${order.status} to ${input.to}; allowed: ${allowed.join(', ') || 'none'}`)
      }
      const from = order.status
      const to = input.to
      const samples = await this.readSamples(tx, project.id, order.sample_ids)
      let labflow: LabflowVersion | undefined
      if (to === 'signed') {
        const missing = order.sample_ids.filter((_, i) => !samples[i])
        if (missing.length) throw conflict(`order ${order.accession} names deleted sample ${missing.join(', ')}; remove it before signing`)
        const subjects = await readAll<SubjectRecord>(
          tx,
          samples.map((s) => this.refs.subject(s!.subject_id)),
        )
        const problems = familyProblems(
          order.samples.map((e, i) => ({
            sample: samples[i]!.external_id,
            role: e.role,
            subject: subjects[i] ?? { id: samples[i]!.subject_id, sex: 'unknown' },
          })),
        )
        if (problems.length) throw conflict(`order ${order.accession} cannot be signed: ${problems.join('; ')}`)
        labflow = await this.labflows.latestIn(tx, project.id, order.labflow.id)
        if (!labflow) throw conflict(`order ${order.accession} names labflow ${order.labflow.id}, which no longer exists; choose another with PUT`)
      }
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      const now = this.now()
      const change: StatusChange = { from, to, by, at: now, ...(reason ? { reason } : {}) }
      const patch: Record<string, unknown> = { status: to, updated: now, status_history: [...order.status_history, change] }
      const next: OrderRecord = { ...order, status: to, updated: now, status_history: [...order.status_history, change] }
      if (to === 'on_hold') patch.held_from = next.held_from = from
      else if (order.held_from) {
        patch.held_from = FieldValue.delete()
        delete next.held_from
      }
      if (to === 'signed' && labflow) {
        next.signed = { by, at: now }
        next.ever_signed = true
        next.labflow = { id: labflow.id, version: labflow.version }
        next.labflow_state = startState(labflow, now, by)
        Object.assign(patch, { signed: next.signed, ever_signed: true, labflow: next.labflow, labflow_state: next.labflow_state })
      }
      const frozen = FROZEN.has(to) && order.ever_signed ? true : to === 'signed'
      if (frozen !== order.frozen) {
        patch.frozen = next.frozen = frozen
        for (const s of samples) {
          if (s) tx.update(this.refs.sample(s.id), { orders: s.orders.map((o) => (o.order_id === id ? { ...o, frozen } : o)) })
        }
      }
      tx.update(this.refs.order(id), patch)
      chain.write(ctx, {
        action: 'order.transitioned',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { from, to, reason },
      })
      return next
    })
  }

  /** Adds a sample with its role to a draft order (or changes the role of one already in it). */
  async addSample(
    ctx: AuditContext,
    project: ClinicalProject,
    id: string,
    sampleId: string,
    role: SampleRole,
    by: string,
  ): Promise<{ order: OrderRecord; sample: SampleRecord; added: boolean }> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const sample = await this.readSample(tx, project.id, sampleId)
      if (!sample) throw notFound('sample')
      if (order.status !== 'draft') throw conflict(`order ${order.accession} is ${order.status}; samples are added only while it is a draft`)
      const existing = order.samples.find((e) => e.sample_id === sampleId)
      if (existing?.role === role) return { order, sample, added: false }
      if (!existing && order.samples.length >= MAX_ORDER_SAMPLES) throw conflict(`order ${order.accession} already has ${MAX_ORDER_SAMPLES} samples`)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      const now = this.now()
      const entry: OrderSampleEntry = { sample_id: sampleId, role, added_at: now, added_by: by }
      const samples = existing ? order.samples.map((e) => (e.sample_id === sampleId ? { ...e, role } : e)) : [...order.samples, entry]
      const sampleIds = samples.map((e) => e.sample_id)
      tx.update(this.refs.order(id), { samples, sample_ids: sampleIds, updated: now })
      const sampleOrders = existing ? sample.orders : [...sample.orders, { order_id: id, accession: order.accession, frozen: false }]
      if (!existing) tx.update(this.refs.sample(sampleId), { orders: sampleOrders })
      chain.write(ctx, {
        action: existing ? 'order.sample_role_changed' : 'order.sample_added',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { from: existing?.role, to: role, reason: `sample ${sample.external_id}` },
      })
      return { order: { ...order, samples, sample_ids: sampleIds, updated: now }, sample: { ...sample, orders: sampleOrders }, added: !existing }
    })
  }

  async removeSample(ctx: AuditContext, project: ClinicalProject, id: string, sampleId: string): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const sample = await this.readSample(tx, project.id, sampleId)
      if (!order.sample_ids.includes(sampleId)) throw notFound('sample in this order')
      if (order.status !== 'draft') throw conflict(`order ${order.accession} is ${order.status}; samples are removed only while it is a draft`)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      const now = this.now()
      const samples = order.samples.filter((e) => e.sample_id !== sampleId)
      const sampleIds = samples.map((e) => e.sample_id)
      tx.update(this.refs.order(id), { samples, sample_ids: sampleIds, updated: now })
      if (sample) tx.update(this.refs.sample(sampleId), { orders: sample.orders.filter((o) => o.order_id !== id) })
      chain.write(ctx, {
        action: 'order.sample_removed',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { reason: `sample ${sample?.external_id ?? sampleId}` },
      })
      return { ...order, samples, sample_ids: sampleIds, updated: now }
    })
  }

  /** The order's samples in order, each with its role and subject. */
  async samplesOf(order: OrderRecord): Promise<OrderSampleView[]> {
    if (!order.samples.length) return []
    const sampleSnaps = await this.db.firestore.getAll(...order.samples.map((e) => this.refs.sample(e.sample_id)))
    const samples = sampleSnaps.map((s) => s.data() as SampleRecord | undefined)
    const subjectIds = [...new Set(samples.flatMap((s) => (s ? [s.subject_id] : [])))]
    const subjectSnaps = subjectIds.length ? await this.db.firestore.getAll(...subjectIds.map((s) => this.refs.subject(s))) : []
    const subjects = new Map(subjectSnaps.flatMap((s) => (s.exists ? [[s.id, s.data() as SubjectRecord] as const] : [])))
    return order.samples.flatMap((entry, i) => {
      const sample = samples[i]
      return sample && sample.project_id === order.project_id ? [{ entry, sample, subject: subjects.get(sample.subject_id) }] : []
    })
  }

  /** The nf-core/raredisease rows of the order (409 for an order without samples or a sample without FASTQ). */
  async samplesheet(order: OrderRecord): Promise<SamplesheetRow[]> {
    const views = await this.samplesOf(order)
    if (!views.length) throw conflict(`order ${order.accession} has no samples`)
    return samplesheetRows(
      order.accession,
      views.map((v) => ({
        sample: v.sample,
        subject: v.subject ?? { id: v.sample.subject_id, sex: 'unknown', affected_status: 'unknown' },
        role: v.entry.role,
      })),
    )
  }

  /**
   * Takes a labflow transition for the order, checked against the version it was signed with;
   * the order must be signed, in progress or in review.
   */
  async moveLabflow(
    ctx: AuditContext,
    project: ClinicalProject,
    id: string,
    input: { transition: string; reason?: string; assignee?: string | null },
    can: Can,
    by: string,
  ): Promise<{ order: OrderRecord; labflow: LabflowVersion } | Refusal> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const state = order.labflow_state
      if (!state) throw conflict(`order ${order.accession} is ${order.status}; its labflow starts when it is signed`)
      if (!LAB_ACTIVE.has(order.status)) throw conflict(`order ${order.accession} is ${order.status}; its labflow items do not move`)
      const labflow = await this.labflows.version(state.labflow_id, state.version, tx)
      if (!labflow) throw conflict(`labflow ${state.labflow_id} version ${state.version} is missing`)
      const now = this.now()
      const result = takeTransition(labflow, state, input, can, by, now)
      if ('refused' in result) return result
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'order', id } })
      tx.update(this.refs.order(id), { labflow_state: result.state, updated: now })
      chain.write(ctx, {
        action: 'order.labflow_moved',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'order', id, parent: order.accession },
        change: { from: result.entry.from, to: result.entry.to ?? 'removed', reason: result.entry.reason, fields: [result.taken.id] },
      })
      return { order: { ...order, labflow_state: result.state, updated: now }, labflow }
    })
  }

  /**
   * The link of a run submitted for this order (compute service, POST /runs): the order must be
   * signed and not on hold, completed, cancelled or entered in error (409), and a signed order
   * moves to in_progress with the run, in the run's transaction.
   */
  runLink(project: { id: string; org_id: string }, order: Pick<OrderRecord, 'id' | 'accession'>): RunLink {
    return {
      read: async (tx): Promise<RunLinkWrite> => {
        const current = await this.readOrder(tx, project.id, order.id)
        if (!RUNNABLE.has(current.status)) {
          throw conflict(
            `order ${current.accession} is ${current.status}; a run needs an order that is signed, in progress or in review (not a draft, on hold, completed, cancelled or entered in error)`,
          )
        }
        const starts = current.status === 'signed'
        return {
          order_id: current.id,
          order_accession: current.accession,
          audit: starts ? { project_id: project.id, entity: { type: 'order', id: current.id } } : undefined,
          write: (wtx, run: RunRecord, audit) => {
            if (!starts) return
            const reason = `run ${run.name} submitted`
            const change: StatusChange = { from: 'signed', to: 'in_progress', by: run.created_by, at: run.created, reason }
            wtx.update(this.refs.order(current.id), {
              status: 'in_progress',
              status_history: [...current.status_history, change],
              updated: run.created,
            })
            audit({
              action: 'order.transitioned',
              project_id: project.id,
              org_id: project.org_id,
              entity: { type: 'order', id: current.id, parent: current.accession },
              change: { from: 'signed', to: 'in_progress', reason },
            })
          },
        }
      },
    }
  }
}
