import { afterAll, describe, expect, it } from 'vitest'
import { FIXTURES, operationsWorld } from '../../../support/operations.js'
import { call } from '../../../support/world.js'

/**
 * DESIGN.md invariant 6, for every service at once: each mutating operation (POST, PUT, PATCH,
 * DELETE) of every registered service's OpenAPI document is performed for real, and its audit
 * event is then found through the audit service. A new mutating operation without an entry in
 * FIXTURES (test/support/operations.ts) fails the first test: add one (what it needs, a valid
 * request, the event it leaves).
 */
describe('every mutating operation of every service leaves an audit event', async () => {
  const w = await operationsWorld()
  afterAll(() => w.close())
  const { world, ctx, audit, operations, appOf, scoped } = w

  it('has a fixture for each of them (add one to FIXTURES for a new operation)', () => {
    expect(operations.length).toBeGreaterThan(25)
    expect(operations.filter((o) => !FIXTURES[o.id]).map((o) => `${o.service} ${o.id} (${o.method.toUpperCase()} ${o.path})`)).toEqual([])
  })

  it.each(operations.filter((o) => FIXTURES[o.id]).map((o) => [`${o.service} ${o.id}`, o] as const))('%s', async (_, o) => {
    const m = await FIXTURES[o.id]!(ctx)
    const template = new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?.*)?$`)
    expect(`/api/v1${m.path}`).toMatch(template)
    const res = await call(appOf(o.service), o.method.toUpperCase(), `/api/v1${m.path}`, {
      token: m.token === null ? undefined : (m.token ?? world.owner.token),
      body: m.body,
      project: scoped(o.service) ? (m.project ?? world.project.id) : undefined,
      headers: m.headers,
    })
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300)
    if (typeof m.event !== 'function') return
    const { scope, entity, action } = m.event(res.body)
    const query = new URLSearchParams({ ...Object.fromEntries(Object.entries(scope)), entity, action })
    const found = await audit.api(`/events?${query}`)
    expect(found.status, JSON.stringify(found.body)).toBe(200)
    expect(found.body.length, `no ${action} event for ${entity} in ${JSON.stringify(scope)}`).toBeGreaterThan(0)
    expect(found.body[0]).toMatchObject({ action, outcome: 'success' })
  })
})
