import { Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditEvent, AuditFollower, AuditScope } from '../../lib/audit.js'
import type { Db } from '../../lib/db.js'
import type { Logger } from '../../lib/log.js'
import type { Queue } from '../../lib/queue.js'
import { FOLLOWED_ENTITIES, hookWants, payloadOf } from './events.js'
import { publishDue } from './messages.js'
import { newDeliveryId, type DeliveryRecord, type WebhookRecord } from './model.js'

/**
 * The outbox of webhook deliveries (DESIGN.md invariant 1, "nothing is lost"): every change a
 * webhook reports is an audited change, so the audit writer hands each of its events to this
 * follower, which writes one delivery per webhook that wants the event in the same transaction as
 * the change and its audit event. After the transaction commits it publishes that the deliveries
 * are due; a publish that fails leaves them pending and due, and the reconciler's sweep publishes
 * them. A change that does not commit leaves no delivery.
 *
 * The project's webhooks are read once per transaction, outside its locks, and only when an entity
 * some webhook event is read from changes (events.ts FOLLOWED_ENTITIES): a webhook registered while a
 * change is under way may miss that change, never a later one.
 */
export class WebhookOutbox implements AuditFollower {
  private readonly hooksOfTx = new WeakMap<Transaction, Map<string, Promise<WebhookRecord[]>>>()

  constructor(
    private readonly db: Db,
    private readonly deps: { queue: Queue; log: Logger },
  ) {}

  private hooks(tx: Transaction, projectId: string): Promise<WebhookRecord[]> {
    let byProject = this.hooksOfTx.get(tx)
    if (!byProject) this.hooksOfTx.set(tx, (byProject = new Map()))
    let hooks = byProject.get(projectId)
    if (!hooks) {
      hooks = this.db
        .col('webhooks')
        .where('project_id', '==', projectId)
        .get()
        .then((q) => q.docs.map((d) => d.data() as WebhookRecord).filter((h) => h.enabled))
      byProject.set(projectId, hooks)
    }
    return hooks
  }

  async prepare(tx: Transaction, scope: AuditScope): Promise<((event: AuditEvent) => void) | undefined> {
    const projectId = scope.project_id
    if (!projectId || !FOLLOWED_ENTITIES.has(scope.entity.type)) return undefined
    const hooks = await this.hooks(tx, projectId)
    if (!hooks.length) return undefined
    return (event) => {
      const payload = payloadOf({ ...event, project_id: projectId, occurred_at: event.occurred_at.toDate() })
      if (!payload) return
      const body = JSON.stringify(payload)
      const due: string[] = []
      for (const hook of hooks) {
        if (!hookWants(hook.events, payload.type)) continue
        const delivery: DeliveryRecord = {
          id: newDeliveryId(),
          webhook_id: hook.id,
          project_id: projectId,
          type: payload.type,
          body,
          audit_event_id: event.id,
          created: event.occurred_at,
          status: 'pending',
          round: 1,
          round_attempts: 0,
          next_attempt_at: event.occurred_at,
          attempts: [],
          updated: Timestamp.fromMillis(event.occurred_at.toMillis()),
        }
        tx.create(this.db.col('webhook_deliveries').doc(delivery.id), delivery)
        due.push(delivery.id)
      }
      if (due.length) this.db.afterCommit(tx, () => publishDue(this.deps, projectId, due))
    }
  }
}
