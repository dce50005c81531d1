import { setTimeout as sleep } from 'node:timers/promises'
import {
  Firestore,
  type CollectionReference,
  type DocumentData,
  type DocumentReference,
  type DocumentSnapshot,
  Timestamp,
  type ReadOnlyTransactionOptions,
  type ReadWriteTransactionOptions,
  type Settings,
  type Transaction,
} from '@google-cloud/firestore'
import type { Config } from './config.js'

export { Firestore, Timestamp }

/** The client's settings: the emulator is chosen by FIRESTORE_EMULATOR_HOST, as the client library does. */
export const firestoreSettings = (config: Config): Settings => ({
  projectId: config.gcpProject,
  ignoreUndefinedProperties: true,
  ...(config.firestoreEmulatorHost ? { host: config.firestoreEmulatorHost, ssl: false, customHeaders: { Authorization: 'Bearer owner' } } : {}),
})

/** One Firestore client per process. */
export function createFirestore(config: Config): Firestore {
  return new Firestore(firestoreSettings(config))
}

/**
 * The collections of the kernel: accounts, credentials, sessions, the audit log, and the projects
 * and organizations that tenancy reads. Each service's domain declares its own in its definition
 * (lib/service.ts `collections`); the prefix isolates test suites sharing an emulator.
 */
export const KERNEL_COLLECTIONS = [
  'organizations',
  'projects',
  'users',
  'personal_tokens',
  'service_keys',
  'service_tokens',
  /** jti of each JWT assertion exchanged at /oauth/token, kept until its exp so a replay is refused. */
  'used_assertions',
  'sessions',
  /** The CLI's logins and their credentials, stored hashed (lib/auth/tokens.ts, docs/cli-login.md). */
  'cli_logins',
  'cli_access_tokens',
  'cli_refresh_tokens',
  'audit_events',
  'audit_heads',
  /** Failed logins per account and per address (lib/auth/throttle.ts). */
  'login_throttle',
] as const

/**
 * How a transaction that lost a race is run again (docs/operating.md). The client library's own
 * runTransaction retries five times, waiting 1 s, 1.5 s, 2.25 s and 3.4 s between attempts: a
 * contended request would be answered after 8 s or more. Db.transaction asks it for one attempt
 * and runs the retries itself, each after a short random wait ("full jitter": concurrent losers do
 * not come back together), and starts none later than `budgetMs` after the first, so that a
 * request still answers within its 2 s; only then does the loss reach the client as a 409.
 *
 * An attempt that lost only after waiting longer than the whole budget lost a deadlock: two
 * transactions that read a document under lock and then both write it wait on each other, which
 * Firestore ends at once by aborting one, but the emulator only after a lock timeout of about 2 s,
 * and then aborts them all. Such losers wait a random time spread over the budget, so that they do
 * not meet again, and get a budget afresh; the `slowLosses`-th such loss ends it.
 */
export interface TransactionRetry {
  /** No attempt starts later than this after the first (or after the last deadlock lost). */
  budgetMs: number
  /** The wait before the n-th retry is uniform in [0, min(maxDelayMs, baseDelayMs · 2^(n-1))). */
  baseDelayMs: number
  maxDelayMs: number
  /** Losses after a wait longer than the budget (deadlocks the emulator broke) that end the retries. */
  slowLosses: number
  now(): number
  sleep(ms: number): Promise<void>
  random(): number
}

export const TRANSACTION_RETRY: TransactionRetry = {
  budgetMs: 1000,
  baseDelayMs: 10,
  maxDelayMs: 200,
  slowLosses: 3,
  now: () => performance.now(),
  sleep: (ms) => sleep(ms),
  random: Math.random,
}

/**
 * How the Firestore emulator reports a transaction it aborted for a concurrent one: INVALID_ARGUMENT
 * "Transaction is invalid or closed", on the next read or at the commit.
 */
export function isEmulatorAbort(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown; message?: unknown }
  return code === 3 && typeof message === 'string' && message.includes('Transaction is invalid or closed')
}

const ABORTED = 10
const ALREADY_EXISTS = 6
const FAILED_PRECONDITION = 9

/**
 * The gRPC codes after which the client library runs a transaction again (its
 * isRetryableTransactionError, from the Firebase SDKs' transaction runner): ABORTED, the loss to a
 * concurrent transaction, and the transient failures of the service. Nothing of a failed attempt
 * was committed, or, for a commit that failed in flight, the attempt that runs again reads what it
 * committed (a transaction function may run more than once: see RunStore.submit).
 */
const RETRIED_CODES: ReadonlySet<number> = new Set([
  1, // CANCELLED
  2, // UNKNOWN
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  ABORTED,
  13, // INTERNAL
  14, // UNAVAILABLE
  16, // UNAUTHENTICATED
])

const codeOf = (err: unknown) => (typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined)

/** A loss to concurrent transactions: aborted for one (by Firestore or the emulator), or beaten to a document it meant to create. */
function isRace(err: unknown): boolean {
  const code = codeOf(err)
  return code === ABORTED || code === ALREADY_EXISTS || isEmulatorAbort(err)
}

/**
 * A transaction worth running again: a race lost (the attempt that runs again reads what the winner
 * wrote, and decides on it), and the transient failures the client library retries.
 */
export function isRetryableTransaction(err: unknown): boolean {
  if (isRace(err)) return true
  const code = codeOf(err)
  if (typeof code === 'number' && RETRIED_CODES.has(code)) return true
  // Firestore answers an expired transaction id INVALID_ARGUMENT, which the library retries too.
  const message = (err as { message?: unknown } | null)?.message
  return code === 3 && typeof message === 'string' && message.includes('transaction has expired')
}

/**
 * A transaction that still lost to concurrent ones when its time to run again was up
 * (TRANSACTION_RETRY): nothing of it was written, and the request may be sent again (lib/errors.ts
 * answers it 409).
 */
export class LostRace extends Error {
  override name = 'LostRace'
  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`lost to concurrent transactions ${attempts} times: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  }
}

export class Db {
  constructor(
    readonly firestore: Firestore,
    readonly prefix = '',
    private readonly retry: TransactionRetry = TRANSACTION_RETRY,
  ) {}
  /**
   * `firestore.runTransaction`, run again while it loses to concurrent transactions or meets a
   * transient failure (`isRetryableTransaction`), within `TRANSACTION_RETRY`'s time; then a race
   * still lost is thrown as LostRace (answered 409), a transient failure as it came. `fn` must be
   * one that may run more than once, as the client library already requires.
   */
  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: ReadWriteTransactionOptions | ReadOnlyTransactionOptions): Promise<T> {
    const { budgetMs, baseDelayMs, maxDelayMs, slowLosses, now, random } = this.retry
    // A read-only transaction takes no locks and is never retried by the library; a read-write one gets one attempt there, the retries here.
    const once = options?.readOnly ? options : { ...options, maxAttempts: 1 }
    let budgetFrom = now()
    let slow = 0
    for (let retry = 0; ; retry++) {
      let attempt: Transaction | undefined
      const turns: Array<() => void> = []
      const after: Array<() => Promise<void>> = []
      const attemptStarted = now()
      let failure: unknown
      let committed: { value: T } | undefined
      try {
        committed = {
          value: await this.firestore.runTransaction((tx) => {
            attempt = tx
            this.turnsHeld.set(tx, turns)
            this.afterHeld.set(tx, after)
            return fn(tx)
          }, once),
        }
      } catch (err) {
        failure = err
      } finally {
        // The attempt is over: the next in turn goes now, not after this one's wait.
        for (const release of turns) release()
      }
      if (committed) {
        for (const work of after) await work()
        return committed.value
      }
      const lost = isRace(failure) || (attempt !== undefined && this.preconditioned.has(attempt) && codeOf(failure) === FAILED_PRECONDITION)
      if (!lost && !isRetryableTransaction(failure)) throw failure
      const giveUp = () => (lost ? new LostRace(retry + 1, failure) : failure)
      let wait: number
      if (lost && now() - attemptStarted > budgetMs) {
        // A deadlock the emulator broke (see TransactionRetry): spread over the budget, which starts afresh.
        if (++slow >= slowLosses) throw giveUp()
        wait = random() * budgetMs
        budgetFrom = now() + wait
      } else {
        wait = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** retry)
        if (now() + wait - budgetFrom > budgetMs) throw giveUp()
      }
      await this.retry.sleep(wait)
    }
  }

  /** Per document path, the end of the last turn taken at it (`takeTurn`). */
  private readonly turns = new Map<string, Promise<void>>()
  /** The releases of the turns each attempt holds, called when it ends. */
  private readonly turnsHeld = new WeakMap<Transaction, Array<() => void>>()

  /**
   * Waits until no other transaction of this process holds its turn at `ref`, and holds the turn
   * until this attempt ends, committed or not. For a document that concurrent transactions read and
   * then write (a signed order that its first runs move on), where a write under a precondition
   * would not do (the read must also keep the document from changing under the transaction): two
   * transactions that both read it under lock and then both write it wait on each other; Firestore
   * aborts one at once, the emulator only after a lock timeout of about 2 s, and then all of them,
   * again and again. The transactions of one process take turns instead; those of other processes
   * still race, and run again when they lose. Call it before the transaction reads anything another
   * may be waiting its turn to write.
   */
  async takeTurn(tx: Transaction, ref: DocumentReference): Promise<void> {
    const held = this.turnsHeld.get(tx)
    if (!held) throw new Error('takeTurn needs a transaction run by Db.transaction, which ends the turn')
    const before = this.turns.get(ref.path)
    let release!: () => void
    const mine = new Promise<void>((r) => (release = r))
    const turn = (before ?? Promise.resolve()).then(() => mine)
    this.turns.set(ref.path, turn)
    held.push(() => {
      release()
      if (this.turns.get(ref.path) === turn) this.turns.delete(ref.path)
    })
    await before
  }

  /** The work each attempt asked to do once it has committed (`afterCommit`). */
  private readonly afterHeld = new WeakMap<Transaction, Array<() => Promise<void>>>()

  /**
   * Does `work` once the attempt `tx` has committed, before `transaction` answers, and never for an
   * attempt that did not commit: the side effect of a change (publishing that a webhook delivery is
   * due) follows the transaction that wrote it (STYLE.md 6) without each caller of the store having
   * to. `work` must not throw: what it does is also recoverable without it (a sweep finds what it
   * failed to do). False when `tx` is not an attempt of `transaction`, which then does nothing.
   */
  afterCommit(tx: Transaction, work: () => Promise<void>): boolean {
    const after = this.afterHeld.get(tx)
    after?.push(work)
    return after !== undefined
  }

  /** The attempts that wrote under a precondition (`writeIfUnchanged`): a FAILED_PRECONDITION at their commit is a lost race. */
  private readonly preconditioned = new WeakSet<Transaction>()

  /**
   * Writes `data` over the document of `snap`, read outside the transaction, only if nobody wrote
   * it since: the commit checks its update time (or, for a document that was absent, that it still
   * is). For a document many transactions read and write (a chain head): read outside the
   * transaction it holds no lock, so two transactions never wait on each other for it (Firestore
   * aborts one of two such waiters, the emulator waits out a lock timeout of about 2 s first); the
   * one that commits second fails FAILED_PRECONDITION (or ALREADY_EXISTS), and `transaction` runs
   * it again, reading the document afresh.
   */
  writeIfUnchanged(tx: Transaction, snap: DocumentSnapshot, data: DocumentData): void {
    this.preconditioned.add(tx)
    if (snap.exists) tx.update(snap.ref, data, { lastUpdateTime: snap.updateTime! })
    else tx.create(snap.ref, data)
  }

  private readonly collections = new Map<string, CollectionReference>()

  /** The collection of this name (with the prefix); one reference per name, made once: a reference is immutable. */
  col(name: string): CollectionReference {
    let col = this.collections.get(name)
    if (!col) this.collections.set(name, (col = this.firestore.collection(this.prefix + name)))
    return col
  }
}

/** Firestore timestamps become ISO 8601 strings at the edge; undefined stays absent. */
export function iso(value: Timestamp | Date | undefined | null): string | undefined {
  if (!value) return undefined
  return (value instanceof Timestamp ? value.toDate() : value).toISOString()
}
