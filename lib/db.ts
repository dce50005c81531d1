import { Firestore, Timestamp, type Settings } from '@google-cloud/firestore'
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
  'audit_events',
  'audit_heads',
  /** Failed logins per account and per address (lib/auth/throttle.ts). */
  'login_throttle',
] as const

export class Db {
  constructor(
    readonly firestore: Firestore,
    readonly prefix = '',
  ) {}
  col(name: string) {
    return this.firestore.collection(this.prefix + name)
  }
}

/** Firestore timestamps become ISO 8601 strings at the edge; undefined stays absent. */
export function iso(value: Timestamp | Date | undefined | null): string | undefined {
  if (!value) return undefined
  return (value instanceof Timestamp ? value.toDate() : value).toISOString()
}
