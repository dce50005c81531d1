import { Timestamp } from '@google-cloud/firestore'
import type { AuditInput } from '../../../../lib/audit.js'
import { projectRolesGrant, type Permission, type ProjectRole } from '../../../../lib/auth/roles.js'
import type { Decision } from '../../../../lib/decision.js'
import { ApiError } from '../../../../lib/errors.js'
import {
  decideAddOrderSample,
  decideCreateOrder,
  decideDeleteOrder,
  decideMoveLabflow,
  decideRemoveOrderSample,
  decideTransitionOrder,
  decideUpdateOrder,
  type OrderInput,
  type OrderUpdate,
} from '../../../../domain/clinical/decide-order.js'
import {
  decideCreateSample,
  decideDeleteSample,
  decideUpdateSample,
  type SampleInput,
  type SamplePatch,
} from '../../../../domain/clinical/decide-sample.js'
import {
  decideCreateSubject,
  decideDeleteSubject,
  decideUpdateSubject,
  type SubjectInput,
  type SubjectPatch,
} from '../../../../domain/clinical/decide-subject.js'
import { GERMLINE_ID, GERMLINE_V1 } from '../../../../domain/clinical/labflows.js'
import {
  MAX_ORDER_SAMPLES,
  type ClinicalChange,
  type ClinicalProject,
  type ClinicalWrite,
  type CounterRecord,
  type KeyRecord,
  type OrderRecord,
  type SampleRecord,
  type SampleRole,
  type SubjectRecord,
} from '../../../../domain/clinical/model.js'
import type { OrderStatus } from '../../../../domain/clinical/order-status.js'
import type { PedigreeNode } from '../../../../domain/clinical/pedigree.js'
import { orderSampleViews, orderSamplesheet } from '../../../../domain/clinical/samplesheet.js'

/**
 * The clinical records in memory, changed only through the pure decisions: each command reads the
 * state its store reads in the transaction (subjects.ts, samples.ts, orders.ts), decides, and
 * applies the documents the decision writes, as `commit` does in Firestore. The property tests
 * drive it with command sequences; a document created twice fails the test, as the transaction would,
 * and so does a decision that changes a record it was given (they are frozen).
 */
export const PROJECT: ClinicalProject = { id: 'p1', org_id: 'o1', bucket_name: 'lab' }

export interface World {
  subjects: Map<string, SubjectRecord>
  samples: Map<string, SampleRecord>
  orders: Map<string, OrderRecord>
  keys: Map<string, KeyRecord>
  counters: Map<string, CounterRecord>
  events: AuditInput[]
  /** The clock, one second per command, and the ids drawn so far. */
  tick: number
}

export const emptyWorld = (): World => ({
  subjects: new Map(),
  samples: new Map(),
  orders: new Map(),
  keys: new Map(),
  counters: new Map(),
  events: [],
  tick: 0,
})

/** A copy to compare against later: the records themselves are frozen, so the maps are all that is copied. */
export const snapshot = (w: World): World => ({
  ...w,
  subjects: new Map(w.subjects),
  samples: new Map(w.samples),
  orders: new Map(w.orders),
  keys: new Map(w.keys),
  counters: new Map(w.counters),
  events: [...w.events],
})

/** Stored records are frozen: a decision that changed the state it was given instead of returning writes would throw. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

const keyId = (k: Pick<KeyRecord, 'project_id' | 'kind' | 'external_id'>) => `${k.project_id}|${k.kind}|${k.external_id}`
const counterId = (c: Pick<CounterRecord, 'project_id' | 'year'>) => `${c.project_id}~${c.year}`

function apply(w: World, writes: readonly ClinicalWrite[]) {
  for (const write of writes) {
    const [map, id] = ((): [Map<string, unknown>, string] => {
      switch (write.kind) {
        case 'subject':
          return [w.subjects, write.doc.id]
        case 'sample':
          return [w.samples, write.doc.id]
        case 'order':
          return [w.orders, write.doc.id]
        case 'key':
          return [w.keys, keyId(write.doc)]
        case 'counter':
          return [w.counters, counterId(write.doc)]
      }
    })()
    if (write.op === 'create' && map.has(id)) throw new Error(`${write.kind} ${id} is created twice`)
    if (write.op === 'delete') map.delete(id)
    else map.set(id, deepFreeze(write.doc))
  }
}

/** The pedigree a store reads for the named parents: each subject and its ancestors. */
function pedigree(w: World, ids: ReadonlyArray<string | null | undefined>): Map<string, PedigreeNode> {
  const nodes = new Map<string, PedigreeNode>()
  const todo = ids.filter((id): id is string => !!id)
  while (todo.length) {
    const id = todo.pop()!
    const s = w.subjects.get(id)
    if (nodes.has(id) || !s) continue
    nodes.set(id, s)
    for (const p of [s.mother_id, s.father_id]) if (p) todo.push(p)
  }
  return nodes
}

const samplesOfSubject = (w: World, id: string) => [...w.samples.values()].filter((s) => s.subject_id === id)
const childrenOf = (w: World, id: string, role: 'mother' | 'father') => [...w.subjects.values()].filter((s) => s[`${role}_id`] === id)
const ordersOf = (w: World, samples: readonly SampleRecord[]) =>
  [...new Set(samples.flatMap((s) => s.orders.map((o) => o.order_id)))].flatMap((id) => {
    const o = w.orders.get(id)
    return o ? [o] : []
  })

export type Command =
  | { kind: 'createSubject'; input: SubjectInput }
  | { kind: 'updateSubject'; id: string; patch: SubjectPatch }
  | { kind: 'deleteSubject'; id: string }
  | { kind: 'createSample'; input: SampleInput }
  | { kind: 'updateSample'; id: string; patch: SamplePatch }
  | { kind: 'deleteSample'; id: string }
  | { kind: 'createOrder'; input: OrderInput }
  | { kind: 'updateOrder'; id: string; update: OrderUpdate }
  | { kind: 'deleteOrder'; id: string }
  | { kind: 'transition'; id: string; to: OrderStatus; reason?: string }
  | { kind: 'addSample'; id: string; sampleId: string; role: SampleRole }
  | { kind: 'removeSample'; id: string; sampleId: string }
  | { kind: 'moveLabflow'; id: string; transition: string; reason?: string }

/** Who sends a command: a user with one project role (the routes have already checked clinical.write). */
export interface Caller {
  id: string
  role: ProjectRole
}

export const canAs =
  (role: ProjectRole) =>
  (permission: Permission): boolean =>
    projectRolesGrant([role], permission)

/** Runs a command against the world; an allowed decision's writes and events are applied. */
export function run(w: World, caller: Caller, cmd: Command): Decision<ClinicalChange<unknown>> {
  w.tick += 1
  const now = Timestamp.fromMillis(Date.UTC(2026, 10, 1) + w.tick * 1000)
  const id = `${cmd.kind}-${w.tick}`
  const project = PROJECT
  const can = canAs(caller.role)
  const by = caller.id
  const decision = ((): Decision<ClinicalChange<unknown>> => {
    switch (cmd.kind) {
      case 'createSubject': {
        const { input } = cmd
        const keyTaken = w.keys.has(keyId({ project_id: project.id, kind: 'subject', external_id: input.external_id }))
        return decideCreateSubject({ keyTaken, pedigree: pedigree(w, [input.mother_id, input.father_id]) }, { project, id, input, by, now })
      }
      case 'updateSubject': {
        const { patch } = cmd
        const current = w.subjects.get(cmd.id)
        const newKeyTaken =
          patch.external_id !== undefined &&
          patch.external_id !== current?.external_id &&
          w.keys.has(keyId({ project_id: project.id, kind: 'subject', external_id: patch.external_id }))
        const sexChanges = current !== undefined && patch.sex !== undefined && patch.sex !== current.sex
        return decideUpdateSubject(
          {
            current,
            samples: current ? samplesOfSubject(w, cmd.id) : [],
            newKeyTaken,
            pedigree: pedigree(w, [patch.mother_id, patch.father_id]),
            children: { mother: sexChanges ? childrenOf(w, cmd.id, 'mother') : [], father: sexChanges ? childrenOf(w, cmd.id, 'father') : [] },
          },
          { project, id: cmd.id, patch, now },
        )
      }
      case 'deleteSubject': {
        const subject = w.subjects.get(cmd.id)
        const samples = subject ? samplesOfSubject(w, cmd.id) : []
        const children = subject ? [...childrenOf(w, cmd.id, 'mother'), ...childrenOf(w, cmd.id, 'father')] : []
        return decideDeleteSubject({ subject, samples, children, orders: ordersOf(w, samples) }, { project, id: cmd.id, by, now })
      }
      case 'createSample': {
        const { input } = cmd
        const keyTaken = w.keys.has(keyId({ project_id: project.id, kind: 'sample', external_id: input.external_id }))
        return decideCreateSample({ keyTaken, subject: w.subjects.get(input.subject_id) }, { project, id, input, by, now })
      }
      case 'updateSample': {
        const { patch } = cmd
        const current = w.samples.get(cmd.id)
        const newKeyTaken =
          patch.external_id !== undefined &&
          patch.external_id !== current?.external_id &&
          w.keys.has(keyId({ project_id: project.id, kind: 'sample', external_id: patch.external_id }))
        const moves = current !== undefined && patch.subject_id !== undefined && patch.subject_id !== current.subject_id
        const state = {
          current,
          newKeyTaken,
          from: moves ? w.subjects.get(current.subject_id) : undefined,
          to: moves ? w.subjects.get(patch.subject_id!) : undefined,
        }
        return decideUpdateSample(state, { project, id: cmd.id, patch, now })
      }
      case 'deleteSample': {
        const sample = w.samples.get(cmd.id)
        const state = { sample, subject: sample && w.subjects.get(sample.subject_id), orders: sample ? ordersOf(w, [sample]) : [] }
        return decideDeleteSample(state, { project, now })
      }
      case 'createOrder': {
        const year = now.toDate().getUTCFullYear()
        const lastNumber = w.counters.get(counterId({ project_id: project.id, year }))?.last ?? 0
        const samples = cmd.input.samples.slice(0, MAX_ORDER_SAMPLES + 1).map((s) => w.samples.get(s.sample_id))
        return decideCreateOrder({ lastNumber, samples }, { project, id, input: cmd.input, by, now })
      }
      case 'updateOrder':
        return decideUpdateOrder({ order: w.orders.get(cmd.id) }, { project, update: cmd.update, can, now })
      case 'deleteOrder': {
        const order = w.orders.get(cmd.id)
        const samples = (order?.sample_ids ?? []).flatMap((s) => w.samples.get(s) ?? [])
        return decideDeleteOrder({ order, samples }, { project })
      }
      case 'transition': {
        const order = w.orders.get(cmd.id)
        const samples = (order?.sample_ids ?? []).map((s) => w.samples.get(s))
        const signs = order?.status === 'draft' && cmd.to === 'signed'
        const subjects = signs && samples.every((s) => s) ? samples.map((s) => w.subjects.get(s!.subject_id)) : []
        const labflow = signs && order.labflow.id === GERMLINE_ID ? GERMLINE_V1 : undefined
        return decideTransitionOrder({ order, samples, subjects, labflow }, { project, to: cmd.to, reason: cmd.reason, can, by, now })
      }
      case 'addSample':
        return decideAddOrderSample({ order: w.orders.get(cmd.id), sample: w.samples.get(cmd.sampleId) }, { project, role: cmd.role, by, now })
      case 'removeSample':
        return decideRemoveOrderSample({ order: w.orders.get(cmd.id), sample: w.samples.get(cmd.sampleId) }, { project, sampleId: cmd.sampleId, now })
      case 'moveLabflow': {
        const order = w.orders.get(cmd.id)
        const pinned = order?.labflow_state
        const labflow = pinned?.labflow_id === GERMLINE_ID && pinned.version === 1 ? GERMLINE_V1 : undefined
        return decideMoveLabflow({ order, labflow }, { project, input: { transition: cmd.transition, reason: cmd.reason }, can, by, now })
      }
    }
  })()
  if (decision.ok) {
    apply(w, decision.changes.writes)
    w.events.push(...decision.events)
  }
  return decision
}

/** An order's samplesheet as GET /orders/{id}/samplesheet answers it: the rows, or the 409's detail. */
export function samplesheetOf(w: World, order: OrderRecord): unknown {
  try {
    return orderSamplesheet(order, orderSampleViews(order, w.samples, w.subjects))
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, detail: err.detail }
    throw err
  }
}
