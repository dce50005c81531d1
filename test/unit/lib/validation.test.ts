import { describe, expect, it } from 'vitest'
import { storableProblem, type StorableLimits } from '../../../lib/validation.js'

const limits: StorableLimits = { maxDepth: 3, maxBytes: 100, maxValues: 20 }

describe('storable JSON', () => {
  it.each([
    ['a flat object', { a: 1, b: 'x', c: null, d: true }],
    ['an array of objects', { list: [{ a: 1 }, { b: 2 }] }],
    ['nesting up to the limit', { a: { b: { c: 1 } } }],
  ])('accepts %s', (_, value) => {
    expect(storableProblem(value, limits)).toBeUndefined()
  })

  it.each([
    ['nesting past the limit', { a: { b: { c: { d: 1 } } } }, { path: ['a', 'b', 'c'], message: 'nested deeper than 3 levels' }],
    ['an array in an array', { m: [[1]] }, { path: ['m', 0], message: 'an array directly inside an array cannot be stored; put it in an object' }],
    ['an empty key', { '': 1 }, { path: [], message: "'' is not a usable key" }],
    ['a reserved key', { a: { __id__: 1 } }, { path: ['a'], message: "'__id__' is not a usable key" }],
    [
      'too many values',
      Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i])),
      { path: [], message: 'more than 20 keys and values' },
    ],
    ['too many bytes', { s: 'x'.repeat(200) }, { path: [], message: '1 KiB is more than the 0 KiB that can be stored; pass large values as files' }],
  ])('refuses %s, saying where', (_, value, problem) => {
    expect(storableProblem(value, limits)).toEqual(problem)
  })

  it('walks 100,000 levels without exhausting the stack', () => {
    let value: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) value = { a: value }
    expect(storableProblem(value, limits)?.message).toBe('nested deeper than 3 levels')
  })
})
