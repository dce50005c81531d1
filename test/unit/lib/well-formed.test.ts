import { describe, expect, it } from 'vitest'
import { firstIllFormed } from '../../../lib/well-formed.js'

describe('firstIllFormed finds the first lone surrogate in a parsed JSON body', () => {
  it.each([
    ['a plain object', { name: 'Exome', n: 3, ok: true, none: null }, undefined],
    ['a surrogate pair (one code point)', { name: 'Exome 🧬' }, undefined],
    ['a high surrogate alone', { name: 'x\uD800' }, { path: 'name', unit: '\\uD800' }],
    ['a low surrogate alone', { name: '\uDC00x' }, { path: 'name', unit: '\\uDC00' }],
    ['pair halves in the wrong order', { name: '\uDC00\uD800' }, { path: 'name', unit: '\\uDC00' }],
    ['deep in arrays and objects', { a: [{ b: 'ok' }, { c: ['fine', 'bad\uDBFF'] }] }, { path: 'a.1.c.1', unit: '\\uDBFF' }],
    ['in a key', { ['k\uD83D']: 'v' }, { path: 'k\uD83D', unit: '\\uD83D' }],
    ['the body itself a string', 'x\uD800', { path: '', unit: '\\uD800' }],
  ])('%s', (_name, body, expected) => {
    expect(firstIllFormed(body)).toEqual(expected)
  })
})

describe('firstIllFormed on deep bodies', () => {
  it('walks a body nested 100,000 levels without overflowing the stack', () => {
    let body: unknown = 'leaf\uD800'
    for (let i = 0; i < 100_000; i++) body = { a: body }
    const found = firstIllFormed(body)
    expect(found?.unit).toBe('\\uD800')
    expect(found?.path.split('.')).toHaveLength(100_000)
  })
})
