import { describe, expect, it } from 'vitest'
import { projectRolesGrant, type Permission, type ProjectRole } from '../../../../lib/auth/roles.js'
import { availableTransitions, checkMove, ORDER_EDGES, ORDER_STATUSES, type OrderStatus } from '../../../../domain/clinical/order-status.js'

/** DOMAIN.md's edges, written out: [from, to, permission, reason required]. Every other pair is refused. */
const ALLOWED: Array<[OrderStatus, OrderStatus, Permission, boolean]> = [
  ['draft', 'signed', 'clinical.write', false],
  ['signed', 'in_progress', 'run.submit', false],
  ['in_progress', 'in_review', 'run.submit', false],
  ['in_review', 'completed', 'report.sign', false],
  ['signed', 'on_hold', 'clinical.write', true],
  ['in_progress', 'on_hold', 'clinical.write', true],
  ['in_review', 'on_hold', 'clinical.write', true],
  ['on_hold', 'signed', 'clinical.write', false],
  ['on_hold', 'in_progress', 'clinical.write', false],
  ['on_hold', 'in_review', 'clinical.write', false],
  ['draft', 'cancelled', 'order.cancel', true],
  ['signed', 'cancelled', 'order.cancel', true],
  ['in_progress', 'cancelled', 'order.cancel', true],
  ['in_review', 'cancelled', 'order.cancel', true],
  ['on_hold', 'cancelled', 'order.cancel', true],
  ...ORDER_STATUSES.filter((s) => s !== 'entered_in_error').map((from): [OrderStatus, OrderStatus, Permission, boolean] => [
    from,
    'entered_in_error',
    'order.cancel',
    true,
  ]),
]
const key = (from: string, to: string) => `${from}>${to}`
const allowed = new Map(ALLOWED.map(([from, to, permission, reason]) => [key(from, to), { permission, reason }]))
const PAIRS = ORDER_STATUSES.flatMap((from) => ORDER_STATUSES.map((to) => ({ from, to, edge: allowed.get(key(from, to)) })))
const everything = () => true
/** An order in `from` that passes every guard of a move to `to`. */
const orderIn = (from: OrderStatus, to: OrderStatus) => ({ status: from, held_from: from === 'on_hold' ? to : undefined, sample_ids: ['s1'] })

describe('the order status table', () => {
  it('is exactly the edges of DOMAIN.md, with their permissions and reasons', () => {
    expect(ORDER_EDGES.map((e) => [e.from, e.to, e.permission, e.reasonRequired]).sort()).toEqual([...ALLOWED].sort())
  })

  it.each(PAIRS.filter((p) => p.edge))('allows $from → $to', ({ from, to, edge }) => {
    const result = checkMove(orderIn(from, to), to, everything, 'because')
    expect(result).toMatchObject({ ok: true, edge: { permission: edge!.permission, reasonRequired: edge!.reason } })
    if (edge!.reason) expect(checkMove(orderIn(from, to), to, everything, undefined)).toEqual({ ok: false, kind: 'reason' })
    expect(checkMove(orderIn(from, to), to, (p) => p !== edge!.permission, 'because')).toEqual({
      ok: false,
      kind: 'permission',
      permission: edge!.permission,
    })
  })

  it.each(PAIRS.filter((p) => !p.edge))('refuses $from → $to', ({ from, to }) => {
    expect(checkMove(orderIn(from, to), to, everything, 'because')).toEqual({ ok: false, kind: 'no_edge' })
  })

  it('resumes an order on hold only to the status it left', () => {
    const held = { status: 'on_hold' as const, held_from: 'in_progress' as const, sample_ids: ['s1'] }
    expect(checkMove(held, 'signed', everything, undefined)).toEqual({ ok: false, kind: 'guard' })
    expect(checkMove(held, 'in_progress', everything, undefined).ok).toBe(true)
    expect(availableTransitions(held, everything)).toEqual(['in_progress', 'cancelled', 'entered_in_error'])
  })

  it('does not offer signing an order without samples', () => {
    const empty = { status: 'draft' as const, sample_ids: [] }
    expect(checkMove(empty, 'signed', everything, undefined)).toEqual({ ok: false, kind: 'guard' })
    expect(availableTransitions(empty, everything)).toEqual(['cancelled', 'entered_in_error'])
  })

  const as = (role: ProjectRole) => (p: Permission) => projectRolesGrant([role], p)
  it.each<[ProjectRole, OrderStatus, OrderStatus[]]>([
    ['viewer', 'draft', []],
    ['lab', 'draft', ['signed']],
    ['lab', 'signed', ['on_hold']],
    ['analyst', 'signed', ['in_progress', 'on_hold']],
    ['analyst', 'in_progress', ['in_review', 'on_hold']],
    ['analyst', 'in_review', ['on_hold']],
    ['reviewer', 'in_review', ['completed', 'on_hold']],
    ['admin', 'draft', ['signed', 'cancelled', 'entered_in_error']],
    ['admin', 'completed', ['entered_in_error']],
    ['admin', 'cancelled', ['entered_in_error']],
    ['owner', 'entered_in_error', []],
    ['pipeline', 'signed', ['in_progress']],
  ])('offers a %s the moves from %s: %j', (role, status, expected) => {
    expect(availableTransitions({ status, sample_ids: ['s1'] }, as(role))).toEqual(expected)
  })
})
