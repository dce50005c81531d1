import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { refusalDetail, refusalStatus } from '../../../../lib/decision.js'
import { BOOTSTRAPPED, decideBootstrap, type BootstrapState } from '../../../../domain/tenancy/bootstrap.js'

const now = Timestamp.fromMillis(1_790_000_000_000)
const NEW = 'abcdef01-2345-4678-9abc-def012345678'
const ANN = '11111111-1111-4111-8111-111111111111'
const cmd = (email = 'Ann@Lab.Example') => ({ email, now, newUserId: NEW })
const marker = { user_id: ANN, email: 'ann@lab.example', at: Timestamp.fromMillis(1_780_000_000_000) }
const fresh: BootstrapState = { adminExists: false }

/** What the decision answers: the status and detail of a refusal, or 'ok'. */
function outcome(state: BootstrapState, email?: string) {
  const d = decideBootstrap(state, cmd(email))
  return d.ok ? 'ok' : `${refusalStatus(d.refusal)} ${refusalDetail(d.refusal)}`
}

describe('the first platform administrator', () => {
  it.each<[string, BootstrapState, string | undefined, string | RegExp]>([
    ['a fresh deployment, nobody with the e-mail yet', fresh, undefined, 'ok'],
    ['a fresh deployment, the account invited before its first login', { adminExists: false, account: { id: ANN, kind: 'user' } }, undefined, 'ok'],
    [
      'a second run',
      { ...fresh, marker },
      undefined,
      /^409 the platform already has its first administrator \(ann@lab\.example, made 2026-.*\): bootstrap-admin runs once$/,
    ],
    ['a second run for another e-mail', { ...fresh, marker }, 'bob@lab.example', /^409 the platform already has its first administrator/],
    ['a deployment that has an administrator already', { adminExists: true }, undefined, /^409 a platform administrator already exists/],
    [
      'a service user with the e-mail',
      { adminExists: false, account: { id: ANN, kind: 'service_user' } },
      undefined,
      '409 ann@lab.example is a service user, not a person',
    ],
    [
      'a disabled account',
      { adminExists: false, account: { id: ANN, kind: 'user', disabled: true } },
      undefined,
      '409 the account of ann@lab.example is disabled',
    ],
    ['not an e-mail', fresh, 'ann at lab', "400 email: 'ann at lab' is not an e-mail address"],
    ['an empty e-mail', fresh, '', "400 email: '' is not an e-mail address"],
  ])('%s', (_case, state, email, expected) => {
    if (typeof expected === 'string') expect(outcome(state, email)).toBe(expected)
    else expect(outcome(state, email)).toMatch(expected)
  })

  it('makes the account with the e-mail the administrator, or a new one, with the marker and one audit event', () => {
    const made = decideBootstrap(fresh, cmd())
    expect(made).toEqual({
      ok: true,
      changes: { userId: NEW, createUser: true, email: 'ann@lab.example', marker: { user_id: NEW, email: 'ann@lab.example', at: now } },
      events: [{ action: BOOTSTRAPPED, entity: { type: 'user', id: NEW }, change: { fields: ['platform_admin'], to: 'true' } }],
    })
    const invited = decideBootstrap({ adminExists: false, account: { id: ANN, kind: 'user' } }, cmd())
    expect(invited.ok && [invited.changes.userId, invited.changes.createUser, invited.changes.marker.user_id]).toEqual([ANN, false, ANN])
  })

  const states = fc.record({
    marker: fc.option(fc.constant(marker), { nil: undefined }),
    adminExists: fc.boolean(),
    account: fc.option(fc.record({ id: fc.uuid(), kind: fc.constantFrom('user' as const, 'service_user' as const), disabled: fc.boolean() }), {
      nil: undefined,
    }),
  })

  it('never makes a second administrator: with a marker or an administrator, every command is refused (409, or 400 for what is no e-mail)', () => {
    fc.assert(
      fc.property(states, fc.emailAddress(), (state, email) => {
        const d = decideBootstrap(state, cmd(email))
        if (state.marker || state.adminExists) return !d.ok && [400, 409].includes(refusalStatus(d.refusal))
        return true
      }),
    )
  })

  it('when it allows, records exactly one platform.admin_bootstrapped on the account it marks, a platform-wide event', () => {
    fc.assert(
      fc.property(states, fc.emailAddress(), (state, email) => {
        const d = decideBootstrap(state, cmd(email))
        if (!d.ok) return true
        const [event, ...rest] = d.events
        return (
          rest.length === 0 &&
          event!.action === BOOTSTRAPPED &&
          event!.entity.id === d.changes.userId &&
          d.changes.marker.user_id === d.changes.userId &&
          event!.org_id === undefined &&
          event!.project_id === undefined &&
          d.changes.userId === (state.account?.id ?? NEW) &&
          d.changes.email === email.toLowerCase()
        )
      }),
    )
  })
})
