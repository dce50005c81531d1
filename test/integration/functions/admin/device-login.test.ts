import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { adminDeps, type AdminDeps } from '../../../../functions/admin/deps.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { grant, seedUser } from '../../../../domain/tenancy/seed.js'
import { Browser, confirmDeviceLogin, startLoginStack } from '../../../support/oidc.js'
import { testKernel } from '../../../support/env.js'
import { call } from '../../../support/world.js'

async function auditActions(deps: AdminDeps, action: string) {
  const q = await deps.db.col('audit_events').where('action', '==', action).get()
  return q.docs.map((d) => d.data())
}

/** The pair the platform issues at the end of a CLI login, whatever the provider issued. */
const PLATFORM_PAIR = {
  access_token: expect.stringMatching(/^plat_cli_[A-Za-z0-9_-]{87}$/),
  refresh_token: expect.stringMatching(/^plat_clr_[A-Za-z0-9_-]{87}$/),
  expires_in: 3600,
  token_type: 'Bearer',
}

describe("admin: the CLI's browser login (device authorization grant) and its password login's refusals", async () => {
  const stack = await startLoginStack()
  // The identity provider of Entra ID's and Okta's kind: the CLI has a public client of its own, which may not use the password grant.
  const publicClient = await startLoginStack({}, { cliClient: 'public' })
  // Google's kind: a "TVs and Limited Input devices" client with a secret, opaque access tokens, verification_url.
  const google = await startLoginStack({}, { cliClient: 'google' })
  afterAll(() => Promise.all([stack.stop(), publicClient.stop(), google.stop()]))

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

  it("answers 202 authorization_pending until the person confirms the code, then the platform's own pair (working as Bearer), and records login.succeeded", async () => {
    const started = await begin()
    const pending = await poll(started.device_code)
    expect(pending.status).toBe(202)
    expect(pending.body).toEqual({ status: 'authorization_pending' })

    const page = await confirmDeviceLogin(new Browser(), started.verification_uri_complete, stack.user)
    expect(page.res.status).toBe(200)
    expect(await page.res.text()).toContain('You are signed in')

    const done = await poll(started.device_code)
    expect(done.status).toBe(200)
    expect(done.headers.get('cache-control')).toBe('no-store')
    expect(done.body).toEqual(PLATFORM_PAIR)
    const who = await call(stack.app, 'GET', '/api/v1/users/me', { token: done.body.access_token })
    expect(who.body).toMatchObject({ id: invited.id, email: stack.user.email, auth_method: 'cli_token' })
    const events = await auditActions(stack.world.deps, 'login.succeeded')
    expect(events).toContainEqual(
      expect.objectContaining({
        actor: expect.objectContaining({ id: invited.id, auth_method: 'device_code' }),
        entity: { type: 'cli_login', id: expect.any(String), parent: invited.id },
        change: { reason: 'browser (device authorization grant)', to: expect.any(String) },
      }),
    )

    // The refresh credential is the platform's, refreshed by the admin service whatever the provider.
    const refreshed = await call(stack.app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: done.body.refresh_token } })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body).toEqual(PLATFORM_PAIR)

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

  it("logs in through a public client of the CLI (OIDC_CLI_CLIENT_ID): the platform's pair, refreshed through the admin service", async () => {
    const started = await begin(publicClient)
    await confirmDeviceLogin(new Browser(), started.verification_uri_complete, publicClient.user)
    const done = await poll(started.device_code, publicClient)
    expect(done.status).toBe(200)
    expect(done.body).toEqual(PLATFORM_PAIR)
    const refreshed = await call(publicClient.app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: done.body.refresh_token } })
    expect(refreshed.status).toBe(200)
    const who = await call(publicClient.app, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })
    expect(who.body.email).toBe(publicClient.user.email)
  })

  it("logs in at a provider that answers as Google (a client with a secret, verification_url, 428 while pending, opaque access tokens): the person types the code, and the platform's pair works", async () => {
    const started = await call(google.app, 'POST', '/api/v1/auth/device')
    expect(started.status).toBe(200)
    expect(started.body).toEqual({
      device_code: expect.any(String),
      user_code: expect.any(String),
      verification_uri: `${google.provider.issuer}/device`,
      expires_in: 600,
      interval: 5,
    })
    const pending = await poll(started.body.device_code, google)
    expect(pending.status).toBe(202)
    expect(pending.body).toEqual({ status: 'authorization_pending' })

    const page = await confirmDeviceLogin(new Browser(), started.body, google.user)
    expect(await page.res.text()).toContain('You are signed in')
    const done = await poll(started.body.device_code, google)
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body).toEqual(PLATFORM_PAIR)
    const who = await call(google.app, 'GET', '/api/v1/users/me', { token: done.body.access_token })
    expect(who.body).toMatchObject({ email: google.user.email, auth_method: 'cli_token' })
  })

  it('the provider answering as Google does: verification_url and no address with the code, 428 while pending, an opaque access token with the ID token', async () => {
    const client = new URLSearchParams({ client_id: 'platform-cli', client_secret: google.env.OIDC_CLI_CLIENT_SECRET! })
    const form = (more: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...client, ...Object.entries(more)]).toString(),
    })
    const meta = (await (await fetch(`${google.provider.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>
    const device = (await (await fetch(meta.device_authorization_endpoint!, form({ scope: 'openid email profile' }))).json()) as Record<
      string,
      string
    >
    expect(Object.keys(device).sort()).toEqual(['device_code', 'expires_in', 'interval', 'user_code', 'verification_url'])
    const token = () =>
      fetch(meta.token_endpoint!, form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code! }))
    expect((await token()).status).toBe(428)
    await confirmDeviceLogin(new Browser(), { verification_uri: device.verification_url!, user_code: device.user_code! }, google.user)
    const tokens = (await (await token()).json()) as Record<string, string>
    expect(tokens.id_token!.split('.')).toHaveLength(3)
    expect(tokens.access_token!.split('.')).toHaveLength(1)
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
