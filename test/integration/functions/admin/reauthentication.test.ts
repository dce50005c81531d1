import { afterAll, describe, expect, it } from 'vitest'
import { Browser, browserLogin, startLoginStack, submitLoginForm } from '../../../support/oidc.js'
import { call } from '../../../support/world.js'

/**
 * The admin login's part in a signature: return_to on the platform's own origins, and a
 * re-authentication (prompt=login, max_age=0) that proves the session's user is at the keyboard
 * now, recorded on that session (auth_time), never swapping in another user's session.
 */
describe('admin: re-authentication and return_to', async () => {
  const REPORTS = 'http://reports.platform.test:8105'
  const stack = await startLoginStack({ PUBLIC_ORIGINS: REPORTS }, { otherUsers: ['Bob Other'] })
  const { world, app, adminUrl, user } = stack
  const other = stack.others[0]!
  afterAll(() => stack.stop())

  const sessionOf = async (browser: Browser) => {
    const value = browser.cookie(adminUrl, 'platform_session')!.value
    const found = await world.deps.tokens.getSession(value, new Date())
    if (!found.ok) throw new Error(found.reason)
    return { value, record: found.record }
  }
  const events = async (action: string, sessionId: string) =>
    (await world.deps.db.col('audit_events').where('action', '==', action).where('entity.id', '==', sessionId).get()).docs.map((d) => d.data())

  /** Starts a re-authentication from a logged-in browser and returns the provider's login form. */
  async function reauthenticate(browser: Browser, returnTo = '/api/v1/users/me') {
    const start = await browser.request(`${adminUrl}/api/v1/auth/login?prompt=login&max_age=0&return_to=${encodeURIComponent(returnTo)}`)
    expect(start.status).toBe(302)
    const location = new URL(start.headers.get('location')!)
    expect(location.searchParams.get('prompt')).toBe('login')
    expect(location.searchParams.get('max_age')).toBe('0')
    const form = await browser.follow(location.href)
    // The provider asks for the password again, although its own session of the user is fresh.
    expect(form.res.status).toBe(200)
    return form
  }

  it("accepts an absolute return_to on one of the platform's origins, and refuses every other origin", async () => {
    const target = `${REPORTS}/6a1f0c3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b/signoff/complete`
    const ok = await call(app, 'GET', `/api/v1/auth/login?return_to=${encodeURIComponent(target)}`)
    expect(ok.status).toBe(302)
    const state = new URL(ok.headers.get('location')!).searchParams.get('state')!
    expect((await world.deps.db.col('login_states').doc(state).get()).get('return_to')).toBe(target)
    for (const bad of [
      'http://reports.platform.test:8106/x',
      'https://reports.platform.test:8105/x',
      'http://user:pw@reports.platform.test:8105/x',
      'javascript:alert(1)',
      `${REPORTS}\\@evil.example/`,
    ]) {
      const res = await call(app, 'GET', `/api/v1/auth/login?return_to=${encodeURIComponent(bad)}`)
      expect(res.status, bad).toBe(400)
    }
    // The admin service's own public address is one of the platform's origins.
    const browser = new Browser()
    const { url } = await browserLogin(browser, adminUrl, user, `${adminUrl}/api/v1/projects`)
    expect(url).toBe(`${adminUrl}/api/v1/projects`)
  })

  it('records the authentication time of a login on its session', async () => {
    const browser = new Browser()
    const before = Date.now()
    await browserLogin(browser, adminUrl, user)
    const { record } = await sessionOf(browser)
    expect(record.auth_time!.toMillis()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    expect(record.auth_time!.toMillis()).toBeLessThanOrEqual(Date.now())
  })

  it('re-authenticates the session of the user who signs in again: same cookie, a new auth_time, session.reauthenticated', async () => {
    const browser = new Browser()
    await browserLogin(browser, adminUrl, user)
    const first = await sessionOf(browser)
    await new Promise((r) => setTimeout(r, 1100))
    const form = await reauthenticate(browser)
    const { res, url } = await submitLoginForm(browser, form.url, await form.res.text(), user)
    expect(url).toBe(`${adminUrl}/api/v1/users/me`)
    expect(res.status).toBe(200)
    const after = await sessionOf(browser)
    expect(after.value).toBe(first.value)
    expect(after.record.auth_time!.toMillis()).toBeGreaterThan(first.record.auth_time!.toMillis())
    // How the login asked for it is recorded with it: a signature accepts only prompt=login, max_age=0.
    expect(after.record.reauth).toMatchObject({ prompt: 'login', max_age: 0, auth_time: after.record.auth_time })
    expect(after.record.reauth_refused).toBeUndefined()
    expect(await events('session.reauthenticated', after.record.id)).toHaveLength(1)
    expect(
      await world.deps.db
        .col('sessions')
        .where('user_id', '==', after.record.user_id)
        .count()
        .get()
        .then((s) => s.data().count),
    ).toBeGreaterThan(0)
  })

  it('records how a re-authentication was asked: max_age=300 is answered from the provider session, without a password, and recorded so', async () => {
    const browser = new Browser()
    await browserLogin(browser, adminUrl, user)
    const first = await sessionOf(browser)
    const { url } = await browser.follow(`${adminUrl}/api/v1/auth/login?max_age=300`)
    // No password form: the provider's session of the user is younger than 300 s.
    expect(url).toBe(`${adminUrl}/api/v1/users/me`)
    const after = await sessionOf(browser)
    expect(after.record.reauth).toMatchObject({ max_age: 300, auth_time: first.record.auth_time })
    expect(after.record.reauth!.prompt).toBeUndefined()
    const [event] = await events('session.reauthenticated', after.record.id)
    expect(event!.change.reason).toContain('prompt=none, max_age=300')
  })

  it("refuses a re-authentication by another user: the session stays the first user's and notes the refusal", async () => {
    const browser = new Browser()
    await browserLogin(browser, adminUrl, user)
    const first = await sessionOf(browser)
    const form = await reauthenticate(browser)
    const { url } = await submitLoginForm(browser, form.url, await form.res.text(), other)
    expect(url).toBe(`${adminUrl}/api/v1/users/me`)
    const after = await sessionOf(browser)
    expect(after.value).toBe(first.value)
    expect(after.record.user_id).toBe(first.record.user_id)
    expect(after.record.auth_time!.toMillis()).toBe(first.record.auth_time!.toMillis())
    expect(after.record.reauth).toBeUndefined()
    expect(after.record.reauth_refused).toMatchObject({ email: other.email })
    const [refused] = await events('session.reauthentication_refused', after.record.id)
    expect(refused).toMatchObject({ outcome: 'denied', actor: { id: first.record.user_id } })
    expect(refused!.change.reason).toContain(other.email)
    const me = await browser.request(`${adminUrl}/api/v1/users/me`)
    expect((await me.json()).email).toBe(user.email)
  })

  it('starts a fresh session when a browser without one asks for prompt=login', async () => {
    const browser = new Browser()
    const form = await browser.follow(`${adminUrl}/api/v1/auth/login?prompt=login&max_age=0`)
    await submitLoginForm(browser, form.url, await form.res.text(), user)
    const { record } = await sessionOf(browser)
    expect(Date.now() - record.auth_time!.toMillis()).toBeLessThan(10_000)
  })

  it('refuses a max_age out of range or a prompt other than login with 400', async () => {
    for (const query of ['max_age=-1', 'max_age=x', 'prompt=none', 'prompt=consent']) {
      expect((await call(app, 'GET', `/api/v1/auth/login?${query}`)).status, query).toBe(400)
    }
  })
})
