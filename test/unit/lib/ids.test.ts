import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { idsNamedBy, newNamingSecret, newSecret, TOKEN_PREFIX } from '../../../lib/ids.js'

describe('credential values that name their records (newNamingSecret, idsNamedBy)', () => {
  it('names the ids after 43 random characters, and reads them back', () => {
    const [user, key] = [randomUUID(), randomUUID()]
    const value = newNamingSecret(TOKEN_PREFIX.service, [user, key])
    expect(value).toMatch(/^plat_sat_[A-Za-z0-9_-]{87}$/)
    expect(idsNamedBy(TOKEN_PREFIX.service, value, 2)).toEqual([user, key])
  })

  it('keeps the start of the value random, so the hint shown for a token tells the tokens of one account apart', () => {
    const user = randomUUID()
    const hints = new Set(Array.from({ length: 20 }, () => newNamingSecret(TOKEN_PREFIX.personal, [user]).slice(0, TOKEN_PREFIX.personal.length + 4)))
    expect(hints.size).toBeGreaterThan(15)
  })

  it('names nothing in a value of another length: one issued before values named their records, or one naming another count', () => {
    expect(idsNamedBy(TOKEN_PREFIX.personal, newSecret(TOKEN_PREFIX.personal), 1)).toEqual([])
    expect(idsNamedBy(TOKEN_PREFIX.personal, newNamingSecret(TOKEN_PREFIX.personal, [randomUUID(), randomUUID()]), 1)).toEqual([])
    expect(idsNamedBy(TOKEN_PREFIX.personal, 'plat_pat_short', 1)).toEqual([])
  })

  it('names no id that is not a UUID', () => {
    const value = newNamingSecret(TOKEN_PREFIX.session, ['seed-admin'])
    expect(value).toMatch(/^plat_ses_[A-Za-z0-9_-]{43}$/)
    expect(idsNamedBy(TOKEN_PREFIX.session, value, 1)).toEqual([])
  })
})
