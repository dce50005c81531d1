import { AccessStore } from './auth/access.js'
import { AuditWriter } from './audit.js'
import { systemClock, type Clock } from './clock.js'
import { ConfigError, type Config } from './config.js'
import { createFirestore, Db, type Firestore } from './db.js'
import { createLogger, type Logger, type LogScope, type LogSink } from './log.js'
import { OidcVerifier } from './auth/oidc.js'
import { LoginThrottle } from './auth/throttle.js'
import { TokenStore } from './auth/tokens.js'
import { correlatedQueue, type Queue } from './queue.js'

/** What every service is built from; services extend it with their own stores and adapters. */
export interface KernelDeps {
  config: Config
  db: Db
  log: Logger
  clock: Clock
  access: AccessStore
  tokens: TokenStore
  audit: AuditWriter
  /** Failed-login counting for the login, token exchange and personal-token paths. */
  throttle: LoginThrottle
  oidc?: OidcVerifier
}

/**
 * Builds the dependencies every service shares. `firestore` may be passed to share one client in a
 * process; `logSink` is where log lines go (standard output and error unless given: the local suite
 * gives its own, emulators/log-output.ts).
 * Every service records audit events, so a process without the audit keys does not start, in the
 * cloud or locally: no event is ever written unkeyed (docs/audit.md).
 */
export function createKernel(config: Config, service: string, opts: { firestore?: Firestore; clock?: Clock; logSink?: LogSink } = {}): KernelDeps {
  if (!config.auditKeys) {
    throw new ConfigError(
      'invalid configuration: AUDIT_HMAC_KEYS is required: the keys audit events are recorded with (Secret Manager in the cloud, the data folder in the local suite; see docs/audit.md)',
    )
  }
  const db = new Db(opts.firestore ?? createFirestore(config), config.collectionPrefix)
  const clock = opts.clock ?? systemClock
  const log = createLogger(config.logLevel, { service }, opts.logSink)
  const audit = new AuditWriter(db, service, clock, config.auditKeys, log)
  return {
    config,
    db,
    clock,
    log,
    access: new AccessStore(db, audit),
    tokens: new TokenStore(db),
    audit,
    throttle: new LoginThrottle(db, clock),
    oidc: config.oidc ? new OidcVerifier(config.oidc) : undefined,
  }
}

/**
 * The dependencies as the code handling one request or event is given them: its logger puts the
 * scope's fields (the request id, the trace, an event's ids) on every line, and its queue hands the
 * request id and trace on to every message it publishes. A handler passes these on to the domain
 * code it calls, so a line logged however deep carries them.
 */
export function inScope<D extends { log: Logger; queue?: Queue }>(deps: D, scope: LogScope): D {
  return { ...deps, log: deps.log.with(scope.fields), ...(deps.queue ? { queue: correlatedQueue(deps.queue, scope) } : {}) }
}
