import { createServer } from 'node:net'
import { Timestamp } from '@google-cloud/firestore'
import { afterAll, describe, expect, it } from 'vitest'
import { adminDeps, type AdminDeps } from '../../../../functions/admin/deps.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { identityOf } from '../../../../functions/admin/login.js'
import { createLogger } from '../../../../lib/log.js'
import { grant, seedUser } from '../../../../domain/tenancy/seed.js'
import { Browser, browserLogin, startLoginStack, submitLoginForm } from '../../../support/oidc.js'
import { testKernel } from '../../../support/env.js'
import { call } from '../../../support/world.js'

async function auditActions(deps: AdminDeps, action: string) {
  const q = await deps.db.col('audit_events').where('action', '==', action).get()
  return q.docs.map((d) => d.data())
}

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('admin: login through the OIDC provider', async () => {
  const stack = await startLoginStack()
  const { world, app, adminUrl, user } = stack
  afterAll(() => stack.stop())

  // The provider's user was invited to the project by e-mail before ever logging in.
  const invited = await seedUser(world.deps, { email: user.email, name: user.name })
  await grant(world.deps, world.project, invited, ['analyst'])

  const me = (browser: Browser, headers: Record<string, string> = {}) => browser.request(`${adminUrl}/api/v1/users/me`, { headers })

  describe('browser flow', () => {
    it('logs in through the login form, sets an HttpOnly SameSite=Lax session cookie and lands on /users/me as the invited user', async () => {
      const browser = new Browser()
      const { res, url } = await browserLogin(browser, adminUrl, user)
      expect(url).toBe(`${adminUrl}/api/v1/users/me`)
      expect(res.status).toBe(200)
      const body = await res.json()
      expect(body).toMatchObject({ id: invited.id, email: user.email, auth_method: 'session', project_roles: { [world.project.id]: ['analyst'] } })

      const cookie = browser.cookie(adminUrl, 'platform_session')!
      expect(cookie.value).toMatch(/^plat_ses_/)
      expect(cookie.attributes.has('httponly')).toBe(true)
      expect(cookie.attributes.get('samesite')).toBe('Lax')
      expect(cookie.path).toBe('/')
      expect(cookie.attributes.get('max-age')).toBe(String(world.deps.config.sessionTtlSeconds))
      // Over plain http the cookie cannot be Secure, or the browser would never send it back.
      expect(cookie.attributes.has('secure')).toBe(false)
    })

    it('stores the session with the roles at login and records session.created', async () => {
      const browser = new Browser()
      await browserLogin(browser, adminUrl, user)
      const value = browser.cookie(adminUrl, 'platform_session')!.value
      const found = await world.deps.tokens.getSession(value, new Date())
      expect(found.ok && found.record.effective_roles).toEqual({ [`project:${world.project.id}`]: ['analyst'] })
      const events = await auditActions(world.deps, 'session.created')
      expect(events.some((e) => found.ok && e.entity.id === found.record.id && e.actor.id === invited.id)).toBe(true)
    })

    it('redirects to the provider with PKCE S256, state and nonce, keeping the verifier server-side', async () => {
      const browser = new Browser()
      const res = await browser.request(`${adminUrl}/api/v1/auth/login`)
      expect(res.status).toBe(302)
      const location = new URL(res.headers.get('location')!)
      expect(location.origin).toBe(stack.provider.issuer)
      const params = location.searchParams
      expect(params.get('code_challenge_method')).toBe('S256')
      expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/)
      expect(params.get('nonce')).toBeTruthy()
      expect(params.get('redirect_uri')).toBe(`${adminUrl}/api/v1/auth/callback`)
      const state = params.get('state')!
      const stored = await world.deps.db.col('login_states').doc(state).get()
      expect(stored.get('code_verifier')).toMatch(/^[\w-]{43,}$/)
      expect(location.href).not.toContain(stored.get('code_verifier'))
      expect(browser.cookie(adminUrl, 'platform_login_state')?.value).toBe(state)
    })

    it('logs in again without the form while the provider session lasts, with a new platform session', async () => {
      const browser = new Browser()
      await browserLogin(browser, adminUrl, user)
      const first = browser.cookie(adminUrl, 'platform_session')!.value
      const { res, url } = await browser.follow(`${adminUrl}/api/v1/auth/login`)
      expect(url).toBe(`${adminUrl}/api/v1/users/me`)
      expect(res.status).toBe(200)
      expect(browser.cookie(adminUrl, 'platform_session')!.value).not.toBe(first)
    })

    it('lands on the return_to path after login', async () => {
      const browser = new Browser()
      const { url, res } = await browserLogin(browser, adminUrl, user, '/api/v1/projects')
      expect(url).toBe(`${adminUrl}/api/v1/projects`)
      expect(res.status).toBe(200)
    })

    it.each(['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'relative/path'])('refuses return_to %s with 400', async (returnTo) => {
      const res = await call(app, 'GET', `/api/v1/auth/login?return_to=${encodeURIComponent(returnTo)}`)
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(/return_to/)
    })

    it('refuses a callback with an unknown state', async () => {
      const browser = new Browser()
      const res = await browser.request(`${adminUrl}/api/v1/auth/callback?code=abc&state=forged-state`)
      expect(res.status).toBe(400)
      expect((await res.json()).detail).toMatch(/state/)
      expect(browser.cookie(adminUrl, 'platform_session')).toBeUndefined()
    })

    it('refuses a replayed callback: a state works once', async () => {
      const browser = new Browser()
      const form = await browser.follow(`${adminUrl}/api/v1/auth/login`)
      const submitted = await browser.request(new URL(/action="([^"]+)"/.exec(await form.res.text())![1]!, form.url).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
      })
      // Walk the provider's redirects by hand to keep the callback address.
      let next = new URL(submitted.headers.get('location')!, form.url).href
      while (!next.startsWith(`${adminUrl}/api/v1/auth/callback`)) {
        const r = await browser.request(next)
        next = new URL(r.headers.get('location')!, next).href
      }
      const first = await browser.request(next)
      expect(first.status).toBe(302)
      // The same browser again, with the binding cookie put back: the state itself is spent.
      const state = new URL(next).searchParams.get('state')!
      const replay = await browser.request(next, { headers: { cookie: `platform_login_state=${state}` } })
      expect(replay.status).toBe(400)
      expect((await replay.json()).detail).toMatch(/already used/)
    })

    it('refuses a callback arriving in a browser other than the one that started the login', async () => {
      const victim = new Browser()
      const attacker = new Browser()
      const form = await attacker.follow(`${adminUrl}/api/v1/auth/login`)
      const html = await form.res.text()
      const action = new URL(/action="([^"]+)"/.exec(html)![1]!, form.url).href
      let res = await attacker.request(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: user.email, password: user.password }).toString(),
      })
      let next = new URL(res.headers.get('location')!, action).href
      while (!next.startsWith(`${adminUrl}/api/v1/auth/callback`)) {
        res = await attacker.request(next)
        next = new URL(res.headers.get('location')!, next).href
      }
      const landed = await victim.request(next)
      expect(landed.status).toBe(400)
      expect((await landed.json()).detail).toMatch(/another browser/)
      expect(victim.cookie(adminUrl, 'platform_session')).toBeUndefined()
    })

    it('shows the login form again on a wrong password, without leaving the provider', async () => {
      const browser = new Browser()
      const form = await browser.follow(`${adminUrl}/api/v1/auth/login`)
      const { res, url } = await submitLoginForm(browser, form.url, await form.res.text(), { email: user.email, password: 'not-the-password' })
      expect(res.status).toBe(401)
      expect(url.startsWith(stack.provider.issuer)).toBe(true)
      expect(await res.text()).toContain('Wrong e-mail or password')
    })

    it('answers 401 and records login.failed when the user cancels at the provider', async () => {
      const browser = new Browser()
      const form = await browser.follow(`${adminUrl}/api/v1/auth/login`)
      const abort = /href="(\/interaction\/[^"]+\/abort)"/.exec(await form.res.text())![1]!
      const { res, url } = await browser.follow(new URL(abort, form.url).href)
      expect(url.startsWith(`${adminUrl}/api/v1/auth/callback`)).toBe(true)
      expect(res.status).toBe(401)
      expect((await res.json()).detail).toMatch(/access_denied/)
      const events = await auditActions(world.deps, 'login.failed')
      expect(events.some((e) => e.change?.reason?.includes('access_denied'))).toBe(true)
    })

    it('refuses an authorization request without PKCE at the provider', async () => {
      const url = new URL(`${stack.provider.issuer}/auth`)
      url.search = new URLSearchParams({
        client_id: stack.client.client_id,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: stack.client.redirect_uris[0]!,
        state: 'some-state',
      }).toString()
      const res = await fetch(url, { redirect: 'manual' })
      const location = new URL(res.headers.get('location')!)
      expect(location.searchParams.get('error')).toBe('invalid_request')
      expect(location.searchParams.get('error_description')).toMatch(/PKCE/)
    })
  })

  describe('login state, cookies and identity', () => {
    it('refuses an expired login state, and spends it', async () => {
      const state = `expired-${Date.now()}`
      const past = new Date(Date.now() - 60_000)
      await world.deps.db
        .col('login_states')
        .doc(state)
        .create({
          code_verifier: 'v'.repeat(43),
          nonce: 'n',
          return_to: '/api/v1/users/me',
          created: Timestamp.fromDate(past),
          expires_at: Timestamp.fromDate(past),
        })
      const res = await call(app, 'GET', `/api/v1/auth/callback?code=abc&state=${state}`, { headers: { cookie: `platform_login_state=${state}` } })
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(/expired/)
      expect((await world.deps.db.col('login_states').doc(state).get()).exists).toBe(false)
    })

    it('marks its cookies Secure when the service is public over https', async () => {
      const deps = adminDeps(testKernel('admin', { ...stack.env, ADMIN_PUBLIC_URL: 'https://admin.example.org' }))
      const httpsApp = createAdminApp(deps)
      const start = await call(httpsApp, 'GET', '/api/v1/auth/login')
      expect(start.status).toBe(302)
      expect(new URL(start.headers.get('location')!).searchParams.get('redirect_uri')).toBe('https://admin.example.org/api/v1/auth/callback')
      expect(start.headers.get('set-cookie')).toMatch(/^platform_login_state=[^;]+;.*Secure/)
      const out = await call(httpsApp, 'POST', '/api/v1/auth/logout')
      expect(out.headers.get('set-cookie')).toMatch(/^platform_session=;.*Max-Age=0.*Secure/)
    })

    it('leaves out an e-mail the provider marks unverified, so that it cannot link to an invited account', () => {
      expect(identityOf({ sub: 's1', email: 'a@example.org', email_verified: false })).toEqual({ sub: 's1', email: undefined, name: undefined })
      expect(identityOf({ sub: 's1', email: 'a@example.org', email_verified: true, name: 'A' })).toEqual({
        sub: 's1',
        email: 'a@example.org',
        name: 'A',
      })
    })
  })

  describe('sessions', () => {
    it('ends the session on logout: the cookie is cleared and no longer works', async () => {
      const browser = new Browser()
      await browserLogin(browser, adminUrl, user)
      const value = browser.cookie(adminUrl, 'platform_session')!.value
      const out = await browser.request(`${adminUrl}/api/v1/auth/logout`, { method: 'POST' })
      expect(out.status).toBe(204)
      expect(browser.cookie(adminUrl, 'platform_session')).toBeUndefined()
      const again = await me(browser, { cookie: `platform_session=${value}` })
      expect(again.status).toBe(401)
      expect(await again.json()).toEqual({ detail: expect.stringMatching(/session/) })
      expect((await auditActions(world.deps, 'session.ended')).some((e) => e.actor.id === invited.id)).toBe(true)
    })

    it('answers 204 to a logout without a session', async () => {
      const res = await call(app, 'POST', '/api/v1/auth/logout')
      expect(res.status).toBe(204)
    })

    it('lets a Bearer header bypass the session cookie', async () => {
      const browser = new Browser()
      await browserLogin(browser, adminUrl, user)
      const other = await world.caller(['viewer'])
      const withToken = await me(browser, { authorization: `Bearer ${other.token}` })
      expect(withToken.status).toBe(200)
      expect(await withToken.json()).toMatchObject({ id: other.user.id, auth_method: 'personal_token' })
      // A bad Bearer is refused even with a good cookie beside it: the cookie is not a fallback.
      const bad = await me(browser, { authorization: 'Bearer plat_pat_unknown' })
      expect(bad.status).toBe(401)
    })
  })

  describe('e-mail and password (CLI)', () => {
    it("returns the platform's own pair, whose access credential works as Bearer on /users/me, and records login.succeeded with the method", async () => {
      const res = await call(app, 'POST', '/api/v1/auth/password', { body: { email: user.email, password: user.password } })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        access_token: expect.stringMatching(/^plat_cli_/),
        refresh_token: expect.stringMatching(/^plat_clr_/),
        expires_in: 3600,
        token_type: 'Bearer',
      })
      const who = await call(app, 'GET', '/api/v1/users/me', { token: res.body.access_token })
      expect(who.status).toBe(200)
      expect(who.body).toMatchObject({ id: invited.id, email: user.email, auth_method: 'cli_token' })
      const events = await auditActions(world.deps, 'login.succeeded')
      expect(events).toContainEqual(
        expect.objectContaining({
          actor: expect.objectContaining({ id: invited.id, auth_method: 'password' }),
          entity: { type: 'cli_login', id: expect.any(String), parent: invited.id },
          change: expect.objectContaining({ reason: 'password' }),
        }),
      )
    })

    it('answers 401 with a detail for a wrong password and records login.failed', async () => {
      const res = await call(app, 'POST', '/api/v1/auth/password', { body: { email: user.email, password: 'wrong-password' } })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ detail: 'wrong e-mail or password' })
      const events = await auditActions(world.deps, 'login.failed')
      expect(events.some((e) => e.entity.id === user.email && e.outcome === 'failure')).toBe(true)
    })

    it('answers 401 for an unknown e-mail, in the same words as for a wrong password', async () => {
      const res = await call(app, 'POST', '/api/v1/auth/password', { body: { email: `nobody-${Date.now()}@example.org`, password: 'whatever' } })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ detail: 'wrong e-mail or password' })
    })

    it('answers 400 naming the field for a malformed e-mail', async () => {
      const res = await call(app, 'POST', '/api/v1/auth/password', { body: { email: 'not-an-email', password: 'x' } })
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(/email/)
    })

    it('refreshes: the new access credential works, a made-up refresh token is 401 saying to log in again', async () => {
      const first = await call(app, 'POST', '/api/v1/auth/password', { body: { email: user.email, password: user.password } })
      const refreshed = await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: first.body.refresh_token } })
      expect(refreshed.status).toBe(200)
      expect(refreshed.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
      expect(refreshed.body.access_token).not.toBe(first.body.access_token)
      const who = await call(app, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })
      expect(who.status).toBe(200)
      expect(who.body.id).toBe(invited.id)

      const bogus = await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: 'not-a-refresh-token' } })
      expect(bogus.status).toBe(401)
      expect(bogus.body.detail).toMatch(/log in again \(platform login\)$/)
    })
  })

  describe('without a reachable provider', () => {
    it('answers 500 "identity provider unavailable" rather than crashing, and logs why with the request id', async () => {
      const port = await closedPort()
      const deps = adminDeps(testKernel('admin', { ...stack.env, OIDC_ISSUER: `http://127.0.0.1:${port}` }))
      const lines: Array<Record<string, unknown>> = []
      const offline = createAdminApp({ ...deps, log: createLogger('debug', { service: 'admin' }, (line) => lines.push(JSON.parse(line))) })
      for (const [method, path, body] of [
        ['GET', '/api/v1/auth/login', undefined],
        ['POST', '/api/v1/auth/password', { email: user.email, password: user.password }],
      ] as const) {
        const res = await call(offline, method, path, { body, headers: { 'x-request-id': `offline-${method}` } })
        expect(res.status).toBe(500)
        expect(res.body).toEqual({ detail: 'identity provider unavailable' })
        expect(lines).toContainEqual(
          expect.objectContaining({ severity: 'ERROR', message: 'OIDC discovery failed', request_id: `offline-${method}` }),
        )
      }
    })

    it('answers 404 when login is not configured', async () => {
      const deps = adminDeps(testKernel('admin'))
      const res = await call(createAdminApp(deps), 'GET', '/api/v1/auth/login')
      expect(res.status).toBe(404)
      expect(res.body.detail).toMatch(/not configured/)
    })
  })
})
