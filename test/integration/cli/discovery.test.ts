import { afterAll, describe, expect, it } from 'vitest'
import { SettingsStore } from '../../../cli/settings.js'
import { configHome, parseJson, runMain, startPlatform } from '../../support/cli.js'

describe("the CLI finds the platform from one address (its admin service's discovery document)", async () => {
  const platform = await startPlatform({ login: true })
  const { world } = platform
  afterAll(() => platform.stop())

  it('keeps the address once the platform answers there, and uses the addresses it names; an override wins', async () => {
    const home = await configHome()
    const set = await runMain(['config', 'set', 'url', `${platform.adminUrl}/api/v1/`, '--profile', 'lab', '--json'], { configDir: home })
    expect(set.code, set.stderr).toBe(0)
    expect(parseJson(set)).toMatchObject({ profile: 'lab', url: platform.adminUrl, services: { admin: platform.adminUrl } })
    expect((await runMain(['config', 'get', 'admin_url', '--profile', 'lab'], { configDir: home })).stdout.trim()).toBe(platform.adminUrl)

    // This platform names no compute service: the CLI says which setting gives one.
    const missing = await runMain(['config', 'get', 'compute_url', '--profile', 'lab'], { configDir: home })
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain(
      `the platform at ${platform.adminUrl} names no address for the compute service: set one with platform config set compute_url <url> --profile lab`,
    )
    expect((await runMain(['config', 'set', 'compute_url', platform.computeUrl, '--profile', 'lab'], { configDir: home })).code).toBe(0)
    expect((await runMain(['login', '--token', world.owner.token, '--profile', 'lab'], { configDir: home })).code).toBe(0)
    const runs = await runMain(['runs', 'list', '--profile', 'lab', '--project', world.project.id], { configDir: home })
    expect(runs.code, runs.stderr).toBe(0)
  })

  it('logs in from one address with login --url, a new profile made from it', async () => {
    const home = await configHome()
    const login = await runMain(['login', '--url', platform.adminUrl, '--token', world.owner.token, '--profile', 'fresh', '--json'], {
      configDir: home,
    })
    expect(login.code, login.stderr).toBe(0)
    expect(parseJson(login)).toMatchObject({ profile: 'fresh', admin_url: platform.adminUrl })
    expect(new SettingsStore(home).stored('fresh')).toEqual({ url: platform.adminUrl })
  })

  it('refuses an address that is not a platform, and keeps the one the profile had', async () => {
    const home = await configHome()
    expect((await runMain(['config', 'set', 'url', platform.adminUrl, '--profile', 'lab'], { configDir: home })).code).toBe(0)
    // A service of the platform, but not its admin service: no public /service-info there (its authentication answers first).
    const wrong = await runMain(['config', 'set', 'url', platform.computeUrl, '--profile', 'lab'], { configDir: home })
    expect(wrong.code).toBe(3)
    expect(wrong.stderr).toContain(`cannot find the platform at ${platform.computeUrl}: GET ${platform.computeUrl}/api/v1/service-info answered 401`)
    expect(wrong.stderr).toContain("give the address of the platform's admin service")
    // Nothing listens there.
    const gone = await runMain(['config', 'set', 'url', 'http://127.0.0.1:9', '--profile', 'lab'], { configDir: home })
    expect(gone.code).toBe(8)
    expect(gone.stderr).toContain('cannot find the platform at http://127.0.0.1:9: is the local suite running? (npm start)')
    expect(new SettingsStore(home).stored('lab').url).toBe(platform.adminUrl)
  })

  it('never sends a login to another address than the one it was made at', async () => {
    const home = await configHome()
    expect((await runMain(['login', '--url', platform.adminUrl, '--token', world.owner.token], { configDir: home })).code).toBe(0)
    new SettingsStore(home).set('local', 'url', 'http://127.0.0.1:9')
    const who = await runMain(['whoami'], { configDir: home })
    expect(who.code).toBe(4)
    expect(who.stderr).toContain(
      `the login of profile 'local' is for ${platform.adminUrl}, not for its address http://127.0.0.1:9: log in again (platform login)`,
    )
  })
})
