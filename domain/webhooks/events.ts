import type { AuditEvent } from '../../lib/audit.js'

/**
 * The events a project's webhooks may subscribe to, and how each is read off the audit event that
 * records the change (lib/audit.ts): every change a webhook reports is already an audited change,
 * written in the transaction that makes it, so the delivery is written in that same transaction
 * (domain/webhooks/outbox.ts) and is never lost, nor sent for a change that did not commit.
 *
 * Payloads are thin: ids, statuses and the reason of a change, never clinical content (no variant,
 * phenotype or name of a person): a receiver that needs more reads it through the API, under the
 * access control of its own credentials.
 */
export const WEBHOOK_EVENT_TYPES = [
  'run.queued',
  'run.running',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'ingestion.ready',
  'ingestion.failed',
  'order.transitioned',
  'report.signed',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The audit action each event type is read from. */
const ACTION_OF: Record<WebhookEventType, string> = {
  'run.queued': 'run.submitted',
  'run.running': 'run.running',
  'run.succeeded': 'run.succeeded',
  'run.failed': 'run.failed',
  'run.cancelled': 'run.cancelled',
  'ingestion.ready': 'variant_ingestion.completed',
  'ingestion.failed': 'variant_ingestion.failed',
  'order.transitioned': 'order.transitioned',
  'report.signed': 'report.signed',
}
const TYPE_OF_ACTION = new Map(Object.entries(ACTION_OF).map(([type, action]) => [action, type as WebhookEventType]))

/** The event type an audit action is delivered as, if any. */
export const eventTypeOf = (action: string): WebhookEventType | undefined => TYPE_OF_ACTION.get(action)

/**
 * The audited entities whose events some webhook event is read from: the audit writer looks for a
 * project's webhooks only when one of them changes, so that no other change pays for a read.
 */
export const FOLLOWED_ENTITIES: ReadonlySet<string> = new Set(['run', 'variant_ingestion', 'order', 'report'])

/** The groups of types (`run` of `run.failed`), each subscribable as `<group>.*`. */
export const EVENT_GROUPS = [...new Set(WEBHOOK_EVENT_TYPES.map((t) => t.slice(0, t.indexOf('.'))))]

/**
 * What a webhook subscribes with: an event type (`run.failed`), a group of them (`run.*`), or
 * every event (`*`), including those added later.
 */
export const EVENT_FILTERS: readonly string[] = ['*', ...EVENT_GROUPS.map((g) => `${g}.*`), ...WEBHOOK_EVENT_TYPES]

export const isEventFilter = (filter: string) => EVENT_FILTERS.includes(filter)

/** Whether a webhook subscribed with `filters` gets events of `type`. */
export function hookWants(filters: readonly string[], type: WebhookEventType): boolean {
  const group = `${type.slice(0, type.indexOf('.'))}.*`
  return filters.some((f) => f === '*' || f === type || f === group)
}

/** A webhook's body (the Standard Webhooks payload structure): `type`, `timestamp` of the change (ISO 8601), `data`. */
export interface WebhookPayload {
  type: WebhookEventType
  timestamp: string
  data: Record<string, string>
}

/** The audit event's fields a payload is made of. */
export type PayloadSource = Pick<AuditEvent, 'id' | 'action' | 'entity' | 'change'> & { project_id: string; occurred_at: Date }

/**
 * The payload of the webhook event an audit event is delivered as, or undefined when its action is
 * not one a webhook gets. `audit_event_id` names the audit event (GET /events/{id} of the audit
 * service), the record of who made the change.
 */
export function payloadOf(e: PayloadSource): WebhookPayload | undefined {
  const type = eventTypeOf(e.action)
  if (!type) return undefined
  const { from, to, reason } = e.change ?? {}
  const common = { project_id: e.project_id, audit_event_id: e.id }
  const optional = (fields: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries(fields).filter((f): f is [string, string] => f[1] !== undefined))
  let data: Record<string, string>
  switch (e.entity.type) {
    case 'run':
      // A failed run's reason is its error message; a cancelled one has none.
      data = {
        ...common,
        run_id: e.entity.id,
        ...optional({ pipeline_id: e.entity.parent, status: to, previous_status: from, error_message: reason }),
      }
      break
    case 'variant_ingestion':
      data = { ...common, ingestion_id: e.entity.id, ...optional({ order_id: e.entity.parent, status: to, previous_status: from, detail: reason }) }
      break
    case 'order':
      data = { ...common, order_id: e.entity.id, ...optional({ accession: e.entity.parent, from, to, reason }) }
      break
    case 'report':
      data = { ...common, report_id: e.entity.id, ...optional({ order_id: e.entity.parent, status: to }) }
      break
    default:
      return undefined
  }
  return { type, timestamp: e.occurred_at.toISOString(), data }
}
