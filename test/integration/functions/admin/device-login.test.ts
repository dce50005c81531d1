import { setTimeout as delay } from 'node:timers/promises'
import { decodeJwt } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { adminDeps, type AdminDeps } from '../../../../functions/admin/deps.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { grant, seedUser } from '../../../../domain/tenancy/seed.js'
import { Browser, confirmDeviceLogin, startLoginStack, TEST_AUDIENCE } from '../../../support/oidc.js'
import { testKernel } from '../../../support/env.js'
import { call } from '../../../support/world.js'

async function auditActions(deps: AdminDeps, action: string) {
  const q = await deps.db.col('audit_events').where('action', '==', action).get()
  return q.docs.map((d) => d.data())
}

describe("admin: the CLI's browser login (device authorization grant) and its password login's refusals", async () => {
  const stack = await startLoginStack()
  // The identity provider of Entra ID's and Okta's kind: the CLI has a public client of its own, which may not use the password grant.
  const publicClient = await startLoginStack({}, { publicCliClient: true })
  afterAll(() => Promise.all([stack.stop(), publicClient.stop()]))

  const invited = await seedUser(stack.world.deps, { email: stack.user.email, name: stack.user.name })
  await grant(stack.world.deps, stack.world.project, invited, ['analyst'])

  const begin = async (s = stack) => {
    const res = await call(s.app, 'POST', '/api/v1/auth/device')
    expect(res.status).toBe(200)
    return res.body as { device_code: string; user_code: string; verification_uri_complete: string; interval: number }
  }
  const poll = (deviceCode: string, s = stack) => call(s.app, 'POST', '/api/v1/auth/device/token', { body: { device_code: deviceCode } })

  it('tells the CLI which provider it logs in at, and that it may log in in a browser or with a password', async () => {
    const res = await call(stack.app, 'GET', '/api/v1/auth/cli')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ issuer: stack.provider.issuer, methods: ['browser', 'password'] })
  })

  it("begins a device login at the provider: a code, the provider's page with the code filled in, an expiry and a polling interval", async () => {
    const res = await call(stack.app, 'POST', '/api/v1/auth/device')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).toEqual({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${stack.provider.issuer}/device`,
      verification_uri_complete: `${stack.provider.issuer}/device?user_code=${encodeURIComponent(res.body.user_code)}`,
      expires_in: 600,
      interval: 5,
    })
  })

  it('answers 202 authorization_pending until the person confirms the code, then tokens for the API audience that work as Bearer, and records login.succeeded', async () => {
    const started = await begin()
    const pending = await poll(started.device_code)
    expect(pending.status).toBe(202)
    expect(pending.body).toEqual({ status: 'authorization_pending' })

    const page = await confirmDeviceLogin(new Browser(), started.verification_uri_complete, stack.user)
    expect(page.res.status).toBe(200)
    expect(await page.res.text()).toContain('You are signed in')

    const done = await poll(started.device_code)
    expect(done.status).toBe(200)
    expect(done.body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), expires_in: 3600, token_type: 'Bearer' })
    expect(decodeJwt(done.body.access_token)).toMatchObject({ aud: TEST_AUDIENCE, iss: stack.provider.issuer, email: stack.user.email })
    const who = await call(stack.app, 'GET', '/api/v1/users/me', { token: done.body.access_token })
    expect(who.body).toMatchObject({ id: invited.id, email: stack.user.email, auth_method: 'oidc' })
    const events = await auditActions(stack.world.deps, 'login.succeeded')
    expect(events).toContainEqual(
      expect.objectContaining({
        actor: expect.objectContaining({ id: invited.id, auth_method: 'device_code' }),
        change: { reason: 'browser (device authorization grant)' },
      }),
    )

    // The refresh token is the platform's client's, refreshed through the same service as a password login's.
    const refreshed = await call(stack.app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: done.body.refresh_token } })
    expect(refreshed.status).toBe(200)
    expect(decodeJwt(refreshed.body.access_token).aud).toBe(TEST_AUDIENCE)

    // A device code works once.
    const again = await poll(started.device_code)
    expect(again.status).toBe(401)
    expect(again.body.detail).toMatch(/^invalid_grant: /)
  })

  it('answers 401 access_denied and records login.failed when the person cancels at the provider', async () => {
    const started = await begin()
    const page = await confirmDeviceLogin(new Browser(), started.verification_uri_complete, stack.user, { cancel: true })
    expect(await page.res.text()).toContain('The sign-in was cancelled')
    const res = await poll(started.device_code)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ detail: 'access_denied: the sign-in was refused or cancelled at the identity provider' })
    const events = await auditActions(stack.world.deps, 'login.failed')
    expect(events).toContainEqual(expect.objectContaining({ outcome: 'failure', change: { reason: `device_code: ${res.body.detail}` } }))
  })

  it('answers 401 invalid_grant for a made-up device code, and 400 naming the field without one', async () => {
    const res = await poll('not-a-device-code')
    expect(res.status).toBe(401)
    expect(res.body.detail).toBe('invalid_grant: unknown or already used device code; start the login again')
    const empty = await call(stack.app, 'POST', '/api/v1/auth/device/token', { body: {} })
    expect(empty.status).toBe(400)
    expect(empty.body.detail).toMatch(/device_code/)
  })

  it('logs in through a public client of the CLI (OIDC_CLI_CLIENT_ID): its tokens carry the API audience and refresh through the admin service', async () => {
    const started = await begin(publicClient)
    await confirmDeviceLogin(new Browser(), started.verification_uri_complete, publicClient.user)
    const done = await poll(started.device_code, publicClient)
    expect(done.status).toBe(200)
    expect(decodeJwt(done.body.access_token)).toMatchObject({ aud: TEST_AUDIENCE, client_id: 'platform-cli' })
    const refreshed = await call(publicClient.app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: done.body.refresh_token } })
    expect(refreshed.status).toBe(200)
    const who = await call(publicClient.app, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })
    expect(who.body.email).toBe(publicClient.user.email)
  })

  it('answers a password login the provider does not offer with 400 saying to log in in a browser, and records no failed login', async () => {
    const methods = await call(publicClient.app, 'GET', '/api/v1/auth/cli')
    expect(methods.body.methods).toContain('browser')
    const res = await call(publicClient.app, 'POST', '/api/v1/auth/password', {
      body: { email: publicClient.user.email, password: publicClient.user.password },
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      detail:
        'the identity provider does not allow e-mail and password login here (unauthorized_client): log in in a browser instead (platform login --browser)',
    })
    expect(await auditActions(publicClient.world.deps, 'login.failed')).toEqual([])
  })

  it('answers 401 expired_token once the codes have expired unconfirmed', async () => {
    const shortLived = await startLoginStack({}, { deviceCodeTtlSeconds: 1 })
    try {
      const started = await begin(shortLived)
      expect(started).toMatchObject({ interval: 5 })
      await delay(1500)
      const res = await poll(started.device_code, shortLived)
      expect(res.status).toBe(401)
      expect(res.body.detail).toBe('expired_token: the code expired before the sign-in was completed; start the login again')
    } finally {
      await shortLived.stop()
    }
  })

  it('answers 404 for the CLI login methods and the browser login when login is not configured', async () => {
    const app = createAdminApp(adminDeps(testKernel('admin')))
    for (const [method, path] of [
      ['GET', '/api/v1/auth/cli'],
      ['POST', '/api/v1/auth/device'],
    ] as const) {
      const res = await call(app, method, path)
      expect(res.status).toBe(404)
      expect(res.body.detail).toMatch(/not configured/)
    }
  })
})
