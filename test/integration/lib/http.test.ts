import { createRoute, z } from '@hono/zod-openapi'
import { describe, expect, it } from 'vitest'
import { conflict } from '../../../lib/errors.js'
import { API_PREFIX, createServiceApp, resourceApp } from '../../../lib/http.js'
import { commonErrors, json } from '../../../lib/openapi.js'
import { testKernel } from '../../support/env.js'
import { call, makeWorld } from '../../support/world.js'

/** A service built with the kernel's factory, with routes that fail in each way a handler can. */
async function failingService() {
  const world = await makeWorld()
  const deps = { ...testKernel('errors-test'), db: world.deps.db, access: world.deps.access, tokens: world.deps.tokens, audit: world.deps.audit }
  const app = createServiceApp({ name: 'test', title: 'Test service', description: 'errors', deps, projectScoped: false })
  const routes = resourceApp()
  routes.openapi(
    createRoute({
      method: 'post',
      path: '/things',
      request: {
        body: { content: { 'application/json': { schema: z.object({ name: z.string().min(1), count: z.number().int() }) } }, required: true },
      },
      responses: { 201: json(z.object({ ok: z.boolean() })), ...commonErrors },
    }),
    (c) => c.json({ ok: true }, 201),
  )
  routes.get('/boom', () => {
    throw new Error('secret internals at /srv/app.ts:42')
  })
  routes.get('/contended/:code', (c) => {
    throw Object.assign(new Error(`${c.req.param('code')} from Firestore`), { code: Number(c.req.param('code')) })
  })
  routes.get('/taken', () => {
    throw conflict('that name is taken')
  })
  app.route(API_PREFIX, routes)
  return { app, token: world.owner.token }
}

describe('the one error shape', async () => {
  const { app, token } = await failingService()

  it('answers an unexpected error with 500 { detail: "internal error" } and no stack or message', async () => {
    const res = await call(app, 'GET', '/api/v1/boom', { token })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ detail: 'internal error' })
  })

  it('maps a typed error to its own status', async () => {
    const res = await call(app, 'GET', '/api/v1/taken', { token })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({ detail: 'that name is taken' })
  })

  it.each([
    ['aborted (10)', 10],
    ['beaten to a create (6, ALREADY_EXISTS)', 6],
  ])('answers a transaction that lost to concurrent ones, %s, with a 409 asking for a retry, not a 500', async (_name, code) => {
    const res = await call(app, 'GET', `/api/v1/contended/${code}`, { token })
    expect(res.status).toBe(409)
    expect(res.body).toEqual({ detail: expect.stringMatching(/concurrent requests; nothing was saved, send the request again/) })
  })

  it('names every invalid field of a body in one 400', async () => {
    const res = await call(app, 'POST', '/api/v1/things', { token, body: { count: 1.5 } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/name: required/)
    expect(res.body.detail).toMatch(/count:/)
  })

  it('answers a malformed JSON body with a 400, not a 500', async () => {
    const res = await call(app, 'POST', '/api/v1/things', { token, headers: { 'content-type': 'application/json' }, body: undefined })
    const raw = await app.request('/api/v1/things', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"name": ',
    })
    expect(raw.status).toBe(400)
    expect(Object.keys((await raw.json()) as object)).toEqual(['detail'])
    expect(res.status).toBe(400)
  })

  it('answers an unknown route with 404 { detail }', async () => {
    const res = await call(app, 'GET', '/nowhere')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: expect.stringContaining('/nowhere') })
  })

  it('asks for credentials before anything else under /api/v1', async () => {
    const res = await call(app, 'GET', '/api/v1/boom')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  it("echoes the caller's X-Request-ID, or makes one", async () => {
    const given = await call(app, 'GET', '/api/v1/taken', { token, headers: { 'x-request-id': 'req-123' } })
    expect(given.headers.get('x-request-id')).toBe('req-123')
    const made = await call(app, 'GET', '/api/v1/taken', { token })
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })
})
