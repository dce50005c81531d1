import { afterAll, describe, expect, it } from 'vitest'
import { createKernel } from '../../../../lib/kernel.js'
import { grant, seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { reportsDeps } from '../../../../functions/reports/deps.js'
import { createReportsApp } from '../../../../functions/reports/service.js'
import { Browser, browserLogin, listen, startLoginStack, submitLoginForm } from '../../../support/oidc.js'
import { cachedVariant, makeTrioOrder, MemoryVariantCache } from '../../../support/reports.js'
import { call } from '../../../support/world.js'

/**
 * The re-authentication a signature needs (21 CFR 11.200), against the real servers and the local
 * suite's OIDC provider, with a browser that follows each redirect by hand: after the sign-off's
 * form is posted, only an authentication at the provider that the admin service began with
 * prompt=login and max_age=0, whose auth_time follows the post, completes the signature. A login
 * with max_age=300 (answered from the provider's session, without a password) does not, nor does
 * an authentication that happened before the post.
 */
describe('reports: the re-authentication of a signature', async () => {
  const reportsServer = await listen()
  const stack = await startLoginStack({ REPORTS_PUBLIC_URL: reportsServer.url }, { otherUsers: ['Rita Reviewer'] })
  const { world, adminUrl } = stack
  const cache = new MemoryVariantCache()
  const deps = reportsDeps(createKernel(world.deps.config, 'reports', { firestore: world.deps.db.firestore }), cache)
  const app = createReportsApp(deps)
  reportsServer.serve(app)
  afterAll(async () => {
    await Promise.all([stack.stop(), reportsServer.stop()])
  })
  const base = reportsServer.url

  const ann = await seedUser(world.deps, stack.user)
  await grant(world.deps, world.project, ann, ['analyst'])
  const annToken = await seedToken(world.deps, ann, 'test')
  const ritaCredentials = stack.others[0]!
  const rita = await seedUser(world.deps, ritaCredentials)
  await grant(world.deps, world.project, rita, ['reviewer'])

  const api = (method: string, path: string, body?: unknown) =>
    call(app, method, `/api/v1${path}`, { token: annToken, body, project: world.project.id })

  /** A report in review, written by Ann: one classified variant and a conclusion. */
  async function reportInReview(): Promise<string> {
    const order = await makeTrioOrder(world.deps, world.project)
    const variant = cachedVariant()
    cache.put(world.project.id, order.id, variant)
    const report = (await api('POST', '/reports', { order_id: order.id, conclusion: 'Positive.' })).body
    await api('POST', `/reports/${report.id}/variants`, { variant_id: variant.id, acmg_classification: 'pathogenic' })
    expect((await api('POST', `/reports/${report.id}/transition`, { to: 'in_review' })).status).toBe(200)
    return report.id as string
  }

  /** Rita, logged in to the platform (and so at the provider) in a browser of her own. */
  async function ritasBrowser() {
    const browser = new Browser()
    await browserLogin(browser, adminUrl, ritaCredentials)
    return browser
  }

  /** Opens the sign-off page and posts its form as the browser would: answers where the platform sends the browser to authenticate again. */
  async function postForm(browser: Browser, reportId: string): Promise<{ login: URL; postedAt: number }> {
    const page = await browser.request(`${base}/${reportId}/signoff/`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!
    const postedAt = Date.now()
    const posted = await browser.request(`${base}/${reportId}/signoff/`, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf_token: field('csrf_token'),
        snapshot_id: field('snapshot_id'),
        meaning: 'approved',
        confirm: 'yes',
      }).toString(),
    })
    expect(posted.status).toBe(303)
    return { login: new URL(posted.headers.get('location')!), postedAt }
  }

  const report = async (id: string) => (await api('GET', `/reports/${id}`)).body
  const sessionOf = async (browser: Browser) => {
    const found = await world.deps.tokens.getSession(browser.cookie(adminUrl, 'platform_session')!.value, new Date())
    if (!found.ok) throw new Error(found.reason)
    return found.record
  }
  const refusals = async (id: string) =>
    (await world.deps.db.col('audit_events').where('entity.id', '==', id).where('action', '==', 'report.signoff_refused').get()).docs.map((d) =>
      d.get('change.reason'),
    )

  it('asks the provider for prompt=login and max_age=0 after the form, and signs with an auth_time later than the post', async () => {
    const id = await reportInReview()
    const browser = await ritasBrowser()
    const { login, postedAt } = await postForm(browser, id)
    expect(login.href.startsWith(`${adminUrl}/api/v1/auth/login`)).toBe(true)
    expect(login.searchParams.get('prompt')).toBe('login')
    expect(login.searchParams.get('max_age')).toBe('0')
    // The provider asks for the password again, although its session of Rita is fresh.
    const form = await browser.follow(login.href)
    expect(form.res.status).toBe(200)
    const { url } = await submitLoginForm(browser, form.url, await form.res.text(), ritaCredentials)
    expect(url).toBe(`${base}/${id}/signoff/signed`)
    const [signature] = (await report(id)).signatures
    expect(signature.signer.id).toBe(rita.id)
    expect(Date.parse(signature.auth_time)).toBeGreaterThanOrEqual(Math.floor(postedAt / 1000) * 1000)
    expect((await sessionOf(browser)).reauth).toMatchObject({ prompt: 'login', max_age: 0 })
  })

  it('does not sign after GET /auth/login?max_age=300 returning to the completion: the provider asked for no password', async () => {
    const id = await reportInReview()
    const browser = await ritasBrowser()
    await postForm(browser, id)
    // The attack: instead of the address the platform gave, a login that lets the provider answer from its session.
    const complete = `${base}/${id}/signoff/complete`
    const { res, url } = await browser.follow(`${adminUrl}/api/v1/auth/login?max_age=300&return_to=${encodeURIComponent(complete)}`)
    expect(url).toBe(complete)
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('was not a new one asked for this signature (prompt=none, max_age=300')
    expect(await report(id)).toMatchObject({ status: 'in_review', signatures: [] })
    // The session recorded the login as it was asked: no prompt, max_age=300, and the auth_time of the earlier login.
    const session = await sessionOf(browser)
    expect(session.reauth).toMatchObject({ max_age: 300 })
    expect(session.reauth!.prompt).toBeUndefined()
    expect(await refusals(id)).toEqual([expect.stringMatching(/^reauthentication: /)])
  })

  it('does not sign with an authentication at the provider that happened before the form was posted', async () => {
    const id = await reportInReview()
    const browser = await ritasBrowser()
    const complete = `${base}/${id}/signoff/complete`
    // A prompt=login, max_age=0 login begun and answered at the provider first, its return to the platform held back…
    const form = await browser.follow(`${adminUrl}/api/v1/auth/login?prompt=login&max_age=0&return_to=${encodeURIComponent(complete)}`)
    expect(form.res.status).toBe(200)
    const action = /<form[^>]*action="([^"]+)"/.exec(await form.res.text())![1]!.replace(/&amp;/g, '&')
    let at = new URL(action, form.url).href
    let res = await browser.request(at, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: ritaCredentials.email, password: ritaCredentials.password }).toString(),
    })
    while (res.status >= 300 && res.status < 400 && !res.headers.get('location')!.startsWith(`${adminUrl}/api/v1/auth/callback`)) {
      at = new URL(res.headers.get('location')!, at).href
      res = await browser.request(at)
    }
    const held = new URL(res.headers.get('location')!, at).href
    expect(held.startsWith(`${adminUrl}/api/v1/auth/callback`)).toBe(true)
    // …then, in a later second, the form posted…
    await new Promise((r) => setTimeout(r, 1100))
    await postForm(browser, id)
    // …and the held return delivered: the platform records it after the post, but the login began, and its auth_time is, before it.
    const landed = await browser.follow(held)
    expect(landed.url).toBe(complete)
    expect(landed.res.status).toBe(403)
    expect(await landed.res.text()).toContain('was started before you posted the signature')
    expect((await sessionOf(browser)).reauth).toMatchObject({ prompt: 'login', max_age: 0 })
    expect(await report(id)).toMatchObject({ status: 'in_review', signatures: [] })
  })

  it('does not sign with a prompt=login, max_age=0 login begun before the form was posted, though the password is typed after it', async () => {
    const id = await reportInReview()
    const browser = await ritasBrowser()
    const complete = `${base}/${id}/signoff/complete`
    // The login begun first (the provider's password form shown)…
    const form = await browser.follow(`${adminUrl}/api/v1/auth/login?prompt=login&max_age=0&return_to=${encodeURIComponent(complete)}`)
    expect(form.res.status).toBe(200)
    // …then the sign-off's form posted, in a later second…
    await new Promise((r) => setTimeout(r, 1100))
    const { postedAt } = await postForm(browser, id)
    // …then the password typed: a fresh authentication, but of a login that was not begun for this signature.
    const { url } = await submitLoginForm(browser, form.url, await form.res.text(), ritaCredentials)
    expect(url).toBe(complete)
    const session = await sessionOf(browser)
    expect(session.reauth).toMatchObject({ prompt: 'login', max_age: 0 })
    expect(session.reauth!.begun_at!.toMillis()).toBeLessThan(postedAt)
    expect(session.reauth!.auth_time.toMillis()).toBeGreaterThanOrEqual(Math.floor(postedAt / 1000) * 1000)
    expect(await report(id)).toMatchObject({ status: 'in_review', signatures: [] })
    expect(await refusals(id)).toEqual([expect.stringMatching(/^reauthentication: .*started before you posted/)])
  })
})
