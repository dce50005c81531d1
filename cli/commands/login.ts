import type { Command } from 'commander'
import { HttpError, PlatformClient, sleep, type CliLogin, type Me } from '../client.js'
import { action, credentialsFrom, type Cli, type Session } from '../context.js'
import { deviceLoginInstructions, waitForDeviceLogin } from '../device-login.js'
import { CliError, EXIT, usageError } from '../errors.js'
import { interruptible } from '../files.js'
import { examples } from '../help.js'
import { fields } from '../format.js'
import { askLine, askSecret, isInteractive, readStdin } from '../prompt.js'
import type { Credentials } from '../settings.js'

export interface LoginOptions {
  url?: string
  browser?: boolean
  email?: string
  passwordStdin?: boolean
  token?: string
  tokenStdin?: boolean
}

export type LoginMethod = Credentials['method']

const METHOD_LABELS: Record<LoginMethod, string> = {
  browser: 'browser (device authorization)',
  password: 'e-mail and password',
  personal_token: 'personal access token',
}

/**
 * The login the flags ask for, or `undefined` when they name none: then the service's identity
 * provider decides (defaultMethod). Flags of two methods are a usage error.
 */
export function requestedMethod(opts: LoginOptions): LoginMethod | undefined {
  const token = Boolean(opts.token || opts.tokenStdin)
  const password = Boolean(opts.email || opts.passwordStdin)
  if (opts.browser && (token || password)) throw usageError('--browser cannot be combined with --email, --password-stdin, --token or --token-stdin')
  if (token && password) throw usageError('--token and --token-stdin cannot be combined with --email or --password-stdin')
  if (opts.token && opts.tokenStdin) throw usageError('pass the token with --token or --token-stdin, not both')
  return opts.browser ? 'browser' : token ? 'personal_token' : password ? 'password' : undefined
}

/** Without flags: the browser login where the provider offers it (it works for every account and over SSH), else e-mail and password. */
export const defaultMethod = (offered: CliLogin['methods']): 'browser' | 'password' => (offered.includes('browser') ? 'browser' : 'password')

/** A client that sends exactly this token: a new login is checked before anything is stored. */
function clientWithToken(session: Session, token: string) {
  return new PlatformClient({
    baseUrl: (s) => session.baseUrl(s),
    auth: { token: async () => token, renew: async () => false },
    userAgent: session.cli.userAgent,
  })
}

async function whoIs(session: Session, token: string, what: string): Promise<Me> {
  try {
    return await clientWithToken(session, token).me()
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) throw new CliError(`${what} was refused: ${error.detail}`, EXIT.notLoggedIn)
    throw error
  }
}

async function withToken(session: Session, opts: LoginOptions): Promise<{ me: Me; credentials: Credentials }> {
  const token = (opts.token ?? (await readStdin(session.cli.io))).trim()
  if (!token) throw usageError('the token is empty')
  const me = await whoIs(session, token, 'the token')
  return { me, credentials: credentialsFrom({ access_token: token }, 'personal_token', me.email, session.platformUrl) }
}

async function withPassword(session: Session, opts: LoginOptions): Promise<{ me: Me; credentials: Credentials }> {
  const { io } = session.cli
  const interactive = isInteractive(io)
  if (!opts.passwordStdin && !interactive) {
    throw usageError('stdin is not a terminal: pass --password-stdin (or log in with --browser, or --token-stdin)')
  }
  const email = (opts.email ?? (interactive && !opts.passwordStdin ? await askLine(io, 'E-mail: ') : '')).trim()
  if (!email) throw usageError('--email is required')
  const password = opts.passwordStdin ? await readStdin(io) : await askSecret(io, 'Password: ')
  if (!password) throw usageError('the password is empty')
  let tokens
  try {
    tokens = await session.anonymousClient().passwordLogin(email, password)
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) throw new CliError(`login refused: ${error.detail}`, EXIT.notLoggedIn)
    throw error
  }
  const me = await whoIs(session, tokens.access_token, 'the access token from the login')
  return { me, credentials: credentialsFrom(tokens, 'password', me.email ?? email, session.platformUrl) }
}

/**
 * The browser login: the admin service begins a device authorization at the identity provider;
 * the person opens the address it gives, in any browser on any device, signs in there as the
 * provider asks and confirms the code, while this polls. Ctrl-C stops waiting (exit code 130).
 */
async function withBrowser(session: Session): Promise<{ me: Me; credentials: Credentials }> {
  const tokens = await interruptible('login stopped: nothing was stored', async (signal) => {
    const client = session.anonymousClient(signal)
    const login = await client.beginDeviceLogin()
    session.out.note(deviceLoginInstructions(login))
    return waitForDeviceLogin(login, {
      poll: (deviceCode) => client.pollDeviceLogin(deviceCode),
      sleep,
      now: Date.now,
      warn: (message) => session.out.note(message),
      signal,
    })
  })
  const me = await whoIs(session, tokens.access_token, 'the access token from the login')
  return { me, credentials: credentialsFrom(tokens, 'browser', me.email, session.platformUrl) }
}

/** The methods the admin service offers the CLI; a service without any login tells to use a personal access token. */
async function offeredMethods(session: Session): Promise<CliLogin['methods']> {
  try {
    return (await session.anonymousClient().cliLogin()).methods
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) {
      throw new CliError(
        `this platform offers no login at an identity provider (${error.detail}): log in with a personal access token (platform login --token-stdin)`,
        EXIT.notFound,
      )
    }
    throw error
  }
}

export function register(program: Command, cli: Cli) {
  program
    .command('login')
    .description(
      'Log in: in a browser (the default where the identity provider offers it; works over SSH and with multi-factor authentication), with e-mail and password, or with a personal access token; the credentials are kept per profile',
    )
    .option(
      '--url <admin address>',
      "the platform's address (its admin service's): the profile is pointed there first, as platform config set url does, and finds every other service from it",
    )
    .option('--browser', 'log in in a browser, on this or another device: the CLI shows an address and a code to confirm there')
    .option('--email <email>', 'log in with e-mail and password (the password is asked without echo on a terminal)')
    .option('--password-stdin', 'read the password from stdin instead of asking without echo')
    .option('--token <token>', 'a personal access token (plat_pat_…); --token-stdin keeps it out of the shell history')
    .option('--token-stdin', 'read a personal access token from stdin')
    .addHelpText(
      'after',
      examples(
        'platform login                                     # in a browser where offered, else e-mail and password',
        'platform login --browser                           # prints an address and a code; open it on any device',
        'platform login --email you@lab.org                 # asks for the password without echo',
        'platform login --email you@lab.org --password-stdin < password.txt',
        'platform login --token-stdin < token.txt           # a personal access token (plat_pat_…)',
        'platform login --url https://platform.lab.example/admin --profile production   # a new profile, from one address',
      ) +
        '\nThe password login works only where the identity provider allows it (not Google; not Entra ID accounts with' +
        '\nmulti-factor authentication): the service then says to log in with --browser. docs/cli-login.md has the details.\n',
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<LoginOptions>()
        // Usage errors first: a bad combination of flags changes nothing, the profile's address included.
        const requested = requestedMethod(opts)
        if (opts.url) await session.usePlatform(opts.url)
        const method = requested ?? defaultMethod(await offeredMethods(session))
        const { me, credentials } =
          method === 'browser'
            ? await withBrowser(session)
            : method === 'personal_token'
              ? await withToken(session, opts)
              : await withPassword(session, opts)
        cli.settings.saveCredentials(session.profile.name, credentials)
        const adminUrl = await session.baseUrl('admin')
        session.out.result({ profile: session.profile.name, admin_url: adminUrl, method: credentials.method, user: me }, () =>
          fields([
            ['logged in as', me.email ?? me.name],
            ['profile', session.profile.name],
            ['admin service', adminUrl],
            ['method', METHOD_LABELS[credentials.method]],
          ]),
        )
        if (cli.env.token) session.out.note('note: PLATFORM_TOKEN is set and is used instead of these credentials')
      }),
    )
}
