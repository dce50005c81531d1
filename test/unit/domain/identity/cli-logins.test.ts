import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { UserRecord } from '../../../../lib/auth/access.js'
import type { CliLoginRecord } from '../../../../lib/auth/tokens.js'
import { refusalDetail, refusalStatus, type Decision } from '../../../../lib/decision.js'
import {
  CLI_ACCESS_TTL_SECONDS,
  decideCliLogin,
  decideCliLogout,
  decideRefresh,
  REFRESH_REFUSED,
  type CliRefreshTokenRecord,
  type RefreshOutcome,
  type RefreshState,
} from '../../../../domain/identity/cli-logins.js'

const T0 = 1_700_000_000_000
const HOUR = 3600 * 1000
const DAY = 24 * HOUR
const LIFETIME_S = 30 * 24 * 3600
const at = (ms: number) => Timestamp.fromMillis(ms)

const user = (over: Partial<UserRecord> = {}): UserRecord => ({ id: 'u1', kind: 'user', name: 'Ann', email: 'ann@lab.org', created: at(0), ...over })
const login = (over: Partial<CliLoginRecord> = {}): CliLoginRecord => ({
  id: 'l1',
  user_id: 'u1',
  method: 'browser',
  created: at(T0),
  expires_at: at(T0 + 30 * DAY),
  refreshes: 0,
  ...over,
})
const refresh = (over: Partial<CliRefreshTokenRecord> = {}): CliRefreshTokenRecord => ({
  login_id: 'l1',
  user_id: 'u1',
  created: at(T0),
  expires_at: at(T0 + 30 * DAY),
  ...over,
})

/** What a decision answers: its refusal over HTTP, or the kind of what it writes. */
const outcome = (d: Decision<RefreshOutcome>) => (d.ok ? d.changes.kind : `${refusalStatus(d.refusal)} ${refusalDetail(d.refusal)}`)

describe('the end of a sign-in at the identity provider: a new CLI login and its first pair', () => {
  const begin = (u: UserRecord | undefined, method: 'browser' | 'password' = 'browser') =>
    decideCliLogin(u, { now: new Date(T0), method, loginId: 'l1', lifetimeSeconds: LIFETIME_S })

  it.each([
    ['an account that no longer exists', undefined, `401 ${REFRESH_REFUSED.noAccount}`],
    ['a disabled account', user({ disabled: true }), '401 account disabled'],
    ['an enabled account', user(), 'ok'],
  ])('%s', (_, u, expected) => {
    const d = begin(u)
    expect(d.ok ? 'ok' : `${refusalStatus(d.refusal)} ${refusalDetail(d.refusal)}`).toBe(expected)
  })

  it('issues an access credential for an hour and a refresh credential until the login ends, both naming the login and its user, and records login.succeeded with the method', () => {
    const d = begin(user(), 'password')
    if (!d.ok) throw new Error('refused')
    expect(d.changes.login).toMatchObject({ id: 'l1', user_id: 'u1', method: 'password', refreshes: 0, expires_at: at(T0 + 30 * DAY) })
    expect(d.changes.access).toEqual({ login_id: 'l1', user_id: 'u1', created: at(T0), expires_at: at(T0 + CLI_ACCESS_TTL_SECONDS * 1000) })
    expect(d.changes.refresh).toEqual({ login_id: 'l1', user_id: 'u1', created: at(T0), expires_at: at(T0 + 30 * DAY) })
    expect(d.events).toEqual([
      {
        action: 'login.succeeded',
        entity: { type: 'cli_login', id: 'l1', parent: 'u1' },
        change: { reason: 'password', to: new Date(T0 + 30 * DAY).toISOString() },
      },
    ])
  })
})

describe('a refresh: rotation, reuse detection, expiry, revocation and the account', () => {
  const now = new Date(T0 + 2 * HOUR)
  const state = (over: Partial<RefreshState> = {}): RefreshState => ({ refresh: refresh(), login: login(), user: user(), ...over })
  it.each<[string, RefreshState, Date, string]>([
    ['an unknown refresh token', state({ refresh: undefined }), now, `401 ${REFRESH_REFUSED.unknown}`],
    ['a refresh token whose login is gone', state({ login: undefined }), now, `401 ${REFRESH_REFUSED.unknown}`],
    ['a logged-out login', state({ login: login({ revoked_at: at(T0 + HOUR), revoked_because: 'logout' }) }), now, `401 ${REFRESH_REFUSED.logout}`],
    [
      'a login revoked for reuse',
      state({ login: login({ revoked_at: at(T0 + HOUR), revoked_because: 'reuse' }) }),
      now,
      `401 ${REFRESH_REFUSED.reuse}`,
    ],
    ['a login at its end', state(), new Date(T0 + 30 * DAY), `401 ${REFRESH_REFUSED.expired}`],
    [
      'a login past its end, with a spent token',
      state({ refresh: refresh({ spent_at: at(T0 + HOUR) }) }),
      new Date(T0 + 31 * DAY),
      `401 ${REFRESH_REFUSED.expired}`,
    ],
    ['a spent refresh token', state({ refresh: refresh({ spent_at: at(T0 + HOUR) }) }), now, 'reuse_detected'],
    [
      'a spent refresh token of a disabled account',
      state({ refresh: refresh({ spent_at: at(T0 + HOUR) }), user: user({ disabled: true }) }),
      now,
      'reuse_detected',
    ],
    ['a disabled account', state({ user: user({ disabled: true }) }), now, '401 account disabled'],
    ['an account that no longer exists', state({ user: undefined }), now, `401 ${REFRESH_REFUSED.noAccount}`],
    ['a good refresh token', state(), now, 'rotated'],
  ])('%s', (_, s, when, expected) => {
    expect(outcome(decideRefresh(s, { now: when }))).toBe(expected)
  })

  it('spends the presented token, counts the refresh, issues the next pair and records token.refreshed', () => {
    const d = decideRefresh(state(), { now })
    if (!d.ok || d.changes.kind !== 'rotated') throw new Error('not rotated')
    expect(d.changes.spent).toEqual({ spent_at: at(now.getTime()) })
    expect(d.changes.login).toEqual({ refreshes: 1, last_refreshed_at: at(now.getTime()) })
    expect(d.changes.pair.access.expires_at).toEqual(at(now.getTime() + HOUR))
    expect(d.changes.pair.refresh.expires_at).toEqual(at(T0 + 30 * DAY))
    expect(d.events).toEqual([{ action: 'token.refreshed', entity: { type: 'cli_login', id: 'l1', parent: 'u1' }, change: { reason: 'refresh 1' } }])
  })

  it('revokes the whole login for a reuse, and records token.reuse_detected as denied', () => {
    const d = decideRefresh(state({ refresh: refresh({ spent_at: at(T0 + HOUR) }) }), { now })
    if (!d.ok || d.changes.kind !== 'reuse_detected') throw new Error('no reuse detected')
    expect(d.changes.login).toEqual({ revoked_at: at(now.getTime()), revoked_because: 'reuse' })
    expect(d.events).toMatchObject([{ action: 'token.reuse_detected', outcome: 'denied', entity: { type: 'cli_login', id: 'l1', parent: 'u1' } }])
  })

  it('never issues an access credential past the login end: the last hour gets what is left', () => {
    const d = decideRefresh(state(), { now: new Date(T0 + 30 * DAY - 10 * 60 * 1000) })
    if (!d.ok || d.changes.kind !== 'rotated') throw new Error('not rotated')
    expect(d.changes.pair.access.expires_at).toEqual(at(T0 + 30 * DAY))
  })
})

describe('a logout', () => {
  it('revokes an active login and records token.revoked', () => {
    const d = decideCliLogout(login(), { now: new Date(T0 + HOUR) })
    expect(d).toEqual({
      ok: true,
      changes: { revoked_at: at(T0 + HOUR), revoked_because: 'logout' },
      events: [{ action: 'token.revoked', entity: { type: 'cli_login', id: 'l1', parent: 'u1' }, change: { reason: 'logout' } }],
    })
  })

  it.each([
    ['an unknown login', undefined],
    ['a login already logged out', login({ revoked_at: at(T0), revoked_because: 'logout' })],
    ['a login revoked for reuse', login({ revoked_at: at(T0), revoked_because: 'reuse' })],
  ])('changes and records nothing for %s (RFC 7009: revocation is idempotent)', (_, l) => {
    expect(decideCliLogout(l, { now: new Date(T0 + HOUR) })).toEqual({ ok: true, changes: undefined, events: [] })
  })
})

/**
 * A model of one login over time, driven by the decisions as the store drives them: each step
 * presents one of the refresh tokens issued so far (or logs out, disables or enables the account,
 * lets time pass), and the state is what the decisions wrote.
 */
type Step = { kind: 'refresh'; which: number } | { kind: 'wait'; ms: number } | { kind: 'logout' } | { kind: 'disable' } | { kind: 'enable' }

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('refresh' as const), which: fc.nat(20) }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 10 * DAY }) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'logout' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'disable' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'enable' as const }), weight: 1 },
)

interface Trace {
  kind: Step['kind']
  /** For a refresh: which token, whether it had been spent, the state it met, and what the decision said. */
  spentBefore?: boolean
  newest?: boolean
  activeBefore?: boolean
  enabled?: boolean
  beforeEnd?: boolean
  result?: string
  accessEnd?: number
  now: number
}

function run(steps: Step[]) {
  const begun = decideCliLogin(user(), { now: new Date(T0), method: 'browser', loginId: 'l1', lifetimeSeconds: LIFETIME_S })
  if (!begun.ok) throw new Error('refused')
  let current: CliLoginRecord = begun.changes.login
  let account = user()
  const tokens: CliRefreshTokenRecord[] = [begun.changes.refresh]
  const trace: Trace[] = []
  let now = T0
  for (const s of steps) {
    if (s.kind === 'wait') now += s.ms
    else if (s.kind === 'disable') account = { ...account, disabled: true }
    else if (s.kind === 'enable') account = { ...account, disabled: false }
    else if (s.kind === 'logout') {
      const d = decideCliLogout(current, { now: new Date(now) })
      if (d.ok && d.changes) current = { ...current, ...d.changes }
    } else {
      const index = s.which % tokens.length
      const presented = tokens[index]!
      const d = decideRefresh({ refresh: presented, login: current, user: account }, { now: new Date(now) })
      const entry: Trace = {
        kind: 'refresh',
        spentBefore: presented.spent_at !== undefined,
        newest: index === tokens.length - 1,
        activeBefore: current.revoked_at === undefined,
        enabled: !account.disabled,
        beforeEnd: now < current.expires_at.toMillis(),
        result: outcome(d),
        now,
      }
      if (d.ok && d.changes.kind === 'rotated') {
        tokens[index] = { ...presented, ...d.changes.spent }
        tokens.push(d.changes.pair.refresh)
        current = { ...current, ...d.changes.login }
        entry.accessEnd = d.changes.pair.access.expires_at.toMillis()
      } else if (d.ok) current = { ...current, ...d.changes.login }
      trace.push(entry)
      continue
    }
    trace.push({ kind: s.kind, now })
  }
  return { trace, login: current }
}

describe('properties of a login over any sequence of refreshes, logouts, waits and account changes', () => {
  const steps = fc.array(step, { maxLength: 40 })

  it('never issues an access credential that outlives the login, nor anything at or after its end', () => {
    fc.assert(
      fc.property(steps, (s) => {
        for (const t of run(s).trace.filter((t) => t.result === 'rotated')) {
          expect(t.accessEnd).toBeLessThanOrEqual(T0 + LIFETIME_S * 1000)
          expect(t.accessEnd).toBeLessThanOrEqual(t.now + CLI_ACCESS_TTL_SECONDS * 1000)
          expect(t.now).toBeLessThan(T0 + LIFETIME_S * 1000)
        }
      }),
    )
  })

  it('rotates the newest token of an active login of an enabled account before its end, and nothing else', () => {
    fc.assert(
      fc.property(steps, (s) => {
        for (const t of run(s).trace.filter((t) => t.kind === 'refresh')) {
          expect(t.result === 'rotated').toBe(Boolean(t.newest && !t.spentBefore && t.activeBefore && t.enabled && t.beforeEnd))
        }
      }),
    )
  })

  it('revokes the login the first time a spent token comes back before its end, and refuses every refresh after that', () => {
    fc.assert(
      fc.property(steps, (s) => {
        const { trace } = run(s)
        const reuse = trace.findIndex((t) => t.kind === 'refresh' && t.spentBefore && t.activeBefore && t.beforeEnd)
        if (reuse === -1) return
        expect(trace[reuse]!.result).toBe('reuse_detected')
        for (const t of trace.slice(reuse + 1).filter((t) => t.kind === 'refresh')) expect(t.result).toMatch(/^401 /)
      }),
    )
  })

  it('refuses every refresh after a logout, and never issues a pair to a disabled account', () => {
    fc.assert(
      fc.property(steps, (s) => {
        const { trace } = run(s)
        const logout = trace.findIndex((t) => t.kind === 'logout')
        for (const [i, t] of trace.entries()) {
          if (t.kind !== 'refresh') continue
          if (logout !== -1 && i > logout) expect(t.result).toMatch(/^401 /)
          if (!t.enabled) expect(t.result).not.toBe('rotated')
        }
      }),
    )
  })

  it('keeps a login revoked for the reason it was first revoked: a later logout or reuse changes nothing', () => {
    fc.assert(
      fc.property(steps, (s) => {
        const { trace, login: end } = run(s)
        const first = trace.find((t) => t.kind === 'logout' || t.result === 'reuse_detected')
        if (!first) {
          expect(end.revoked_at).toBeUndefined()
          return
        }
        expect(end.revoked_because).toBe(first.kind === 'logout' ? 'logout' : 'reuse')
        expect(end.revoked_at).toEqual(at(first.now))
      }),
    )
  })
})
