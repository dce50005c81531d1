import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { SettingsStore } from '../../../cli/settings.js'
import { launchChromium, SCREENSHOTS } from '../../support/browser.js'
import { configHome, parseJson, runCli, startCli, startPlatform, type RunningCli } from '../../support/cli.js'
import { startLoginStack } from '../../support/oidc.js'

/** What `platform login` tells the person: the address to open and the code it must show. */
async function instructions(cli: RunningCli): Promise<{ url: string; code: string }> {
  await cli.waitFor('Waiting for the sign-in')
  const url = /Open (http:\/\/\S+)/.exec(cli.stderr())?.[1]
  const code = /shows the code (\S+),/.exec(cli.stderr())?.[1]
  if (!url || !code) throw new Error(`no address or code in:\n${cli.stderr()}`)
  return { url, code }
}

/** The person at the identity provider: the page with the code filled in, which shows the code to confirm. */
async function openConfirmation(browser: Browser, url: string, code: string): Promise<Page> {
  const page = await browser.newPage()
  await page.goto(url)
  await page.getByRole('heading', { name: 'Confirm the device' }).waitFor()
  expect(await page.locator('.code').textContent()).toBe(code)
  return page
}

describe('platform login in a browser: the device authorization grant at the local identity provider, in Chromium', async () => {
  const platform = await startPlatform({ login: true })
  const user = platform.login!.user
  const chromium = await launchChromium()
  afterAll(async () => {
    await chromium.close()
    await platform.stop()
  })

  it('waits while the person signs in in a browser and confirms the code, then keeps the credentials, and whoami works (the binary, no flags)', async () => {
    const home = await configHome(platform)
    // stdin is a pipe and stdout is not a terminal: as over SSH or in a container, nothing needs a browser here.
    const cli = startCli(['login'], { configDir: home, timeoutMs: 60_000 })
    const { url, code } = await instructions(cli)
    expect(url).toBe(`${platform.login!.provider.issuer}/device?user_code=${code}`)

    const page = await openConfirmation(chromium, url, code)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByLabel('E-mail').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Signed in' }).waitFor()
    await page.screenshot({ path: join(SCREENSHOTS, 'cli-browser-login-signed-in.png') })
    await page.close()

    const done = await cli.exited
    expect(done.stderr).not.toContain('platform:')
    expect(done.code).toBe(0)
    expect(done.stdout).toMatch(new RegExp(`logged in as\\s+${user.email}`))
    expect(done.stdout).toMatch(/method\s+browser \(device authorization\)/)
    const stored = new SettingsStore(home).credentials('local')!
    expect(stored).toMatchObject({
      method: 'browser',
      email: user.email,
      access_token: expect.stringMatching(/^plat_cli_/),
      refresh_token: expect.stringMatching(/^plat_clr_/),
    })
    expect(Date.parse(stored.expires_at!)).toBeGreaterThan(Date.now() + 3000 * 1000)

    const who = await runCli(['whoami', '--json'], { configDir: home })
    expect(who.code).toBe(0)
    expect(parseJson(who)).toMatchObject({ email: user.email, auth_method: 'cli_token' })
  })

  it('refreshes the access token of a browser login when it has expired', async () => {
    const home = await configHome(platform)
    const cli = startCli(['login', '--browser'], { configDir: home, timeoutMs: 60_000 })
    const { url, code } = await instructions(cli)
    const page = await openConfirmation(chromium, url, code)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByLabel('E-mail').fill(user.email)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Signed in' }).waitFor()
    await page.close()
    expect((await cli.exited).code).toBe(0)

    const settings = new SettingsStore(home)
    const before = settings.credentials('local')!
    settings.saveCredentials('local', { ...before, expires_at: new Date(Date.now() - 1000).toISOString() })
    const who = await runCli(['whoami', '--json'], { configDir: home })
    expect(parseJson(who).email).toBe(user.email)
    expect(settings.credentials('local')!.access_token).not.toBe(before.access_token)
  })

  it('ends with exit code 4 and keeps nothing when the person cancels in the browser', async () => {
    const home = await configHome(platform)
    const cli = startCli(['login', '--browser'], { configDir: home, timeoutMs: 60_000 })
    const { url, code } = await instructions(cli)
    const page = await openConfirmation(chromium, url, code)
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.getByText('The sign-in was cancelled.').waitFor()
    await page.close()

    const done = await cli.exited
    expect(done.code).toBe(4)
    expect(done.stderr).toContain('platform: login refused: access_denied: the sign-in was refused or cancelled at the identity provider')
    expect(new SettingsStore(home).credentials('local')).toBeUndefined()
  })

  it('stops waiting on Ctrl-C with exit code 130, keeping nothing', async () => {
    const home = await configHome(platform)
    const cli = startCli(['login', '--browser'], { configDir: home })
    await instructions(cli)
    cli.child.kill('SIGINT')
    const done = await cli.exited
    expect(done.code).toBe(130)
    expect(done.stderr).toContain('platform: login stopped: nothing was stored')
    expect(new SettingsStore(home).credentials('local')).toBeUndefined()
  })

  it("logs in at a provider that answers as Google (a client with a secret, opaque access tokens, verification_url): the person types the code, and the platform's pair works and refreshes", async () => {
    const google = await startLoginStack({}, { cliClient: 'google' })
    try {
      const home = await configHome({ adminUrl: google.adminUrl, computeUrl: platform.computeUrl })
      const cli = startCli(['login'], { configDir: home, timeoutMs: 60_000 })
      await cli.waitFor('Waiting for the sign-in')
      const url = /Open (http:\/\/\S+)/.exec(cli.stderr())?.[1]
      const code = /Enter the code (\S+),/.exec(cli.stderr())?.[1]
      expect(url).toBe(`${google.provider.issuer}/device`)
      expect(code).toEqual(expect.any(String))

      const page = await chromium.newPage()
      await page.goto(url!)
      await page.getByLabel('Code').fill(code!)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByRole('heading', { name: 'Confirm the device' }).waitFor()
      expect(await page.locator('.code').textContent()).toBe(code)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByLabel('E-mail').fill(google.user.email)
      await page.getByLabel('Password').fill(google.user.password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Signed in' }).waitFor()
      await page.close()

      const done = await cli.exited
      expect(done.stderr).not.toContain('platform:')
      expect(done.code).toBe(0)
      const settings = new SettingsStore(home)
      const stored = settings.credentials('local')!
      expect(stored).toMatchObject({ method: 'browser', email: google.user.email, access_token: expect.stringMatching(/^plat_cli_/) })

      settings.saveCredentials('local', { ...stored, expires_at: new Date(Date.now() - 1000).toISOString() })
      const who = await runCli(['whoami', '--json'], { configDir: home })
      expect(who.code).toBe(0)
      expect(parseJson(who)).toMatchObject({ email: google.user.email, auth_method: 'cli_token' })
      expect(settings.credentials('local')!.refresh_token).not.toBe(stored.refresh_token)
    } finally {
      await google.stop()
    }
  })

  it('says to log in in a browser, exit code 7, when the provider does not allow the password login (a public CLI client, as at Entra ID)', async () => {
    const entraLike = await startLoginStack({}, { cliClient: 'public' })
    try {
      const home = await configHome({ adminUrl: entraLike.adminUrl, computeUrl: platform.computeUrl })
      const done = await runCli(['login', '--email', entraLike.user.email, '--password-stdin'], { configDir: home, input: entraLike.user.password })
      expect(done.code).toBe(7)
      expect(done.stderr.trim()).toBe(
        'platform: the identity provider does not allow e-mail and password login here (unauthorized_client): log in in a browser instead (platform login --browser)',
      )
      expect(new SettingsStore(home).credentials('local')).toBeUndefined()
    } finally {
      await entraLike.stop()
    }
  })
})
