import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { launchChromium } from '../../support/browser.js'
import { configHome, removeConfigHomes, runMain } from '../../support/cli.js'
import { checkPage, signedInPage, startConsoleWorld, type Person } from '../../support/console.js'
import { Browser as CookieJar, browserLogin } from '../../support/oidc.js'

/**
 * The admin console against real servers (the admin service with the local OIDC provider, the
 * compute service beside it). In headless Chromium: a project admin signs in, makes a CLI token
 * in Account, logs the CLI in with it, adds a project member, and revokes the token (with and
 * without JavaScript); every page is checked with axe-core and screenshotted. Without a browser:
 * the forms' CSRF and Origin refusals, the no-escalation rules, and tenancy.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await removeConfigHomes()
})

describe('the admin console', async () => {
  const world = await startConsoleWorld({ services: ['compute'], others: ['Bea Viewer', 'Olga Other'] })
  afterAll(() => world.stop())
  const { world: tenant } = world
  const admin = world.urls.admin!
  const [beaAtProvider, olgaAtProvider] = world.others as [Person, Person]
  // Ann administers the world's project; Bea only views it; Olga administers an organization of her own.
  const ann = await world.member(world.user, ['admin'])
  const bea = await world.member(beaAtProvider, ['viewer'])
  const olga = await world.member(olgaAtProvider, [])
  const other = await tenant.otherProject()
  await tenant.deps.store.setOrgRole(SYSTEM_ACTOR, other.org.id, olga.user, 'org_admin')
  await tenant.deps.store.setOrgRole(SYSTEM_ACTOR, tenant.org.id, ann.user, 'org_admin')

  const events = async (action: string) =>
    (await tenant.deps.db.col('audit_events').where('action', '==', action).get()).docs.map(
      (d) => d.data() as { actor: { id: string }; change?: { reason?: string } },
    )

  describe('in a browser', () => {
    it(
      'makes a CLI token shown once, which logs the CLI in; adds a project member; revokes the token, which logs the CLI out',
      { timeout: 90_000 },
      async () => {
        const { context, page } = await signedInPage(browser, ann, `${admin}/console/account`)
        try {
          expect(await page.locator('h1').innerText()).toBe('Account')
          expect(await page.locator('#me').innerText()).toContain(ann.email)
          expect(await page.locator('#project-roles').innerText()).toContain('admin')
          await checkPage(page, 'account')

          await page.click('#cli-tokens')
          expect(await page.locator('h1').innerText()).toBe('CLI tokens')
          await checkPage(page, 'tokens')
          await page.fill('#f-name', 'laptop CLI')
          await page.fill('#f-expires_in_days', '30')
          await page.click('#create-token button[type=submit]')
          const value = (await page.locator('#token-value').innerText()).trim()
          expect(value).toMatch(/^plat_pat_/)
          expect(await page.locator('#new-token').innerText()).toContain('shown this once')
          await checkPage(page, 'token-created')
          // Shown once: the list, opened again, has its hint only.
          await page.goto(`${admin}/console/tokens`)
          expect(await page.content()).not.toContain(value)
          expect(await page.locator('#tokens').innerText()).toContain('laptop CLI')

          // The CLI, against the same world, with the token from the page.
          const home = await configHome({ adminUrl: admin, computeUrl: world.urls.compute! })
          const login = await runMain(['login', '--token-stdin'], { configDir: home, input: `${value}\n` })
          expect(login.code, login.stderr).toBe(0)
          const who = await runMain(['whoami'], { configDir: home })
          expect(who.code, who.stderr).toBe(0)
          expect(who.stdout).toMatch(new RegExp(`email\\s+${ann.email}`))

          // A project member, added on the project's members page.
          await page.goto(`${admin}/console/p/${tenant.project.id}/members`)
          expect(await page.locator('#current-project').innerText()).toContain('Germline')
          await checkPage(page, 'members')
          await page.fill('#f-email', 'new.analyst@example.org')
          await page.uncheck('#add-roles input[value=viewer]')
          await page.check('#add-roles input[value=analyst]')
          await page.click('#add-member button[type=submit]')
          expect(await page.locator('#notice').innerText()).toContain('new.analyst@example.org now has the roles analyst')
          expect(await page.locator('#members').innerText()).toContain('new.analyst@example.org')

          // Revoked after the dialog console.js opens.
          await page.goto(`${admin}/console/tokens`)
          page.once('dialog', (dialog) => void dialog.accept())
          await page.click('#tokens button.danger')
          expect(await page.locator('#notice').innerText()).toBe('The token "laptop CLI" is revoked.')
          expect(await page.locator('#tokens').innerText()).toContain('revoked')
          await checkPage(page, 'token-revoked')
          const after = await runMain(['whoami'], { configDir: home })
          expect(after.code).not.toBe(0)
        } finally {
          await context.close()
        }
      },
    )

    it('asks on a page of its own before revoking, without JavaScript', { timeout: 60_000 }, async () => {
      const { context, page } = await signedInPage(browser, ann, `${admin}/console/tokens`, { javaScript: false })
      try {
        await page.fill('#f-name', 'CI')
        await page.click('#create-token button[type=submit]')
        await page.goto(`${admin}/console/tokens`)
        await page.click('#tokens tr:has-text("CI") button.danger')
        expect(await page.locator('#question').innerText()).toContain('Revoke the token "CI"')
        await checkPage(page, 'confirm-revoke')
        await page.click('#confirm')
        expect(await page.locator('#notice').innerText()).toBe('The token "CI" is revoked.')
      } finally {
        await context.close()
      }
    })

    it('shows an organization with its projects, members and service users, and a key shown once', { timeout: 60_000 }, async () => {
      const { context, page } = await signedInPage(browser, ann, `${admin}/console/orgs`)
      try {
        await checkPage(page, 'orgs')
        await page.click(`a[href$="/console/orgs/${tenant.org.id}"]`)
        await checkPage(page, 'org')
        await page.fill('#create-service-user #f-name', 'pipeline-runner')
        await page.click('#create-service-user button[type=submit]')
        expect(await page.locator('#notice').innerText()).toContain('pipeline-runner is created')
        await page.click('#create-key')
        expect(await page.locator('#private-key').inputValue()).toContain('BEGIN PRIVATE KEY')
        const download = page.waitForEvent('download')
        await page.click('#download-key')
        const file = await download
        expect(file.suggestedFilename()).toMatch(/^service-key-.*\.json$/)
        await checkPage(page, 'service-user')
        await page.goto(`${admin}/console/p/${tenant.project.id}/credentials`)
        expect(await page.locator('#credentials').innerText()).toContain('runner@test-project.iam.gserviceaccount.com')
        await checkPage(page, 'credentials')
        await page.goto(`${admin}/console/projects`)
        await checkPage(page, 'projects')
      } finally {
        await context.close()
      }
    })

    it(
      "styles the local provider's sign-in like the console, and its re-authentication names the person and what it confirms",
      { timeout: 60_000 },
      async () => {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
        try {
          const first = await context.newPage()
          await first.goto(`${admin}/console/account`)
          expect(first.url().startsWith(world.provider.issuer)).toBe(true)
          expect(await first.locator('h1').innerText()).toBe('Sign in')
          expect(await first.locator('#email').getAttribute('readonly')).toBeNull()
          await checkPage(first, 'provider-sign-in')
        } finally {
          await context.close()
        }
        const { context: signed, page } = await signedInPage(browser, ann, `${admin}/console/account`)
        try {
          const purpose = 'Sign report ORD-7 revision 1: approved'
          const back = `${admin}/console/account`
          await page.goto(`${admin}/api/v1/auth/login?${new URLSearchParams({ return_to: back, prompt: 'login', max_age: '0', purpose })}`)
          expect(await page.locator('h1').innerText()).toBe('Confirm it is you')
          expect(await page.locator('#purpose').innerText()).toBe(`Sign in again to confirm: ${purpose}`)
          expect(await page.locator('#email').inputValue()).toBe(ann.email)
          expect(await page.locator('#email').getAttribute('readonly')).not.toBeNull()
          await checkPage(page, 'provider-reauthentication')
          await page.fill('#password', ann.password)
          await page.click('button[type=submit]')
          await page.waitForURL(back)
        } finally {
          await signed.close()
        }
      },
    )

    it('tells a viewer which role a page needs', { timeout: 60_000 }, async () => {
      // The project by its slug, as well as by its id.
      const { context, page } = await signedInPage(browser, bea, `${admin}/console/p/${tenant.project.slug}/members`)
      try {
        expect(await page.locator('#members').innerText()).toContain(ann.email)
        expect(await page.locator('#add-member').count()).toBe(0)
        const answer = await page.goto(`${admin}/console/p/${tenant.project.id}/credentials`)
        expect(answer?.status()).toBe(403)
        expect(await page.locator('#error').innerText()).toBe(
          'This page needs the role admin, owner or pipeline in the project Germline (permission credentials.read).',
        )
        await checkPage(page, 'forbidden')
      } finally {
        await context.close()
      }
    })
  })

  describe('forms', async () => {
    /** A signed-in cookie jar for `who`, and the CSRF token of its session (read from a page's form). */
    async function signedIn(who: Person) {
      const jar = new CookieJar()
      await browserLogin(jar, admin, who)
      const page = await (await jar.request(`${admin}/console/tokens`)).text()
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1]
      expect(csrf).toBeTruthy()
      const post = (path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = { origin: new URL(admin).origin }) => {
        const body = new URLSearchParams()
        for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one)
        return jar.request(`${admin}/console${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body,
        })
      }
      return { jar, csrf: csrf!, post }
    }
    const ana = await signedIn(ann)
    const tokensOf = async (userId: string) => (await tenant.deps.tokens.listPersonal(userId)).length

    it('sends a visitor without a session to the platform login, and back', async () => {
      const res = await fetch(`${admin}/console/tokens?x=1`, { redirect: 'manual' })
      expect(res.status).toBe(302)
      const login = new URL(res.headers.get('location')!)
      expect(login.pathname).toBe('/api/v1/auth/login')
      expect(login.searchParams.get('return_to')).toBe(`${admin}/console/tokens?x=1`)
    })

    it('refuses a form without its session token, from another origin, with no origin, or with a Bearer token; each an access.denied event', async () => {
      const before = await tokensOf(ann.user.id)
      const annDenied = async () => (await events('access.denied')).filter((e) => e.actor.id === ann.user.id).length
      const deniedBefore = await annDenied()
      const cases: Array<[Record<string, string>, Record<string, string> | undefined, string]> = [
        [{ name: 'x', expires_in_days: '1' }, undefined, "The form's security token is missing"],
        [{ name: 'x', expires_in_days: '1', csrf_token: 'forged' }, undefined, "The form's security token is missing or not this session's"],
        [{ name: 'x', expires_in_days: '1', csrf_token: ana.csrf }, { origin: 'https://evil.example' }, 'cross-origin'],
        [{ name: 'x', expires_in_days: '1', csrf_token: ana.csrf }, {}, 'cross-origin'],
        [
          { name: 'x', expires_in_days: '1', csrf_token: ana.csrf },
          { origin: new URL(admin).origin, authorization: `Bearer ${ann.token}` },
          'use the API with a token',
        ],
      ]
      for (const [fields, headers, words] of cases) {
        const res = await ana.post('/tokens', fields, headers)
        expect(res.status).toBe(403)
        expect(await res.text()).toContain(words.replaceAll("'", '&#39;'))
      }
      expect(await tokensOf(ann.user.id)).toBe(before)
      // Each names the person whose session the form came with.
      expect(await annDenied()).toBe(deniedBefore + cases.length)
    })

    it("does not take another session's token", async () => {
      const beaSession = await signedIn(bea)
      const res = await beaSession.post('/tokens', { name: 'x', expires_in_days: '1', csrf_token: ana.csrf })
      expect(res.status).toBe(403)
    })

    it('refuses a form without a session with a page that says to sign in', async () => {
      const res = await fetch(`${admin}/console/tokens`, {
        method: 'POST',
        headers: { origin: new URL(admin).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      })
      expect(res.status).toBe(401)
      expect(await res.text()).toContain('Sign in first')
    })

    it('shows a bad field next to it, with 400', async () => {
      const res = await ana.post('/tokens', { name: '', expires_in_days: '400', csrf_token: ana.csrf })
      expect(res.status).toBe(400)
      expect(await res.text()).toContain('id="f-name-error"')
    })

    it('never lets an admin grant above their own role, or change their own roles', async () => {
      const target = await tenant.deps.store.ensureUser('someone.new@example.org')
      const owner = await ana.post(`/p/${tenant.project.id}/members`, { email: target.email!, roles: 'owner', csrf_token: ana.csrf })
      expect(owner.status).toBe(403)
      expect(await owner.text()).toContain('owner')
      const own = await ana.post(`/p/${tenant.project.id}/members/${ann.user.id}`, { roles: ['admin', 'owner'], csrf_token: ana.csrf })
      expect(own.status).toBe(403)
      const members = await tenant.deps.store.listMembers(tenant.project.id)
      expect(members.find((m) => m.user_id === target.id)).toBeUndefined()
      expect(members.find((m) => m.user_id === ann.user.id)?.roles).toEqual(['admin'])
      const denied = (await events('access.denied')).filter((e) => e.actor.id === ann.user.id).map((e) => e.change?.reason ?? '')
      expect(denied.some((r) => r.includes("above the granter's own role"))).toBe(true)
      expect(denied.some((r) => r.includes("one's own roles"))).toBe(true)
      // An org admin cannot make an org owner.
      const ownerOfOrg = await ana.post(`/orgs/${tenant.org.id}/members`, { email: 'boss@example.org', role: 'org_owner', csrf_token: ana.csrf })
      expect(ownerOfOrg.status).toBe(403)
    })

    it("keeps another organization's administrator out of this one, and this one's out of hers", async () => {
      const olgaSession = await signedIn(olga)
      for (const path of [`/orgs/${tenant.org.id}`, `/p/${tenant.project.id}/members`, `/p/${tenant.project.id}/credentials`]) {
        expect((await olgaSession.jar.request(`${admin}/console${path}`)).status).toBe(404)
      }
      const add = await olgaSession.post(`/p/${tenant.project.id}/members`, {
        email: 'spy@example.org',
        roles: 'admin',
        csrf_token: olgaSession.csrf,
      })
      expect(add.status).toBe(404)
      const addOrg = await olgaSession.post(`/orgs/${tenant.org.id}/members`, {
        email: 'spy@example.org',
        role: 'org_admin',
        csrf_token: olgaSession.csrf,
      })
      expect(addOrg.status).toBe(404)
      expect((await tenant.deps.store.listMembers(tenant.project.id)).some((m) => m.user?.email === 'spy@example.org')).toBe(false)
      // Ann administers her organization, not Olga's.
      expect((await ana.jar.request(`${admin}/console/orgs/${other.org.id}`)).status).toBe(404)
      const theirs = await ana.post(`/p/${other.project.id}/members`, { email: 'spy@example.org', roles: 'viewer', csrf_token: ana.csrf })
      expect(theirs.status).toBe(404)
    })
  })
})
