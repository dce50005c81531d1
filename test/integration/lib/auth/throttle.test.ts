import { describe, expect, it } from 'vitest'
import { LoginThrottle, TooManyAttempts, type ThrottleKey } from '../../../../lib/auth/throttle.js'
import type { Clock } from '../../../../lib/clock.js'
import { testKernel } from '../../../support/env.js'
import { rand } from '../../../support/world.js'

describe('the login throttle', () => {
  const kernel = testKernel()
  let now = Date.parse('2026-11-22T10:00:00Z')
  const clock: Clock = { now: () => new Date(now) }
  const throttle = new LoginThrottle(kernel.db, clock)
  const account = (): ThrottleKey[] => [{ kind: 'account', value: `password:${rand()}@example.org` }]
  const retryAfter = async (keys: ThrottleKey[]) => {
    try {
      await throttle.check(keys)
      return undefined
    } catch (err) {
      if (err instanceof TooManyAttempts) return err.retryAfterSeconds
      throw err
    }
  }

  it('locks an account key on its fifth failure within the window, for 30 s', async () => {
    const keys = account()
    for (let i = 0; i < 4; i++) await throttle.failed(keys)
    expect(await retryAfter(keys)).toBeUndefined()
    await throttle.failed(keys)
    expect(await retryAfter(keys)).toBe(30)
    now += 29_000
    expect(await retryAfter(keys)).toBe(1)
    now += 1_000
    expect(await retryAfter(keys)).toBeUndefined()
  })

  it('doubles the lock at each further lockout, up to 15 minutes', async () => {
    const keys = account()
    const locks: number[] = []
    for (let lockout = 0; lockout < 7; lockout++) {
      for (let i = 0; i < 5; i++) await throttle.failed(keys)
      const wait = (await retryAfter(keys))!
      locks.push(wait)
      now += wait * 1000
    }
    expect(locks).toEqual([30, 60, 120, 240, 480, 900, 900])
  })

  it('forgets failures older than the window, and an account after a success', async () => {
    const keys = account()
    for (let i = 0; i < 4; i++) await throttle.failed(keys)
    now += 16 * 60_000
    await throttle.failed(keys)
    expect(await retryAfter(keys)).toBeUndefined()
    for (let i = 0; i < 3; i++) await throttle.failed(keys)
    await throttle.succeeded(keys)
    await throttle.failed(keys)
    expect(await retryAfter(keys)).toBeUndefined()
  })

  it('locks an address after 20 failures whatever accounts they named', async () => {
    const address: ThrottleKey = { kind: 'address', value: `192.0.2.${Math.floor(Math.random() * 250)}-${rand()}` }
    for (let i = 0; i < 20; i++) await throttle.failed([...account(), address])
    expect(await retryAfter([...account(), address])).toBe(30)
    expect(await retryAfter(account())).toBeUndefined()
  })
})
