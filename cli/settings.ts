import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { SERVICES, type ServiceName } from './api/services.js'
import { usageError } from './errors.js'

/**
 * Profiles and credentials, kept in three files under the config directory:
 * config.json (the platform's address, per-service addresses and the project per profile, the
 * current profile), credentials.json (tokens per profile, mode 0600, never printed) and
 * discovery.json (what each profile's platform said of itself: its services' addresses).
 */

/** What the CLI takes from its environment, read once in main. */
export interface CliEnv {
  configDir: string
  /** PLATFORM_PROFILE */
  profile?: string
  /** PLATFORM_TOKEN: a personal access token used instead of the stored credentials (CI). */
  token?: string
  /** PLATFORM_PROJECT */
  project?: string
  /** NO_COLOR is set, to any value (https://no-color.org): no colour in the output. */
  noColor: boolean
  /** PLATFORM_UPLOAD_CHUNK_MIB: the chunk size of resumable uploads, in MiB (cli/resumable.ts). */
  uploadChunkMib?: string
  /** PLATFORM_UPLOAD_MD5: auto (default), on or off, whether an upload's MD5 is computed and compared (cli/upload.ts md5Wanted). */
  uploadMd5?: string
}

export function cliEnv(env: Record<string, string | undefined>): CliEnv {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return {
    configDir: env.PLATFORM_CONFIG_DIR || join(configHome, 'platform'),
    profile: env.PLATFORM_PROFILE || undefined,
    token: env.PLATFORM_TOKEN || undefined,
    project: env.PLATFORM_PROJECT || undefined,
    noColor: env.NO_COLOR !== undefined,
    uploadChunkMib: env.PLATFORM_UPLOAD_CHUNK_MIB || undefined,
    uploadMd5: env.PLATFORM_UPLOAD_MD5 || undefined,
  }
}

/**
 * The setting that holds one service's base address, overriding the one the platform names:
 * admin_url, compute_url, … one per service of the platform's registry.
 */
export type UrlKey = `${ServiceName}_url`
export const urlKey = (service: ServiceName): UrlKey => `${service}_url`
export const URL_KEYS: readonly UrlKey[] = SERVICES.map((s) => urlKey(s.name))
/** `url`: the platform's one address (its admin service's), from which every other is discovered. */
export type SettingKey = 'url' | UrlKey | 'project'
export const SETTING_KEYS: readonly SettingKey[] = ['url', ...URL_KEYS, 'project']
export type ProfileSettings = Partial<Record<SettingKey, string>>

export const DEFAULT_PROFILE = 'local'

const LOCAL_ADMIN_PORT = SERVICES.find((s) => s.name === 'admin')?.port

/**
 * The local suite's admin service on the default base port (`npm start` writes the address of the
 * suite it started into the local profile); staging and production have no address until one is set.
 */
export const BUILTIN_PROFILES: Record<string, ProfileSettings> = {
  local: LOCAL_ADMIN_PORT ? { url: `http://127.0.0.1:${LOCAL_ADMIN_PORT}` } : {},
  staging: {},
  production: {},
}

/** What the CLI keeps of a platform's discovery document (GET /api/v1/service-info), per profile. */
export interface Discovered {
  /** The address it was read from: it describes the profile only while the profile's address is this one. */
  url: string
  read_at: string
  environment: string
  /** The platform's version; null where its deploy did not say. */
  version: string | null
  services: Record<string, string>
  identity_provider: { issuer: string; cli_login_methods: Array<'browser' | 'password'> | null } | null
}

interface DiscoveryFile {
  profiles: Record<string, Discovered>
}

export interface ConfigFile {
  current_profile?: string
  profiles: Record<string, ProfileSettings>
}

export interface Credentials {
  /**
   * How the token was obtained: a personal access token, or a login at the identity provider, in a
   * browser or with e-mail and password, which ends with the platform's own pair (plat_cli_…, plat_clr_…).
   */
  method: 'personal_token' | 'password' | 'browser'
  access_token: string
  /** The latest refresh credential of a login: each works once. */
  refresh_token?: string
  /** ISO time after which the access token must be refreshed. */
  expires_at?: string
  email?: string
  /** The platform's address (the profile's url) the login was made at: the credentials go nowhere else. Absent in logins stored before discovery. */
  url?: string
  saved_at: string
}

interface CredentialsFile {
  profiles: Record<string, Credentials>
}

export type Profile = ProfileSettings & { name: string }

const PROFILE_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/i

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME_RE.test(name)) throw usageError(`invalid profile name '${name}': use letters, digits, '-' and '_'`)
  return name
}

/** A service base address as the user may paste it: trailing slashes and a trailing /api/v1 are dropped. */
export function normalizeUrl(key: string, value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw usageError(`${key} must be an http(s) address, got '${value}'`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${key} must be an http(s) address, got '${value}'`)
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '').replace(/\/api\/v1$/, '')
}

/** A credentials lock older than this was left by a process that died (a refresh gives up after 30 s): it is taken over. */
const LOCK_STALE_MS = 60_000
const LOCK_POLL_MS = 50

export class SettingsStore {
  readonly configPath: string
  readonly credentialsPath: string
  readonly discoveryPath: string

  constructor(readonly dir: string) {
    this.configPath = join(dir, 'config.json')
    this.credentialsPath = join(dir, 'credentials.json')
    this.discoveryPath = join(dir, 'discovery.json')
  }

  private read<T>(path: string, empty: T): T {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty
      throw error
    }
    try {
      const parsed = JSON.parse(text) as unknown
      if (!parsed || typeof parsed !== 'object' || typeof (parsed as { profiles?: unknown }).profiles !== 'object')
        throw new Error('no profiles object')
      return parsed as T
    } catch (error) {
      throw usageError(`${path} is not a valid settings file (${(error as Error).message}): fix or delete it`)
    }
  }

  /** Written to a temporary file first, so that an interrupted write never leaves half a file. */
  private write(path: string, value: unknown, mode: number) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const tmp = `${path}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode })
    chmodSync(tmp, mode)
    renameSync(tmp, path)
  }

  readConfig(): ConfigFile {
    return this.read<ConfigFile>(this.configPath, { profiles: {} })
  }

  writeConfig(config: ConfigFile) {
    this.write(this.configPath, config, 0o644)
  }

  /** --profile, else PLATFORM_PROFILE, else the current profile of config.json, else local. */
  profileName(flag: string | undefined, env: CliEnv): string {
    return checkProfileName(flag ?? env.profile ?? this.readConfig().current_profile ?? DEFAULT_PROFILE)
  }

  profile(name: string): Profile {
    return { name, ...BUILTIN_PROFILES[name], ...this.readConfig().profiles[name] }
  }

  /** What the user (or `npm start`) set on the profile, without the built-in defaults. */
  stored(name: string): ProfileSettings {
    return { ...this.readConfig().profiles[name] }
  }

  /** Every profile with addresses or credentials, built-in ones first. */
  profileNames(): string[] {
    const names = new Set([
      ...Object.keys(BUILTIN_PROFILES),
      ...Object.keys(this.readConfig().profiles),
      ...Object.keys(this.readCredentials().profiles),
    ])
    return [...names]
  }

  set(name: string, key: SettingKey, value: string | undefined) {
    this.update(name, { [key]: value })
  }

  /** Sets the values given and removes those given as undefined, in one write. */
  update(name: string, values: Partial<Record<SettingKey, string | undefined>>) {
    const config = this.readConfig()
    const profile = { ...config.profiles[name] }
    for (const [key, value] of Object.entries(values) as Array<[SettingKey, string | undefined]>) {
      if (value === undefined) delete profile[key]
      else profile[key] = key === 'project' ? value : normalizeUrl(key, value)
    }
    config.profiles[name] = profile
    this.writeConfig(config)
  }

  /** The discovery document last read for the profile, whatever address it came from (compare `url`). */
  discovered(name: string): Discovered | undefined {
    return this.read<DiscoveryFile>(this.discoveryPath, { profiles: {} }).profiles[name]
  }

  saveDiscovered(name: string, discovered: Discovered) {
    const file = this.read<DiscoveryFile>(this.discoveryPath, { profiles: {} })
    file.profiles[name] = discovered
    this.write(this.discoveryPath, file, 0o644)
  }

  use(name: string) {
    const config = this.readConfig()
    config.current_profile = name
    this.writeConfig(config)
  }

  private readCredentials(): CredentialsFile {
    return this.read<CredentialsFile>(this.credentialsPath, { profiles: {} })
  }

  credentials(name: string): Credentials | undefined {
    return this.readCredentials().profiles[name]
  }

  saveCredentials(name: string, credentials: Credentials) {
    const file = this.readCredentials()
    file.profiles[name] = credentials
    this.write(this.credentialsPath, file, 0o600)
  }

  /**
   * Runs `fn` holding the credentials file's lock (a file beside it, created exclusively), so that
   * two commands never refresh one login at once: its refresh credential works once, and the
   * platform ends a login whose spent credential comes back.
   */
  async withCredentialsLock<T>(fn: () => Promise<T>): Promise<T> {
    const lock = `${this.credentialsPath}.lock`
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx', 0o600))
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      let age: number
      try {
        age = Date.now() - statSync(lock).mtimeMs
      } catch {
        continue // released meanwhile
      }
      if (age > LOCK_STALE_MS) rmSync(lock, { force: true })
      else await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS))
    }
    try {
      return await fn()
    } finally {
      rmSync(lock, { force: true })
    }
  }

  removeCredentials(name: string): boolean {
    const file = this.readCredentials()
    if (!file.profiles[name]) return false
    delete file.profiles[name]
    this.write(this.credentialsPath, file, 0o600)
    return true
  }
}
