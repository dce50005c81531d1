import { Timestamp } from '@google-cloud/firestore'
import type { UserRecord } from '../../lib/auth/access.js'
import type { CliAccessTokenRecord, CliLoginRecord } from '../../lib/auth/tokens.js'
import type { AuditInput } from '../../lib/audit.js'
import { allow, deny, unauthenticated, type Decision, type Refusal } from '../../lib/decision.js'

/**
 * The rules of the CLI's logins (docs/cli-login.md), decided once (lib/decision.ts). A login at
 * the identity provider ends with credentials the platform issues itself: an access credential
 * (1 hour) and a refresh credential, rotated on every use, within the login's absolute lifetime.
 * Presenting a spent refresh credential again revokes the whole login (the refresh token reuse
 * detection of RFC 9700 §4.14): either the person's copy or a thief's was used before, and the
 * platform cannot tell which. Plain data in, plain data out; CliLoginStore reads and writes.
 */

/** The access credential's lifetime: that of the OIDC access tokens it stands in for (spec/platform-api.md). */
export const CLI_ACCESS_TTL_SECONDS = 3600

export type CliLoginMethod = CliLoginRecord['method']

/** A CLI login's refresh credential (`plat_clr_…`), stored under its SHA-256. */
export interface CliRefreshTokenRecord {
  login_id: string
  user_id: string
  created: Timestamp
  /** Its login's end: a refresh credential lasts as long as its login, unless spent first. */
  expires_at: Timestamp
  /** When it was exchanged for the next pair: presenting it again is a reuse. */
  spent_at?: Timestamp
}

/** A pair of credentials of a login, as stored (their values are the store's: decisions draw nothing random). */
export interface CliPair {
  access: CliAccessTokenRecord
  refresh: CliRefreshTokenRecord
}

/** What the audit log records for each method (login.succeeded's reason). */
export const METHOD_REASONS: Record<CliLoginMethod, string> = {
  browser: 'browser (device authorization grant)',
  password: 'password',
}

/** The refusals' details: each ends by saying what to do, as the CLI shows them. */
export const REFRESH_REFUSED = {
  unknown: 'refresh token invalid, expired or revoked: log in again (platform login)',
  notOurs:
    "this refresh token is not the platform's (the identity provider's, kept by a CLI from before the platform issued its own credentials): log in again (platform login)",
  logout: 'this login was ended (logged out): log in again (platform login)',
  reuse: 'this login was ended because one of its refresh tokens was used twice (a copy may have been stolen): log in again (platform login)',
  reused:
    'this refresh token was already used: the login and all its credentials are revoked, as a copy may have been stolen; log in again (platform login)',
  expired: 'this login has reached the end of its lifetime: log in again (platform login)',
  noAccount: 'the account of this login no longer exists',
  disabled: 'account disabled',
} as const

const entityOf = (login: Pick<CliLoginRecord, 'id' | 'user_id'>) => ({ type: 'cli_login', id: login.id, parent: login.user_id })

/** A new pair: the access credential for an hour but never past the login's end, the refresh credential until that end. */
export function pairFor(login: Pick<CliLoginRecord, 'id' | 'user_id' | 'expires_at'>, now: Date): CliPair {
  const created = Timestamp.fromDate(now)
  const accessEnd = Math.min(now.getTime() + CLI_ACCESS_TTL_SECONDS * 1000, login.expires_at.toMillis())
  return {
    access: { login_id: login.id, user_id: login.user_id, created, expires_at: Timestamp.fromMillis(accessEnd) },
    refresh: { login_id: login.id, user_id: login.user_id, created, expires_at: login.expires_at },
  }
}

/** The account that logs in or refreshes, as read in the transaction: it must exist and be enabled. */
function usable(user: UserRecord | undefined): { user: UserRecord } | { refusal: Refusal } {
  if (!user) return { refusal: unauthenticated(REFRESH_REFUSED.noAccount) }
  if (user.disabled) return { refusal: unauthenticated(REFRESH_REFUSED.disabled) }
  return { user }
}

export interface BeginCliLogin {
  now: Date
  method: CliLoginMethod
  /** The new login's id (the store draws it). */
  loginId: string
  /** CLI_REFRESH_TTL_SECONDS: how long the login lasts, however often refreshed. */
  lifetimeSeconds: number
}

export interface CliLoginBegun extends CliPair {
  login: CliLoginRecord
}

/**
 * The end of a sign-in at the identity provider (its ID token verified, mapped to `user`): a new
 * login with its first pair, for an account that exists and is enabled, read afresh in the
 * transaction that writes them.
 */
export function decideCliLogin(user: UserRecord | undefined, cmd: BeginCliLogin): Decision<CliLoginBegun> {
  const account = usable(user)
  if ('refusal' in account) return deny(account.refusal)
  const login: CliLoginRecord = {
    id: cmd.loginId,
    user_id: account.user.id,
    method: cmd.method,
    created: Timestamp.fromDate(cmd.now),
    expires_at: Timestamp.fromMillis(cmd.now.getTime() + cmd.lifetimeSeconds * 1000),
    refreshes: 0,
  }
  const event: AuditInput = {
    action: 'login.succeeded',
    entity: entityOf(login),
    change: { reason: METHOD_REASONS[cmd.method], to: login.expires_at.toDate().toISOString() },
  }
  return allow({ login, ...pairFor(login, cmd.now) }, [event])
}

/** A refresh credential presented, with its login and account, as read in the transaction. */
export interface RefreshState {
  refresh?: CliRefreshTokenRecord
  login?: CliLoginRecord
  user?: UserRecord
}

/** What a refresh writes: the next pair, the presented credential spent; or, for a reuse, the whole login revoked (and the request refused). */
export type RefreshOutcome =
  | {
      kind: 'rotated'
      spent: Pick<CliRefreshTokenRecord, 'spent_at'>
      login: Pick<CliLoginRecord, 'refreshes' | 'last_refreshed_at'>
      pair: CliPair
      /** The account the pair is for, as judged. */
      account: UserRecord
    }
  | { kind: 'reuse_detected'; login: Required<Pick<CliLoginRecord, 'revoked_at' | 'revoked_because'>> }

/**
 * A refresh (POST /auth/refresh): unknown, revoked and expired logins are refused; a spent
 * refresh credential revokes its login (its caller is then refused); otherwise, for an enabled
 * account, the presented credential is spent and a new pair issued, never past the login's end.
 */
export function decideRefresh(state: RefreshState, cmd: { now: Date }): Decision<RefreshOutcome> {
  const { refresh, login, user } = state
  if (!refresh || !login) return deny(unauthenticated(REFRESH_REFUSED.unknown))
  if (login.revoked_at) return deny(unauthenticated(login.revoked_because === 'reuse' ? REFRESH_REFUSED.reuse : REFRESH_REFUSED.logout))
  const now = Timestamp.fromDate(cmd.now)
  if (login.expires_at.toMillis() <= now.toMillis()) return deny(unauthenticated(REFRESH_REFUSED.expired))
  if (refresh.spent_at) {
    return allow({ kind: 'reuse_detected', login: { revoked_at: now, revoked_because: 'reuse' } }, [
      {
        action: 'token.reuse_detected',
        outcome: 'denied',
        entity: entityOf(login),
        change: {
          reason: `a refresh token spent at ${refresh.spent_at.toDate().toISOString()} was presented again: the login and all its credentials are revoked`,
        },
      },
    ])
  }
  const account = usable(user)
  if ('refusal' in account) return deny(account.refusal)
  return allow(
    {
      kind: 'rotated',
      spent: { spent_at: now },
      login: { refreshes: login.refreshes + 1, last_refreshed_at: now },
      pair: pairFor(login, cmd.now),
      account: account.user,
    },
    [{ action: 'token.refreshed', entity: entityOf(login), change: { reason: `refresh ${login.refreshes + 1}` } }],
  )
}

/**
 * A logout (POST /auth/revoke): the login and every credential of it end at once. Idempotent, as
 * RFC 7009 asks: an unknown or already revoked login changes nothing and records nothing.
 */
export function decideCliLogout(
  login: CliLoginRecord | undefined,
  cmd: { now: Date },
): Decision<Required<Pick<CliLoginRecord, 'revoked_at' | 'revoked_because'>> | undefined> {
  if (!login || login.revoked_at) return allow(undefined)
  return allow({ revoked_at: Timestamp.fromDate(cmd.now), revoked_because: 'logout' }, [
    { action: 'token.revoked', entity: entityOf(login), change: { reason: 'logout' } },
  ])
}
