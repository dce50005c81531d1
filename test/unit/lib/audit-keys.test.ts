import { describe, expect, it } from 'vitest'
import { AuditKeyRing, newAuditKeyEntry } from '../../../lib/audit-keys.js'

const key = (bytes = 32, fill = 7) => Buffer.alloc(bytes, fill).toString('base64')

describe('the audit key ring', () => {
  it.each<[string, string, string | undefined, string[], string]>([
    ['one key, active without naming it', `k1:${key()}`, undefined, ['k1'], 'k1'],
    ['several keys, the active one named', `k1:${key()},k2:${key(32, 8)}`, 'k2', ['k1', 'k2'], 'k2'],
    ['spaces and a trailing newline, as a secret file may have', ` k1:${key()} ,\tk-2.b_c:${key(48)}\n`, 'k1', ['k1', 'k-2.b_c'], 'k1'],
    ['a base64url key', `k1:${Buffer.alloc(32, 251).toString('base64url')}`, undefined, ['k1'], 'k1'],
  ])('reads %s', (_, text, active, ids, activeId) => {
    const ring = AuditKeyRing.parse(text, active)
    expect(ring.ids).toEqual(ids)
    expect(ring.activeId).toBe(activeId)
  })

  it.each<[string, string, string | undefined, RegExp]>([
    ['an entry without an id', key(), undefined, /^entry 1 is not <id>:<base64 key>/],
    ['an id with a space', `my key:${key()}`, undefined, /^entry 1 is not/],
    ['a key shorter than 32 bytes', `k1:${key(31)}`, undefined, /^key k1 is not 32 or more bytes in base64$/],
    ['a key that is not base64', `k1:${'!'.repeat(44)}`, undefined, /^key k1 is not 32 or more bytes/],
    ['an id twice', `k1:${key()},k1:${key(32, 9)}`, undefined, /^key k1 appears twice$/],
    ['an empty entry', `k1:${key()},`, 'k1', /^entry 2 is not/],
    ['several keys and no active one', `k1:${key()},k2:${key()}`, undefined, /name the one new events use in AUDIT_HMAC_ACTIVE_KEY/],
    ['an active key not in the ring', `k1:${key()}`, 'k2', /^the active key k2 \(AUDIT_HMAC_ACTIVE_KEY\) is not in the ring$/],
  ])('refuses %s, never quoting a key', (_, text, active, message) => {
    let error: Error | undefined
    try {
      AuditKeyRing.parse(text, active)
    } catch (err) {
      error = err as Error
    }
    expect(error?.message).toMatch(message)
    for (const entry of text.split(',')) {
      const secret = entry.slice(entry.indexOf(':') + 1).trim()
      if (secret.length > 8) expect(error?.message).not.toContain(secret)
    }
  })

  it('keys by id: the same text gives the same MAC under one key and another under a different key', () => {
    const ring = AuditKeyRing.parse(`k1:${key()},k2:${key(32, 8)}`, 'k1')
    expect(ring.mac('k1', 'text')).toMatch(/^[0-9a-f]{64}$/)
    expect(ring.mac('k1', 'text')).toBe(AuditKeyRing.parse(`other:${key()}`).mac('other', 'text'))
    expect(ring.mac('k2', 'text')).not.toBe(ring.mac('k1', 'text'))
    expect(ring.mac('k3', 'text')).toBeUndefined()
    expect(ring.verify('k1', 'text', ring.mac('k1', 'text')!)).toBe(true)
    expect(ring.verify('k1', 'text', ring.mac('k2', 'text')!)).toBe(false)
    expect(ring.verify('k1', 'text', 'short')).toBe(false)
    expect(ring.verify('k3', 'text', ring.mac('k1', 'text')!)).toBeUndefined()
  })

  it('makes new entries of 32 random bytes that the ring reads', () => {
    const [a, b] = [newAuditKeyEntry('2026-03'), newAuditKeyEntry('2026-04')]
    expect(a).toMatch(/^2026-03:[A-Za-z0-9+/]{43}=$/)
    expect(AuditKeyRing.parse(`${a},${b}`, '2026-04').ids).toEqual(['2026-03', '2026-04'])
    expect(a.split(':')[1]).not.toBe(b.split(':')[1])
    expect(() => newAuditKeyEntry('no spaces')).toThrow(/is not a key id/)
  })
})
