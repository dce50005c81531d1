import { setTimeout as sleep } from 'node:timers/promises'
import {
  Firestore,
  type CollectionReference,
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

const TRANSACTION_ATTEMPTS = 5

/**
 * How the Firestore emulator reports a transaction it aborted for a concurrent one: INVALID_ARGUMENT
 * "Transaction is invalid or closed", on the next read or at the commit.
 */
export function isEmulatorAbort(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown; message?: unknown }
  return code === 3 && typeof message === 'string' && message.includes('Transaction is invalid or closed')
}

export class Db {
  constructor(
    readonly firestore: Firestore,
    readonly prefix = '',
  ) {}
  /**
   * `firestore.runTransaction`, also run again when the Firestore emulator aborted it for a
   * concurrent one (`isEmulatorAbort`): Firestore itself answers ABORTED, which the client library
   * retries, the emulator INVALID_ARGUMENT, which it does not. Nothing of an aborted attempt was
   * written, and `fn` is already one the library may run more than once. Five attempts in all.
   */
  async transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: ReadWriteTransactionOptions | ReadOnlyTransactionOptions): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.firestore.runTransaction(fn, options)
      } catch (err) {
        if (attempt >= TRANSACTION_ATTEMPTS || !isEmulatorAbort(err)) throw err
        await sleep(Math.random() * 20 * 2 ** attempt)
      }
    }
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
