/**
 * What `platform orders transition <order> <status or transition>` asks the service for: a status
 * (`signed`, `on_hold`, `in-progress`) or the verb a lab says (`sign`, `hold`, `resume`). The
 * service decides whether the move is allowed; this only names its target.
 */
import { orderStatusValues } from './api/clinical.js'
import type { Order, OrderStatus } from './client.js'
import { usageError } from './errors.js'

export const ORDER_STATUSES: readonly OrderStatus[] = orderStatusValues

/** The verbs, each with the status it moves to; `resume` goes back to the status the order left. */
export const ORDER_VERBS = {
  sign: 'signed',
  start: 'in_progress',
  review: 'in_review',
  complete: 'completed',
  hold: 'on_hold',
  resume: 'held_from',
  cancel: 'cancelled',
  'enter-in-error': 'entered_in_error',
} as const satisfies Record<string, OrderStatus | 'held_from'>

/** Every word the command takes, for its help and completion. */
export const ORDER_MOVE_WORDS: readonly string[] = [...Object.keys(ORDER_VERBS), ...ORDER_STATUSES]

/** The status `word` moves `order` to; a word that names none is a usage error listing the words. */
export function targetStatus(word: string, order: Pick<Order, 'accession' | 'status' | 'held_from'>): OrderStatus {
  const normal = word.trim().toLowerCase()
  const status = ORDER_STATUSES.find((s) => s === normal.replace(/-/g, '_'))
  if (status) return status
  const verb = ORDER_VERBS[normal as keyof typeof ORDER_VERBS] as OrderStatus | 'held_from' | undefined
  if (verb === undefined) throw usageError(`'${word}' is neither an order status nor a transition: use one of ${ORDER_MOVE_WORDS.join(', ')}`)
  if (verb !== 'held_from') return verb
  if (order.status !== 'on_hold' || !order.held_from) throw usageError(`order ${order.accession} is ${order.status}, not on hold: nothing to resume`)
  return order.held_from
}
