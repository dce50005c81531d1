import { afterAll, describe, expect, it } from 'vitest'
import { adminDeps } from '../../../../functions/admin/deps.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { REFRESH_REFUSED } from '../../../../domain/identity/cli-logins.js'
import { grant, seedUser } from '../../../../domain/tenancy/seed.js'
import { sha256 } from '../../../../lib/ids.js'
import { createKernel } from '../../../../lib/kernel.js'
import { startLoginStack } from '../../../support/oidc.js'
import { call } from '../../../support/world.js'

const HOUR = 3600 * 1000

/**
 * The platform's own credentials of a CLI login (docs/cli-login.md), against the emulators and the
 * local identity provider: rotation, reuse detection, expiry, logout, a disabled account and a
 * removed role. The admin service runs on a clock the test moves; the provider and openid-client
 * keep real time, so every login happens before the clock moves.
 */
describe("the CLI's credentials: issued by the platform, rotated, revocable", async () => {
  const lifetimeHours = 3
  const stack = await startLoginStack({ CLI_REFRESH_TTL_SECONDS: String(lifetimeHours * 3600) })
  afterAll(() => stack.stop())
  const { world } = stack
  let now = Date.now()
  const clock = { now: () => new Date(now) }
  const deps = adminDeps(createKernel(world.deps.config, 'admin', { firestore: world.deps.db.firestore, clock }))
  const app = createAdminApp(deps)

  const person = await seedUser(world.deps, { email: stack.user.email, name: stack.user.name })
  await grant(world.deps, world.project, person, ['analyst'])

  const login = async () => {
    const res = await call(app, 'POST', '/api/v1/auth/password', { body: { email: stack.user.email, password: stack.user.password } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body as { access_token: string; refresh_token: string; expires_in: number }
  }
  const refresh = (refreshToken: string) => call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: refreshToken } })
  const me = (token: string) => call(app, 'GET', '/api/v1/users/me', { token })
  const events = async (action: string) =>
    (await world.deps.db.col('audit_events').where('action', '==', action).get()).docs.map((d) => d.data()).filter((e) => e.actor.id === person.id)
  const loginOf = async (refreshToken: string) =>
    (await world.deps.db.col('cli_refresh_tokens').doc(sha256(refreshToken)).get()).get('login_id') as string

  it('keeps only hashes: the documents are named by the SHA-256 of the values, and hold neither', async () => {
    const pair = await login()
    const access = await world.deps.db.col('cli_access_tokens').doc(sha256(pair.access_token)).get()
    const stored = await world.deps.db.col('cli_refresh_tokens').doc(sha256(pair.refresh_token)).get()
    expect(access.exists && stored.exists).toBe(true)
    const text = JSON.stringify([access.data(), stored.data()])
    expect(text).not.toContain(pair.access_token.slice(9, 40))
    expect(text).not.toContain(pair.refresh_token.slice(9, 40))
    expect(access.data()).toMatchObject({ user_id: person.id, login_id: stored.get('login_id') })
  })

  it('rotates on every refresh: a new pair, the old access credential good until its hour ends, token.refreshed recorded', async () => {
    const first = await login()
    const second = await refresh(first.refresh_token)
    expect(second.status).toBe(200)
    expect(second.body.refresh_token).not.toBe(first.refresh_token)
    expect((await me(second.body.access_token)).body).toMatchObject({ id: person.id, auth_method: 'cli_token' })
    expect((await me(first.access_token)).status).toBe(200)
    const third = await refresh(second.body.refresh_token)
    expect(third.status).toBe(200)
    const loginId = await loginOf(first.refresh_token)
    const refreshed = (await events('token.refreshed')).filter((e) => e.entity.id === loginId)
    expect(refreshed.map((e) => e.change.reason).sort()).toEqual(['refresh 1', 'refresh 2'])
    expect(refreshed[0]).toMatchObject({ entity: { type: 'cli_login', parent: person.id }, actor: { auth_method: 'refresh_token' } })
  })

  it('revokes the whole login when a spent refresh credential comes back: both newest credentials stop at once, token.reuse_detected recorded', async () => {
    const first = await login()
    const second = (await refresh(first.refresh_token)).body
    expect((await me(second.access_token)).status).toBe(200)

    // The first refresh credential again: whoever holds it, a copy is loose.
    const reused = await refresh(first.refresh_token)
    expect(reused.status).toBe(401)
    expect(reused.body).toEqual({ detail: REFRESH_REFUSED.reused })
    const loginId = await loginOf(first.refresh_token)
    expect(await events('token.reuse_detected')).toContainEqual(
      expect.objectContaining({ outcome: 'denied', entity: { type: 'cli_login', id: loginId, parent: person.id } }),
    )

    const newest = await refresh(second.refresh_token)
    expect(newest.status).toBe(401)
    expect(newest.body).toEqual({ detail: REFRESH_REFUSED.reuse })
    const access = await me(second.access_token)
    expect(access.status).toBe(401)
    expect(access.body).toEqual({ detail: 'token revoked' })
    expect((await me(first.access_token)).status).toBe(401)
  })

  it('ends the access credential after its hour, and the login at its absolute end however often refreshed', async () => {
    const start = now
    try {
      let pair = await login()
      now += HOUR + 1000
      const expired = await me(pair.access_token)
      expect(expired.status).toBe(401)
      expect(expired.body).toEqual({ detail: 'token expired' })
      pair = (await refresh(pair.refresh_token)).body
      expect((await me(pair.access_token)).status).toBe(200)

      // The last hour of the login: the access credential ends with it.
      now = start + (lifetimeHours - 0.5) * HOUR
      const last = await refresh(pair.refresh_token)
      expect(last.status).toBe(200)
      expect(last.body.expires_in).toBe(1800)

      now = start + lifetimeHours * HOUR + 1000
      expect((await me(last.body.access_token)).status).toBe(401)
      const over = await refresh(last.body.refresh_token)
      expect(over.status).toBe(401)
      expect(over.body).toEqual({ detail: REFRESH_REFUSED.expired })
    } finally {
      now = start
    }
  })

  it('refuses a disabled account at once, with its access credential and at refresh, and serves it again once enabled', async () => {
    const pair = await login()
    const account = world.deps.db.col('users').doc(person.id)
    await account.update({ disabled: true })
    try {
      expect((await me(pair.access_token)).body).toEqual({ detail: 'account disabled' })
      const refused = await refresh(pair.refresh_token)
      expect(refused.status).toBe(401)
      expect(refused.body).toEqual({ detail: 'account disabled' })
    } finally {
      await account.update({ disabled: false })
    }
    // Refused, not spent: the refresh credential still works for the account enabled again.
    expect((await refresh(pair.refresh_token)).status).toBe(200)
  })

  it("restricts at once when a role is removed: the credential's roles are the account's, read on every request", async () => {
    const other = await seedUser(world.deps, { email: `bo-${Date.now()}@example.org`, name: 'Bo' })
    await grant(world.deps, world.project, other, ['viewer'])
    const pair = await deps.cliLogins.begin(
      { actor: { type: 'user', id: other.id, auth_method: 'password' } },
      { userId: other.id, method: 'password', lifetimeSeconds: 3600 },
    )
    const project = `/api/v1/projects/${world.project.id}`
    expect((await call(app, 'GET', project, { token: pair.access_token })).status).toBe(200)
    const removed = await call(app, 'DELETE', `${project}/members/${other.id}`, { token: world.owner.token })
    expect(removed.status).toBeLessThan(300)
    expect((await call(app, 'GET', project, { token: pair.access_token })).status).toBe(404)
  })

  it('logs out: POST /auth/revoke ends the login (both credentials 401), records token.revoked once, and answers 204 for anything', async () => {
    const pair = await login()
    const loginId = await loginOf(pair.refresh_token)
    for (const token of [pair.refresh_token, pair.refresh_token, pair.access_token, 'plat_clr_made-up', 'not-a-token']) {
      const res = await call(app, 'POST', '/api/v1/auth/revoke', { body: { token } })
      expect(res.status).toBe(204)
    }
    expect((await me(pair.access_token)).status).toBe(401)
    const refused = await refresh(pair.refresh_token)
    expect(refused.body).toEqual({ detail: REFRESH_REFUSED.logout })
    const revoked = (await events('token.revoked')).filter((e) => e.entity.id === loginId)
    expect(revoked).toHaveLength(1)
    expect(revoked[0]).toMatchObject({ outcome: 'success', change: { reason: 'logout' } })
  })

  it('answers a refresh token of the identity provider (kept by a CLI from before) with 401 saying to log in again', async () => {
    const basic = Buffer.from(`${stack.client.client_id}:${stack.client.client_secret}`).toString('base64')
    const meta = (await (await fetch(`${stack.provider.issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string }
    const provider = await fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: stack.user.email,
        password: stack.user.password,
        scope: 'openid offline_access',
      }),
    })
    const { refresh_token } = (await provider.json()) as { refresh_token: string }
    expect(refresh_token).toEqual(expect.any(String))
    const res = await refresh(refresh_token)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ detail: REFRESH_REFUSED.notOurs })
  })

  it('refuses a refresh credential sent as a Bearer token, saying where it goes', async () => {
    const pair = await login()
    const res = await me(pair.refresh_token)
    expect(res.status).toBe(401)
    expect(res.body.detail).toMatch(/refresh token is not an access token: exchange it for one at POST \/api\/v1\/auth\/refresh/)
  })
})
