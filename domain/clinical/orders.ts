import { Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse, type DeniedOn } from '../../lib/decision.js'
import { conflict, notFound } from '../../lib/errors.js'
import { newId, UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import type { RunLink, RunLinkWrite, RunRecord } from '../runs/store.js'
import {
  decideAddOrderSample,
  decideCreateOrder,
  decideDeleteOrder,
  decideMoveLabflow,
  decideRemoveOrderSample,
  decideTransitionOrder,
  decideUpdateOrder,
  type Can,
  type OrderInput,
  type OrderUpdate,
} from './decide-order.js'
import type { LabflowStore, LabflowVersion } from './labflows.js'
import {
  ACCESSION_RE,
  clinicalRefs,
  commit,
  MAX_ORDER_SAMPLES,
  readAll,
  type ClinicalProject,
  type OrderRecord,
  type Priority,
  type SampleRecord,
  type SampleRole,
  type StatusChange,
  type SubjectRecord,
} from './model.js'
import { RUNNABLE, type OrderStatus } from './order-status.js'
import { orderSampleViews, orderSamplesheet, type OrderSampleView, type SamplesheetRow } from './samplesheet.js'

export interface OrderFilters {
  status?: OrderStatus
  priority?: Priority
  assignee?: string
}

/**
 * Orders (FHIR ServiceRequest): the store reads in a transaction what the decisions of
 * decide-order.ts need and writes what they return. Every change to an order and its samples meets
 * on the documents both write (the order, and each sample's `orders` list), so concurrent changes
 * serialize.
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

  /** The order, if it is one of the project's. */
  private async readOrder(tx: Transaction, projectId: string, id: string): Promise<OrderRecord | undefined> {
    const order = (await tx.get(this.refs.order(id))).data() as OrderRecord | undefined
    return order?.project_id === projectId ? order : undefined
  }

  /** Samples of the project by id, in one read, in the order asked; absent (or another project's) ones are undefined. */
  private async readSamples(tx: Transaction, projectId: string, ids: readonly string[]): Promise<Array<SampleRecord | undefined>> {
    const unique = [...new Set(ids)]
    const found = await readAll<SampleRecord>(
      tx,
      unique.map((id) => this.refs.sample(id)),
    )
    const byId = new Map(found.flatMap((s) => (s?.project_id === projectId ? [[s.id, s] as const] : [])))
    return ids.map((id) => byId.get(id))
  }

  /** Where a 403 of a decision on the order is recorded (access.denied on the order). */
  private static on(project: ClinicalProject, id: string): DeniedOn {
    return { scope: { project_id: project.id, org_id: project.org_id }, entity: { type: 'order', id } }
  }

  async create(ctx: AuditContext, project: ClinicalProject, input: OrderInput, by: string): Promise<OrderRecord> {
    const id = newId()
    return this.db.transaction(async (tx) => {
      const now = this.now()
      const counter = await tx.get(this.refs.counter(project.id, now.toDate().getUTCFullYear()))
      const samples = await this.readSamples(
        tx,
        project.id,
        input.samples.slice(0, MAX_ORDER_SAMPLES + 1).map((s) => s.sample_id),
      )
      const state = { lastNumber: (counter.get('last') as number | undefined) ?? 0, samples }
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decideCreateOrder(state, { project, id, input, by, now })))
    })
  }

  /**
   * PUT: a draft takes any field; once signed only assignee and due_date change (and, in review
   * or once completed, the outcome, by someone who may sign reports).
   */
  async update(ctx: AuditContext, project: ClinicalProject, id: string, update: OrderUpdate, can: Can): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const decision = decideUpdateOrder({ order }, { project, update, can, now: this.now() })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision, OrderStore.on(project, id)))
    })
  }

  /** Deletes an order that was never signed (409 otherwise); its accession is never given again. */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const samples = order ? (await this.readSamples(tx, project.id, order.sample_ids)).filter((s): s is SampleRecord => !!s) : []
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decideDeleteOrder({ order, samples }, { project })))
    })
  }

  /**
   * Moves the order to `to` in one transaction that re-reads it and its samples (and, to sign, their
   * subjects and the labflow's latest version), so two concurrent moves never both succeed and a
   * signature always checks the records as they are committed.
   */
  async transition(
    ctx: AuditContext,
    project: ClinicalProject,
    id: string,
    input: { to: OrderStatus; reason?: string },
    can: Can,
    by: string,
  ): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const samples = order ? await this.readSamples(tx, project.id, order.sample_ids) : []
      // Signing checks the samples' subjects and pins the labflow's latest version (a missing sample refuses it first).
      const signs = order?.status === 'draft' && input.to === 'signed'
      const subjects =
        signs && samples.every((s) => s)
          ? await readAll<SubjectRecord>(
              tx,
              samples.map((s) => this.refs.subject(s!.subject_id)),
            )
          : []
      const labflow = signs ? await this.labflows.latestIn(tx, project.id, order.labflow.id) : undefined
      const state = { order, samples, subjects, labflow }
      const decision = decideTransitionOrder(state, { project, to: input.to, reason: input.reason, can, by, now: this.now() })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision, OrderStore.on(project, id)))
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
      const [sample] = await this.readSamples(tx, project.id, [sampleId])
      const decision = decideAddOrderSample({ order, sample }, { project, role, by, now: this.now() })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision))
    })
  }

  async removeSample(ctx: AuditContext, project: ClinicalProject, id: string, sampleId: string): Promise<OrderRecord> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const [sample] = await this.readSamples(tx, project.id, [sampleId])
      const decision = decideRemoveOrderSample({ order, sample }, { project, sampleId, now: this.now() })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision))
    })
  }

  /** The order's samples in order, each with its role and subject. */
  async samplesOf(order: OrderRecord): Promise<OrderSampleView[]> {
    if (!order.samples.length) return []
    const sampleSnaps = await this.db.firestore.getAll(...order.samples.map((e) => this.refs.sample(e.sample_id)))
    const samples = sampleSnaps.flatMap((s) => (s.exists ? [s.data() as SampleRecord] : []))
    const subjectIds = [...new Set(samples.map((s) => s.subject_id))]
    const subjectSnaps = subjectIds.length ? await this.db.firestore.getAll(...subjectIds.map((s) => this.refs.subject(s))) : []
    const subjects = subjectSnaps.flatMap((s) => (s.exists ? [s.data() as SubjectRecord] : []))
    return orderSampleViews(order, new Map(samples.map((s) => [s.id, s])), new Map(subjects.map((s) => [s.id, s])))
  }

  /** The nf-core/raredisease rows of the order (409 for an order without samples or a sample without FASTQ). */
  async samplesheet(order: OrderRecord): Promise<SamplesheetRow[]> {
    return orderSamplesheet(order, await this.samplesOf(order))
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
  ): Promise<{ order: OrderRecord; labflow: LabflowVersion }> {
    return this.db.transaction(async (tx) => {
      const order = await this.readOrder(tx, project.id, id)
      const pinned = order?.labflow_state
      const labflow = pinned ? await this.labflows.version(pinned.labflow_id, pinned.version, tx) : undefined
      const decision = decideMoveLabflow({ order, labflow }, { project, input, can, by, now: this.now() })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision, OrderStore.on(project, id)))
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
        // The first runs of a signed order, submitted together, would each read it and then write it
        // (signed → in_progress): the runs of this process take turns at it (Db.takeTurn).
        await this.db.takeTurn(tx, this.refs.order(order.id))
        const current = await this.readOrder(tx, project.id, order.id)
        if (!current) throw notFound('order')
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
