import { DocumentSnapshot, Timestamp } from '@google-cloud/firestore'
import type { Clock } from '../clock.js'
import type { Db } from '../db.js'
import { ApiError } from '../errors.js'
import { sha256 } from '../ids.js'

/**
 * Failed logins counted per account and per client address in Firestore (OWASP API2): past a
 * threshold within a window the key is locked, and every attempt on it, right or wrong, answers
 * 429 with Retry-After until the lock ends; each further lockout doubles the wait, up to a cap.
 * An account key is whatever the client names (an e-mail, a service user, a key id), whether or
 * not it exists, so a known and an unknown account behave alike.
 */
export interface ThrottlePolicy {
  /** Failures within the window that lock the key. */
  threshold: number
  windowMs: number
  /** The first lock; each further one doubles, up to maxLockMs. */
  baseLockMs: number
  maxLockMs: number
}

const MINUTE = 60_000
export const THROTTLE_POLICIES: Record<ThrottleKey['kind'], ThrottlePolicy> = {
  account: { threshold: 5, windowMs: 15 * MINUTE, baseLockMs: 30_000, maxLockMs: 15 * MINUTE },
  address: { threshold: 20, windowMs: 15 * MINUTE, baseLockMs: 30_000, maxLockMs: 15 * MINUTE },
}

export interface ThrottleKey {
  kind: 'account' | 'address'
  /** What the attempt names: `password:<e-mail>`, `assertion:<service user>`, `token:<address>`… */
  value: string
}

interface ThrottleRecord {
  kind: ThrottleKey['kind']
  failures: number
  window_started: Timestamp
  lockouts: number
  locked_until?: Timestamp
  /** For the TTL policy: when the record means nothing any more. */
  expires: Timestamp
}

export class TooManyAttempts extends ApiError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, `too many failed attempts; try again in ${retryAfterSeconds} s`, { 'Retry-After': String(retryAfterSeconds) })
  }
}

export class LoginThrottle {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly policies = THROTTLE_POLICIES,
  ) {}

  /** The key's document, for a caller that reads it with others in one getAll (the auth path). */
  ref(key: ThrottleKey) {
    return this.db.col('login_throttle').doc(sha256(`${key.kind}\n${key.value.toLowerCase()}`))
  }

  /** Answers 429 (TooManyAttempts) when any of the keys is locked now. One batched read. */
  async check(keys: ThrottleKey[]): Promise<void> {
    // An attempt that names no account from an unknown address (an in-process request) has nothing to count on.
    if (!keys.length) return
    const snaps = await this.db.firestore.getAll(...keys.map((k) => this.ref(k)))
    this.assertOpen(snaps.map((s) => s.data() as ThrottleRecord | undefined))
  }

  /** The same check on records already read (the auth path reads them with the rest of round one). */
  assertOpen(records: Array<ThrottleRecord | DocumentSnapshot | undefined>): void {
    let until = 0
    for (const r of records) {
      const record = r instanceof DocumentSnapshot ? (r.data() as ThrottleRecord | undefined) : r
      until = Math.max(until, record?.locked_until?.toMillis() ?? 0)
    }
    const now = this.clock.now().getTime()
    if (until > now) throw new TooManyAttempts(Math.ceil((until - now) / 1000))
  }

  /** Counts a failed attempt on every key; the attempt that reaches a threshold locks its key. */
  async failed(keys: ThrottleKey[]): Promise<void> {
    if (!keys.length) return
    const refs = keys.map((k) => this.ref(k))
    await this.db.transaction(async (tx) => {
      const snaps = await tx.getAll(...refs)
      const now = this.clock.now().getTime()
      snaps.forEach((snap, i) => {
        const key = keys[i]!
        const policy = this.policies[key.kind]
        const before = snap.data() as ThrottleRecord | undefined
        const fresh = !before || now - before.window_started.toMillis() > policy.windowMs
        const record: ThrottleRecord = {
          kind: key.kind,
          failures: (fresh ? 0 : before.failures) + 1,
          window_started: fresh ? Timestamp.fromMillis(now) : before.window_started,
          lockouts: before?.lockouts ?? 0,
          ...(before?.locked_until ? { locked_until: before.locked_until } : {}),
          expires: Timestamp.fromMillis(now + policy.windowMs + policy.maxLockMs),
        }
        if (record.failures >= policy.threshold) {
          const lockMs = Math.min(policy.maxLockMs, policy.baseLockMs * 2 ** record.lockouts)
          record.lockouts += 1
          record.failures = 0
          record.window_started = Timestamp.fromMillis(now)
          record.locked_until = Timestamp.fromMillis(now + lockMs)
        }
        tx.set(refs[i]!, record)
      })
    })
  }

  /** A successful login clears the account's count (an address keeps its own). */
  async succeeded(keys: ThrottleKey[]): Promise<void> {
    const batch = this.db.firestore.batch()
    for (const key of keys.filter((k) => k.kind === 'account')) batch.delete(this.ref(key))
    await batch.commit()
  }
}
