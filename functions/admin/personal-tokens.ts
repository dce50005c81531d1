import { Timestamp } from '@google-cloud/firestore'
import type { AuditContext } from '../../lib/audit.js'
import type { UserRecord } from '../../lib/auth/access.js'
import type { PersonalTokenRecord } from '../../lib/auth/tokens.js'
import { iso } from '../../lib/db.js'
import { badRequest, forbidden, notFound } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { AdminDeps } from './deps.js'

/**
 * A person's personal access tokens (plat_pat_…), as both the API (/users/me/tokens) and the
 * console's Account → CLI tokens make, list and revoke them. Token events go to the platform audit
 * chain, as a token is not bound to one organization.
 */

export const DEFAULT_TOKEN_DAYS = 90
export const MAX_TOKEN_DAYS = 366
const DAY_MS = 86_400_000

export type TokenState = 'active' | 'expired' | 'revoked'

export function stateOf(t: PersonalTokenRecord, now: Date): TokenState {
  if (t.revoked_at) return 'revoked'
  return t.expires_at.toMillis() <= now.getTime() ? 'expired' : 'active'
}

/** The expiry a request asks for: a lifetime in days (default DEFAULT_TOKEN_DAYS) or an instant, in the future and at most MAX_TOKEN_DAYS ahead (else 400). */
export function expiryOf(asked: { expires_in_days?: number; expires_at?: string }, now: Date): Date {
  if (asked.expires_at === undefined) return new Date(now.getTime() + (asked.expires_in_days ?? DEFAULT_TOKEN_DAYS) * DAY_MS)
  const at = new Date(asked.expires_at)
  if (at.getTime() <= now.getTime()) throw badRequest('expires_at: must be in the future')
  if (at.getTime() > now.getTime() + MAX_TOKEN_DAYS * DAY_MS) throw badRequest(`expires_at: must be at most ${MAX_TOKEN_DAYS} days ahead`)
  return at
}

/** Makes a token for `user` (never a service user: its access must end with its key), with token.created; the value is returned once and only its hash is kept. */
export async function createPersonalToken(deps: AdminDeps, ctx: AuditContext, user: UserRecord, input: { name: string; expiresAt: Date }) {
  if (user.kind === 'service_user') throw forbidden('service users obtain short-lived tokens with their keys at POST /oauth/token')
  const now = deps.clock.now()
  return deps.db.transaction(async (tx) => {
    const id = newId()
    const chain = await deps.audit.prepare(tx, { entity: { type: 'personal_token', id } })
    const t = deps.tokens.createPersonalIn(tx, { id, userId: user.id, name: input.name, expiresAt: input.expiresAt, now })
    chain.write(ctx, {
      action: 'token.created',
      entity: { type: 'personal_token', id: t.record.id, parent: user.id },
      change: { to: iso(t.record.expires_at) },
    })
    return t
  })
}

/** Revokes one of the user's tokens (404 when it is not theirs), with token.revoked; revoking a revoked token changes nothing. */
export async function revokePersonalToken(deps: AdminDeps, ctx: AuditContext, userId: string, id: string): Promise<void> {
  const now = deps.clock.now()
  await deps.db.transaction(async (tx) => {
    const chain = await deps.audit.prepare(tx, { entity: { type: 'personal_token', id } })
    const found = await deps.tokens.getPersonalIn(tx, userId, id)
    if (!found) throw notFound('token')
    if (found.record.revoked_at) return
    tx.update(found.ref, { revoked_at: Timestamp.fromDate(now) })
    chain.write(ctx, { action: 'token.revoked', entity: { type: 'personal_token', id, parent: userId } })
  })
}

/** The user's tokens, newest first. */
export async function listPersonalTokens(deps: AdminDeps, userId: string): Promise<PersonalTokenRecord[]> {
  return (await deps.tokens.listPersonal(userId)).sort((a, b) => b.created.toMillis() - a.created.toMillis() || a.id.localeCompare(b.id))
}
