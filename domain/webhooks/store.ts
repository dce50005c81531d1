import { FieldValue, Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditInput, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse } from '../../lib/decision.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import type { Queue } from '../../lib/queue.js'
import type { UrlPolicy } from './addresses.js'
import {
  decideAttempt,
  decideClaim,
  decideDelete,
  decideRedeliver,
  decideRegister,
  decideRotate,
  decideUpdate,
  MAX_KEPT_ATTEMPTS,
  signingSecrets,
  type AttemptOutcome,
  type CheckedUrl,
  type WebhookDraft,
} from './decide.js'
import { publishDue } from './messages.js'
import type { DeliveryRecord, DeliveryStatus, WebhookRecord } from './model.js'
import { deriveSecret } from './signing.js'
import type { AuditKeyRing } from '../../lib/audit-keys.js'

const ts = (ms: number) => Timestamp.fromMillis(ms)

/** A webhook's secrets as stored: timestamps for the draft's epoch milliseconds. */
const storedSecrets = (secrets: WebhookDraft['secrets']): WebhookRecord['secrets'] =>
  secrets.map(({ created, expires, ...ref }) => ({ ...ref, created: ts(created), ...(expires === undefined ? {} : { expires: ts(expires) }) }))

export interface NewWebhook {
  url: CheckedUrl
  events: string[]
  description: string
}

/**
 * A project's webhooks and their deliveries. Every change of a webhook commits with its audit
 * event; deliveries are written by the outbox (outbox.ts) with the change they report, then moved
 * on by the dispatcher (claim, attempt) and by redelivery.
 */
export class WebhookStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    /** The ring secrets are derived from (the audit log's: signing.ts). */
    private readonly keys: AuditKeyRing,
    /** Where redeliveries are published as due. */
    private readonly deps: { queue: Queue; log: Logger },
  ) {}

  private now() {
    return this.clock.now().getTime()
  }
  private hookRef(id: string) {
    return this.db.col('webhooks').doc(id)
  }
  private deliveryRef(id: string) {
    return this.db.col('webhook_deliveries').doc(id)
  }

  /** A webhook's current signing secret (shown at registration and rotation only). */
  secretOf(hook: Pick<WebhookRecord, 'id' | 'secrets'>): string {
    return deriveSecret(this.keys, hook.secrets[0]!, hook.id)
  }

  /** Every secret that signs the webhook's deliveries now, the current one first (a rotated one for a day: decide.ts). */
  signingSecretsOf(hook: Pick<WebhookRecord, 'id' | 'secrets'>): string[] {
    return signingSecrets(hook, this.now()).map((s) => deriveSecret(this.keys, s, hook.id))
  }

  private async writeEvents(tx: Transaction, ctx: AuditContext, hook: Pick<WebhookRecord, 'id' | 'project_id'>, events: AuditInput[]) {
    if (!events.length) return
    const chain = await this.audit.prepare(tx, { project_id: hook.project_id, entity: { type: 'webhook', id: hook.id } })
    for (const e of events) chain.write(ctx, e)
  }

  async register(
    ctx: AuditContext,
    project: { id: string; org_id: string },
    input: NewWebhook & { policy: UrlPolicy; by: string },
  ): Promise<{ hook: WebhookRecord; secret: string }> {
    const id = newId()
    const hook = await this.db.transaction(async (tx) => {
      const existing = await tx.get(this.db.col('webhooks').where('project_id', '==', project.id).select())
      const now = this.now()
      const decision = orRefuse(decideRegister(existing.size, { id, project, ...input, secret: { key_id: this.keys.activeId, generation: 1 }, now }))
      const record: WebhookRecord = { ...decision.changes, secrets: storedSecrets(decision.changes.secrets), created: ts(now), updated: ts(now) }
      await this.writeEvents(tx, ctx, record, decision.events)
      tx.create(this.hookRef(id), record)
      return record
    })
    return { hook, secret: this.secretOf(hook) }
  }

  /** A webhook of the project; another project's is absent. */
  async get(projectId: string, id: string): Promise<WebhookRecord | undefined> {
    const snap = await this.hookRef(id).get()
    const hook = snap.exists ? (snap.data() as WebhookRecord) : undefined
    return hook?.project_id === projectId ? hook : undefined
  }

  /** The project's webhooks, oldest first. */
  async list(projectId: string, query: PageQuery): Promise<Page<WebhookRecord>> {
    const q = this.db.col('webhooks').where('project_id', '==', projectId)
    return paginate(q, { orderBy: [['created', 'asc']], filters: {}, query }, (d) => d.data() as WebhookRecord)
  }

  private async inTx(tx: Transaction, projectId: string, id: string): Promise<WebhookRecord | undefined> {
    const snap = await tx.get(this.hookRef(id))
    const hook = snap.exists ? (snap.data() as WebhookRecord) : undefined
    return hook?.project_id === projectId ? hook : undefined
  }

  async update(
    ctx: AuditContext,
    projectId: string,
    id: string,
    input: Partial<NewWebhook> & { enabled?: boolean; policy: UrlPolicy },
  ): Promise<WebhookRecord> {
    return this.db.transaction(async (tx) => {
      const hook = await this.inTx(tx, projectId, id)
      const decision = orRefuse(decideUpdate(hook, input))
      if (!decision.events.length) return hook!
      await this.writeEvents(tx, ctx, hook!, decision.events)
      const patch = { ...decision.changes, updated: ts(this.now()) }
      tx.update(this.hookRef(id), patch)
      return { ...hook!, ...patch }
    })
  }

  async rotate(ctx: AuditContext, projectId: string, id: string): Promise<{ hook: WebhookRecord; secret: string }> {
    const hook = await this.db.transaction(async (tx) => {
      const hook = await this.inTx(tx, projectId, id)
      const now = this.now()
      const decision = orRefuse(decideRotate(hook, { key_id: this.keys.activeId, now }))
      await this.writeEvents(tx, ctx, hook!, decision.events)
      const patch = { secrets: storedSecrets(decision.changes), updated: ts(now) }
      tx.update(this.hookRef(id), patch)
      return { ...hook!, ...patch }
    })
    return { hook, secret: this.secretOf(hook) }
  }

  async delete(ctx: AuditContext, projectId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const hook = await this.inTx(tx, projectId, id)
      const decision = orRefuse(decideDelete(hook))
      await this.writeEvents(tx, ctx, hook!, decision.events)
      tx.delete(this.hookRef(id))
    })
  }

  // -------------------------------------------------------------------------------------------
  // Deliveries

  /** A webhook's deliveries, newest first, optionally of one status. */
  async listDeliveries(hook: Pick<WebhookRecord, 'id'>, filters: { status?: DeliveryStatus }, query: PageQuery): Promise<Page<DeliveryRecord>> {
    let q = this.db.col('webhook_deliveries').where('webhook_id', '==', hook.id)
    if (filters.status) q = q.where('status', '==', filters.status)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as DeliveryRecord)
  }

  async getDelivery(hook: Pick<WebhookRecord, 'id'>, id: string): Promise<DeliveryRecord | undefined> {
    const snap = await this.deliveryRef(id).get()
    const d = snap.exists ? (snap.data() as DeliveryRecord) : undefined
    return d?.webhook_id === hook.id ? d : undefined
  }

  /** Sends a delivery again (decideRedeliver), published as due once committed. */
  async redeliver(ctx: AuditContext, hook: WebhookRecord, id: string): Promise<DeliveryRecord> {
    return this.db.transaction(async (tx) => {
      const snap = await tx.get(this.deliveryRef(id))
      const found = snap.exists ? (snap.data() as DeliveryRecord) : undefined
      const delivery = found?.webhook_id === hook.id ? found : undefined
      const now = this.now()
      const decision = orRefuse(decideRedeliver(delivery, hook, now))
      await this.writeEvents(tx, ctx, hook, decision.events)
      const patch = { ...decision.changes, next_attempt_at: ts(decision.changes.next_attempt_at), updated: ts(now) }
      tx.update(this.deliveryRef(id), { ...patch, lease_until: FieldValue.delete(), failure: FieldValue.delete() })
      this.db.afterCommit(tx, () => publishDue(this.deps, hook.project_id, [id]))
      const { lease_until: _, failure: __, ...rest } = delivery!
      return { ...rest, ...patch }
    })
  }

  /**
   * Takes a due delivery for sending (decideClaim), with its webhook; undefined when it is not to be
   * sent now (sent already, not due, held by another dispatcher: a duplicate message).
   */
  async claim(id: string): Promise<{ delivery: DeliveryRecord; hook?: WebhookRecord } | undefined> {
    return this.db.transaction(async (tx) => {
      const snap = await tx.get(this.deliveryRef(id))
      const delivery = snap.exists ? (snap.data() as DeliveryRecord) : undefined
      const decision = decideClaim(delivery, this.now())
      if (!decision.ok) return undefined
      const hookSnap = await tx.get(this.hookRef(delivery!.webhook_id))
      const lease_until = ts(decision.changes.lease_until)
      tx.update(this.deliveryRef(id), { lease_until })
      return { delivery: { ...delivery!, lease_until }, hook: hookSnap.exists ? (hookSnap.data() as WebhookRecord) : undefined }
    })
  }

  /** Records an attempt and what it makes of the delivery (decideAttempt), and lets go of it. */
  async recordAttempt(id: string, outcome: AttemptOutcome): Promise<DeliveryRecord | undefined> {
    return this.db.transaction(async (tx) => {
      const snap = await tx.get(this.deliveryRef(id))
      if (!snap.exists) return undefined
      const delivery = snap.data() as DeliveryRecord
      const change = decideAttempt(delivery, outcome)
      const attempts = [...delivery.attempts, { ...change.attempt, at: ts(change.attempt.at) }].slice(-MAX_KEPT_ATTEMPTS)
      const patch = {
        status: change.status,
        round_attempts: change.round_attempts,
        attempts,
        updated: ts(this.now()),
        next_attempt_at: change.next_attempt_at === undefined ? FieldValue.delete() : ts(change.next_attempt_at),
        lease_until: FieldValue.delete(),
      }
      tx.update(this.deliveryRef(id), patch)
      const { next_attempt_at: _, lease_until: __, ...rest } = delivery
      return {
        ...rest,
        status: change.status,
        round_attempts: change.round_attempts,
        attempts,
        ...(change.next_attempt_at === undefined ? {} : { next_attempt_at: ts(change.next_attempt_at) }),
      }
    })
  }

  /** A delivery that is not sent at all (its webhook was deleted or disabled): kept as failed, saying why; a redelivery may send it later. */
  async abandon(id: string, failure: string): Promise<void> {
    await this.deliveryRef(id).update({
      status: 'failed',
      failure,
      next_attempt_at: FieldValue.delete(),
      lease_until: FieldValue.delete(),
      updated: ts(this.now()),
    })
  }

  /** Pending deliveries due at `now` (the oldest due first), for the reconciler's sweep. */
  async listDue(now: Date, limit: number): Promise<DeliveryRecord[]> {
    const q = await this.db
      .col('webhook_deliveries')
      .where('status', '==', 'pending')
      .where('next_attempt_at', '<=', Timestamp.fromDate(now))
      .orderBy('next_attempt_at', 'asc')
      .limit(limit)
      .get()
    return q.docs.map((d) => d.data() as DeliveryRecord)
  }
}
