import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { csrfField, csrfToken, csrfValid } from '../../../../lib/console/csrf.js'

/** The console forms' token: bound to one session, the same on every service, nothing stored. */
describe('the console CSRF token', () => {
  it.each([
    ['its own session token', (key: string) => csrfToken({ key }), true],
    ['nothing', () => undefined, false],
    ['an empty value', () => '', false],
    ['a number', () => 42, false],
    ['a value of another length', (key: string) => `${csrfToken({ key })}x`, false],
    ['a value over 100 characters', () => 'a'.repeat(101), false],
  ])('for a session, accepts %s: %s', (_what, presented, accepted) => {
    const key = 'a'.repeat(64)
    expect(csrfValid({ key }, presented(key))).toBe(accepted)
  })

  it("accepts a session's own token, never another session's", () => {
    const key = fc.stringMatching(/^[0-9a-f]{64}$/)
    fc.assert(
      fc.property(key, key, (mine, theirs) => {
        expect(csrfValid({ key: mine }, csrfToken({ key: mine }))).toBe(true)
        if (mine !== theirs) expect(csrfValid({ key: mine }, csrfToken({ key: theirs }))).toBe(false)
      }),
    )
  })

  it('is the hidden csrf_token field of a form', () => {
    expect(csrfField({ key: 'k' }).value).toBe(`<input type="hidden" name="csrf_token" value="${csrfToken({ key: 'k' })}" />`)
  })
})
