import { Timestamp, type CollectionReference, type DocumentReference, type DocumentSnapshot, type Transaction } from '@google-cloud/firestore'
import { assertNever } from '../assert.js'
import type { Db } from '../db.js'
import { idsNamedBy, newId, newNamingSecret, sha256, TOKEN_PREFIX } from '../ids.js'

/**
 * Bearer secrets the platform issues itself: personal access tokens, service-user access tokens,
 * browser sessions and the CLI's access credentials (docs/cli-login.md). Each is a random value with a recognizable prefix, shown once; Firestore
 * keeps only its SHA-256, as the document id, so a lookup is one read. After the random part, the
 * value names the account it was issued to (and a service token the key it was obtained with), so
 * that a request reads them in the same round trip as the credential (lib/ids.ts newNamingSecret).
 */

export interface PersonalTokenRecord {
  id: string
  user_id: string
  name: string
  /** The first characters, enough for a human to recognize which token it is. */
  hint: string
  created: Timestamp
  expires_at: Timestamp
  revoked_at?: Timestamp
  last_used_at?: Timestamp
}

export interface ServiceTokenRecord {
  user_id: string
  key_id: string
  created: Timestamp
  expires_at: Timestamp
}

export interface SessionRecord {
  id: string
  user_id: string
  created: Timestamp
  expires_at: Timestamp
  /** The roles computed at login, kept for display; authorization recomputes them on every request. */
  effective_roles: Record<string, string[]>
  id_token?: string
  /** When the user last proved who they are at the identity provider (the ID token's auth_time), as far as the platform knows. */
  auth_time?: Timestamp
  /**
   * The latest re-authentication in this session by its own user: how the login asked the provider
   * for it (its `prompt` and `max_age`, from the login state the admin service stored when it
   * began), the ID token's auth_time, and when the platform recorded it (`at`, its own clock). A
   * signature accepts only one asked as prompt=login, max_age=0 (domain/reports/decide.ts).
   */
  reauth?: { prompt?: 'login'; max_age?: number; begun_at?: Timestamp; auth_time: Timestamp; at: Timestamp }
  /** The latest re-authentication in this session that another user completed: refused, the session unchanged but for this note. */
  reauth_refused?: { at: Timestamp; user_id: string; email?: string }
}

/**
 * A login of the CLI (docs/cli-login.md): one sign-in at the identity provider, and the family of
 * access and refresh credentials rotated from it (RFC 9700 §4.14). Revoking it (logout, a spent
 * refresh token presented again) ends every credential of the family at once: each access
 * credential's check reads it, as a service token's reads its key. Nothing of the provider's is kept.
 */
export interface CliLoginRecord {
  id: string
  user_id: string
  /** How the person signed in at the provider. */
  method: 'browser' | 'password'
  created: Timestamp
  /** The absolute end of the login (CLI_REFRESH_TTL_SECONDS after the sign-in): no credential of it outlives it, however often refreshed. */
  expires_at: Timestamp
  refreshes: number
  last_refreshed_at?: Timestamp
  revoked_at?: Timestamp
  /** logout: its owner ended it; reuse: a spent refresh token of it was presented again (a copy may have been stolen). */
  revoked_because?: 'logout' | 'reuse'
}

/** A CLI login's access credential (`plat_cli_…`, 1 hour, never past its login's end), stored under its SHA-256. */
export interface CliAccessTokenRecord {
  login_id: string
  user_id: string
  created: Timestamp
  expires_at: Timestamp
}

export type Lookup<T> = { ok: true; record: T } | { ok: false; reason: string }

/**
 * A credential the platform issued, named by its value before anything is read: the document to
 * read (the caller batches it with the other reads the request needs) and how to judge that
 * document once read. A good credential names its user and, for a service token, the key that
 * must still be active, which the caller reads in its next batch, with the user.
 */
export interface IssuedCredential {
  method: 'personal_token' | 'service_token' | 'session' | 'cli_token'
  ref: DocumentReference
  /**
   * The documents the value names (its account; the document whose revocation ends it: a service
   * token's key, a CLI credential's login), to read with the credential in one batch; hints only:
   * `check` says whose the credential is, and a named document that is not that one is not used.
   * None for a value minted before values named them.
   */
  named: { user?: DocumentReference; key?: DocumentReference }
  check(snap: DocumentSnapshot, now: Date): Lookup<{ userId: string; credentialId: string; key?: DocumentReference }>
}

const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000

function judgePersonal(ref: DocumentReference, snap: DocumentSnapshot, now: Date): Lookup<PersonalTokenRecord> {
  if (!snap.exists) return { ok: false, reason: 'unknown token' }
  const record = snap.data() as PersonalTokenRecord
  if (record.revoked_at) return { ok: false, reason: 'token revoked' }
  if (record.expires_at.toMillis() <= now.getTime()) return { ok: false, reason: 'token expired' }
  if (!record.last_used_at || now.getTime() - record.last_used_at.toMillis() > LAST_USED_RESOLUTION_MS) {
    // Best effort, coarse and off the request's path: a busy script does not write on every request, nor wait for the write.
    ref.update({ last_used_at: Timestamp.fromDate(now) }).catch(() => undefined)
  }
  return { ok: true, record }
}

/** A service token is valid while unexpired and while the key that obtained it is not revoked (judged by `keyActive`). */
function judgeServiceToken(snap: DocumentSnapshot, now: Date): Lookup<ServiceTokenRecord> {
  if (!snap.exists) return { ok: false, reason: 'unknown token' }
  const record = snap.data() as ServiceTokenRecord
  if (record.expires_at.toMillis() <= now.getTime()) return { ok: false, reason: 'token expired' }
  return { ok: true, record }
}

function judgeCliAccess(snap: DocumentSnapshot, now: Date): Lookup<CliAccessTokenRecord> {
  if (!snap.exists) return { ok: false, reason: 'unknown token' }
  const record = snap.data() as CliAccessTokenRecord
  if (record.expires_at.toMillis() <= now.getTime()) return { ok: false, reason: 'token expired' }
  return { ok: true, record }
}

function judgeSession(snap: DocumentSnapshot, now: Date): Lookup<SessionRecord> {
  if (!snap.exists) return { ok: false, reason: 'session not found or ended' }
  const record = snap.data() as SessionRecord
  if (record.expires_at.toMillis() <= now.getTime()) return { ok: false, reason: 'session expired' }
  return { ok: true, record }
}

/** The account a personal token or a session value names, if it names one. */
function namedUser(users: CollectionReference, prefix: string, value: string): { user?: DocumentReference } {
  const [userId] = idsNamedBy(prefix, value, 1)
  return { user: userId ? users.doc(userId) : undefined }
}

export class TokenStore {
  constructor(private readonly db: Db) {}

  private mintPersonal(input: { id?: string; userId: string; name: string; expiresAt: Date; now: Date }) {
    const value = newNamingSecret(TOKEN_PREFIX.personal, [input.userId])
    const record: PersonalTokenRecord = {
      id: input.id ?? newId(),
      user_id: input.userId,
      name: input.name,
      hint: value.slice(0, TOKEN_PREFIX.personal.length + 4),
      created: Timestamp.fromDate(input.now),
      expires_at: Timestamp.fromDate(input.expiresAt),
    }
    return { value, record, ref: this.db.col('personal_tokens').doc(sha256(value)) }
  }

  async createPersonal(input: { userId: string; name: string; expiresAt: Date; now: Date }) {
    const { value, record, ref } = this.mintPersonal(input)
    await ref.create(record)
    return { value, record }
  }

  /** As createPersonal, written in the caller's transaction (after its reads) so the token commits with its audit event. */
  createPersonalIn(tx: Transaction, input: { id?: string; userId: string; name: string; expiresAt: Date; now: Date }) {
    const { value, record, ref } = this.mintPersonal(input)
    tx.create(ref, record)
    return { value, record }
  }

  /** Reads the user's token with this id in `tx` (a read: call it before the transaction's writes). */
  async getPersonalIn(tx: Transaction, userId: string, id: string): Promise<{ ref: DocumentReference; record: PersonalTokenRecord } | undefined> {
    const q = await tx.get(this.db.col('personal_tokens').where('id', '==', id).limit(1))
    const doc = q.docs[0]
    if (!doc || doc.get('user_id') !== userId) return undefined
    return { ref: doc.ref, record: doc.data() as PersonalTokenRecord }
  }

  async verifyPersonal(value: string, now: Date): Promise<Lookup<PersonalTokenRecord>> {
    const ref = this.db.col('personal_tokens').doc(sha256(value))
    return judgePersonal(ref, await ref.get(), now)
  }

  async listPersonal(userId: string): Promise<PersonalTokenRecord[]> {
    const q = await this.db.col('personal_tokens').where('user_id', '==', userId).get()
    return q.docs.map((d) => d.data() as PersonalTokenRecord).sort((a, b) => b.created.toMillis() - a.created.toMillis())
  }

  /** Revokes the user's token with this id; undefined when the user has no such token. */
  async revokePersonal(userId: string, id: string, now: Date): Promise<PersonalTokenRecord | undefined> {
    const q = await this.db.col('personal_tokens').where('id', '==', id).limit(1).get()
    const doc = q.docs[0]
    if (!doc || doc.get('user_id') !== userId) return undefined
    const record = doc.data() as PersonalTokenRecord
    if (record.revoked_at) return record
    const revoked_at = Timestamp.fromDate(now)
    await doc.ref.update({ revoked_at })
    return { ...record, revoked_at }
  }

  private mintServiceToken(input: { userId: string; keyId: string; ttlSeconds: number; now: Date }) {
    const value = newNamingSecret(TOKEN_PREFIX.service, [input.userId, input.keyId])
    const expires = new Date(input.now.getTime() + input.ttlSeconds * 1000)
    const record: ServiceTokenRecord = {
      user_id: input.userId,
      key_id: input.keyId,
      created: Timestamp.fromDate(input.now),
      expires_at: Timestamp.fromDate(expires),
    }
    return { value, record, ref: this.db.col('service_tokens').doc(sha256(value)) }
  }

  async issueServiceToken(input: { userId: string; keyId: string; ttlSeconds: number; now: Date }) {
    const { value, record, ref } = this.mintServiceToken(input)
    await ref.create(record)
    return { value, record }
  }

  /** As issueServiceToken, written in the caller's transaction (after its reads), with its audit event. */
  issueServiceTokenIn(tx: Transaction, input: { userId: string; keyId: string; ttlSeconds: number; now: Date }) {
    const { value, record, ref } = this.mintServiceToken(input)
    tx.create(ref, record)
    return { value, record }
  }

  /**
   * Whether the document a credential depends on (the one `IssuedCredential.check` named: the
   * service key a token was obtained with, the login a CLI credential belongs to) is still active.
   */
  keyActive(snap: DocumentSnapshot): Lookup<true> {
    return snap.exists && !snap.get('revoked_at') ? { ok: true, record: true } : { ok: false, reason: 'token revoked' }
  }

  /** The credential a Bearer token or session cookie carries, by its kind (its prefix). */
  credential(kind: 'personal' | 'service' | 'session' | 'cli', value: string): IssuedCredential {
    const id = sha256(value)
    const users = this.db.col('users')
    const keys = this.db.col('service_keys')
    // `check` is a method, not an arrow function: a credential is made for every request, and a
    // named arrow function costs a name definition each time under tsx (esbuild's keepNames).
    switch (kind) {
      case 'personal': {
        const ref = this.db.col('personal_tokens').doc(id)
        return {
          method: 'personal_token',
          ref,
          named: namedUser(users, TOKEN_PREFIX.personal, value),
          check(snap, now) {
            const found = judgePersonal(ref, snap, now)
            return found.ok ? { ok: true, record: { userId: found.record.user_id, credentialId: found.record.id } } : found
          },
        }
      }
      case 'service': {
        const [userId, keyId] = idsNamedBy(TOKEN_PREFIX.service, value, 2)
        return {
          method: 'service_token',
          ref: this.db.col('service_tokens').doc(id),
          named: userId && keyId ? { user: users.doc(userId), key: keys.doc(keyId) } : {},
          check(snap, now) {
            const found = judgeServiceToken(snap, now)
            if (!found.ok) return found
            const { user_id, key_id } = found.record
            return { ok: true, record: { userId: user_id, credentialId: key_id, key: keys.doc(key_id) } }
          },
        }
      }
      case 'cli': {
        const [userId, loginId] = idsNamedBy(TOKEN_PREFIX.cliAccess, value, 2)
        const logins = this.db.col('cli_logins')
        return {
          method: 'cli_token',
          ref: this.db.col('cli_access_tokens').doc(id),
          named: userId && loginId ? { user: users.doc(userId), key: logins.doc(loginId) } : {},
          check(snap, now) {
            const found = judgeCliAccess(snap, now)
            if (!found.ok) return found
            const { user_id, login_id } = found.record
            return { ok: true, record: { userId: user_id, credentialId: login_id, key: logins.doc(login_id) } }
          },
        }
      }
      case 'session':
        return {
          method: 'session',
          ref: this.db.col('sessions').doc(id),
          named: namedUser(users, TOKEN_PREFIX.session, value),
          check(snap, now) {
            const found = judgeSession(snap, now)
            return found.ok ? { ok: true, record: { userId: found.record.user_id, credentialId: found.record.id } } : found
          },
        }
      default:
        return assertNever(kind)
    }
  }

  async createSession(input: {
    userId: string
    ttlSeconds: number
    now: Date
    effectiveRoles: Record<string, string[]>
    idToken?: string
    authTime?: Date
  }) {
    const value = newNamingSecret(TOKEN_PREFIX.session, [input.userId])
    const record: SessionRecord = {
      id: newId(),
      user_id: input.userId,
      created: Timestamp.fromDate(input.now),
      expires_at: Timestamp.fromDate(new Date(input.now.getTime() + input.ttlSeconds * 1000)),
      effective_roles: input.effectiveRoles,
      id_token: input.idToken,
      ...(input.authTime ? { auth_time: Timestamp.fromDate(input.authTime) } : {}),
    }
    await this.db.col('sessions').doc(sha256(value)).create(record)
    return { value, record }
  }

  async getSession(value: string, now: Date): Promise<Lookup<SessionRecord>> {
    return judgeSession(await this.db.col('sessions').doc(sha256(value)).get(), now)
  }

  /** The key of a session's document: what a record bound to a session (a login in flight) keeps instead of the cookie's value. */
  sessionKey(value: string): string {
    return sha256(value)
  }

  async getSessionByKey(key: string, now: Date): Promise<Lookup<SessionRecord>> {
    return judgeSession(await this.db.col('sessions').doc(key).get(), now)
  }

  /**
   * Records that the session's own user authenticated again at the identity provider: the ID
   * token's auth_time, and how and when the login that asked for it began (prompt, max_age, the
   * login's start), so that a signature can tell a password asked for now from a provider session
   * reused, or from a login begun before its form was posted.
   */
  async recordReauthentication(key: string, input: { authTime: Date; now: Date; prompt?: 'login'; maxAge?: number; begunAt: Date }): Promise<void> {
    const authTime = Timestamp.fromDate(input.authTime)
    const reauth: NonNullable<SessionRecord['reauth']> = {
      ...(input.prompt ? { prompt: input.prompt } : {}),
      ...(input.maxAge !== undefined ? { max_age: input.maxAge } : {}),
      begun_at: Timestamp.fromDate(input.begunAt),
      auth_time: authTime,
      at: Timestamp.fromDate(input.now),
    }
    await this.db.col('sessions').doc(key).update({ auth_time: authTime, reauth })
  }

  /** Records that someone else completed a re-authentication in the session: nothing else of the session changes. */
  async recordRefusedReauthentication(key: string, input: { userId: string; email?: string; now: Date }): Promise<void> {
    await this.db
      .col('sessions')
      .doc(key)
      .update({ reauth_refused: { at: Timestamp.fromDate(input.now), user_id: input.userId, ...(input.email ? { email: input.email } : {}) } })
  }

  async endSession(value: string): Promise<SessionRecord | undefined> {
    const ref = this.db.col('sessions').doc(sha256(value))
    const snap = await ref.get()
    if (!snap.exists) return undefined
    await ref.delete()
    return snap.data() as SessionRecord
  }
}
