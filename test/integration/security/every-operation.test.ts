import { randomUUID } from 'node:crypto'
import { SignJWT, UnsecuredJWT } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { SESSION_COOKIE } from '../../../lib/http.js'
import { FIXTURES, operationsWorld, type Operation } from '../../support/operations.js'
import { call } from '../../support/world.js'

/**
 * An attacker's checklist (OWASP API Security Top 10, 2023), run against every mutating operation
 * of every service of the registry, so a service is covered the day it is added:
 *  - API2 broken authentication: forged and foreign credentials are 401;
 *  - API1 broken object-level authorization: another tenant's caller never changes this tenant's records;
 *  - API3 broken object property level authorization: server-owned fields in a body are never taken;
 *  - API4 unrestricted resource consumption: a body over 1 MiB is a 413 before anything reads it;
 *  - cross-site request forgery: the session cookie from a foreign origin is refused.
 * Throttling and grant escalation have their own tests (test/integration/functions/admin/
 * throttle.test.ts and escalation.test.ts).
 */
describe('every mutating operation of every service resists', async () => {
  const w = await operationsWorld()
  afterAll(() => w.close())
  const { world, ctx, operations, appOf, scoped } = w
  const withFixture = operations.filter((o) => FIXTURES[o.id])
  const guarded = operations.filter((o) => !o.isPublic)
  const concrete = (path: string) => `/api/v1${path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000')}`
  const label = (o: Operation) => `${o.service} ${o.id}`
  const hasBody = (o: Operation) => ['post', 'put', 'patch'].includes(o.method)

  // Another tenant: an organization and project of their own, where they are owner.
  const elsewhere = await world.otherProject()
  const stranger = await world.caller(['owner'], elsewhere.project)

  describe('forged and foreign credentials (401)', async () => {
    const now = Math.floor(Date.now() / 1000)
    const forged: Array<[string, string]> = [
      ['an unsigned JWT (alg none)', new UnsecuredJWT({ sub: 'attacker', exp: now + 600 }).setIssuer('https://evil.example').encode()],
      [
        'a JWT signed with a key of its own',
        await new SignJWT({ sub: 'attacker' })
          .setProtectedHeader({ alg: 'HS256' })
          .setExpirationTime('10m')
          .sign(new TextEncoder().encode('x'.repeat(32))),
      ],
      ['an unknown personal token', `plat_pat_${randomUUID().replaceAll('-', '')}`],
      ['an unknown service token', `plat_sat_${randomUUID().replaceAll('-', '')}`],
      ['a token of no known kind', 'definitely-not-a-token'],
    ]
    it.each(guarded.flatMap((o) => forged.map(([what, token]) => [`${label(o)} with ${what}`, o, token] as const)))('%s', async (_, o, token) => {
      const res = await call(appOf(o.service), o.method.toUpperCase(), concrete(o.path), {
        token,
        project: scoped(o.service) ? world.project.id : undefined,
        body: hasBody(o) ? {} : undefined,
      })
      expect([401, 429], JSON.stringify(res.body)).toContain(res.status)
      expect(res.body.detail).toEqual(expect.any(String))
    })
  })

  describe('a request body over 1 MiB (413)', () => {
    it.each(guarded.filter(hasBody).map((o) => [label(o), o] as const))('%s', async (_, o) => {
      const res = await call(appOf(o.service), o.method.toUpperCase(), concrete(o.path), {
        token: world.owner.token,
        project: scoped(o.service) ? world.project.id : undefined,
        body: { padding: 'x'.repeat(1024 * 1024 + 1) },
      })
      expect(res.status).toBe(413)
      expect(res.body).toEqual({ detail: 'the request body is larger than 1 MiB' })
    })
  })

  describe('the session cookie sent from a foreign origin (403)', async () => {
    const session = await world.deps.tokens.createSession({ userId: world.owner.user.id, ttlSeconds: 3600, now: new Date(), effectiveRoles: {} })
    it.each(guarded.map((o) => [label(o), o] as const))('%s', async (_, o) => {
      const res = await call(appOf(o.service), o.method.toUpperCase(), concrete(o.path), {
        project: scoped(o.service) ? world.project.id : undefined,
        body: hasBody(o) ? {} : undefined,
        headers: { cookie: `${SESSION_COOKIE}=${session.value}`, origin: 'https://evil.example.com' },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(403)
      expect(res.body.detail).toMatch(/cross-origin request refused/)
    })
  })

  describe("another tenant's owner, on this tenant's records (403 or 404, nothing changed; what they create is theirs)", () => {
    it.each(withFixture.filter((o) => !o.isPublic).map((o) => [label(o), o] as const))('%s', async (_, o) => {
      const m = await FIXTURES[o.id]!(ctx)
      if (m.token === null) return // sign-in steps act on the credential they carry, not on a tenant's records
      // Their own project in X-Project-ID (the other way round, this project with no role there, is the tenancy 403 of every request).
      const res = await call(appOf(o.service), o.method.toUpperCase(), `/api/v1${m.path}`, {
        token: stranger.token,
        body: m.body,
        project: scoped(o.service) ? elsewhere.project.id : undefined,
        headers: m.headers,
      })
      if (o.path.includes('{')) {
        // The path names this tenant's record: as if it did not exist, or refused.
        expect([403, 404], `${res.status} ${JSON.stringify(res.body)}`).toContain(res.status)
      } else if (res.status < 300) {
        // A creation: it lands in the caller's own project, never in this one.
        if (res.body?.project_id !== undefined) expect(res.body.project_id).toBe(elsewhere.project.id)
      } else {
        // A creation whose body names this tenant's records: refused as unknown there.
        expect([400, 403, 404], `${res.status} ${JSON.stringify(res.body)}`).toContain(res.status)
      }
      // The request still works for this tenant: nothing was consumed by the refused one.
      const ok = await call(appOf(o.service), o.method.toUpperCase(), `/api/v1${m.path}`, {
        token: m.token ?? world.owner.token,
        body: m.body,
        project: scoped(o.service) ? (m.project ?? world.project.id) : undefined,
        headers: m.headers,
      })
      expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300)
    })
  })

  describe('server-owned fields slipped into a body (never taken)', () => {
    const injected = {
      id: '00000000-0000-4000-8000-00000000beef',
      project_id: '00000000-0000-4000-8000-00000000dead',
      org_id: '00000000-0000-4000-8000-00000000f00d',
      created_by: 'attacker',
      created: '1999-01-01T00:00:00.000Z',
      updated: '1999-01-01T00:00:00.000Z',
      scope: 'platform',
      platform_admin: true,
    }
    const bodied = withFixture.filter((o) => hasBody(o) && !o.isPublic)
    it.each(bodied.map((o) => [label(o), o] as const))('%s', async (_, o) => {
      const m = await FIXTURES[o.id]!(ctx)
      if (!m.body || typeof m.body !== 'object' || Array.isArray(m.body)) return
      const res = await call(appOf(o.service), o.method.toUpperCase(), `/api/v1${m.path}`, {
        token: m.token ?? world.owner.token,
        body: { ...injected, ...(m.body as object) },
        project: scoped(o.service) ? (m.project ?? world.project.id) : undefined,
        headers: m.headers,
      })
      // Refused as unknown fields, or accepted with the fields ignored: never echoed back as the record's own.
      if (res.status >= 300) {
        expect(res.status, JSON.stringify(res.body)).toBe(400)
        return
      }
      const text = JSON.stringify(res.body ?? {})
      for (const value of [injected.id, injected.project_id, injected.org_id, injected.created, '"attacker"']) expect(text).not.toContain(value)
    })
  })
})
