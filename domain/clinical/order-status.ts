import type { Permission } from '../../lib/auth/roles.js'

/**
 * An order's statuses (FHIR ServiceRequest) and the one table of how they move, as data: each
 * edge names the permission it needs, whether it needs a reason, and its guard. DOMAIN.md:
 *
 *   draft → signed → in_progress → in_review → completed
 *   signed | in_progress | in_review → on_hold (reason) → back to the status it left
 *   draft … in_review, on_hold → cancelled (reason)          any → entered_in_error (admin, reason)
 */
export const ORDER_STATUSES = ['draft', 'signed', 'in_progress', 'in_review', 'on_hold', 'completed', 'cancelled', 'entered_in_error'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

/**
 * `has_samples`: signing needs at least one sample (the family-role guards need the samples'
 * subjects and are checked by the store, in the signing transaction). `held_from`: an order on
 * hold resumes only to the status it left.
 */
export type EdgeGuard = 'has_samples' | 'held_from'

export interface StatusEdge {
  from: OrderStatus
  to: OrderStatus
  permission: Permission
  reasonRequired: boolean
  guard?: EdgeGuard
}

const ACTIVE: OrderStatus[] = ['signed', 'in_progress', 'in_review']

export const ORDER_EDGES: readonly StatusEdge[] = [
  { from: 'draft', to: 'signed', permission: 'clinical.write', reasonRequired: false, guard: 'has_samples' },
  { from: 'signed', to: 'in_progress', permission: 'run.submit', reasonRequired: false },
  { from: 'in_progress', to: 'in_review', permission: 'run.submit', reasonRequired: false },
  { from: 'in_review', to: 'completed', permission: 'report.sign', reasonRequired: false },
  ...ACTIVE.map((from): StatusEdge => ({ from, to: 'on_hold', permission: 'clinical.write', reasonRequired: true })),
  ...ACTIVE.map((to): StatusEdge => ({ from: 'on_hold', to, permission: 'clinical.write', reasonRequired: false, guard: 'held_from' })),
  ...(['draft', ...ACTIVE, 'on_hold'] as OrderStatus[]).map((from): StatusEdge => ({
    from,
    to: 'cancelled',
    permission: 'order.cancel',
    reasonRequired: true,
  })),
  ...ORDER_STATUSES.filter((s) => s !== 'entered_in_error').map((from): StatusEdge => ({
    from,
    to: 'entered_in_error',
    permission: 'order.cancel',
    reasonRequired: true,
  })),
]

/** Statuses in which the order's samples are frozen (signed once, and not entered in error). */
export const FROZEN: ReadonlySet<OrderStatus> = new Set<OrderStatus>(['signed', 'in_progress', 'in_review', 'on_hold', 'completed', 'cancelled'])
/** Statuses in which a run may be started for the order. */
export const RUNNABLE: ReadonlySet<OrderStatus> = new Set<OrderStatus>(['signed', 'in_progress', 'in_review'])
/** Statuses in which the labflow moves (the order is being worked on). */
export const LAB_ACTIVE: ReadonlySet<OrderStatus> = new Set<OrderStatus>(ACTIVE)

export interface OrderShape {
  status: OrderStatus
  held_from?: OrderStatus
  sample_ids: readonly string[]
}

export const edgeBetween = (from: OrderStatus, to: OrderStatus) => ORDER_EDGES.find((e) => e.from === from && e.to === to)

/** Whether the edge's guard holds for the order (the structural part; see EdgeGuard). */
export function guardHolds(edge: StatusEdge, order: OrderShape): boolean {
  switch (edge.guard) {
    case undefined:
      return true
    case 'has_samples':
      return order.sample_ids.length > 0
    case 'held_from':
      return order.held_from === edge.to
  }
}

/** The statuses this caller may move the order to now: edges from its status, guards holding, permission held. */
export function availableTransitions(order: OrderShape, can: (permission: Permission) => boolean): OrderStatus[] {
  return ORDER_EDGES.filter((e) => e.from === order.status && guardHolds(e, order) && can(e.permission)).map((e) => e.to)
}

export type MoveCheck =
  { ok: true; edge: StatusEdge } | { ok: false; kind: 'no_edge' | 'guard' | 'reason' } | { ok: false; kind: 'permission'; permission: Permission }

/** Whether `to` is a move this caller may make now, and if not, why. */
export function checkMove(order: OrderShape, to: OrderStatus, can: (permission: Permission) => boolean, reason: string | undefined): MoveCheck {
  const edge = edgeBetween(order.status, to)
  if (!edge) return { ok: false, kind: 'no_edge' }
  if (!guardHolds(edge, order)) return { ok: false, kind: 'guard' }
  if (!can(edge.permission)) return { ok: false, kind: 'permission', permission: edge.permission }
  if (edge.reasonRequired && !reason?.trim()) return { ok: false, kind: 'reason' }
  return { ok: true, edge }
}
