import type { Command } from 'commander'
import { HttpError, PlatformClient, type Me } from '../client.js'
import { action, credentialsFrom, type Cli, type Session } from '../context.js'
import { CliError, EXIT, usageError } from '../errors.js'
import { examples } from '../help.js'
import { fields } from '../output.js'
import { askLine, askSecret, isInteractive, readStdin } from '../prompt.js'
import type { Credentials } from '../settings.js'

interface LoginOptions {
  email?: string
  passwordStdin?: boolean
  token?: string
  tokenStdin?: boolean
}

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
  if (opts.email || opts.passwordStdin) throw usageError('--token and --token-stdin cannot be combined with --email or --password-stdin')
  if (opts.token && opts.tokenStdin) throw usageError('pass the token with --token or --token-stdin, not both')
  const token = (opts.token ?? (await readStdin(session.cli.io))).trim()
  if (!token) throw usageError('the token is empty')
  const me = await whoIs(session, token, 'the token')
  return { me, credentials: credentialsFrom({ access_token: token }, 'personal_token', me.email) }
}

async function withPassword(session: Session, opts: LoginOptions): Promise<{ me: Me; credentials: Credentials }> {
  const { io } = session.cli
  const interactive = isInteractive(io)
  if (!opts.passwordStdin && !interactive) {
    throw usageError('stdin is not a terminal: pass --password-stdin (or log in with --token-stdin)')
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
  return { me, credentials: credentialsFrom(tokens, 'password', me.email ?? email) }
}

export function register(program: Command, cli: Cli) {
  program
    .command('login')
    .description('Log in with e-mail and password, or with a personal access token; the credentials are kept per profile')
    .option('--email <email>', 'e-mail address (asked on a terminal when missing)')
    .option('--password-stdin', 'read the password from stdin instead of asking without echo')
    .option('--token <token>', 'a personal access token (plat_pat_…); --token-stdin keeps it out of the shell history')
    .option('--token-stdin', 'read a personal access token from stdin')
    .addHelpText(
      'after',
      examples(
        'platform login --email you@lab.org                  # asks for the password without echo',
        'platform login --email you@lab.org --password-stdin < password.txt',
        'platform login --token-stdin < token.txt            # a personal access token (plat_pat_…)',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<LoginOptions>()
        const { me, credentials } = opts.token || opts.tokenStdin ? await withToken(session, opts) : await withPassword(session, opts)
        cli.settings.saveCredentials(session.profile.name, credentials)
        session.out.result({ profile: session.profile.name, admin_url: session.baseUrl('admin'), method: credentials.method, user: me }, () =>
          fields([
            ['logged in as', me.email ?? me.name],
            ['profile', session.profile.name],
            ['admin service', session.baseUrl('admin')],
            ['method', credentials.method === 'password' ? 'e-mail and password' : 'personal access token'],
          ]),
        )
        if (cli.env.token) session.out.note('note: PLATFORM_TOKEN is set and is used instead of these credentials')
      }),
    )
}
