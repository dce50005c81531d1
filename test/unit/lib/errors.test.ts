import { describe, expect, it } from 'vitest'
import { isContention } from '../../../lib/errors.js'

describe('isContention', () => {
  it('counts an aborted transaction and a lost create as contention', () => {
    expect(isContention(Object.assign(new Error('10 ABORTED: too much contention'), { code: 10 }))).toBe(true)
    expect(isContention(Object.assign(new Error('6 ALREADY_EXISTS: Document already exists'), { code: 6 }))).toBe(true)
  })

  it("counts the emulator's closed transaction (a read after it aborted us for a concurrent one) as contention", () => {
    expect(isContention(Object.assign(new Error('3 INVALID_ARGUMENT: Transaction is invalid or closed.'), { code: 3 }))).toBe(true)
  })

  it('leaves other invalid arguments and plain errors alone', () => {
    expect(isContention(Object.assign(new Error('3 INVALID_ARGUMENT: Property array contains an invalid nested entity.'), { code: 3 }))).toBe(false)
    expect(isContention(new Error('boom'))).toBe(false)
    expect(isContention(undefined)).toBe(false)
  })
})
