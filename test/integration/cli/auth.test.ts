import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SettingsStore } from '../../../cli/settings.js'
import { REFRESH_REFUSED } from '../../../domain/identity/cli-logins.js'
import { sha256 } from '../../../lib/ids.js'
import { configHome, parseJson, runMain, startCliOnTerminal, startPlatform } from '../../support/cli.js'
import { startLoginStack } from '../../support/oidc.js'

describe('platform login, whoami, logout and profiles', async () => {
  const platform = await startPlatform({ login: true })
  const { world } = platform
  const user = platform.login!.user
  afterAll(() => platform.stop())

  it('logs in with a personal access token from stdin and shows the user with whoami', async () => {
    const home = await configHome(platform)
    const login = await runMain(['login', '--token-stdin'], { configDir: home, input: `${world.owner.token}\n` })
    expect(login.stderr).toBe('')
    expect(login.code).toBe(0)
    expect(login.stdout).toContain(world.owner.user.email!)

    const who = await runMain(['whoami'], { configDir: home })
    expect(who.code).toBe(0)
    expect(who.stdout).toMatch(new RegExp(`email\\s+${world.owner.user.email}`))
    expect(who.stdout).toMatch(/auth method\s+personal_token/)
    expect(who.stdout).toMatch(/organization roles\s+org_owner \(Test Lab\)/)
  })

  it('keeps the credentials in a file only its owner can read', async () => {
    const home = await configHome(platform)
    await runMain(['login', '--token', world.owner.token], { configDir: home })
    const file = join(home, 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.local).toMatchObject({ method: 'personal_token', access_token: world.owner.token })
  })

  it('refuses an unknown token at login and stores nothing', async () => {
    const home = await configHome(platform)
    const login = await runMain(['login', '--token', 'plat_pat_not-a-real-token'], { configDir: home })
    expect(login.code).toBe(4)
    expect(login.stderr).toMatch(/the token was refused/)
    expect(new SettingsStore(home).credentials('local')).toBeUndefined()
  })

  it('says "not logged in or token expired: run platform login" when the stored token is no longer valid', async () => {
    const home = await configHome(platform)
    new SettingsStore(home).saveCredentials('local', {
      method: 'personal_token',
      access_token: 'plat_pat_revoked-or-made-up',
      saved_at: new Date().toISOString(),
    })
    const who = await runMain(['whoami'], { configDir: home })
    expect(who.code).toBe(4)
    expect(who.stderr.trim()).toBe('platform: not logged in or token expired: run platform login')
  })

  it('says the same without any stored credentials, before calling a service', async () => {
    const home = await configHome({ adminUrl: 'http://127.0.0.1:9', computeUrl: 'http://127.0.0.1:9' })
    const who = await runMain(['whoami'], { configDir: home })
    expect(who.code).toBe(4)
    expect(who.stderr).toContain('not logged in or token expired: run platform login')
  })

  it('names the service, its address and the local suite when a service cannot be reached', async () => {
    const home = await configHome({ adminUrl: platform.adminUrl, computeUrl: 'http://127.0.0.1:9' })
    await runMain(['login', '--token', world.owner.token], { configDir: home })
    const list = await runMain(['pipelines', 'list', '--project', world.project.id], { configDir: home })
    expect(list.code).toBe(8)
    expect(list.stderr).toContain('cannot reach the compute service at http://127.0.0.1:9: is the local suite running? (npm start)')
  })

  it("logs in with e-mail and password from stdin, keeps the platform's pair, and it works", async () => {
    const home = await configHome(platform)
    const login = await runMain(['login', '--email', user.email, '--password-stdin', '--json'], { configDir: home, input: user.password })
    expect(login.code).toBe(0)
    expect(parseJson(login)).toMatchObject({ profile: 'local', method: 'password', user: { email: user.email, auth_method: 'cli_token' } })
    const stored = new SettingsStore(home).credentials('local')!
    expect(stored).toMatchObject({
      method: 'password',
      email: user.email,
      access_token: expect.stringMatching(/^plat_cli_/),
      refresh_token: expect.stringMatching(/^plat_clr_/),
    })
    expect(Date.parse(stored.expires_at!)).toBeGreaterThan(Date.now() + 3000 * 1000)

    const who = await runMain(['whoami', '--json'], { configDir: home })
    expect(parseJson(who)).toMatchObject({ email: user.email, auth_method: 'cli_token' })
  })

  it('refuses a wrong password with the service detail and exit code 4', async () => {
    const home = await configHome(platform)
    const login = await runMain(['login', '--email', user.email, '--password-stdin'], { configDir: home, input: 'not-the-password' })
    expect(login.code).toBe(4)
    expect(login.stderr).toContain('login refused: wrong e-mail or password')
  })

  it('asks for the e-mail and then the password on a real terminal where the provider offers no browser login, without echoing the password (the binary under script)', async () => {
    const passwordOnly = await startLoginStack({}, { deviceFlow: false })
    try {
      const { user } = passwordOnly
      const home = await configHome({ adminUrl: passwordOnly.adminUrl, computeUrl: platform.computeUrl })
      const cli = startCliOnTerminal(['login'], { configDir: home })
      await cli.waitFor('E-mail: ')
      cli.type(`${user.email}\r`)
      await cli.waitFor('Password: ')
      cli.type(`${user.password}\r`)
      const done = await cli.exited
      expect(done.code).toBe(0)
      expect(done.stdout).toMatch(/method\s+e-mail and password/)
      expect(done.stdout).not.toContain(user.password)
      expect(new SettingsStore(home).credentials('local')?.email).toBe(user.email)
    } finally {
      await passwordOnly.stop()
    }
  })

  describe('Ctrl-C at a prompt ends the login with exit code 130 and stores nothing (the binary on a terminal, under script)', () => {
    it('at the password prompt', async () => {
      const home = await configHome(platform)
      const cli = startCliOnTerminal(['login', '--email', user.email], { configDir: home })
      await cli.waitFor('Password: ')
      cli.type('half-typed\x03')
      const done = await cli.exited
      expect(done.code, done.stdout).toBe(130)
      expect(done.stdout).toContain('platform: interrupted')
      expect(done.stdout).not.toContain('half-typed')
      expect(new SettingsStore(home).credentials('local')).toBeUndefined()
    })

    it('at the e-mail prompt', async () => {
      const passwordOnly = await startLoginStack({}, { deviceFlow: false })
      try {
        const home = await configHome({ adminUrl: passwordOnly.adminUrl, computeUrl: platform.computeUrl })
        const cli = startCliOnTerminal(['login'], { configDir: home })
        await cli.waitFor('E-mail: ')
        cli.type('\x03')
        const done = await cli.exited
        expect(done.code, done.stdout).toBe(130)
        expect(done.stdout).toContain('platform: interrupted')
        expect(new SettingsStore(home).credentials('local')).toBeUndefined()
      } finally {
        await passwordOnly.stop()
      }
    })
  })

  it('ends a prompt whose input ends (Ctrl-D) with exit code 3: no answer', async () => {
    const home = await configHome(platform)
    const cli = startCliOnTerminal(['login', '--email', user.email], { configDir: home })
    await cli.waitFor('Password: ')
    cli.type('\x04')
    const done = await cli.exited
    expect(done.code, done.stdout).toBe(3)
    expect(done.stdout).toContain('platform: no answer (end of input)')
  })

  it('refuses a password login without --password-stdin when stdin is not a terminal', async () => {
    const home = await configHome(platform)
    const login = await runMain(['login', '--email', user.email], { configDir: home })
    expect(login.code).toBe(3)
    expect(login.stderr).toContain('--password-stdin')
  })

  it('refreshes an expired access credential with the refresh credential and keeps the new pair', async () => {
    const home = await configHome(platform)
    await runMain(['login', '--email', user.email, '--password-stdin'], { configDir: home, input: user.password })
    const settings = new SettingsStore(home)
    const before = settings.credentials('local')!
    settings.saveCredentials('local', { ...before, expires_at: new Date(Date.now() - 1000).toISOString() })

    const who = await runMain(['whoami', '--json'], { configDir: home })
    expect(who.code).toBe(0)
    expect(parseJson(who).email).toBe(user.email)
    const after = settings.credentials('local')!
    expect(after.access_token).not.toBe(before.access_token)
    expect(after.refresh_token).not.toBe(before.refresh_token)
    expect(Date.parse(after.expires_at!)).toBeGreaterThan(Date.now())
  })

  it('refreshes once when several commands find the access credential expired at the same time, so the login is not taken for stolen', async () => {
    const home = await configHome(platform)
    await runMain(['login', '--email', user.email, '--password-stdin'], { configDir: home, input: user.password })
    const settings = new SettingsStore(home)
    const before = settings.credentials('local')!
    settings.saveCredentials('local', { ...before, expires_at: new Date(Date.now() - 1000).toISOString() })

    // whoami itself sends two requests at once; four of them, eight requests that all find the credential expired.
    const runs = await Promise.all([1, 2, 3, 4].map(() => runMain(['whoami', '--json'], { configDir: home })))
    expect(runs.map((r) => [r.code, r.stderr])).toEqual(runs.map(() => [0, '']))
    const after = settings.credentials('local')!
    const refreshed = await runMain(['whoami'], { configDir: home })
    expect(refreshed.code).toBe(0)
    const stored = await world.deps.db.col('cli_refresh_tokens').doc(sha256(after.refresh_token!)).get()
    const login = await world.deps.db.col('cli_logins').doc(stored.get('login_id')).get()
    expect(login.get('revoked_at')).toBeUndefined()
    expect(login.get('refreshes')).toBe(1)
  })

  it('says the login has ended, and why, when the refresh credential is refused: a refresh token of the identity provider kept by an earlier CLI', async () => {
    const home = await configHome(platform)
    new SettingsStore(home).saveCredentials('local', {
      method: 'password',
      access_token: 'expired.jwt.token',
      refresh_token: 'a-refresh-token-of-the-identity-provider',
      expires_at: new Date(Date.now() - 1000).toISOString(),
      saved_at: new Date().toISOString(),
    })
    const who = await runMain(['whoami'], { configDir: home })
    expect(who.code).toBe(4)
    expect(who.stderr.trim()).toBe(`platform: the login has ended: ${REFRESH_REFUSED.notOurs}`)
  })

  it('logs out: the login is ended at the platform (a copy of its credentials is refused too), the credentials are gone and whoami asks for a login', async () => {
    const home = await configHome(platform)
    await runMain(['login', '--email', user.email, '--password-stdin'], { configDir: home, input: user.password })
    const copy = new SettingsStore(home).credentials('local')!
    const out = await runMain(['logout', '--json'], { configDir: home })
    expect(out.code).toBe(0)
    expect(parseJson(out)).toEqual({ profile: 'local', logged_out: true, login_ended: true })
    expect((await runMain(['whoami'], { configDir: home })).code).toBe(4)
    const elsewhere = await configHome(platform)
    new SettingsStore(elsewhere).saveCredentials('local', copy)
    const stolen = await runMain(['whoami'], { configDir: elsewhere })
    expect(stolen.code).toBe(4)
  })

  it('logs out of a personal access token: the credentials are gone and whoami asks for a login', async () => {
    const home = await configHome(platform)
    await runMain(['login', '--token', world.owner.token], { configDir: home })
    const out = await runMain(['logout'], { configDir: home })
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('Logged out of profile local.')
    expect((await runMain(['whoami'], { configDir: home })).code).toBe(4)
  })

  it('says PLATFORM_TOKEN is invalid, not "run platform login", when the token in the environment is refused', async () => {
    const home = await configHome(platform)
    // Stored credentials that work: PLATFORM_TOKEN is used instead of them, so a new login would not help.
    await runMain(['login', '--token', world.owner.token], { configDir: home })
    const who = await runMain(['whoami'], { configDir: home, env: { PLATFORM_TOKEN: 'plat_pat_revoked-or-made-up' } })
    expect(who.code).toBe(4)
    expect(who.stderr).toMatch(/^platform: PLATFORM_TOKEN is invalid or expired \(.+\): set it to a valid personal access token, or unset it/)
    expect(who.stderr).not.toContain('run platform login')
  })

  it('uses PLATFORM_TOKEN instead of stored credentials, and lists the project roles', async () => {
    const home = await configHome(platform)
    const analyst = await world.caller(['analyst'])
    const who = await runMain(['whoami'], { configDir: home, env: { PLATFORM_TOKEN: analyst.token } })
    expect(who.code).toBe(0)
    expect(who.stdout).toContain(analyst.user.email)
    expect(who.stdout).toMatch(new RegExp(`${world.project.id}\\s+germline \\(Test Lab\\)\\s+analyst`))
  })

  it('keeps credentials and addresses per profile, chosen by --profile or PLATFORM_PROFILE', async () => {
    const home = await configHome()
    const set = await runMain(['config', 'set', 'admin_url', `${platform.adminUrl}/api/v1/`, '--profile', 'staging'], { configDir: home })
    expect(set.code).toBe(0)
    expect(set.stdout.trim()).toBe(`staging: admin_url = ${platform.adminUrl}`)

    const analyst = await world.caller(['analyst'])
    expect((await runMain(['login', '--token', analyst.token, '--profile', 'staging'], { configDir: home })).code).toBe(0)

    const staging = await runMain(['whoami', '--json'], { configDir: home, env: { PLATFORM_PROFILE: 'staging' } })
    expect(parseJson(staging).email).toBe(analyst.user.email)
    const local = await runMain(['whoami'], { configDir: home })
    expect(local.code).toBe(4)

    const list = parseJson(await runMain(['config', 'list', '--json'], { configDir: home }))
    expect(list.profiles).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'local', url: 'http://127.0.0.1:8101', logged_in: null }),
        expect.objectContaining({ name: 'staging', admin_url: platform.adminUrl, logged_in: analyst.user.email }),
        expect.objectContaining({ name: 'production', logged_in: null }),
      ]),
    )
  })

  it('tells how to configure a profile that has no address yet', async () => {
    const home = await configHome()
    const login = await runMain(['login', '--token', world.owner.token, '--profile', 'production'], { configDir: home })
    expect(login.code).toBe(3)
    expect(login.stderr).toContain("profile 'production' has no address: set it with platform config set url <admin address> --profile production")
  })
})
