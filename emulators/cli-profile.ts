import { isLocalAddress } from '../cli/errors.js'
import { cliEnv, SettingsStore, URL_KEYS, type Credentials } from '../cli/settings.js'
import type { SuiteFile } from './data-dir.js'

/**
 * `npm start` points the CLI at the suite it started, whatever --base-port and --data-dir were:
 * the `local` profile (the CLI's default profile) logged in as the seeded admin, and
 * `local-reviewer` as the seeded reviewer, each with the person's personal access token. The CLI
 * finds every other service from the admin address (docs/discovery.md).
 */

const suiteProfiles = (suite: SuiteFile) => [
  { name: 'local', email: suite.user.email, token: suite.token },
  { name: 'local-reviewer', email: suite.reviewer.email, token: suite.reviewer.token },
]

/**
 * Sets the suite's profiles in the CLI's configuration folder (PLATFORM_CONFIG_DIR, else
 * ~/.config/platform) and returns one line per profile to print. A profile whose address is not
 * on this machine was pointed elsewhere on purpose: it is left as it is, and the line says so.
 */
export function pointCliProfiles(suite: SuiteFile, env: Record<string, string | undefined> = process.env): string[] {
  const settings = new SettingsStore(cliEnv(env).configDir)
  const url = suite.services.admin
  if (!url) return []
  return suiteProfiles(suite).map(({ name, email, token }) => {
    const stored = settings.stored(name)
    const before = stored.url ?? stored.admin_url
    if (before && before !== url && !isLocalAddress(before)) {
      return `profile '${name}' points at ${before}: left as it is (platform config set url ${url} --profile ${name} points it here)`
    }
    // Service addresses on this machine were another suite's ports: they would win over the discovered ones.
    const stale = URL_KEYS.filter((key) => stored[key] && isLocalAddress(stored[key]))
    settings.update(name, { url, ...Object.fromEntries(stale.map((key) => [key, undefined])) })
    const login = settings.credentials(name)
    // A login the person made here themselves (password, browser) is kept; a token is this suite's seeded one.
    if (!login || login.url !== url || login.method === 'personal_token') {
      const credentials: Credentials = { method: 'personal_token', access_token: token, email, url, saved_at: new Date().toISOString() }
      settings.saveCredentials(name, credentials)
    }
    const moved = before && before !== url ? ` (was ${before})` : ''
    return `profile '${name}' → ${url}${moved}, logged in as ${settings.credentials(name)?.email ?? email}`
  })
}
