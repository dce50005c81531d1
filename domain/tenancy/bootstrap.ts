import { Timestamp } from '@google-cloud/firestore'
import { z } from 'zod'
import type { UserRecord } from '../../lib/auth/access.js'
import type { AuditContext } from '../../lib/audit.js'
import { allow, conflictWith, deny, invalid, orRefuse, type Decision } from '../../lib/decision.js'
import { newId } from '../../lib/ids.js'
import type { KernelDeps } from '../../lib/kernel.js'

/**
 * The first platform administrator of a fresh deployment (docs/deploying.md, "The first
 * administrator"): made once, by an operator with the project's own Google credentials
 * (scripts/bootstrap-admin.ts), never through the API, which has no caller yet who could be allowed
 * to. A marker document (platform_bootstrap/first_admin), written in the same transaction as the grant and its audit event, makes a
 * second run a refusal.
 */
export const BOOTSTRAP_MARKER = 'first_admin'
export const BOOTSTRAPPED = 'platform.admin_bootstrapped'

/** The marker: who was made the first administrator, and when. */
export interface BootstrapMarker {
  user_id: string
  email: string
  at: Timestamp
}

/** What the decision needs, read in the transaction. */
export interface BootstrapState {
  marker?: BootstrapMarker
  /** Some account is already a platform administrator (a deployment seeded otherwise). */
  adminExists: boolean
  /** The account that has the e-mail, if one does (invited before its first login). */
  account?: Pick<UserRecord, 'id' | 'kind' | 'disabled'>
}

export interface BootstrapCommand {
  email: string
  now: Timestamp
  /** The id a new account gets: made by the caller, so that a retried transaction keeps it. */
  newUserId: string
}

export interface BootstrapChanges {
  userId: string
  /** No account has the e-mail: one is made, an administrator from the start. */
  createUser: boolean
  email: string
  marker: BootstrapMarker
}

const Email = z.email()
export const normalizedEmail = (email: string) => email.trim().toLowerCase()

export function decideBootstrap(state: BootstrapState, cmd: BootstrapCommand): Decision<BootstrapChanges> {
  const email = normalizedEmail(cmd.email)
  if (!Email.safeParse(email).success) return deny(invalid(`email: '${cmd.email}' is not an e-mail address`))
  if (state.marker) {
    return deny(
      conflictWith(
        `the platform already has its first administrator (${state.marker.email}, made ${state.marker.at.toDate().toISOString()}): bootstrap-admin runs once`,
      ),
    )
  }
  if (state.adminExists) return deny(conflictWith('a platform administrator already exists: bootstrap-admin is for a deployment that has none'))
  if (state.account?.kind === 'service_user') return deny(conflictWith(`${email} is a service user, not a person`))
  if (state.account?.disabled) return deny(conflictWith(`the account of ${email} is disabled`))
  const userId = state.account?.id ?? cmd.newUserId
  return allow({ userId, createUser: !state.account, email, marker: { user_id: userId, email, at: cmd.now } }, [
    { action: BOOTSTRAPPED, entity: { type: 'user', id: userId }, change: { fields: ['platform_admin'], to: 'true' } },
  ])
}

/**
 * Makes `email`'s account a platform administrator, creating the account when none has the e-mail
 * yet (it is linked at its first login, as an invited user's is), with the marker and the
 * `platform.admin_bootstrapped` event in one transaction. Throws `Refused` (409) on a second run.
 */
export async function bootstrapPlatformAdmin(deps: KernelDeps, ctx: AuditContext, input: { email: string }): Promise<UserRecord> {
  const { db, audit, clock } = deps
  const email = normalizedEmail(input.email)
  const markerRef = db.col('platform_bootstrap').doc(BOOTSTRAP_MARKER)
  const newUserId = newId()
  return db.transaction(async (tx) => {
    const [marker, byEmail, admins] = await Promise.all([
      tx.get(markerRef),
      tx.get(db.col('users').where('email', '==', email).limit(1)),
      tx.get(db.col('users').where('platform_admin', '==', true).limit(1)),
    ])
    const account = byEmail.empty ? undefined : (byEmail.docs[0]!.data() as UserRecord)
    const now = Timestamp.fromDate(clock.now())
    const state: BootstrapState = { marker: marker.data() as BootstrapMarker | undefined, adminExists: !admins.empty, account }
    const { changes, events } = orRefuse(decideBootstrap(state, { email: input.email, now, newUserId }))
    const chain = await audit.prepareMany(tx, events)
    const user: UserRecord = account
      ? { ...account, platform_admin: true }
      : { id: changes.userId, kind: 'user', email: changes.email, name: changes.email, platform_admin: true, created: now }
    if (changes.createUser) tx.create(db.col('users').doc(user.id), user)
    else tx.update(db.col('users').doc(user.id), { platform_admin: true })
    tx.create(markerRef, changes.marker)
    for (const event of events) chain.write(ctx, event)
    return user
  })
}
