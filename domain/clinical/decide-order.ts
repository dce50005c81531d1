import type { Timestamp } from '@google-cloud/firestore'
import type { AuditInput } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import { absent, allow, conflictWith, deny, invalid, missingPermission, type Decision } from '../../lib/decision.js'
import { clinicalEvent, create, put, remove, sameValue } from './decide.js'
import { GERMLINE_ID, startState, takeTransition, type LabflowVersion } from './labflows.js'
import {
  accessionOf,
  MAX_ORDER_SAMPLES,
  type ClinicalChange,
  type ClinicalProject,
  type ClinicalWrite,
  type OrderRecord,
  type OrderSampleEntry,
  type Outcome,
  type Priority,
  type SampleRecord,
  type SampleRole,
  type StatusChange,
  type SubjectRecord,
} from './model.js'
import { availableTransitions, checkMove, FROZEN, LAB_ACTIVE, type OrderStatus } from './order-status.js'
import { familyProblems } from './pedigree.js'

/**
 * The rules of orders, as pure decisions: creation with its accession, PUT, deletion, the status
 * moves of order-status.ts with the signing guards and the freezing of the samples, adding and
 * removing samples, and labflow moves. The store (orders.ts) reads the state named here in its
 * transaction and writes what the decision returns.
 */

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

/** Whether the caller holds a permission in the order's project. */
export type Can = (permission: Permission) => boolean

/** Fields that may change once an order is signed (outcome only in review or once completed). */
const MUTABLE_AFTER_SIGNING: ReadonlySet<string> = new Set(['assignee', 'due_date', 'outcome'])

const orderEntity = (order: Pick<OrderRecord, 'id' | 'accession'>) => ({ type: 'order', id: order.id, parent: order.accession })
const withOrderRef = (sample: SampleRecord, order: Pick<OrderRecord, 'id' | 'accession'>): SampleRecord => ({
  ...sample,
  orders: [...sample.orders, { order_id: order.id, accession: order.accession, frozen: false }],
})
const withoutOrderRef = (sample: SampleRecord, orderId: string): SampleRecord => ({
  ...sample,
  orders: sample.orders.filter((o) => o.order_id !== orderId),
})

/**
 * Takes deleted samples out of the (unsigned) orders holding them, each removal with its
 * order.sample_removed event (`reason` says why, per sample). Used by the deletion of a sample and
 * of a subject; signed orders never reach here, as their samples cannot be deleted.
 */
export function withoutSamples(
  project: ClinicalProject,
  orders: readonly OrderRecord[],
  sampleIds: ReadonlySet<string>,
  now: Timestamp,
  reason: (sampleId: string) => string,
): { writes: ClinicalWrite[]; events: AuditInput[] } {
  const writes: ClinicalWrite[] = []
  const events: AuditInput[] = []
  for (const order of orders) {
    const removed = order.samples.filter((e) => sampleIds.has(e.sample_id))
    if (!removed.length) continue
    const samples = order.samples.filter((e) => !sampleIds.has(e.sample_id))
    writes.push(put('order', { ...order, samples, sample_ids: samples.map((e) => e.sample_id), updated: now }))
    for (const e of removed) events.push(clinicalEvent(project, 'order.sample_removed', orderEntity(order), { reason: reason(e.sample_id) }))
  }
  return { writes, events }
}

export interface CreateOrder {
  project: ClinicalProject
  /** The new order's id (the store draws it). */
  id: string
  input: OrderInput
  by: string
  now: Timestamp
}

export interface CreateOrderState {
  /** The last accession number given in the project in `now`'s year (0 for none). */
  lastNumber: number
  /** The samples the input names, in its order; absent (or another project's) ones are undefined. */
  samples: ReadonlyArray<SampleRecord | undefined>
}

/** A draft order with the next accession of the year, its samples each recording that the order holds them. */
export function decideCreateOrder(state: CreateOrderState, cmd: CreateOrder): Decision<ClinicalChange<OrderRecord>> {
  const { project, id, input, now } = cmd
  if (input.samples.length > MAX_ORDER_SAMPLES) return deny(invalid(`samples: at most ${MAX_ORDER_SAMPLES} samples in one order`))
  const ids = input.samples.map((s) => s.sample_id)
  const dup = ids.find((s, i) => ids.indexOf(s) !== i)
  if (dup) return deny(invalid(`samples: sample ${dup} appears twice`))
  const missing = state.samples.findIndex((s) => !s)
  if (missing >= 0) return deny(invalid(`samples.${missing}.sample_id: no such sample in this project`))
  const year = now.toDate().getUTCFullYear()
  const n = state.lastNumber + 1
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
    samples: input.samples.map((s) => ({ sample_id: s.sample_id, role: s.role, added_at: now, added_by: cmd.by })),
    sample_ids: ids,
    frozen: false,
    ever_signed: false,
    status_history: [],
    created: now,
    updated: now,
    created_by: cmd.by,
  }
  const writes: ClinicalWrite[] = [
    put('counter', { project_id: project.id, year, last: n, updated: now }),
    create('order', order),
    ...state.samples.map((s) => put('sample', withOrderRef(s!, order))),
  ]
  return allow({ result: order, writes }, [
    clinicalEvent(project, 'order.created', orderEntity(order), { to: 'draft', fields: Object.keys(input).sort() }),
  ])
}

export interface UpdateOrder {
  project: ClinicalProject
  update: OrderUpdate
  can: Can
  now: Timestamp
}

/**
 * PUT: a draft takes any field; once signed only assignee and due_date change (and, in review or
 * once completed, the outcome, by someone who may sign reports). Fields sent unchanged are
 * accepted, so a client may send the whole order back.
 */
export function decideUpdateOrder(state: { order?: OrderRecord }, cmd: UpdateOrder): Decision<ClinicalChange<OrderRecord>> {
  const { order } = state
  const { update } = cmd
  if (!order) return deny(absent('order'))
  const current: Record<string, unknown> = { ...order, labflow_id: order.labflow.id }
  const changed = (Object.keys(update) as Array<keyof OrderUpdate>)
    .filter((k) => update[k] !== undefined && !sameValue(k === 'labflow_id' ? (update[k] ?? GERMLINE_ID) : update[k], current[k]))
    .sort()
  if (order.status !== 'draft') {
    const frozen = changed.filter((k) => !MUTABLE_AFTER_SIGNING.has(k))
    if (frozen.length) {
      return deny(
        conflictWith(
          `order ${order.accession} is ${order.status}; only assignee and due_date can change once an order is signed (sent: ${frozen.join(', ')})`,
        ),
      )
    }
  }
  if (changed.includes('outcome')) {
    if (order.status !== 'in_review' && order.status !== 'completed') {
      return deny(conflictWith(`order ${order.accession} is ${order.status}; the outcome is recorded in review or once completed`))
    }
    if (!cmd.can('report.sign')) return deny(missingPermission('report.sign'))
  }
  if (!changed.length) return allow({ result: order, writes: [] })
  const next: Record<string, unknown> = { ...order, updated: cmd.now }
  for (const k of changed) {
    const v = update[k]
    if (k === 'labflow_id') next.labflow = { id: (v as string | null) ?? GERMLINE_ID }
    else if (v === null) delete next[k]
    else next[k] = v
  }
  const updated = next as unknown as OrderRecord
  return allow({ result: updated, writes: [put('order', updated)] }, [
    clinicalEvent(cmd.project, 'order.updated', orderEntity(order), { fields: changed }),
  ])
}

export interface DeleteOrderState {
  order?: OrderRecord
  /** The order's samples that exist. */
  samples: readonly SampleRecord[]
}

/** Deletes an order that was never signed (409 otherwise); its accession is never given again. */
export function decideDeleteOrder(state: DeleteOrderState, cmd: { project: ClinicalProject }): Decision<ClinicalChange<OrderRecord>> {
  const { order } = state
  if (!order) return deny(absent('order'))
  if (order.ever_signed) return deny(conflictWith(`order ${order.accession} has been signed and cannot be deleted; cancel it instead`))
  const writes: ClinicalWrite[] = [...state.samples.map((s) => put('sample', withoutOrderRef(s, order.id))), remove('order', order)]
  return allow({ result: order, writes }, [clinicalEvent(cmd.project, 'order.deleted', orderEntity(order), { from: order.status })])
}

export interface TransitionOrder {
  project: ClinicalProject
  to: OrderStatus
  reason?: string
  can: Can
  by: string
  now: Timestamp
}

export interface TransitionOrderState {
  order?: OrderRecord
  /** The order's samples, in its order; deleted ones are undefined. */
  samples: ReadonlyArray<SampleRecord | undefined>
  /** When signing (draft → signed): the subject of each of those samples (undefined where gone). */
  subjects: ReadonlyArray<SubjectRecord | undefined>
  /** When signing (draft → signed): the latest version of the order's labflow, if it still exists. */
  labflow?: LabflowVersion
}

/**
 * Moves the order along ORDER_EDGES. Signing checks the family roles against the samples' subjects,
 * records who signed, freezes the samples and starts the labflow at its first stage (pinning its
 * latest version); entered_in_error unfreezes them. The samples' frozen flags follow the order's.
 */
export function decideTransitionOrder(state: TransitionOrderState, cmd: TransitionOrder): Decision<ClinicalChange<OrderRecord>> {
  const { order, samples } = state
  const { to, by, now } = cmd
  if (!order) return deny(absent('order'))
  const reason = cmd.reason?.trim() || undefined
  const check = checkMove(order, to, cmd.can, reason)
  if (!check.ok) {
    if (check.kind === 'permission') return deny(missingPermission(check.permission))
    if (check.kind === 'reason') return deny(invalid(`reason: required to move order ${order.accession} to ${to}`))
    const allowed = availableTransitions(order, cmd.can)
    return deny(conflictWith(`cannot move order ${order.accession} from ${order.status} to ${to}; allowed: ${allowed.join(', ') || 'none'}`))
  }
  const from = order.status
  const change: StatusChange = { from, to, by, at: now, ...(reason ? { reason } : {}) }
  const next: OrderRecord = { ...order, status: to, updated: now, status_history: [...order.status_history, change] }
  if (to === 'on_hold') next.held_from = from
  else delete next.held_from
  // Signing is the edge from draft; a resume from on_hold to signed keeps the signature and the labflow's progress.
  if (from === 'draft' && to === 'signed') {
    const missing = order.sample_ids.filter((_, i) => !samples[i])
    if (missing.length) return deny(conflictWith(`order ${order.accession} names deleted sample ${missing.join(', ')}; remove it before signing`))
    const problems = familyProblems(
      order.samples.map((e, i) => ({
        sample: samples[i]!.external_id,
        role: e.role,
        subject: state.subjects[i] ?? { id: samples[i]!.subject_id, sex: 'unknown' },
      })),
    )
    if (problems.length) return deny(conflictWith(`order ${order.accession} cannot be signed: ${problems.join('; ')}`))
    const labflow = state.labflow
    if (!labflow)
      return deny(conflictWith(`order ${order.accession} names labflow ${order.labflow.id}, which no longer exists; choose another with PUT`))
    next.signed = { by, at: now }
    next.ever_signed = true
    next.labflow = { id: labflow.id, version: labflow.version }
    next.labflow_state = startState(labflow, now, by)
  }
  next.frozen = to === 'signed' || (FROZEN.has(to) && order.ever_signed)
  const writes: ClinicalWrite[] = [put('order', next)]
  if (next.frozen !== order.frozen) {
    for (const s of samples) {
      if (s) writes.push(put('sample', { ...s, orders: s.orders.map((o) => (o.order_id === order.id ? { ...o, frozen: next.frozen } : o)) }))
    }
  }
  return allow({ result: next, writes }, [clinicalEvent(cmd.project, 'order.transitioned', orderEntity(order), { from, to, reason })])
}

export interface OrderSampleState {
  order?: OrderRecord
  /** The sample named, if it is one of the project's. */
  sample?: SampleRecord
}

export interface AddOrderSample {
  project: ClinicalProject
  role: SampleRole
  by: string
  now: Timestamp
}

/** Adds a sample with its role to a draft order (or changes the role of one already in it); `added` is false for a role change. */
export function decideAddOrderSample(
  state: OrderSampleState,
  cmd: AddOrderSample,
): Decision<ClinicalChange<{ order: OrderRecord; sample: SampleRecord; added: boolean }>> {
  const { order, sample } = state
  const { role, now } = cmd
  if (!order) return deny(absent('order'))
  if (!sample) return deny(absent('sample'))
  if (order.status !== 'draft') return deny(conflictWith(`order ${order.accession} is ${order.status}; samples are added only while it is a draft`))
  const existing = order.samples.find((e) => e.sample_id === sample.id)
  if (existing?.role === role) return allow({ result: { order, sample, added: false }, writes: [] })
  if (!existing && order.samples.length >= MAX_ORDER_SAMPLES) {
    return deny(conflictWith(`order ${order.accession} already has ${MAX_ORDER_SAMPLES} samples`))
  }
  const entry: OrderSampleEntry = { sample_id: sample.id, role, added_at: now, added_by: cmd.by }
  const entries = existing ? order.samples.map((e) => (e.sample_id === sample.id ? { ...e, role } : e)) : [...order.samples, entry]
  const nextOrder: OrderRecord = { ...order, samples: entries, sample_ids: entries.map((e) => e.sample_id), updated: now }
  const nextSample = existing ? sample : withOrderRef(sample, order)
  const writes: ClinicalWrite[] = [put('order', nextOrder)]
  if (!existing) writes.push(put('sample', nextSample))
  return allow({ result: { order: nextOrder, sample: nextSample, added: !existing }, writes }, [
    clinicalEvent(cmd.project, existing ? 'order.sample_role_changed' : 'order.sample_added', orderEntity(order), {
      from: existing?.role,
      to: role,
      reason: `sample ${sample.external_id}`,
    }),
  ])
}

/** Takes a sample out of a draft order. */
export function decideRemoveOrderSample(
  state: OrderSampleState,
  cmd: { project: ClinicalProject; sampleId: string; now: Timestamp },
): Decision<ClinicalChange<OrderRecord>> {
  const { order, sample } = state
  if (!order) return deny(absent('order'))
  if (!order.sample_ids.includes(cmd.sampleId)) return deny(absent('sample in this order'))
  if (order.status !== 'draft') return deny(conflictWith(`order ${order.accession} is ${order.status}; samples are removed only while it is a draft`))
  const entries = order.samples.filter((e) => e.sample_id !== cmd.sampleId)
  const next: OrderRecord = { ...order, samples: entries, sample_ids: entries.map((e) => e.sample_id), updated: cmd.now }
  const writes: ClinicalWrite[] = [put('order', next)]
  if (sample) writes.push(put('sample', withoutOrderRef(sample, order.id)))
  return allow({ result: next, writes }, [
    clinicalEvent(cmd.project, 'order.sample_removed', orderEntity(order), { reason: `sample ${sample?.external_id ?? cmd.sampleId}` }),
  ])
}

export interface MoveLabflow {
  project: ClinicalProject
  input: { transition: string; reason?: string; assignee?: string | null }
  can: Can
  by: string
  now: Timestamp
}

/**
 * Takes a labflow transition for the order, checked against the version it was signed with
 * (`labflow`, read by the store from the order's labflow state); the order must be signed, in
 * progress or in review.
 */
export function decideMoveLabflow(
  state: { order?: OrderRecord; labflow?: LabflowVersion },
  cmd: MoveLabflow,
): Decision<ClinicalChange<{ order: OrderRecord; labflow: LabflowVersion }>> {
  const { order, labflow } = state
  if (!order) return deny(absent('order'))
  const current = order.labflow_state
  if (!current) return deny(conflictWith(`order ${order.accession} is ${order.status}; its labflow starts when it is signed`))
  if (!LAB_ACTIVE.has(order.status)) return deny(conflictWith(`order ${order.accession} is ${order.status}; its labflow items do not move`))
  if (!labflow) return deny(conflictWith(`labflow ${current.labflow_id} version ${current.version} is missing`))
  const taken = takeTransition(labflow, current, cmd.input, cmd.can, cmd.by, cmd.now)
  if (!taken.ok) return taken
  const { state: moved, entry, taken: transition } = taken.changes
  const next: OrderRecord = { ...order, labflow_state: moved, updated: cmd.now }
  return allow({ result: { order: next, labflow }, writes: [put('order', next)] }, [
    clinicalEvent(cmd.project, 'order.labflow_moved', orderEntity(order), {
      from: entry.from,
      to: entry.to ?? 'removed',
      reason: entry.reason,
      fields: [transition.id],
    }),
  ])
}
