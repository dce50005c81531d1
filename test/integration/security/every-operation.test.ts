import { randomUUID } from 'node:crypto'
import { SignJWT, UnsecuredJWT } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { API_PREFIX, SESSION_COOKIE } from '../../../lib/http.js'
import { FIXTURES, operationsWorld, type Operation } from '../../support/operations.js'
import {
  pagesOf,
  OWN_PAGES,
  PAGE_FIXTURES,
  PUBLIC_PAGES,
  PUBLIC_READS,
  READ_FIXTURES,
  STANDARD_READ_FIXTURES,
  standardReadsOf,
  strangerTenant,
  tenantRecords,
  type Read,
} from '../../support/read-operations.js'
import { call } from '../../support/world.js'
import { SERVICES } from '../../../functions/services.js'

/**
 * An attacker's checklist (OWASP API Security Top 10, 2023), run against every operation of every
 * service of the registry, so a service is covered the day it is added:
 *  - API2 broken authentication: forged and foreign credentials are 401, on every operation;
 *  - API1 broken object-level authorization: another tenant's caller never changes this tenant's
 *    records (every mutating operation), never reads one by its id and never finds one in a list,
 *    whatever the filters (every read, and the browser pages);
 *  - API3 broken object property level authorization: server-owned fields in a body are never taken;
 *  - API4 unrestricted resource consumption: a body over 1 MiB is a 413 before anything reads it;
 *  - cross-site request forgery: the session cookie from a foreign origin is refused.
 * Throttling and grant escalation have their own tests (test/integration/functions/admin/
 * throttle.test.ts and escalation.test.ts).
 */
describe('every operation of every service resists', async () => {
  const w = await operationsWorld()
  afterAll(() => w.close())
  const { world, ctx, operations, reads, appOf, scoped } = w
  const withFixture = operations.filter((o) => FIXTURES[o.id])
  const guarded = operations.filter((o) => !o.isPublic)
  // The documents' paths begin with /api/v1.
  const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000')
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
      ['an unknown CLI access credential', `plat_cli_${randomUUID().replaceAll('-', '')}`],
      ['a CLI refresh credential (never a Bearer token)', `plat_clr_${randomUUID().replaceAll('-', '')}`],
      ['a token of no known kind', 'definitely-not-a-token'],
    ]
    const everyGuarded = [...guarded, ...reads.filter((o) => !o.isPublic)]
    it.each(everyGuarded.flatMap((o) => forged.map(([what, token]) => [`${label(o)} with ${what}`, o, token] as const)))(
      '%s',
      async (_, o, token) => {
        const res = await call(appOf(o.service), o.method.toUpperCase(), concrete(o.path), {
          token,
          project: scoped(o.service) ? world.project.id : undefined,
          body: hasBody(o) ? {} : undefined,
        })
        expect([401, 429], JSON.stringify(res.body)).toContain(res.status)
        expect(res.body.detail).toEqual(expect.any(String))
      },
    )
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

  describe("another tenant's owner, reading this tenant's records (never by id, never in a list)", async () => {
    const t = await tenantRecords(ctx, w.storage)
    const stranger = await strangerTenant(world)
    const guardedReads = reads.filter((o) => !o.isPublic)
    /** The read as the stranger makes it, and as this tenant's owner does (in their own scope). */
    const read = (o: Operation): Read => READ_FIXTURES[o.id]!(t, stranger)
    const ownersRead = (o: Operation): Read => READ_FIXTURES[o.id]!(t, t)
    /** Reads of one record (named in the path, `/subjects/{id}`, or in the query), and the others (lists, and the caller's own). */
    const isRecord = (o: Operation) => o.path.includes('{') || read(o).record === true
    const byId = guardedReads.filter(isRecord)
    const lists = guardedReads.filter((o) => !isRecord(o))
    const as = (o: Operation, path: string, token: string, project?: string) =>
      call(appOf(o.service), 'GET', `${API_PREFIX}${path}`, { token, project: scoped(o.service) ? project : undefined })
    /** This tenant's ids in an answer (its headers and body), but those the request named itself (an error may say what it did not find). */
    const leaked = (res: { status: number; headers: Headers; body: unknown }, path: string, never: string[] = []) => {
      let text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '')
      res.headers.forEach((value, name) => (text += `\n${name}: ${value}`))
      const named = decodeURIComponent(path)
      return [...t.ids.filter((id) => !named.includes(id)), ...(res.status < 300 ? never : [])].filter((id) => text.includes(id))
    }

    it('has a fixture for every read of every service, and lists the public ones', () => {
      expect(guardedReads.filter((o) => !READ_FIXTURES[o.id]).map(label)).toEqual([])
      expect(Object.keys(READ_FIXTURES).filter((id) => !guardedReads.some((o) => o.id === id))).toEqual([])
      expect(reads.filter((o) => o.isPublic).map((o) => o.id)).toEqual(PUBLIC_READS)
      const pages = SERVICES.flatMap((s) => pagesOf(appOf(s.name)).map((p) => `${s.name} ${p}`))
      expect(pages.filter((p) => !PUBLIC_PAGES.includes(p.slice(p.indexOf(' ') + 1)) && !PAGE_FIXTURES[p])).toEqual([])
      expect(Object.keys(PAGE_FIXTURES).filter((p) => !pages.includes(p))).toEqual([])
      const standard = SERVICES.flatMap((s) => standardReadsOf(appOf(s.name)).map((p) => `${s.name} ${p}`))
      expect(standard.filter((p) => !STANDARD_READ_FIXTURES[p])).toEqual([])
      expect(Object.keys(STANDARD_READ_FIXTURES).filter((p) => !standard.includes(p))).toEqual([])
    })

    // Lists (and their page tokens) before the filtered reads: the stranger's own audit log, which records
    // their queries, then holds none of this tenant's ids that their later requests name.
    describe('every list, in their own project: nothing of this tenant', () => {
      it.each(lists.map((o) => [label(o), o] as const))('%s', async (_, o) => {
        const { path, never } = read(o)
        // This tenant's owner finds its records there: the list would show them if it leaked.
        const mine = await as(o, ownersRead(o).path, world.owner.token, world.project.id)
        expect(mine.status, `this tenant's owner: ${JSON.stringify(mine.body)}`).toBeLessThan(300)
        expect(leaked(mine, '')).not.toEqual([])
        const res = await as(o, path, stranger.token, stranger.project.id)
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300)
        expect(leaked(res, path, never)).toEqual([])
        if (scoped(o.service)) {
          const here = await as(o, path, stranger.token, world.project.id)
          expect(here.status, JSON.stringify(here.body)).toBe(403)
          expect(leaked(here, path)).toEqual([])
        }
      })
    })

    describe("every paged list, with a page token of this tenant's list: refused, or nothing of this tenant", () => {
      const withPage = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`
      it.each(lists.map((o) => [label(o), o] as const))('%s', async (_, o) => {
        const mine = await as(o, withPage(ownersRead(o).path, 'page_size=1'), world.owner.token, world.project.id)
        const token = mine.headers.get('x-next-page-token')
        // A cursor is not a capability: replayed elsewhere, it never reaches the records it came from.
        if (!token) return
        const path = withPage(read(o).path, `page_size=1&page_token=${encodeURIComponent(token)}`)
        const res = await as(o, path, stranger.token, stranger.project.id)
        expect([200, 400], JSON.stringify(res.body)).toContain(res.status)
        expect(leaked(res, read(o).path, read(o).never)).toEqual([])
      })
    })

    describe("every read filtered by this tenant's records, or naming its bucket: refused, or nothing of this tenant", () => {
      const filtered = guardedReads.flatMap((o) =>
        (read(o).filtered ?? []).map((path) => [`${label(o)} ${path.slice(path.indexOf('?'))}`, o, path] as const),
      )
      it.each(filtered)('%s', async (_, o, path) => {
        const res = await as(o, path, stranger.token, stranger.project.id)
        expect(res.status, JSON.stringify(res.body)).not.toBe(500)
        expect(leaked(res, path, read(o).never)).toEqual([])
        if (res.status < 300 && Array.isArray(res.body)) expect(res.body).toEqual([])
      })
    })

    describe('every read of a record by its id: 403 or 404, in their project or in this one', () => {
      it.each(byId.map((o) => [label(o), o] as const))('%s', async (_, o) => {
        const { path } = read(o)
        const mine = await as(o, path, world.owner.token, world.project.id)
        expect(mine.status, `this tenant's owner: ${JSON.stringify(mine.body)}`).toBeLessThan(300)
        const theirs = await as(o, path, stranger.token, stranger.project.id)
        expect([403, 404], `${theirs.status} ${JSON.stringify(theirs.body)}`).toContain(theirs.status)
        expect(leaked(theirs, path)).toEqual([])
        if (scoped(o.service)) {
          // This project in X-Project-ID, where they hold no role: the tenancy check refuses it.
          const here = await as(o, path, stranger.token, world.project.id)
          expect(here.status, JSON.stringify(here.body)).toBe(403)
          expect(leaked(here, path)).toEqual([])
        }
      })
    })

    describe('every read of the standard APIs (GA4GH WES): 404 for a record, nothing of this tenant in a list, 403 in this project', () => {
      it.each(Object.entries(STANDARD_READ_FIXTURES))('%s', async (key, fixture) => {
        const app = appOf(key.slice(0, key.indexOf(' ')))
        const { path, record } = fixture(t)
        const mine = await call(app, 'GET', path, { token: world.owner.token, project: world.project.id })
        expect(mine.status, `this tenant's owner: ${JSON.stringify(mine.body)}`).toBe(200)
        const theirs = await call(app, 'GET', path, { token: stranger.token, project: stranger.project.id })
        expect(theirs.status, JSON.stringify(theirs.body)).toBe(record ? 404 : 200)
        expect(leaked(theirs, path)).toEqual([])
        const here = await call(app, 'GET', path, { token: stranger.token, project: world.project.id })
        expect(here.status, JSON.stringify(here.body)).toBe(403)
        expect(leaked(here, path)).toEqual([])
      })
    })

    describe("every browser page of this tenant's records, with their own session: not found (or their own records only)", async () => {
      const pages = Object.entries(PAGE_FIXTURES).flatMap(([key, fixture]) => (fixture === 'public' ? [] : [[key, fixture] as const]))
      const owners = await world.deps.tokens.createSession({ userId: world.owner.user.id, ttlSeconds: 3600, now: new Date(), effectiveRoles: {} })
      it.each(pages)('%s', async (key, fixture) => {
        const app = appOf(key.slice(0, key.indexOf(' ')))
        const path = fixture(t)
        const mine = await call(app, 'GET', path, { headers: { cookie: `${SESSION_COOKIE}=${owners.value}` } })
        expect(mine.status, `this tenant's owner: ${mine.status}`).not.toBe(404)
        const res = await call(app, 'GET', path, { headers: { cookie: `${SESSION_COOKIE}=${stranger.session}` } })
        const answered = OWN_PAGES.has(key) ? res.status === 200 : res.status === 404 || (res.status >= 300 && res.status < 400)
        expect(answered, `${res.status} ${String(res.body).slice(0, 300)}`).toBe(true)
        expect(leaked(res, path)).toEqual([])
      })
    })
  })
})
