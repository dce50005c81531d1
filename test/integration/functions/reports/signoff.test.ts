import { type Browser, type Page } from 'playwright-core'
import { launchChromium, SCREENSHOTS } from '../../../support/browser.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKernel } from '../../../../lib/kernel.js'
import { grant, seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { reportsDeps } from '../../../../functions/reports/deps.js'
import { createReportsApp } from '../../../../functions/reports/service.js'
import { listen, startLoginStack } from '../../../support/oidc.js'
import { cachedVariant, makeTrioOrder, MemoryVariantCache, moveOrder } from '../../../support/reports.js'
import { call } from '../../../support/world.js'

/**
 * The browser sign-off in headless Chromium, with JavaScript off, against real servers: the admin
 * and report services on their own ports, the local suite's OIDC provider with its login form. A
 * reviewer opens the page, signs, authenticates again at the provider, and sees the signed report;
 * then each refusal, each a page that says why, and an audit event.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

describe('reports: the browser sign-off', async () => {
  const reportsServer = await listen()
  const stack = await startLoginStack({ REPORTS_PUBLIC_URL: reportsServer.url }, { otherUsers: ['Rita Reviewer', 'Sam Second'] })
  const { world } = stack
  const cache = new MemoryVariantCache()
  const deps = reportsDeps(createKernel(world.deps.config, 'reports', { firestore: world.deps.db.firestore }), cache)
  reportsServer.serve(createReportsApp(deps))
  afterAll(async () => {
    await Promise.all([stack.stop(), reportsServer.stop()])
  })
  const base = reportsServer.url

  // The people: Ann writes reports (an analyst), Rita and Sam review and sign them.
  const person = async (who: { email: string; name: string }, role: 'analyst' | 'reviewer') => {
    const user = await seedUser(world.deps, who)
    await grant(world.deps, world.project, user, [role])
    return { ...who, user, token: await seedToken(world.deps, user, 'test') }
  }
  const ann = await person(stack.user, 'analyst')
  const rita = await person(stack.others[0]!, 'reviewer')
  const sam = await person(stack.others[1]!, 'reviewer')
  const [ritaCredentials, samCredentials, annCredentials] = [stack.others[0]!, stack.others[1]!, stack.user]

  const app = createReportsApp(deps)
  const api = (method: string, path: string, token = ann.token, body?: unknown) =>
    call(app, method, `/api/v1${path}`, { token, body, project: world.project.id })

  /** A report in review, written by Ann: two classified variants of a trio, a conclusion. */
  async function reportInReview() {
    const order = await makeTrioOrder(world.deps, world.project)
    const variants = [
      cachedVariant({ gene: 'SCN2A', chrom: '2', pos: 165_310_406 }),
      cachedVariant({ gene: 'KCNQ2', chrom: '20', pos: 63_400_000, hgvs_c: 'c.881C>T' }),
    ]
    cache.put(world.project.id, order.id, ...variants)
    const report = (
      await api('POST', '/reports', ann.token, {
        order_id: order.id,
        summary: 'Trio genome for epileptic encephalopathy.',
        conclusion: 'Positive: a de novo pathogenic SCN2A variant.',
      })
    ).body
    await api('POST', `/reports/${report.id}/variants`, ann.token, {
      variant_id: variants[0]!.id,
      acmg_classification: 'pathogenic',
      acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'],
      inheritance: 'de_novo',
      interpretation: 'De novo in the proband.',
    })
    await api('POST', `/reports/${report.id}/variants`, ann.token, {
      variant_id: variants[1]!.id,
      acmg_classification: 'uncertain_significance',
      include_in_report: false,
    })
    expect((await api('POST', `/reports/${report.id}/transition`, ann.token, { to: 'in_review' })).status).toBe(200)
    return { order, variants, report: report as { id: string; order_accession: string } }
  }

  const events = async (reportId: string, action: string) =>
    (await world.deps.db.col('audit_events').where('entity.id', '==', reportId).where('action', '==', action).get()).docs.map((d) => d.data())

  /** A browser context with JavaScript off in which only 127.0.0.1 answers; requests elsewhere are recorded. */
  async function offline() {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1100, height: 900 } })
    const outside: string[] = []
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url())
      if (url.hostname === '127.0.0.1' || url.protocol === 'data:') return route.continue()
      outside.push(url.href)
      return route.abort('blockedbyclient')
    })
    return { context, page: await context.newPage(), outside }
  }

  /** Fills the provider's login form the page is on, and waits to land on `then`. */
  async function signInAtProvider(page: Page, who: { email: string; password: string }, then: RegExp) {
    await page.waitForSelector('#email')
    expect(page.url().startsWith(stack.provider.issuer)).toBe(true)
    // A re-authentication names its person (login_hint), whose e-mail the provider shows read-only. Someone
    // else signing in over it sends their own e-mail anyway (the field is no barrier, the platform's check is).
    const email = page.locator('#email')
    if ((await email.getAttribute('readonly')) === null) await page.fill('#email', who.email)
    else if ((await email.inputValue()) !== who.email) {
      const form = new URLSearchParams({ email: who.email, password: who.password }).toString()
      await page.route('**/interaction/*/login', (route) => route.continue({ postData: form }), { times: 1 })
    }
    await page.fill('#password', who.password)
    await page.click('button[type=submit]')
    // When another account signs in over the provider's session, the provider first logs the
    // previous one out with a self-submitting form, which a browser without JavaScript continues by hand.
    for (let step = 0; step < 10 && !then.test(page.url()); step++) {
      await page.waitForLoadState()
      const next = page.locator('button:has-text("Continue")')
      if (!then.test(page.url()) && (await next.count())) await next.first().click()
      else await page.waitForURL(then, { timeout: 2_000 }).catch(() => undefined)
    }
    expect(page.url()).toMatch(then)
  }

  /** Logs `who` in: opening a page of the report service without a session leads through the platform's login and back. */
  async function openSignoff(page: Page, reportId: string, who: { email: string; password: string }) {
    await page.goto(`${base}/${reportId}/signoff/`)
    if (page.url().startsWith(stack.provider.issuer)) await signInAtProvider(page, who, new RegExp(`^${base}/${reportId}/signoff/$`))
    expect(page.url()).toBe(`${base}/${reportId}/signoff/`)
  }

  const message = (page: Page) => page.locator('#message').innerText()

  let rita1: Awaited<ReturnType<typeof offline>>
  beforeAll(async () => {
    rita1 = await offline()
  })
  afterAll(async () => {
    await rita1?.context.close()
  })

  it(
    'shows a reviewer exactly the snapshot to sign, signs it after she authenticates again, and shows the signed report to print',
    { timeout: 60_000 },
    async () => {
      const { report, variants } = await reportInReview()
      const { page, outside } = rita1
      await openSignoff(page, report.id, ritaCredentials)

      // What the page shows is the snapshot it names, whose hash is the report's latest.
      const shown = (await page.locator('#sha256').innerText()).trim()
      const got = (await api('GET', `/reports/${report.id}`)).body
      expect(shown).toBe(got.latest_snapshot.sha256)
      const text = await page.locator('body').innerText()
      for (const expected of [
        report.order_accession,
        'SCN2A',
        'Pathogenic',
        'PS2, PM2_Supporting, PP3',
        'de novo',
        'Positive: a de novo pathogenic SCN2A variant.',
        'Doe, Jamie',
        'Meaning of the signature: approved',
      ]) {
        expect(text).toContain(expected)
      }
      // The variant kept out of the report is not shown as reported.
      expect(text).not.toContain(variants[1]!.hgvs_c!)
      expect(text).toContain('1 further variant was reviewed and not included')
      const csp = (await page.context().request.get(`${base}/${report.id}/signoff/`)).headers()['content-security-policy']
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("frame-ancestors 'none'")
      await page.screenshot({ path: `${SCREENSHOTS}report-signoff.png`, fullPage: true })

      // Signing goes to the provider, which asks for the password again although its session is fresh.
      await page.check('input[name=confirm]')
      await page.click('#sign')
      await page.waitForURL((u) => u.href.startsWith(stack.provider.issuer))
      const before = Date.now()
      await signInAtProvider(page, ritaCredentials, new RegExp(`^${base}/${report.id}/signoff/signed$`))
      expect(await page.locator('#status').innerText()).toContain('Signed. The report is final.')
      expect(await page.locator('.signature .who').innerText()).toContain('Rita Reviewer')

      const signed = (await api('GET', `/reports/${report.id}`)).body
      expect(signed.status).toBe('signed')
      const [signature] = signed.signatures
      expect(signature).toMatchObject({
        signer: { id: rita.user.id, email: rita.email },
        meaning: 'approved',
        sha256: shown,
        snapshot_id: got.latest_snapshot.id,
      })
      expect(Date.parse(signature.auth_time)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
      expect(Date.parse(signature.at) - Date.parse(signature.auth_time)).toBeLessThan(5 * 60_000)
      const [event] = await events(report.id, 'report.signed')
      expect(event).toMatchObject({ actor: { id: rita.user.id, auth_method: 'session' }, change: { from: 'in_review', to: 'signed' } })
      expect(event!.change.reason).toContain(shown)

      // The printable report: the letterhead, the people, the signature block, the hash, and print CSS.
      await page.click('#print')
      await page.waitForURL(`${base}/${report.id}/print`)
      const printed = await page.locator('body').innerText()
      for (const expected of [
        'Test Lab',
        'Germline',
        'Final report.',
        'Rita Reviewer',
        'Electronically signed',
        'approved',
        shown,
        'Doe, Jamie',
        'SCN2A',
      ]) {
        expect(printed).toContain(expected)
      }
      await page.emulateMedia({ media: 'print' })
      await page.pdf?.({ path: `${SCREENSHOTS}report-print.pdf` }).catch(() => undefined)
      await page.screenshot({ path: `${SCREENSHOTS}report-print.png`, fullPage: true })
      await page.emulateMedia({ media: 'screen' })
      expect(outside).toEqual([])
    },
  )

  it("refuses the report's author with a page that says why, and records it", async () => {
    const { report } = await reportInReview()
    const { context, page } = await offline()
    try {
      await openSignoff(page, report.id, annCredentials)
      expect(await message(page)).toContain('you are the author of this report')
      expect(await page.locator('form.sign').count()).toBe(0)
      expect(await events(report.id, 'report.signoff_refused')).toHaveLength(1)
      // A forged post by the author, with Rita's form token, is refused as well.
      const res = await page.context().request.post(`${base}/${report.id}/signoff/`, {
        headers: { origin: base },
        form: { csrf_token: 'x'.repeat(43), snapshot_id: 'x', meaning: 'approved', confirm: 'yes' },
      })
      expect(res.status()).toBe(403)
    } finally {
      await context.close()
    }
  })

  it('refuses a reviewer who changed the report and sent it to review herself, with a page that says why', async () => {
    const { report } = await reportInReview()
    // The bypass of the review: Rita takes it back, rewrites the conclusion, and sends it to review again.
    expect((await api('POST', `/reports/${report.id}/transition`, rita.token, { to: 'draft' })).status).toBe(200)
    expect((await api('PATCH', `/reports/${report.id}`, rita.token, { conclusion: 'Positive: a pathogenic SCN2A variant.' })).status).toBe(200)
    expect((await api('POST', `/reports/${report.id}/transition`, rita.token, { to: 'in_review' })).status).toBe(200)
    const { page } = rita1
    const res = await page.goto(`${base}/${report.id}/signoff/`)
    expect(res?.status()).toBe(403)
    expect(await message(page)).toContain(
      'you changed this report (you edited its text and sent it to review): a second person, who did not change it, reviews and signs it',
    )
    expect(await page.locator('form.sign').count()).toBe(0)
    const [refused] = await events(report.id, 'report.signoff_refused')
    expect(refused).toMatchObject({ outcome: 'denied', actor: { id: rita.user.id } })
    expect((await api('GET', `/reports/${report.id}`)).body).toMatchObject({ status: 'in_review', signatures: [] })
  })

  it("refuses to sign a report whose order was entered in error, with a page that names the order's status", async () => {
    const { report, order } = await reportInReview()
    await moveOrder(world.deps, world.project, order.id, 'entered_in_error', 'wrong patient')
    const { page } = rita1
    const res = await page.goto(`${base}/${report.id}/signoff/`)
    expect(res?.status()).toBe(409)
    expect(await message(page)).toContain(`order ${order.accession} is entered_in_error`)
    expect(await page.locator('form.sign').count()).toBe(0)
    expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('in_review')
  })

  it('refuses while a review comment is open, and signs once a reviewer resolves it', { timeout: 60_000 }, async () => {
    const { report } = await reportInReview()
    const comment = (
      await api('POST', `/reports/${report.id}/comments`, sam.token, { type: 'review', comment: 'Confirm the de novo status by Sanger.' })
    ).body
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    expect(page.url()).toBe(`${base}/${report.id}/signoff/`)
    expect(await message(page)).toContain('1 review comment is still open')
    const [refused] = await events(report.id, 'report.signoff_refused')
    expect(refused).toMatchObject({ outcome: 'denied', actor: { id: rita.user.id } })
    await api('PATCH', `/reports/${report.id}/comments/${comment.id}`, sam.token, { resolved: true })
    await page.goto(`${base}/${report.id}/signoff/`)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await signInAtProvider(page, ritaCredentials, /\/signoff\/signed$/)
    expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('signed')
  })

  it('refuses when the report changed after the page was shown: the hash no longer matches', async () => {
    const { report } = await reportInReview()
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    const shown = (await page.locator('#sha256').innerText()).trim()
    // Meanwhile Ann adds a comment: the content, and so its hash, changes.
    await api('POST', `/reports/${report.id}/comments`, ann.token, { type: 'general', comment: 'Family counselling booked.' })
    await page.check('input[name=confirm]')
    const [res] = await Promise.all([page.waitForNavigation(), page.click('#sign')])
    expect(res?.status()).toBe(409)
    expect(page.url()).toBe(`${base}/${report.id}/signoff/`)
    expect(await message(page)).toContain('the report changed after this page was shown')
    expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('in_review')
    const [refused] = await events(report.id, 'report.signoff_refused')
    expect(refused!.change.reason).toMatch(/^changed: /)
    // Opened again, the page shows the report as it is now, under a new hash.
    await page.goto(`${base}/${report.id}/signoff/`)
    expect((await page.locator('#sha256').innerText()).trim()).not.toBe(shown)
  })

  it.each([
    ['a wrong token', 'wrong', 'the form has no valid security token'],
    ['no token', undefined, "The form's security token is missing"],
  ])('refuses a form with %s, and records access.denied', async (_, value, expected) => {
    const { report } = await reportInReview()
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    // Tampering as a hostile page or extension could (CDP evaluates whatever the page's CSP says).
    await page.evaluate((v) => {
      const input = document.querySelector('input[name=csrf_token]') as HTMLInputElement
      if (v === null) input.remove()
      else input.value = v
    }, value ?? null)
    await page.check('input[name=confirm]')
    const [res] = await Promise.all([page.waitForNavigation(), page.click('#sign')])
    expect(res?.status()).toBe(403)
    expect(await message(page)).toContain(expected)
    expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('in_review')
    const denied = await events(report.id, 'access.denied')
    expect(denied.map((e) => e.actor.id)).toEqual([rita.user.id])
  })

  it('refuses when another user authenticates at the provider: the session is not theirs, and nothing is signed', { timeout: 60_000 }, async () => {
    const { report } = await reportInReview()
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await page.waitForURL((u) => u.href.startsWith(stack.provider.issuer))
    await signInAtProvider(page, samCredentials, new RegExp(`^${base}/${report.id}/signoff/complete$`))
    expect(await message(page)).toContain(`you signed in again as ${sam.email}, not as ${rita.email}`)
    expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('in_review')
    const [refused] = await events(report.id, 'report.signoff_refused')
    expect(refused).toMatchObject({ actor: { id: rita.user.id }, outcome: 'denied' })
    // The browser is still Rita's, and Rita can sign after all.
    await page.goto(`${base}/${report.id}/signoff/`)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await signInAtProvider(page, ritaCredentials, /\/signoff\/signed$/)
    expect((await api('GET', `/reports/${report.id}`)).body.signatures[0].signer.id).toBe(rita.user.id)
  })

  it("refuses a completion arriving in another user's session", async () => {
    const { report } = await reportInReview()
    // Rita posts the form and is sent to the provider…
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await page.waitForURL((u) => u.href.startsWith(stack.provider.issuer))
    // …and the completion address is opened in Sam's browser.
    const { context, page: samPage } = await offline()
    try {
      await openSignoff(samPage, report.id, samCredentials)
      const res = await samPage.goto(`${base}/${report.id}/signoff/complete`)
      expect(res?.status()).toBe(403)
      expect(await message(samPage)).toContain('this sign-off was started by another user')
      expect((await api('GET', `/reports/${report.id}`)).body.status).toBe('in_review')
    } finally {
      await context.close()
    }
  })

  it('refuses a post with a Bearer token instead of the session, and a post from another origin', async () => {
    const { report } = await reportInReview()
    const { page } = rita1
    await page.goto(`${base}/${report.id}/signoff/`)
    const token = await page.locator('input[name=csrf_token]').getAttribute('value')
    const snapshot = await page.locator('input[name=snapshot_id]').getAttribute('value')
    const cookie = (await page.context().cookies(base)).find((c) => c.name === 'platform_session')!
    const form = new URLSearchParams({ csrf_token: token!, snapshot_id: snapshot!, meaning: 'approved', confirm: 'yes' }).toString()
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/${report.id}/signoff/`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: form,
      })

    const bearer = await post({ authorization: `Bearer ${rita.token}`, origin: base })
    expect(bearer.status).toBe(403)
    expect(await bearer.text()).toContain('a request with a Bearer token cannot sign it')
    const foreign = await post({ cookie: `platform_session=${cookie.value}`, origin: 'http://evil.example' })
    expect(foreign.status).toBe(403)
    expect(await foreign.text()).toContain('cross-origin request')
    const noOrigin = await post({ cookie: `platform_session=${cookie.value}` })
    expect(noOrigin.status).toBe(403)
    const denied = await events(report.id, 'access.denied')
    expect(denied).toHaveLength(3)
    // The page's own form still works: none of these spent its token.
    const ok = await post({ cookie: `platform_session=${cookie.value}`, origin: base })
    expect(ok.status).toBe(303)
    expect(new URL(ok.headers.get('location')!).searchParams.get('prompt')).toBe('login')
  })

  it('sends a browser without a session to the login, and a page of a report it cannot see is a 404', async () => {
    const { report } = await reportInReview()
    const res = await fetch(`${base}/${report.id}/signoff/`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const login = new URL(res.headers.get('location')!)
    expect(login.href.startsWith(`${stack.adminUrl}/api/v1/auth/login`)).toBe(true)
    expect(login.searchParams.get('return_to')).toBe(`${base}/${report.id}/signoff/`)
    const { page } = rita1
    const other = await page.goto(`${base}/00000000-0000-4000-8000-000000000000/print`)
    expect(other?.status()).toBe(404)
  })
})
