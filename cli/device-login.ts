import { HttpError, isTransient, type DeviceLogin, type DevicePoll, type TokenResponse } from './client.js'
import { CliError, EXIT, explain } from './errors.js'
import { formatDuration } from './output.js'

/** RFC 8628 §3.5: after a slow_down, every later poll waits this much longer. */
export const SLOW_DOWN_MS = 5000
/** A poll that finds the service unreachable or failing is tried again, but not forever. */
export const MAX_CONSECUTIVE_FAILURES = 3

/** What the wait needs from the world: the poll, the clock and a way to say that a poll failed and is tried again. */
export interface DeviceLoginWait {
  poll(deviceCode: string): Promise<DevicePoll>
  /** Waits `ms`; rejects with AbortedError when `signal` fires (Ctrl-C). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
  now(): number
  warn(message: string): void
  signal?: AbortSignal
}

export const codeExpired = () =>
  new CliError('the code expired before the sign-in was completed: run platform login again for a new one', EXIT.notLoggedIn)

/**
 * The CLI's side of the device authorization grant (RFC 8628 §3.4, §3.5): poll the admin service
 * every `interval` seconds, 5 s more after each slow_down, until the person has confirmed the code
 * at the identity provider (the tokens), refused it or let it expire (exit code 4, as any refused
 * login). The codes' own lifetime ends the wait even if the service keeps saying "not yet". A poll
 * that fails for want of an answer is tried again after the interval, up to 3 times in a row.
 */
export async function waitForDeviceLogin(login: DeviceLogin, wait: DeviceLoginWait): Promise<TokenResponse> {
  const deadline = wait.now() + login.expires_in * 1000
  let intervalMs = login.interval * 1000
  let failures = 0
  for (;;) {
    await wait.sleep(intervalMs, wait.signal)
    if (wait.now() >= deadline) throw codeExpired()
    let answer: DevicePoll
    try {
      answer = await wait.poll(login.device_code)
      failures = 0
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) throw new CliError(`login refused: ${error.detail}`, EXIT.notLoggedIn)
      if (!isTransient(error) || ++failures >= MAX_CONSECUTIVE_FAILURES) throw error
      wait.warn(`warning: ${explain(error).message}; trying again in ${intervalMs / 1000}s`)
      continue
    }
    if (answer.status === 'complete') return answer.tokens
    if (answer.status === 'slow_down') intervalMs += SLOW_DOWN_MS
  }
}

/** What the person is told to do: open the page (with the code filled in, when the provider gives one) and check or type the code. */
export function deviceLoginInstructions(login: DeviceLogin): string {
  const steps = login.verification_uri_complete
    ? [`  1. Open ${login.verification_uri_complete}`, `  2. Check that the page shows the code ${login.user_code}, then sign in.`]
    : [`  1. Open ${login.verification_uri}`, `  2. Enter the code ${login.user_code}, then sign in.`]
  return [
    'Log in in a browser, on this computer or any other:',
    ...steps,
    `Waiting for the sign-in (the code expires in ${formatDuration(login.expires_in)}; Ctrl-C stops waiting)...`,
  ].join('\n')
}
