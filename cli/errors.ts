import { HttpError, UnreachableError, type RunStatus } from './client.js'
import { ChecksumMismatchError, StorageHttpError, StorageUnreachableError } from './transfer.js'

/**
 * The exit codes of `platform`. 1 and 2 belong to `runs watch` (the run failed, the run was
 * cancelled), so that a script can tell a run's outcome from a failure of the CLI itself; 10 to
 * `files upload` and `files download` (the bytes transferred are not the ones stored: try again); 11 to
 * their `-r` (some files of the tree failed, the others were transferred).
 */
export const EXIT = {
  ok: 0,
  runFailed: 1,
  runCancelled: 2,
  usage: 3,
  notLoggedIn: 4,
  forbidden: 5,
  notFound: 6,
  rejected: 7,
  unavailable: 8,
  internal: 9,
  checksum: 10,
  someFailed: 11,
  interrupted: 130,
} as const
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** A finished run's outcome as the exit code of the commands that follow it to its end. */
export const EXIT_FOR: Record<Exclude<RunStatus, 'queued' | 'running'>, ExitCode> = {
  succeeded: EXIT.ok,
  failed: EXIT.runFailed,
  cancelled: EXIT.runCancelled,
}

/** What each exit code means: the root's help and the CLI reference print this. */
export const EXIT_MEANINGS: ReadonlyArray<[ExitCode, string]> = [
  [EXIT.ok, 'success (runs watch, runs submit --watch, runs logs --follow: the run succeeded)'],
  [EXIT.runFailed, 'runs watch, runs submit --watch, runs logs --follow: the run failed'],
  [EXIT.runCancelled, 'runs watch, runs submit --watch, runs logs --follow: the run was cancelled'],
  [EXIT.usage, 'usage error (bad flags, missing project or address, unconfirmed or declined cancel or delete, an existing local file)'],
  [
    EXIT.notLoggedIn,
    'not logged in, the token is invalid or expired (401), or a login was refused (a wrong password; a browser login refused, cancelled or expired)',
  ],
  [EXIT.forbidden, 'permission denied (403)'],
  [EXIT.notFound, 'not found (404)'],
  [EXIT.rejected, 'rejected by the service (400, 409): its detail is printed'],
  [EXIT.unavailable, 'a service is unreachable or failed (5xx)'],
  [EXIT.internal, 'unexpected error'],
  [EXIT.checksum, "files upload, files download: the checksum of the bytes transferred differs from the storage's"],
  [EXIT.someFailed, 'files upload -r, files download -r: some files failed (the others were transferred; the summary names the failed ones)'],
  [EXIT.interrupted, 'interrupted (Ctrl-C; a transfer also by SIGTERM)'],
]

/** An error the CLI explains itself: the message is printed as is and the process exits with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage)
export const notLoggedIn = () => new CliError('not logged in or token expired: run platform login', EXIT.notLoggedIn)
/** The platform refused the login's refresh credential (logged out, expired, used twice, from a former CLI, or the account disabled): its reason says to log in again. */
export const loginEnded = (detail: string) => new CliError(`the login has ended: ${detail}`, EXIT.notLoggedIn)

/** A 401 to a request that carried $PLATFORM_TOKEN: logging in again would not help, as that token is used instead. */
export const badEnvironmentToken = (detail: string) =>
  new CliError(
    `PLATFORM_TOKEN is invalid or expired (${detail}): set it to a valid personal access token, or unset it to use the credentials of platform login`,
    EXIT.notLoggedIn,
  )

/** What `explain` needs to know about the invocation. */
export interface ExplainContext {
  /** The bearer token came from $PLATFORM_TOKEN, not from the stored credentials. */
  tokenFromEnvironment?: boolean
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

/** An address on this machine: where the local suite runs. */
export function isLocalAddress(url: string): boolean {
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname)
  } catch {
    // an unparsable address gets the generic hint
    return false
  }
}

const hintFor = (baseUrl: string): string =>
  isLocalAddress(baseUrl)
    ? 'is the local suite running? (npm start)'
    : "check the profile's address (platform config set url <admin address>) and your network"

/** Turns whatever a command threw into the line to print and the exit code. */
export function explain(error: unknown, context: ExplainContext = {}): { message: string; code: ExitCode } {
  if (error instanceof CliError) return { message: error.message, code: error.code }
  if (error instanceof UnreachableError) {
    return {
      message: `cannot reach the ${error.service} service at ${error.baseUrl}: ${hintFor(error.baseUrl)} (${error.reason})`,
      code: EXIT.unavailable,
    }
  }
  if (error instanceof HttpError) {
    switch (error.status) {
      case 401:
        return { message: (context.tokenFromEnvironment ? badEnvironmentToken(error.detail) : notLoggedIn()).message, code: EXIT.notLoggedIn }
      case 403:
        return { message: `permission denied: ${error.detail}`, code: EXIT.forbidden }
      case 404:
        return { message: `not found: ${error.detail}`, code: EXIT.notFound }
      case 400:
      case 409:
      case 422:
        return { message: error.detail, code: EXIT.rejected }
      default: {
        const ref = error.requestId ? ` (request id ${error.requestId})` : ''
        return { message: `the ${error.service} service answered ${error.status}: ${error.detail}${ref}`, code: EXIT.unavailable }
      }
    }
  }
  if (error instanceof StorageHttpError) {
    const message = `the storage refused the ${error.method} of the signed address: ${error.status} ${error.code}: ${error.detail}`
    const code = error.status === 403 ? EXIT.forbidden : error.status === 404 ? EXIT.notFound : error.status >= 500 ? EXIT.unavailable : EXIT.rejected
    return { message, code }
  }
  if (error instanceof StorageUnreachableError) return { message: error.message, code: EXIT.unavailable }
  if (error instanceof ChecksumMismatchError) return { message: `checksum mismatch: ${error.message}`, code: EXIT.checksum }
  const message = error instanceof Error ? error.message : String(error)
  return { message: `unexpected error: ${message}`, code: EXIT.internal }
}
