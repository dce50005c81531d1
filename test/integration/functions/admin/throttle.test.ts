import { randomUUID } from 'node:crypto'
import { importPKCS8, SignJWT } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { call, createAdminApp, makeWorld } from '../../../support/world.js'
import { startLoginStack } from '../../../support/oidc.js'

/**
 * Login throttling on the wire (OWASP API2): wrong passwords past the threshold answer 429 with
 * Retry-After, the right password included, and a known and an unknown e-mail are answered alike.
 * Each test comes from an address of its own (the suite trusts one proxy hop here).
 */
describe('admin: failed logins are throttled', async () => {
  const stack = await startLoginStack({ TRUSTED_PROXY_HOPS: '1' })
  afterAll(() => stack.stop())
  const login = (email: string, password: string, address: string) =>
    call(stack.app, 'POST', '/api/v1/auth/password', { body: { email, password }, headers: { 'x-forwarded-for': `203.0.113.9, ${address}` } })
  const newAddress = () => `2001:db8::${randomUUID().slice(0, 4)}:${randomUUID().slice(0, 4)}`

  it('answers 429 with Retry-After from the sixth wrong password, and to the right one while locked', async () => {
    const address = newAddress()
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await login(stack.user.email, 'wrong', address)).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429])
    const right = await login(stack.user.email, stack.user.password, address)
    expect(right.status).toBe(429)
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(right.body.detail).toMatch(/^too many failed attempts; try again in \d+ s$/)
  })

  it('answers an unknown e-mail exactly as a known one: the same statuses and the same lock', async () => {
    const address = newAddress()
    const unknown = `nobody-${randomUUID()}@example.org`
    const answers: Array<[number, string | null]> = []
    for (let i = 0; i < 7; i++) {
      const res = await login(unknown, 'wrong', address)
      answers.push([res.status, res.headers.get('retry-after')])
    }
    expect(answers.map(([s]) => s)).toEqual([401, 401, 401, 401, 401, 429, 429])
    expect(answers.slice(5).every(([, r]) => Number(r) > 25 && Number(r) <= 30)).toBe(true)
  })

  it('locks an address guessing many accounts, without locking those accounts elsewhere', async () => {
    const address = newAddress()
    const guessed = Array.from({ length: 20 }, (_, i) => `guess-${i}-${randomUUID()}@example.org`)
    for (const email of guessed) expect((await login(email, 'wrong', address)).status).toBe(401)
    expect((await login(`fresh-${randomUUID()}@example.org`, 'wrong', address)).status).toBe(429)
    expect((await login(guessed[0]!, 'wrong', newAddress())).status).toBe(401)
  })

  it('throttles guessed personal access tokens per address: 429 once twenty unknown values came from it, a valid token included', async () => {
    const address = newAddress()
    const me = (token: string, from = address) =>
      call(stack.app, 'GET', '/api/v1/users/me', { token, headers: { 'x-forwarded-for': `203.0.113.9, ${from}` } })
    const statuses: number[] = []
    for (let i = 0; i < 21; i++) statuses.push((await me(`plat_pat_${randomUUID().replaceAll('-', '')}`)).status)
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true)
    expect(statuses[20]).toBe(429)
    const valid = await me(stack.world.owner.token)
    expect(valid.status).toBe(429)
    expect(Number(valid.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await me(stack.world.owner.token, newAddress())).status).toBe(200)
  })

  it('ignores X-Forwarded-For when no proxy is trusted, so a client cannot pick a fresh address per attempt', async () => {
    const direct = await startLoginStack()
    try {
      const statuses: number[] = []
      for (let i = 0; i < 7; i++) {
        const res = await call(direct.app, 'POST', '/api/v1/auth/password', {
          body: { email: direct.user.email, password: 'wrong' },
          headers: { 'x-forwarded-for': newAddress() },
        })
        statuses.push(res.status)
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429])
    } finally {
      await direct.stop()
    }
  })
})

describe('admin: failed token exchanges are throttled per key', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)

  it('answers 429 from the sixth failed assertion with one key, and to a valid one while locked', async () => {
    const su = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: world.owner.token,
      body: { name: `bot-${randomUUID().slice(0, 8)}` },
    })
    const key = await call(app, 'POST', `/api/v1/service-users/${su.body.id}/keys`, { token: world.owner.token })
    const privateKey = await importPKCS8(key.body.private_key_pem, 'ES256')
    const assertion = (aud: string) => {
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ iss: su.body.id, sub: su.body.id, aud, iat: now, exp: now + 300, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', kid: key.body.key_id })
        .sign(privateKey)
    }
    const exchange = async (aud: string) =>
      call(app, 'POST', '/api/v1/oauth/token', {
        body: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await assertion(aud) },
      })
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await exchange('https://elsewhere.example.org/token')).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    const valid = await exchange(key.body.token_endpoint)
    expect(valid.status).toBe(429)
    expect(Number(valid.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})
