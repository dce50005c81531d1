import type { Command } from 'commander'
import { HttpError, PlatformClient, UUID_RE, type Auth, type Pipeline, type Run, type ServiceName, type TokenResponse } from './client.js'
import { CliError, EXIT, loginEnded, notLoggedIn, usageError } from './errors.js'
import { DEFAULT_FORMAT, type Format } from './format.js'
import { Output } from './output.js'
import type { Io } from './prompt.js'
import { discover } from './discovery.js'
import { normalizeUrl, urlKey, type CliEnv, type Credentials, type Discovered, type Profile, type SettingsStore } from './settings.js'

/** The options every command takes (declared once on the root). */
export interface GlobalOptions {
  profile?: string
  project?: string
  format?: Format
  /** --json: the same as --format json. */
  json?: boolean
  /** false with --no-color. */
  color: boolean
}

/** One invocation of the CLI: its environment, streams and settings, and the exit code the command chose. */
export interface Cli {
  env: CliEnv
  io: Io
  settings: SettingsStore
  userAgent: string
  exitCode: number
}

/** Access tokens are renewed this long before they expire, so that one does not lapse in flight. */
const EXPIRY_MARGIN_MS = 30_000

export function credentialsFrom(
  tokens: Pick<TokenResponse, 'access_token'> & { refresh_token?: string; expires_in?: number },
  method: Credentials['method'],
  email: string | undefined,
  url: string | undefined,
): Credentials {
  const now = Date.now()
  return {
    method,
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    expires_at: tokens.expires_in ? new Date(now + tokens.expires_in * 1000).toISOString() : undefined,
    email,
    url,
    saved_at: new Date(now).toISOString(),
  }
}

const expiresSoon = (credentials: Credentials) =>
  credentials.expires_at !== undefined && Date.parse(credentials.expires_at) - EXPIRY_MARGIN_MS <= Date.now()

/**
 * The token of the profile: PLATFORM_TOKEN, else the stored one, renewed when it has expired. A
 * refresh credential works once (each refresh returns the next pair), and the platform takes one
 * presented twice for a stolen copy and ends the login: renewals hold the credentials file's lock,
 * and one that finds the credentials already renewed by another command (or another request of
 * this one) uses them instead of refreshing again.
 */
class StoredAuth implements Auth {
  /** The access token last handed out: a 401 to it means it, and not one renewed since, is refused. */
  private sent?: string

  constructor(private readonly session: Session) {}

  async token(): Promise<string> {
    const { env, settings } = this.session.cli
    if (env.token) return env.token
    const credentials = this.session.credentials()
    if (!credentials) throw notLoggedIn()
    if (!expiresSoon(credentials)) return (this.sent = credentials.access_token)
    if (!(await this.renewFrom(credentials.access_token))) throw notLoggedIn()
    return (this.sent = settings.credentials(this.session.profile.name)?.access_token ?? '')
  }

  renew(): Promise<boolean> {
    return this.renewFrom(this.sent)
  }

  /** Renews the credentials unless they are no longer `stale`; a refused refresh credential ends the login (exit code 4, with the service's reason). */
  private async renewFrom(stale: string | undefined): Promise<boolean> {
    const { env, settings } = this.session.cli
    if (env.token) return false
    const name = this.session.profile.name
    return settings.withCredentialsLock(async () => {
      const credentials = this.session.credentials()
      if (!credentials?.refresh_token) return false
      if (credentials.access_token !== stale && !expiresSoon(credentials)) return true
      let tokens: TokenResponse
      try {
        tokens = await this.session.anonymousClient().refresh(credentials.refresh_token)
      } catch (error) {
        // A refused refresh credential means a new login, and the service says why; anything else (unreachable, 500) is reported as itself.
        if (error instanceof HttpError && error.status === 401) throw loginEnded(error.detail)
        if (error instanceof HttpError && error.status === 400) return false
        throw error
      }
      settings.saveCredentials(name, credentialsFrom(tokens, credentials.method, credentials.email, credentials.url))
      return true
    })
  }
}

export class Session {
  readonly out: Output
  private readonly profileName: string
  /** The discovery document read by this command, once. */
  private reading?: Promise<Discovered>

  constructor(
    readonly cli: Cli,
    readonly globals: GlobalOptions,
  ) {
    const terminal = Boolean(cli.io.stdout.isTTY)
    const format = globals.format ?? (globals.json ? { name: 'json' as const } : DEFAULT_FORMAT)
    // Colour and fitting are for a person at a terminal: a pipe or a file gets the plain, whole text.
    const style = { colour: terminal && !cli.env.noColor && globals.color, width: (terminal && cli.io.stdout.columns) || undefined }
    this.out = new Output(format, cli.io.stdout, cli.io.stderr, terminal, style)
    this.profileName = cli.settings.profileName(globals.profile, cli.env)
  }

  /** The profile's settings as they are now (a command may change them). */
  get profile(): Profile {
    return this.cli.settings.profile(this.profileName)
  }

  /**
   * Where the profile's platform is: its `url`, else the admin_url of a profile set up service by
   * service, else the built-in profile's address.
   */
  get platformUrl(): string | undefined {
    const stored = this.cli.settings.stored(this.profileName)
    return stored.url ?? stored.admin_url ?? this.profile.url
  }

  /** A service's base address: the profile's own for it (an override), else the one the platform names. */
  async baseUrl(service: ServiceName): Promise<string> {
    const override = this.profile[urlKey(service)]
    if (override) return override
    const platform = await this.discovered(service)
    const url = platform.services[service]
    if (!url) {
      throw usageError(
        `the platform at ${platform.url} names no address for the ${service} service: set one with platform config set ${service}_url <url> --profile ${this.profileName}`,
      )
    }
    return url
  }

  /**
   * The platform's discovery document: the one kept for the profile while its address is unchanged
   * and names `service`, else read again from the platform (and kept).
   */
  discovered(service?: ServiceName): Promise<Discovered> {
    const url = this.platformUrl
    if (!url) {
      return Promise.reject(
        usageError(`profile '${this.profileName}' has no address: set it with platform config set url <admin address> --profile ${this.profileName}`),
      )
    }
    const kept = this.cli.settings.discovered(this.profileName)
    if (kept?.url === url && (!service || kept.services[service])) return Promise.resolve(kept)
    return (this.reading ??= this.read(url))
  }

  /** Reads the discovery document at `url` and, once it is a platform's, makes `url` the profile's address (`config set url`, `login --url`). */
  async usePlatform(url: string): Promise<Discovered> {
    const found = await this.read(normalizeUrl('url', url))
    this.cli.settings.set(this.profileName, 'url', found.url)
    return found
  }

  private async read(url: string): Promise<Discovered> {
    const found = await discover(url, { userAgent: this.cli.userAgent })
    this.cli.settings.saveDiscovered(this.profileName, found)
    this.reading = Promise.resolve(found)
    return found
  }

  /**
   * The profile's stored credentials, when they were issued by the platform at its address now: a
   * profile pointed elsewhere (config set url) never sends them to another platform.
   */
  credentials(): Credentials | undefined {
    const credentials = this.cli.settings.credentials(this.profileName)
    if (!credentials?.url || credentials.url === this.platformUrl) return credentials
    throw new CliError(
      `the login of profile '${this.profileName}' is for ${credentials.url}, not for its address ${this.platformUrl ?? '(none)'}: log in again (platform login)`,
      EXIT.notLoggedIn,
    )
  }

  /** The token requests carry: $PLATFORM_TOKEN, else the profile's, renewed first when it has expired. */
  token(): Promise<string> {
    return new StoredAuth(this).token()
  }

  client(signal?: AbortSignal): PlatformClient {
    return new PlatformClient({ baseUrl: (s) => this.baseUrl(s), auth: new StoredAuth(this), userAgent: this.cli.userAgent, signal })
  }

  /** For login and token refresh, which carry no Authorization header. */
  anonymousClient(signal?: AbortSignal): PlatformClient {
    return new PlatformClient({ baseUrl: (s) => this.baseUrl(s), userAgent: this.cli.userAgent, signal })
  }

  /**
   * The project by id or slug: --project, else PLATFORM_PROJECT, else the profile's, else the user's
   * default context, else the only project the user can see.
   */
  async projectId(client: PlatformClient): Promise<string> {
    const ref = this.globals.project ?? this.cli.env.project ?? this.profile.project
    if (ref) return UUID_RE.test(ref) ? ref : this.projectBySlug(client, ref)
    const context = await client.defaultContext()
    if (context.project_id) return context.project_id
    // Someone with access to a single project has nothing to choose.
    const projects = await client.projects()
    if (projects.length === 1 && projects[0]) return projects[0].id
    throw usageError('no project chosen: pass --project <id|slug>, or run platform config set project <id|slug> (platform projects list shows yours)')
  }

  private async projectBySlug(client: PlatformClient, ref: string): Promise<string> {
    const matches = (await client.projects()).filter((p) => p.slug === ref || p.name === ref)
    const [only] = matches
    if (only && matches.length === 1) return only.id
    if (!only) throw new CliError(`not found: no project '${ref}' among yours (platform projects list shows them)`, EXIT.notFound)
    const list = matches.map((p) => `${p.id} (${p.org_name})`).join(', ')
    throw usageError(`project '${ref}' is ambiguous: ${list}; pass the id`)
  }

  /**
   * A run named by id, or by name (`hello-local-20261122T171710Z`), which must name exactly one run
   * of the project (two submissions of a pipeline in the same second share a name).
   */
  async run(client: PlatformClient, project: string, ref: string): Promise<Run> {
    if (UUID_RE.test(ref)) return client.getRun(project, ref)
    const { items } = await client.listRuns(project, { name: ref }, { limit: 2 })
    const [only] = items
    if (!only) throw new CliError(`not found: no run '${ref}' in this project (platform runs list shows the names)`, EXIT.notFound)
    if (items.length > 1) {
      // Every run of that name, however many: the user picks one by id.
      const { items: all } = await client.listRuns(project, { name: ref }, {})
      throw usageError(`run name '${ref}' is ambiguous: ${all.map((r) => r.id).join(', ')}; pass the id`)
    }
    return only
  }

  /** A pipeline named by id, or by slug (the latest version unless --version names one). */
  async pipeline(client: PlatformClient, project: string, ref: string, version?: string): Promise<Pipeline> {
    if (!UUID_RE.test(ref)) return client.getPipelineBySlug(project, ref, version)
    const pipeline = await client.getPipeline(project, ref)
    if (version !== undefined && pipeline.version !== version) {
      throw usageError(`pipeline ${ref} is ${pipeline.slug} ${pipeline.version}, not ${version}: name the slug to pick a version`)
    }
    return pipeline
  }
}

export type Handler = (session: Session, command: Command) => Promise<number | void>

/** Wraps a command's handler: builds the session from the global options and records the exit code. */
export function action(cli: Cli, handler: Handler) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command
    const session = new Session(cli, command.optsWithGlobals<GlobalOptions>())
    cli.exitCode = (await handler(session, command)) ?? EXIT.ok
  }
}
