import { Timestamp, type Query } from '@google-cloud/firestore'
import type { JWK } from 'jose'
import type { UserRecord } from '../../lib/auth/access.js'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import { iso, type Db } from '../../lib/db.js'
import { ApiError, conflict, notFound, unauthorized } from '../../lib/errors.js'
import { newId, sha256 } from '../../lib/ids.js'
import type { TokenStore } from '../../lib/auth/tokens.js'

export type ServiceUserRecord = UserRecord & { kind: 'service_user'; org_id: string; description?: string; created_by?: string }

/** Only the public half of a key is ever stored; the private half is shown once, at creation. */
export interface ServiceKeyRecord {
  id: string
  service_user_id: string
  org_id: string
  public_jwk: JWK
  alg: string
  created: Timestamp
  created_by?: string
  revoked_at?: Timestamp
  last_used_at?: Timestamp
}

export const MAX_ACTIVE_KEYS = 10

/** Service users, their keys and the assertions exchanged for tokens; every change commits with its audit event. */
export class ServiceUserStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    private readonly tokens: TokenStore,
  ) {}

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }

  async create(ctx: AuditContext, input: { orgId: string; name: string; description?: string }): Promise<ServiceUserRecord> {
    const user: ServiceUserRecord = {
      id: newId(),
      kind: 'service_user',
      org_id: input.orgId,
      name: input.name,
      description: input.description,
      created: this.now(),
      created_by: ctx.actor.id,
    }
    await this.db.transaction(async (tx) => {
      const clash = await tx.get(this.ofOrg(input.orgId).where('name', '==', input.name).limit(1))
      const chain = await this.audit.prepare(tx, { org_id: input.orgId, entity: { type: 'service_user', id: user.id } })
      if (!clash.empty) throw conflict(`a service user named '${input.name}' already exists in this organization`)
      tx.create(this.db.col('users').doc(user.id), user)
      chain.write(ctx, { action: 'service_user.created', org_id: input.orgId, entity: { type: 'service_user', id: user.id, parent: input.orgId } })
    })
    return user
  }

  /** The organization's service users, for pagination (composite index: users org_id, kind, created). */
  ofOrg(orgId: string): Query {
    return this.db.col('users').where('org_id', '==', orgId).where('kind', '==', 'service_user')
  }

  async get(id: string): Promise<ServiceUserRecord | undefined> {
    const snap = await this.db.col('users').doc(id).get()
    const user = snap.data() as UserRecord | undefined
    return user?.kind === 'service_user' && user.org_id ? (user as ServiceUserRecord) : undefined
  }

  async update(
    ctx: AuditContext,
    user: ServiceUserRecord,
    patch: { name?: string; description?: string; disabled?: boolean },
  ): Promise<ServiceUserRecord> {
    const ref = this.db.col('users').doc(user.id)
    return this.db.transaction(async (tx) => {
      const current = (await tx.get(ref)).data() as ServiceUserRecord | undefined
      const clash =
        patch.name && patch.name !== current?.name ? await tx.get(this.ofOrg(user.org_id).where('name', '==', patch.name).limit(1)) : undefined
      const chain = await this.audit.prepare(tx, { org_id: user.org_id, entity: { type: 'service_user', id: user.id } })
      if (!current) throw notFound('service user')
      if (clash && !clash.empty) throw conflict(`a service user named '${patch.name}' already exists in this organization`)
      const next = {
        name: patch.name ?? current.name,
        description: patch.description ?? current.description,
        disabled: patch.disabled ?? Boolean(current.disabled),
      }
      const before = { name: current.name, description: current.description, disabled: Boolean(current.disabled) }
      const changed = (['name', 'description', 'disabled'] as const).filter((k) => next[k] !== before[k])
      if (!changed.length) return current
      tx.update(ref, Object.fromEntries(changed.map((k) => [k, next[k]])))
      const action =
        patch.disabled === true && !current.disabled
          ? 'service_user.disabled'
          : patch.disabled === false && current.disabled
            ? 'service_user.enabled'
            : 'service_user.updated'
      chain.write(ctx, {
        action,
        org_id: user.org_id,
        entity: { type: 'service_user', id: user.id, parent: user.org_id },
        change: { fields: [...changed] },
      })
      return { ...current, ...next }
    })
  }

  async addKey(ctx: AuditContext, user: ServiceUserRecord, input: { keyId: string; alg: string; publicJwk: JWK }): Promise<ServiceKeyRecord> {
    const key: ServiceKeyRecord = {
      id: input.keyId,
      service_user_id: user.id,
      org_id: user.org_id,
      public_jwk: input.publicJwk,
      alg: input.alg,
      created: this.now(),
      created_by: ctx.actor.id,
    }
    await this.db.transaction(async (tx) => {
      const existing = await tx.get(this.db.col('service_keys').where('service_user_id', '==', user.id))
      const chain = await this.audit.prepare(tx, { org_id: user.org_id, entity: { type: 'service_key', id: key.id } })
      const active = existing.docs.filter((d) => !d.get('revoked_at')).length
      if (active >= MAX_ACTIVE_KEYS) throw conflict(`a service user may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`)
      tx.create(this.db.col('service_keys').doc(key.id), key)
      chain.write(ctx, { action: 'service_key.created', org_id: user.org_id, entity: { type: 'service_key', id: key.id, parent: user.id } })
    })
    return key
  }

  async listKeys(userId: string): Promise<ServiceKeyRecord[]> {
    const q = await this.db.col('service_keys').where('service_user_id', '==', userId).get()
    return q.docs.map((d) => d.data() as ServiceKeyRecord).sort((a, b) => b.created.toMillis() - a.created.toMillis())
  }

  async getKey(keyId: string): Promise<ServiceKeyRecord | undefined> {
    // Firestore refuses some characters in document ids; such a kid names no key of ours.
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(keyId)) return undefined
    const snap = await this.db.col('service_keys').doc(keyId).get()
    return snap.exists ? (snap.data() as ServiceKeyRecord) : undefined
  }

  /** Revokes the key; service tokens obtained with it stop working at once, as their check reads the key. */
  async revokeKey(ctx: AuditContext, user: ServiceUserRecord, keyId: string): Promise<void> {
    const ref = this.db.col('service_keys').doc(keyId)
    await this.db.transaction(async (tx) => {
      const snap = await tx.get(ref)
      const chain = await this.audit.prepare(tx, { org_id: user.org_id, entity: { type: 'service_key', id: keyId } })
      if (!snap.exists || snap.get('service_user_id') !== user.id) throw notFound('key')
      if (snap.get('revoked_at')) return
      tx.update(ref, { revoked_at: this.now() })
      chain.write(ctx, { action: 'service_key.revoked', org_id: user.org_id, entity: { type: 'service_key', id: keyId, parent: user.id } })
    })
  }

  /**
   * Exchanges a verified assertion for a service token, once: the assertion's jti is recorded until
   * its expiry (a Firestore TTL policy on used_assertions.expires_at removes it later), and the key
   * is read again in the transaction so that a revocation racing the exchange wins.
   */
  async exchange(
    ctx: AuditContext,
    input: { key: ServiceKeyRecord; jti: string; assertionExpiresAt: Date; ttlSeconds: number },
  ): Promise<{ value: string; expiresAt: Date }> {
    const { key } = input
    const now = this.clock.now()
    const keyRef = this.db.col('service_keys').doc(key.id)
    const jtiRef = this.db.col('used_assertions').doc(sha256(`${key.service_user_id}:${input.jti}`))
    const exchange = this.db.transaction(async (tx) => {
      const [keySnap, used] = await Promise.all([tx.get(keyRef), tx.get(jtiRef)])
      const chain = await this.audit.prepare(tx, { org_id: key.org_id, entity: { type: 'service_user', id: key.service_user_id } })
      if (!keySnap.exists || keySnap.get('revoked_at')) throw unauthorized('invalid_grant: the key was revoked')
      if (used.exists) throw unauthorized('invalid_grant: this assertion was already used (jti replay); sign a new one with a fresh jti')
      tx.create(jtiRef, { service_user_id: key.service_user_id, key_id: key.id, expires_at: Timestamp.fromDate(input.assertionExpiresAt) })
      const issued = this.tokens.issueServiceTokenIn(tx, { userId: key.service_user_id, keyId: key.id, ttlSeconds: input.ttlSeconds, now })
      tx.update(keyRef, { last_used_at: Timestamp.fromDate(now) })
      chain.write(ctx, {
        action: 'service_token.issued',
        org_id: key.org_id,
        entity: { type: 'service_user', id: key.service_user_id, parent: key.org_id },
        change: { reason: `key ${key.id}`, to: iso(issued.record.expires_at) },
      })
      return { value: issued.value, expiresAt: issued.record.expires_at.toDate() }
    })
    try {
      return await exchange
    } catch (err) {
      // Copies of one assertion racing each other: whichever lost finds the jti recorded by the winner.
      if (!(err instanceof ApiError) && (await jtiRef.get()).exists) {
        throw unauthorized('invalid_grant: this assertion was already used (jti replay); sign a new one with a fresh jti')
      }
      throw err
    }
  }
}
