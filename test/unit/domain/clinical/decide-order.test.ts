import { describe, expect, it } from 'vitest'
import { absent, conflictWith, invalid, missingPermission } from '../../../../lib/decision.js'
import {
  decideAddOrderSample,
  decideCreateOrder,
  decideDeleteOrder,
  decideMoveLabflow,
  decideRemoveOrderSample,
  decideTransitionOrder,
  decideUpdateOrder,
  type OrderUpdate,
  type TransitionOrderState,
} from '../../../../domain/clinical/decide-order.js'
import { GERMLINE_V1, startState } from '../../../../domain/clinical/labflows.js'
import type { OrderRecord, SampleRecord } from '../../../../domain/clinical/model.js'
import type { OrderStatus } from '../../../../domain/clinical/order-status.js'
import { canAs, PROJECT } from './clinical-model.js'
import { ACCESSION, NOW, orderRecord, orderRef, sampleRecord, subjectRecord } from './records.js'

const owner = canAs('owner')
const lab = canAs('lab')
const signedOrder = (over: Partial<OrderRecord> = {}) =>
  orderRecord({
    status: 'signed',
    frozen: true,
    ever_signed: true,
    signed: { by: 'u-signer', at: NOW },
    labflow: { id: GERMLINE_V1.id, version: 1 },
    labflow_state: { ...startState(GERMLINE_V1, NOW, 'u-signer'), stage: 'extraction' },
    ...over,
  })
const sampleWrites = (writes: Array<{ kind: string; doc: unknown }>) =>
  writes.filter((w) => w.kind === 'sample').map((w) => (w.doc as SampleRecord).orders)

describe('order transitions', () => {
  const move = (to: OrderStatus, state: Partial<TransitionOrderState>, can = owner, reason?: string) =>
    decideTransitionOrder(
      { order: orderRecord(), samples: [sampleRecord({ orders: [orderRef(false)] })], subjects: [subjectRecord()], labflow: GERMLINE_V1, ...state },
      { project: PROJECT, to, reason, can, by: 'u-lab', now: NOW },
    )

  it('signs a draft: records who and when, pins the labflow, starts it, and freezes its samples', () => {
    const decision = move('signed', {}, lab)
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.result).toMatchObject({
      status: 'signed',
      signed: { by: 'u-lab', at: NOW },
      ever_signed: true,
      frozen: true,
      labflow: { id: GERMLINE_V1.id, version: 1 },
      labflow_state: { stage: 'accessioning' },
    })
    expect(sampleWrites(decision.changes.writes)).toEqual([[orderRef(true)]])
    expect(decision.events).toEqual([
      {
        action: 'order.transitioned',
        project_id: PROJECT.id,
        org_id: PROJECT.org_id,
        entity: { type: 'order', id: 'ord-1', parent: ACCESSION },
        change: { from: 'draft', to: 'signed', reason: undefined },
      },
    ])
  })

  it('unfreezes the samples when the order is entered in error, and keeps it unsignable', () => {
    const decision = move('entered_in_error', { order: signedOrder(), samples: [sampleRecord({ orders: [orderRef(true)] })] }, owner, 'wrong patient')
    expect(decision.ok && decision.changes.result).toMatchObject({ status: 'entered_in_error', frozen: false, ever_signed: true })
    expect(decision.ok && sampleWrites(decision.changes.writes)).toEqual([[orderRef(false)]])
  })

  it.each([
    ['on_hold', 'signed', 'a reason'],
    ['in_progress', 'signed', undefined],
    ['cancelled', 'in_progress', 'withdrawn'],
  ] satisfies Array<[OrderStatus, OrderStatus, string | undefined]>)(
    'keeps the samples frozen moving to %s, writing only the order',
    (to, from, reason) => {
      const decision = move(to, { order: signedOrder({ status: from }), samples: [sampleRecord({ orders: [orderRef(true)] })] }, owner, reason)
      expect(decision.ok && decision.changes.result.frozen).toBe(true)
      expect(decision.ok && decision.changes.writes.map((w) => w.kind)).toEqual(['order'])
    },
  )

  it('resumes from hold without signing again: the signature and the labflow stage stay', () => {
    const held = signedOrder({ status: 'on_hold', held_from: 'signed' })
    const decision = move('signed', { order: held, subjects: [], labflow: undefined }, lab)
    expect(decision.ok && decision.changes.result).toMatchObject({ status: 'signed', signed: held.signed, labflow_state: held.labflow_state })
    expect(decision.ok && 'held_from' in decision.changes.result).toBe(false)
  })

  it.each([
    ['an edge beyond the role: 403 naming the permission', 'cancelled', {}, lab, 'dup', missingPermission('order.cancel')],
    [
      'a move off the edges: 409 naming the allowed targets',
      'completed',
      {},
      owner,
      undefined,
      conflictWith(`cannot move order ${ACCESSION} from draft to completed; allowed: signed, cancelled, entered_in_error`),
    ],
    [
      'a move that needs a reason, without one: 400',
      'cancelled',
      {},
      owner,
      '  ',
      invalid(`reason: required to move order ${ACCESSION} to cancelled`),
    ],
    [
      'signing with a deleted sample: 409',
      'signed',
      { samples: [undefined] },
      owner,
      undefined,
      conflictWith(`order ${ACCESSION} names deleted sample sam-1; remove it before signing`),
    ],
    [
      'signing with a labflow gone: 409',
      'signed',
      { labflow: undefined },
      owner,
      undefined,
      conflictWith(`order ${ACCESSION} names labflow ${GERMLINE_V1.id}, which no longer exists; choose another with PUT`),
    ],
    [
      'signing a mother whose subject is male: 409',
      'signed',
      { order: orderRecord({ samples: [{ ...orderRecord().samples[0]!, role: 'mother' }] }) },
      owner,
      undefined,
      conflictWith(
        `order ${ACCESSION} cannot be signed: a family order needs exactly one proband (found 0); sample S-1 is the mother but its subject is male`,
      ),
    ],
    ['an unknown order: 404', 'signed', { order: undefined }, owner, undefined, absent('order')],
  ] satisfies Array<[string, OrderStatus, Partial<TransitionOrderState>, typeof owner, string | undefined, unknown]>)(
    'refuses %s',
    (_, to, state, can, reason, refusal) => {
      expect(move(to, state, can, reason)).toEqual({ ok: false, refusal })
    },
  )
})

describe('order PUT', () => {
  const put = (update: OrderUpdate, order: OrderRecord | undefined, can = owner) =>
    decideUpdateOrder({ order }, { project: PROJECT, update, can, now: NOW })

  it('changes any field of a draft, clears with null, and records the fields that changed', () => {
    const decision = put({ test_code: 'WES', priority: 'routine', notes: null }, orderRecord())
    expect(decision.ok && decision.changes.result).toMatchObject({ test_code: 'WES', updated: NOW })
    expect(decision.ok && decision.events[0]?.change).toEqual({ fields: ['test_code'] })
  })

  it.each([
    [
      'a frozen field of a signed order: 409 naming it',
      { test_code: 'WES' },
      signedOrder(),
      owner,
      conflictWith(`order ${ACCESSION} is signed; only assignee and due_date can change once an order is signed (sent: test_code)`),
    ],
    [
      'an outcome before review: 409',
      { outcome: 'positive' },
      signedOrder(),
      owner,
      conflictWith(`order ${ACCESSION} is signed; the outcome is recorded in review or once completed`),
    ],
    [
      'an outcome in review by one who may not sign reports: 403',
      { outcome: 'positive' },
      signedOrder({ status: 'in_review' }),
      canAs('analyst'),
      missingPermission('report.sign'),
    ],
    ['an unknown order: 404', { test_code: 'WES' }, undefined, owner, absent('order')],
  ] satisfies Array<[string, OrderUpdate, OrderRecord | undefined, typeof owner, unknown]>)('refuses %s', (_, update, order, can, refusal) => {
    expect(put(update, order, can)).toEqual({ ok: false, refusal })
  })

  it('lets a signed order take its assignee and due date, and a reviewer its outcome in review', () => {
    expect(put({ assignee: 'u-2', due_date: '2027-01-01', test_code: 'WGS' }, signedOrder()).ok).toBe(true)
    expect(put({ outcome: 'negative' }, signedOrder({ status: 'in_review' }), canAs('reviewer')).ok).toBe(true)
  })
})

describe('order samples', () => {
  const sibling = sampleRecord({ id: 'sam-2', external_id: 'S-2' })
  const add = (order: OrderRecord, sample: SampleRecord | undefined = sibling, role: 'sibling' | 'proband' = 'sibling') =>
    decideAddOrderSample({ order, sample }, { project: PROJECT, role, by: 'u-lab', now: NOW })
  const remove = (order: OrderRecord, sampleId = 'sam-1') =>
    decideRemoveOrderSample({ order, sample: sampleRecord({ orders: [orderRef(false)] }) }, { project: PROJECT, sampleId, now: NOW })

  it('adds a sample to a draft, recording the order on the sample; the same role again is no change', () => {
    const decision = add(orderRecord())
    expect(decision.ok && decision.changes.result.added).toBe(true)
    expect(decision.ok && decision.changes.result.order.sample_ids).toEqual(['sam-1', 'sam-2'])
    expect(decision.ok && sampleWrites(decision.changes.writes)).toEqual([[{ order_id: 'ord-1', accession: ACCESSION, frozen: false }]])
    expect(add(orderRecord(), sampleRecord(), 'proband')).toMatchObject({ ok: true, changes: { writes: [], result: { added: false } }, events: [] })
  })

  it('changes the role of a sample already in a draft without touching the sample', () => {
    const decision = add(orderRecord(), sampleRecord({ orders: [orderRef(false)] }), 'sibling')
    expect(decision.ok && decision.changes.writes.map((w) => w.kind)).toEqual(['order'])
    expect(decision.ok && decision.events[0]).toMatchObject({ action: 'order.sample_role_changed', change: { from: 'proband', to: 'sibling' } })
  })

  it.each(['signed', 'in_progress', 'on_hold', 'cancelled', 'entered_in_error'] satisfies OrderStatus[])(
    'refuses to add or remove samples once the order is %s (409)',
    (status) => {
      expect(add(signedOrder({ status }))).toEqual({
        ok: false,
        refusal: conflictWith(`order ${ACCESSION} is ${status}; samples are added only while it is a draft`),
      })
      expect(remove(signedOrder({ status }))).toEqual({
        ok: false,
        refusal: conflictWith(`order ${ACCESSION} is ${status}; samples are removed only while it is a draft`),
      })
    },
  )

  it('answers 404 for a sample that is not in the order, or not in the project', () => {
    expect(remove(orderRecord(), 'sam-9')).toEqual({ ok: false, refusal: absent('sample in this order') })
    expect(decideAddOrderSample({ order: orderRecord(), sample: undefined }, { project: PROJECT, role: 'sibling', by: 'u', now: NOW })).toEqual({
      ok: false,
      refusal: absent('sample'),
    })
  })
})

describe('order creation and deletion', () => {
  const create = (samples: Array<SampleRecord | undefined>, ids = samples.map((s, i) => s?.id ?? `gone-${i}`), lastNumber = 41) =>
    decideCreateOrder(
      { lastNumber, samples },
      {
        project: PROJECT,
        id: 'ord-9',
        input: { priority: 'routine', test_code: 'WGS', samples: ids.map((sample_id) => ({ sample_id, role: 'proband' })) },
        by: 'u-lab',
        now: NOW,
      },
    )

  it('gives the next accession of the year and records the order on each of its samples', () => {
    const decision = create([sampleRecord()])
    expect(decision.ok && decision.changes.result).toMatchObject({
      accession: 'ORD-2026-000042',
      status: 'draft',
      frozen: false,
      sample_ids: ['sam-1'],
    })
    expect(decision.ok && decision.changes.writes.map((w) => `${w.op} ${w.kind}`)).toEqual(['put counter', 'create order', 'put sample'])
  })

  it.each([
    ['a sample named twice: 400', [sampleRecord(), sampleRecord()], undefined, invalid('samples: sample sam-1 appears twice')],
    [
      'a sample of no project of ours: 400 naming the entry',
      [sampleRecord(), undefined],
      undefined,
      invalid('samples.1.sample_id: no such sample in this project'),
    ],
    [
      'more than 50 samples: 400',
      Array.from({ length: 51 }, () => undefined),
      Array.from({ length: 51 }, (_, i) => `s${i}`),
      invalid('samples: at most 50 samples in one order'),
    ],
  ] satisfies Array<[string, Array<SampleRecord | undefined>, string[] | undefined, unknown]>)('refuses %s', (_, samples, ids, refusal) => {
    expect(create(samples, ids)).toEqual({ ok: false, refusal })
  })

  it('deletes a draft and takes it off its samples; refuses an order ever signed, even cancelled (409)', () => {
    const decision = decideDeleteOrder({ order: orderRecord(), samples: [sampleRecord({ orders: [orderRef(false)] })] }, { project: PROJECT })
    expect(decision.ok && sampleWrites(decision.changes.writes)).toEqual([[]])
    expect(decideDeleteOrder({ order: signedOrder({ status: 'cancelled', frozen: true }), samples: [] }, { project: PROJECT })).toEqual({
      ok: false,
      refusal: conflictWith(`order ${ACCESSION} has been signed and cannot be deleted; cancel it instead`),
    })
  })
})

describe('labflow moves of an order', () => {
  const moveLabflow = (order: OrderRecord | undefined, transition: string, can = lab) =>
    decideMoveLabflow({ order, labflow: GERMLINE_V1 }, { project: PROJECT, input: { transition }, can, by: 'u-lab', now: NOW })

  it('takes a transition of the pinned version and records order.labflow_moved', () => {
    const decision = moveLabflow(signedOrder(), 'advance-extraction')
    expect(decision.ok && decision.changes.result.order.labflow_state?.stage).toBe('library_prep')
    expect(decision.ok && decision.events[0]?.change).toEqual({
      from: 'extraction',
      to: 'library_prep',
      reason: undefined,
      fields: ['advance-extraction'],
    })
  })

  it.each([
    ['a draft: 409', orderRecord(), 'advance-accessioning', lab, conflictWith(`order ${ACCESSION} is draft; its labflow starts when it is signed`)],
    [
      'a completed order: 409',
      signedOrder({ status: 'completed' }),
      'advance-extraction',
      lab,
      conflictWith(`order ${ACCESSION} is completed; its labflow items do not move`),
    ],
    ['a transition beyond the role: 403', signedOrder(), 'remove-extraction', lab, missingPermission('order.cancel')],
  ] satisfies Array<[string, OrderRecord, string, typeof lab, unknown]>)('refuses %s', (_, order, transition, can, refusal) => {
    expect(moveLabflow(order, transition, can)).toEqual({ ok: false, refusal })
  })
})
