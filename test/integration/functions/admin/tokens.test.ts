import { describe, expect, it, vi } from 'vitest'
import { sha256 } from '../../../../lib/ids.js'
import { call, createAdminApp, makeWorld } from '../../../support/world.js'

const DAY = 86_400_000

describe('admin: personal access tokens', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)
  const eventsFor = async (entityId: string) =>
    (await world.deps.db.col('audit_events').where('entity.id', '==', entityId).get()).docs.map((d) => d.data())

  it('creates a token shown once with the plat_pat_ prefix, 90 days by default, that authenticates the user', async () => {
    const analyst = await world.caller(['analyst'])
    const before = Date.now()
    const res = await call(app, 'POST', '/api/v1/users/me/tokens', { token: analyst.token, body: { name: 'laptop CLI' } })
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).toMatchObject({ name: 'laptop CLI', state: 'active', id: expect.any(String), created: expect.any(String) })
    expect(res.body.token).toMatch(/^plat_pat_[A-Za-z0-9_-]{40,}$/)
    expect(res.body.token.startsWith(res.body.hint)).toBe(true)
    const lifetime = Date.parse(res.body.expires_at) - before
    expect(lifetime).toBeGreaterThanOrEqual(90 * DAY - 5000)
    expect(lifetime).toBeLessThanOrEqual(90 * DAY + 5000)

    const me = await call(app, 'GET', '/api/v1/users/me', { token: res.body.token })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: analyst.user.id, auth_method: 'personal_token' })
  })

  it('stores only the SHA-256 of the value, never the value', async () => {
    const res = await call(app, 'POST', '/api/v1/users/me/tokens', { token: world.owner.token, body: { name: 'hashed' } })
    const snap = await world.deps.db.col('personal_tokens').doc(sha256(res.body.token)).get()
    expect(snap.exists).toBe(true)
    expect(JSON.stringify(snap.data())).not.toContain(res.body.token)
    const all = await world.deps.db.col('personal_tokens').get()
    expect(all.docs.some((d) => d.id === res.body.token || JSON.stringify(d.data()).includes(res.body.token))).toBe(false)
  })

  it('honours expires_in_days and expires_at', async () => {
    const inDays = await call(app, 'POST', '/api/v1/users/me/tokens', { token: world.owner.token, body: { name: 'a week', expires_in_days: 7 } })
    expect(inDays.status).toBe(201)
    expect(Math.abs(Date.parse(inDays.body.expires_at) - (Date.now() + 7 * DAY))).toBeLessThan(10_000)

    const at = new Date(Date.now() + 30 * DAY).toISOString()
    const atRes = await call(app, 'POST', '/api/v1/users/me/tokens', { token: world.owner.token, body: { name: 'a month', expires_at: at } })
    expect(atRes.status).toBe(201)
    expect(atRes.body.expires_at).toBe(at)
  })

  it.each([
    [{ expires_in_days: 0, name: 'x' }, /expires_in_days/],
    [{ expires_in_days: 367, name: 'x' }, /expires_in_days/],
    [{ expires_in_days: 1.5, name: 'x' }, /expires_in_days/],
    [{ name: 'x', expires_in_days: 5, expires_at: new Date(Date.now() + DAY).toISOString() }, /expires_at: send at most one/],
    [{ name: 'x', expires_at: new Date(Date.now() - DAY).toISOString() }, /expires_at: must be in the future/],
    [{ name: 'x', expires_at: new Date(Date.now() + 400 * DAY).toISOString() }, /expires_at: must be at most 366 days/],
    [{ name: 'x', expires_at: 'next tuesday' }, /expires_at/],
    [{ expires_in_days: 5 }, /name: required/],
    [{ name: '   ' }, /name/],
  ])('refuses %j with a 400 naming the field', async (body, detail) => {
    const res = await call(app, 'POST', '/api/v1/users/me/tokens', { token: world.owner.token, body })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ detail: expect.stringMatching(detail) })
  })

  it("lists the caller's tokens newest first with their state and last use, never their values", async () => {
    const user = await world.caller(['viewer'])
    const first = await call(app, 'POST', '/api/v1/users/me/tokens', { token: user.token, body: { name: 'first' } })
    const second = await call(app, 'POST', '/api/v1/users/me/tokens', { token: user.token, body: { name: 'second' } })
    await call(app, 'GET', '/api/v1/users/me', { token: second.body.token })
    // The last-use stamp is written in the background, off the request's path.
    await vi.waitFor(async () => {
      const listed = await call(app, 'GET', '/api/v1/users/me/tokens', { token: user.token })
      expect(listed.body.find((t: { name: string }) => t.name === 'second')?.last_used_at).toEqual(expect.any(String))
    })
    await call(app, 'DELETE', `/api/v1/users/me/tokens/${first.body.id}`, { token: user.token })
    const expired = await world.deps.tokens.createPersonal({
      userId: user.user.id,
      name: 'old',
      now: new Date(Date.now() - 10 * DAY),
      expiresAt: new Date(Date.now() - DAY),
    })

    const res = await call(app, 'GET', '/api/v1/users/me/tokens', { token: user.token })
    expect(res.status).toBe(200)
    const names = res.body.map((t: { name: string }) => t.name)
    expect(names.indexOf('second')).toBeLessThan(names.indexOf('first'))
    expect(names.indexOf('first')).toBeLessThan(names.indexOf('old'))
    const byName = Object.fromEntries(res.body.map((t: { name: string }) => [t.name, t]))
    expect(byName.first).toMatchObject({ state: 'revoked', revoked_at: expect.any(String) })
    expect(byName.second).toMatchObject({ state: 'active', last_used_at: expect.any(String) })
    expect(byName.old).toMatchObject({ state: 'expired', id: expired.record.id })
    const text = JSON.stringify(res.body)
    for (const value of [first.body.token, second.body.token, expired.value, user.token]) expect(text).not.toContain(value)
    for (const t of res.body) expect(t).not.toHaveProperty('token')
  })

  it('pages the token list', async () => {
    const user = await world.caller(['viewer'])
    for (const name of ['p1', 'p2', 'p3']) await call(app, 'POST', '/api/v1/users/me/tokens', { token: user.token, body: { name } })
    const page1 = await call(app, 'GET', '/api/v1/users/me/tokens?page_size=2', { token: user.token })
    expect(page1.body).toHaveLength(2)
    const next = page1.headers.get('x-next-page-token')
    expect(next).toBeTruthy()
    const page2 = await call(app, 'GET', `/api/v1/users/me/tokens?page_size=2&page_token=${next}`, { token: user.token })
    expect(page2.body).toHaveLength(2)
    expect(page2.headers.get('x-next-page-token')).toBeNull()
    const ids = [...page1.body, ...page2.body].map((t: { id: string }) => t.id)
    expect(new Set(ids).size).toBe(4)
  })

  it('revokes a token so that it stops working on the next request, idempotently', async () => {
    const user = await world.caller(['viewer'])
    const made = await call(app, 'POST', '/api/v1/users/me/tokens', { token: user.token, body: { name: 'to revoke' } })
    expect((await call(app, 'GET', '/api/v1/users/me', { token: made.body.token })).status).toBe(200)
    const del = await call(app, 'DELETE', `/api/v1/users/me/tokens/${made.body.id}`, { token: user.token })
    expect(del.status).toBe(204)
    const after = await call(app, 'GET', '/api/v1/users/me', { token: made.body.token })
    expect(after.status).toBe(401)
    expect(after.body).toEqual({ detail: 'token revoked' })
    expect((await call(app, 'DELETE', `/api/v1/users/me/tokens/${made.body.id}`, { token: user.token })).status).toBe(204)
  })

  it('answers 404 when revoking a token of another user or an unknown id, leaving it working', async () => {
    const alice = await world.caller(['viewer'])
    const bob = await world.caller(['viewer'])
    const alices = await call(app, 'POST', '/api/v1/users/me/tokens', { token: alice.token, body: { name: 'mine' } })
    const res = await call(app, 'DELETE', `/api/v1/users/me/tokens/${alices.body.id}`, { token: bob.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: 'token not found' })
    expect((await call(app, 'GET', '/api/v1/users/me', { token: alices.body.token })).status).toBe(200)
    expect((await call(app, 'DELETE', '/api/v1/users/me/tokens/no-such-id', { token: bob.token })).status).toBe(404)
  })

  it('records token.created and token.revoked without the value', async () => {
    const user = await world.caller(['viewer'])
    const made = await call(app, 'POST', '/api/v1/users/me/tokens', { token: user.token, body: { name: 'audited' } })
    await call(app, 'DELETE', `/api/v1/users/me/tokens/${made.body.id}`, { token: user.token })
    const events = await eventsFor(made.body.id)
    expect(events.map((e) => e.action).sort()).toEqual(['token.created', 'token.revoked'])
    for (const e of events) {
      expect(e.actor).toMatchObject({ type: 'user', id: user.user.id, auth_method: 'personal_token' })
      expect(e.entity).toEqual({ type: 'personal_token', id: made.body.id, parent: user.user.id })
      expect(JSON.stringify(e)).not.toContain(made.body.token)
    }
  })

  it('needs credentials for every token operation', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/users/me/tokens'],
      ['GET', '/api/v1/users/me/tokens'],
      ['DELETE', '/api/v1/users/me/tokens/x'],
    ] as const) {
      const res = await call(app, method, path, { body: method === 'POST' ? { name: 'x' } : undefined })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ detail: expect.any(String) })
    }
  })
})
