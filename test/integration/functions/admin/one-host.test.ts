import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import { afterAll, describe, expect, it } from 'vitest'
import { startOidcProvider, platformOidcEnv } from '../../../../emulators/oidc/provider.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { reportsDeps } from '../../../../functions/reports/deps.js'
import { createReportsApp } from '../../../../functions/reports/service.js'
import { grant, seedUser } from '../../../../domain/tenancy/seed.js'
import type { AuditEvent } from '../../../../lib/audit.js'
import { Browser, browserLogin, TEST_AUDIENCE } from '../../../support/oidc.js'
import { makeWorld, rand } from '../../../support/world.js'

/**
 * One front end serving every service under its own first path segment, as the functions' shared
 * https://REGION-PROJECT.cloudfunctions.net host does (and the load balancer of BROWSER_DOMAIN):
 * `H/admin/api/v1/…` reaches the admin service as `/api/v1/…`, and the front end appends the
 * address it was reached from to X-Forwarded-For. The services are configured as infra/deploy.sh
 * configures them for that host: every <SERVICE>_PUBLIC_URL on it, TRUSTED_PROXY_HOPS=1.
 */
async function frontEnd() {
  const services = new Map<string, Hono<any>>()
  const listener = getRequestListener(async (req, env) => {
    const url = new URL(req.url)
    const [, first = '', ...rest] = url.pathname.split('/')
    const app = services.get(first)
    if (!app) return new Response('no such function', { status: 404 })
    const headers = new Headers(req.headers)
    const peer = env.incoming.socket.remoteAddress!
    headers.set('x-forwarded-for', [req.headers.get('x-forwarded-for'), peer].filter(Boolean).join(', '))
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const stripped = new URL(`/${rest.join('/')}${url.search}`, url)
    return app.fetch(new Request(stripped, { method: req.method, headers, body: hasBody ? await req.arrayBuffer() : undefined, redirect: 'manual' }))
  })
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (name: string, app: Hono<any>) => services.set(name, app),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

describe('one browser host: the session of the admin service reaches every service on it', async () => {
  const front = await frontEnd()
  const H = front.url
  const user = { email: `ann-${rand()}@example.org`, password: randomBytes(12).toString('base64url'), name: 'Ann Example' }
  const client = {
    client_id: 'platform-admin',
    client_secret: randomBytes(24).toString('base64url'),
    redirect_uris: [`${H}/admin/api/v1/auth/callback`],
  }
  const provider = await startOidcProvider({ users: [user], clients: [client], audience: TEST_AUDIENCE })
  const world = await makeWorld({
    ...platformOidcEnv(provider, client, TEST_AUDIENCE),
    ADMIN_PUBLIC_URL: `${H}/admin`,
    REPORTS_PUBLIC_URL: `${H}/reports`,
    TRUSTED_PROXY_HOPS: '1',
  })
  front.serve('admin', createAdminApp(world.deps))
  front.serve('reports', createReportsApp(reportsDeps(world.deps)))
  afterAll(() => Promise.all([front.stop(), provider.stop()]))

  const invited = await seedUser(world.deps, { email: user.email, name: user.name })
  await grant(world.deps, world.project, invited, ['analyst'])
  const browser = new Browser()
  const landed = await browserLogin(browser, `${H}/admin`, user)
  const inProject = { 'x-project-id': world.project.id }

  it('logs in at H/admin and sets platform_session for the whole host: Path=/, no Domain', async () => {
    expect(landed.url).toBe(`${H}/admin/api/v1/users/me`)
    expect(landed.res.status).toBe(200)
    const cookie = browser.cookie(H, 'platform_session')!
    expect(cookie.value).toMatch(/^plat_ses_/)
    expect(cookie.path).toBe('/')
    // Host-only: sent to this host alone, so every service must be on it.
    expect(cookie.attributes.has('domain')).toBe(false)
  })

  it('sends that session to the report service at H/reports, which knows the caller by it', async () => {
    const res = await browser.request(`${H}/reports/api/v1/reports`, { headers: inProject })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([])
    // The same request without the cookie is a stranger.
    expect((await fetch(`${H}/reports/api/v1/reports`, { headers: inProject })).status).toBe(401)
  })

  it('accepts a change made with the session from the host itself, and refuses one from another origin or none', async () => {
    const post = (origin: string | undefined) =>
      browser.request(`${H}/reports/api/v1/reports`, {
        method: 'POST',
        headers: { ...inProject, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
        body: JSON.stringify({}),
      })
    // From H: past the origin check, to the body's validation.
    const same = await post(H)
    expect(same.status).toBe(400)
    expect((await same.json()).detail).toMatch(/order_id/)
    for (const origin of ['https://evil.example', 'http://127.0.0.1:1', undefined]) {
      const res = await post(origin)
      expect(res.status, `Origin ${origin}`).toBe(403)
      expect((await res.json()).detail).toMatch(/cross-origin request refused/)
    }
  })

  it('accepts an address on H as where the login returns to (the report pages send the browser there and back)', async () => {
    const res = await new Browser().request(`${H}/admin/api/v1/auth/login?return_to=${encodeURIComponent(`${H}/reports/abc/signoff/`)}`)
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).origin).toBe(provider.issuer)
    const elsewhere = await new Browser().request(`${H}/admin/api/v1/auth/login?return_to=${encodeURIComponent('https://evil.example/')}`)
    expect(elsewhere.status).toBe(400)
  })

  it('records the address the front end saw, not one the client wrote (TRUSTED_PROXY_HOPS=1, as the deploy sets for this host)', async () => {
    const res = await browser.request(`${H}/reports/api/v1/reports`, {
      method: 'POST',
      headers: { ...inProject, 'content-type': 'application/json', origin: 'https://evil.example', 'x-forwarded-for': '203.0.113.9' },
      body: '{}',
    })
    expect(res.status).toBe(403)
    const denied = (await world.deps.db.col('audit_events').where('action', '==', 'access.denied').get()).docs
      .map((d) => d.data() as AuditEvent)
      .filter((e) => e.actor.id === invited.id)
    expect(denied.length).toBeGreaterThan(0)
    expect(new Set(denied.map((e) => e.request?.ip))).toEqual(new Set(['127.0.0.1']))
  })

  it('links the next page on H, where following it reaches the same service', async () => {
    await world.otherProject()
    const owner = { authorization: `Bearer ${world.owner.token}` }
    const first = await fetch(`${H}/admin/api/v1/projects?page_size=1`, { headers: owner })
    expect(first.status).toBe(200)
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1]
    expect(link).toMatch(new RegExp(`^${H}/admin/api/v1/projects\\?page_size=1&page_token=`))
    const second = await fetch(link!, { headers: owner })
    expect(second.status).toBe(200)
    const [a] = (await first.json()) as Array<{ id: string }>
    const [b] = (await second.json()) as Array<{ id: string }>
    expect(b!.id).not.toBe(a!.id)
  })

  it("names the service's address on H as its OpenAPI server, so the docs page's requests reach it", async () => {
    const doc = (await (await fetch(`${H}/reports/openapi.json`)).json()) as { servers: Array<{ url: string }> }
    expect(doc.servers.map((s) => s.url)).toEqual([`${H}/reports`])
  })
})
