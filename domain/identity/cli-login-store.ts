import type { DocumentReference, DocumentSnapshot, Transaction } from '@google-cloud/firestore'
import type { UserRecord } from '../../lib/auth/access.js'
import type { CliLoginRecord } from '../../lib/auth/tokens.js'
import type { AuditContext, AuditRequest, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse, Refused, unauthenticated } from '../../lib/decision.js'
import { idsNamedBy, newId, newNamingSecret, sha256, TOKEN_PREFIX } from '../../lib/ids.js'
import { recordOf } from '../../lib/reads.js'
import {
  decideCliLogin,
  decideCliLogout,
  decideRefresh,
  REFRESH_REFUSED,
  type CliLoginMethod,
  type CliPair,
  type CliRefreshTokenRecord,
} from './cli-logins.js'

/** What the CLI gets and keeps: the platform's own pair (docs/cli-login.md), never anything of the identity provider's. */
export interface CliTokens {
  access_token: string
  refresh_token: string
  expires_in: number
  token_type: 'Bearer'
}

/**
 * The CLI's logins in Firestore: `cli_logins/<id>` (the family), `cli_access_tokens/<sha256>` and
 * `cli_refresh_tokens/<sha256>` (DESIGN.md invariant 5: only hashes are stored). Each value names
 * its user and its login after its random part (lib/ids.ts newNamingSecret), so that the kernel
 * reads an access credential with its account and login in one round trip, and a refresh reads
 * its three documents in one. Every change is decided by domain/identity/cli-logins.ts and
 * written with its audit event in the same transaction.
 */
export class CliLoginStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

  private get logins() {
    return this.db.col('cli_logins')
  }
  private get accessTokens() {
    return this.db.col('cli_access_tokens')
  }
  private get refreshTokens() {
    return this.db.col('cli_refresh_tokens')
  }

  /** Writes a pair in `tx` (after its reads) under fresh values, and returns them: the only time they exist in the clear. */
  private issue(tx: Transaction, pair: CliPair, now: Date): CliTokens {
    const names = [pair.access.user_id, pair.access.login_id]
    const access = newNamingSecret(TOKEN_PREFIX.cliAccess, names)
    const refresh = newNamingSecret(TOKEN_PREFIX.cliRefresh, names)
    tx.create(this.accessTokens.doc(sha256(access)), pair.access)
    tx.create(this.refreshTokens.doc(sha256(refresh)), pair.refresh)
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: Math.round((pair.access.expires_at.toMillis() - now.getTime()) / 1000),
      token_type: 'Bearer',
    }
  }

  /**
   * Begins a login for the user a sign-in at the identity provider mapped to, read again here (a
   * disabled account gets nothing), with its first pair and its login.succeeded event (`ctx`: the
   * user, with how they signed in).
   */
  async begin(ctx: AuditContext, input: { userId: string; method: CliLoginMethod; lifetimeSeconds: number }): Promise<CliTokens> {
    const loginId = newId()
    const now = this.clock.now()
    return this.db.transaction(async (tx) => {
      const user = recordOf<UserRecord>(await tx.get(this.db.col('users').doc(input.userId)))
      const chain = await this.audit.prepare(tx, { entity: { type: 'cli_login', id: loginId } })
      const { changes, events } = orRefuse(decideCliLogin(user, { now, method: input.method, loginId, lifetimeSeconds: input.lifetimeSeconds }))
      tx.create(this.logins.doc(loginId), changes.login)
      const tokens = this.issue(tx, changes, now)
      for (const event of events) chain.write(ctx, event)
      return tokens
    })
  }

  /**
   * Exchanges a refresh credential for the next pair (POST /auth/refresh). A refusal is thrown as
   * a 401; a spent credential revokes its login, which is committed with its token.reuse_detected
   * event before the caller is refused.
   */
  async refresh(request: AuditRequest | undefined, value: string): Promise<{ user: UserRecord; tokens: CliTokens }> {
    if (!value.startsWith(TOKEN_PREFIX.cliRefresh)) throw new Refused(unauthenticated(REFRESH_REFUSED.notOurs))
    const ref = this.refreshTokens.doc(sha256(value))
    const now = this.clock.now()
    const outcome = await this.db.transaction(async (tx) => {
      const { refresh, login, user } = await this.readRefresh(tx, ref, value)
      const chain = login ? await this.audit.prepare(tx, { entity: { type: 'cli_login', id: login.id } }) : undefined
      const decision = decideRefresh({ refresh, login, user }, { now })
      if (!decision.ok) return decision.refusal
      // Never so: decideRefresh refuses a credential without its login. It narrows the types.
      if (!login || !chain) return unauthenticated(REFRESH_REFUSED.unknown)
      const { changes, events } = decision
      const loginRef = this.logins.doc(login.id)
      tx.update(loginRef, changes.login)
      const actor: AuditContext = {
        actor: { type: user?.kind ?? 'user', id: login.user_id, email: user?.email, auth_method: 'refresh_token' },
        request,
      }
      for (const event of events) chain.write(actor, event)
      if (changes.kind === 'reuse_detected') return unauthenticated(REFRESH_REFUSED.reused)
      tx.update(ref, changes.spent)
      return { user: changes.account, tokens: this.issue(tx, changes.pair, now) }
    })
    if ('kind' in outcome) throw new Refused(outcome)
    return outcome
  }

  /**
   * The refresh credential with its login and account: the ones its value names are read with it
   * (one round trip), the stored ones only when the names are missing or not the credential's own.
   */
  private async readRefresh(tx: Transaction, ref: DocumentReference, value: string) {
    const [userHint, loginHint] = idsNamedBy(TOKEN_PREFIX.cliRefresh, value, 2)
    const hinted = userHint && loginHint ? [this.logins.doc(loginHint), this.db.col('users').doc(userHint)] : []
    const [refreshSnap, ...hintSnaps] = await tx.getAll(ref, ...hinted)
    const refresh = recordOf<CliRefreshTokenRecord>(refreshSnap)
    if (!refresh) return { refresh }
    let snaps: Array<DocumentSnapshot | undefined> = hintSnaps
    if (refresh.login_id !== loginHint || refresh.user_id !== userHint) {
      snaps = await tx.getAll(this.logins.doc(refresh.login_id), this.db.col('users').doc(refresh.user_id))
    }
    return { refresh, login: recordOf<CliLoginRecord>(snaps[0]), user: recordOf<UserRecord>(snaps[1]) }
  }

  /**
   * Ends the login of a credential (POST /auth/revoke: a refresh or an access credential of it),
   * with its token.revoked event; idempotent, and silent about values that are no credential of
   * a login (RFC 7009 §2.2). `true` when a login was revoked now.
   */
  async logout(request: AuditRequest | undefined, value: string): Promise<boolean> {
    const ref = value.startsWith(TOKEN_PREFIX.cliRefresh)
      ? this.refreshTokens.doc(sha256(value))
      : value.startsWith(TOKEN_PREFIX.cliAccess)
        ? this.accessTokens.doc(sha256(value))
        : undefined
    if (!ref) return false
    const now = this.clock.now()
    return this.db.transaction(async (tx) => {
      const credential = recordOf<{ login_id: string; user_id: string }>(await tx.get(ref))
      if (!credential) return false
      const loginRef = this.logins.doc(credential.login_id)
      const [loginSnap, userSnap] = await tx.getAll(loginRef, this.db.col('users').doc(credential.user_id))
      const login = recordOf<CliLoginRecord>(loginSnap)
      const user = recordOf<UserRecord>(userSnap)
      const chain = await this.audit.prepare(tx, { entity: { type: 'cli_login', id: credential.login_id } })
      const { changes, events } = orRefuse(decideCliLogout(login, { now }))
      if (!changes) return false
      tx.update(loginRef, changes)
      const actor: AuditContext = {
        actor: { type: user?.kind ?? 'user', id: credential.user_id, email: user?.email, auth_method: 'cli_token' },
        request,
      }
      for (const event of events) chain.write(actor, event)
      return true
    })
  }
}
