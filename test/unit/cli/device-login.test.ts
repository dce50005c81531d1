import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AbortedError, HttpError, UnreachableError, type DeviceLogin, type DevicePoll, type TokenResponse } from '../../../cli/client.js'
import { defaultMethod, requestedMethod, type LoginOptions } from '../../../cli/commands/login.js'
import { deviceLoginInstructions, MAX_CONSECUTIVE_FAILURES, SLOW_DOWN_MS, waitForDeviceLogin } from '../../../cli/device-login.js'
import { CliError, EXIT, explain } from '../../../cli/errors.js'

const tokens: TokenResponse = { access_token: 'at', refresh_token: 'rt', expires_in: 3600, token_type: 'Bearer' }
const login = (over: Partial<DeviceLogin> = {}): DeviceLogin => ({
  device_code: 'dc',
  user_code: 'WDJB-MJHT',
  verification_uri: 'https://idp.example.org/device',
  verification_uri_complete: 'https://idp.example.org/device?user_code=WDJB-MJHT',
  expires_in: 600,
  interval: 5,
  ...over,
})

type Answer = DevicePoll['status'] | Error
const pending = 'authorization_pending' as const
const unreachable = () => new UnreachableError('admin', 'http://127.0.0.1:8101', 'ECONNREFUSED')
const refused = (detail: string) => new HttpError('admin', 'POST', 'http://127.0.0.1:8101/api/v1/auth/device/token', 401, detail)

/** The wait on a virtual clock: each sleep advances it; the answers come in order (the last repeats). */
function run(answers: Answer[], start = login()) {
  let now = 0
  const sleeps: number[] = []
  const polls: string[] = []
  const warnings: string[] = []
  const result = waitForDeviceLogin(start, {
    poll: async (deviceCode) => {
      polls.push(deviceCode)
      const answer = answers[Math.min(polls.length, answers.length) - 1]!
      if (answer instanceof Error) throw answer
      return answer === 'complete' ? { status: 'complete', tokens } : { status: answer }
    },
    sleep: async (ms) => {
      sleeps.push(ms)
      now += ms
    },
    now: () => now,
    warn: (message) => warnings.push(message),
  })
  return { result, sleeps, polls, warnings }
}

async function failure(promise: Promise<unknown>): Promise<{ message: string; code: number }> {
  try {
    await promise
  } catch (error) {
    return explain(error)
  }
  throw new Error('the wait ended without an error')
}

describe("the CLI's wait for a browser login (RFC 8628 §3.5)", () => {
  it('polls every interval, waiting before each poll, until the person has confirmed, and returns the tokens', async () => {
    const { result, sleeps, polls } = run([pending, pending, 'complete'])
    expect(await result).toEqual(tokens)
    expect(sleeps).toEqual([5000, 5000, 5000])
    expect(polls).toEqual(['dc', 'dc', 'dc'])
  })

  it('waits 5 s longer after each slow_down, for every later poll', async () => {
    const { result, sleeps } = run([pending, 'slow_down', pending, 'slow_down', 'complete'])
    await result
    expect(sleeps).toEqual([5000, 5000, 10_000, 10_000, 15_000])
  })

  it('starts from the interval the provider names', async () => {
    const { result, sleeps } = run([pending, 'complete'], login({ interval: 2 }))
    await result
    expect(sleeps).toEqual([2000, 2000])
  })

  it.each([
    ['the person refused or cancelled', 'access_denied: the sign-in was refused or cancelled at the identity provider'],
    ['the code expired', 'expired_token: the code expired before the sign-in was completed; start the login again'],
    ['the code is unknown or used', 'invalid_grant: unknown or already used device code; start the login again'],
  ])('stops with exit code 4 (not logged in) and the service detail when %s', async (_, detail) => {
    const { result, polls } = run([pending, refused(detail)])
    expect(await failure(result)).toEqual({ message: `login refused: ${detail}`, code: EXIT.notLoggedIn })
    expect(polls).toHaveLength(2)
  })

  it("stops when the codes' lifetime is over even while the service keeps saying not yet, without a poll past it", async () => {
    const { result, polls, sleeps } = run([pending], login({ expires_in: 12, interval: 5 }))
    expect(await failure(result)).toEqual({
      message: 'the code expired before the sign-in was completed: run platform login again for a new one',
      code: EXIT.notLoggedIn,
    })
    expect(sleeps).toEqual([5000, 5000, 5000])
    expect(polls).toHaveLength(2)
  })

  it('rides out a service that does not answer twice in a row, saying so', async () => {
    const { result, warnings, polls } = run([pending, unreachable(), unreachable(), 'complete'])
    expect(await result).toEqual(tokens)
    expect(polls).toHaveLength(4)
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(/^warning: cannot reach the admin service at http:\/\/127.0.0.1:8101: .*; trying again in 5s$/)
  })

  it(`gives up after ${MAX_CONSECUTIVE_FAILURES} failed polls in a row, with exit code 8 (unavailable)`, async () => {
    const { result, polls } = run([pending, unreachable()])
    expect((await failure(result)).code).toBe(EXIT.unavailable)
    expect(polls).toHaveLength(1 + MAX_CONSECUTIVE_FAILURES)
  })

  it('does not retry an answer that would not change (a 400), and stops at once', async () => {
    const bad = new HttpError('admin', 'POST', 'http://x/api/v1/auth/device/token', 400, 'body.device_code: required')
    const { result, polls } = run([bad])
    expect(await failure(result)).toEqual({ message: 'body.device_code: required', code: EXIT.rejected })
    expect(polls).toHaveLength(1)
  })

  it('stops waiting when Ctrl-C fires its signal (AbortedError, which the command turns into exit code 130)', async () => {
    const stop = new AbortController()
    stop.abort()
    const wait = waitForDeviceLogin(login(), {
      poll: async () => ({ status: pending }),
      sleep: async (_, signal) => {
        if (signal?.aborted) throw new AbortedError()
      },
      now: () => 0,
      warn: () => undefined,
      signal: stop.signal,
    })
    await expect(wait).rejects.toBeInstanceOf(AbortedError)
  })

  it('waits interval + 5 s × the slow_downs before each poll, and polls once per answer, whatever the answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(pending, 'slow_down' as const), { maxLength: 30 }),
        fc.integer({ min: 1, max: 10 }),
        async (waits, interval) => {
          const { result, sleeps, polls } = run([...waits, 'complete'], login({ interval, expires_in: 86_400 }))
          await result
          let slowDowns = 0
          const expected = [...waits, 'complete'].map((answer) => {
            const ms = interval * 1000 + slowDowns * SLOW_DOWN_MS
            if (answer === 'slow_down') slowDowns++
            return ms
          })
          expect(sleeps).toEqual(expected)
          expect(polls).toHaveLength(waits.length + 1)
        },
      ),
    )
  })

  it('ends every refused login with exit code 4, never a generic failure', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), fc.nat(5), async (detail, pendingPolls) => {
        const { result } = run([...Array<Answer>(pendingPolls).fill(pending), refused(detail)])
        const { code } = await failure(result)
        return code === EXIT.notLoggedIn
      }),
    )
  })
})

describe('what the person is told to do', () => {
  it('gives the address with the code filled in and the code to check, when the provider gives one', () => {
    expect(deviceLoginInstructions(login())).toBe(
      [
        'Log in in a browser, on this computer or any other:',
        '  1. Open https://idp.example.org/device?user_code=WDJB-MJHT',
        '  2. Check that the page shows the code WDJB-MJHT, then sign in.',
        'Waiting for the sign-in (the code expires in 10m 00s; Ctrl-C stops waiting)...',
      ].join('\n'),
    )
  })

  it('gives the address and the code to type where the provider has no address with the code (Entra ID)', () => {
    const text = deviceLoginInstructions(login({ verification_uri_complete: undefined, verification_uri: 'https://microsoft.com/devicelogin' }))
    expect(text).toContain('  1. Open https://microsoft.com/devicelogin\n  2. Enter the code WDJB-MJHT, then sign in.')
  })
})

describe('which login platform login makes', () => {
  it.each<[LoginOptions, ReturnType<typeof requestedMethod>]>([
    [{}, undefined],
    [{ browser: true }, 'browser'],
    [{ email: 'a@lab.org' }, 'password'],
    [{ passwordStdin: true }, 'password'],
    [{ email: 'a@lab.org', passwordStdin: true }, 'password'],
    [{ token: 'plat_pat_x' }, 'personal_token'],
    [{ tokenStdin: true }, 'personal_token'],
  ])('%j → %s', (opts, method) => {
    expect(requestedMethod(opts)).toBe(method)
  })

  it.each<LoginOptions>([
    { browser: true, email: 'a@lab.org' },
    { browser: true, tokenStdin: true },
    { token: 'plat_pat_x', email: 'a@lab.org' },
    { tokenStdin: true, passwordStdin: true },
    { token: 'plat_pat_x', tokenStdin: true },
  ])('refuses %j as a usage error (exit code 3)', (opts) => {
    expect(() => requestedMethod(opts)).toThrow(CliError)
    try {
      requestedMethod(opts)
    } catch (error) {
      expect((error as CliError).code).toBe(EXIT.usage)
    }
  })

  it.each<[Parameters<typeof defaultMethod>[0], ReturnType<typeof defaultMethod>]>([
    [['browser', 'password'], 'browser'],
    [['browser'], 'browser'],
    [['password'], 'password'],
    [[], 'password'],
  ])('without flags, the service offering %j → %s', (offered, method) => {
    expect(defaultMethod(offered)).toBe(method)
  })
})
