import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import { describe, expect, it } from 'vitest'
import { API_PREFIX, createServiceApp, resourceApp, SECURITY_HEADERS, SESSION_COOKIE } from '../../../lib/http.js'
import { createAdminApp, makeWorld } from '../../support/world.js'

/** What every service inherits from the kernel: body limits, security headers and the cross-origin guard. */
describe('the kernel guards every service', async () => {
  const world = await makeWorld({ PUBLIC_ORIGINS: 'https://platform.example.org', TRUSTED_PROXY_HOPS: '1' })
  const app = createAdminApp(world.deps)
  const bearer = { authorization: `Bearer ${world.owner.token}` }
  const session = await world.deps.tokens.createSession({ userId: world.owner.user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
  const cookie = { cookie: `${SESSION_COOKIE}=${session.value}` }
  const setDefault = (headers: Record<string, string>) =>
    app.request('/api/v1/users/me/default-context', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ project_id: world.project.id }),
    })

  describe('request bodies', () => {
    it('answers 413 with { detail } to a body over 1 MiB declared by Content-Length, before reading it', async () => {
      const res = await app.request('/api/v1/projects', {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ org_id: world.org.id, name: 'x'.repeat(2 * 1024 * 1024) }),
      })
      expect(res.status).toBe(413)
      expect(await res.json()).toEqual({ detail: 'the request body is larger than 1 MiB' })
    })

    it('answers 413 to a chunked body as soon as it passes 1 MiB', async () => {
      let sent = 0
      const chunk = new Uint8Array(64 * 1024).fill(0x20)
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // Endless: only the limit can end this request.
          sent += chunk.length
          controller.enqueue(chunk)
        },
      })
      const res = await app.request(
        new Request('http://localhost/api/v1/projects', {
          method: 'POST',
          headers: { ...bearer, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          body,
          duplex: 'half',
        } as RequestInit),
      )
      expect(res.status).toBe(413)
      expect(sent).toBeLessThan(2 * 1024 * 1024)
    })

    it('answers 400 naming the field to text that is not well-formed Unicode (a lone surrogate), and writes nothing', async () => {
      const res = await app.request('/api/v1/projects', {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ org_id: world.org.id, name: 'Exome \uD800' }),
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ detail: 'name: not well-formed Unicode text (a lone surrogate \\uD800)' })
      const projects = await app.request('/api/v1/projects', { headers: bearer })
      expect(JSON.stringify(await projects.json())).not.toContain('Exome')
    })

    it('accepts characters outside the Basic Multilingual Plane (a surrogate pair)', async () => {
      const res = await app.request('/api/v1/projects', {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ org_id: world.org.id, name: 'Exome 🧬' }),
      })
      expect(res.status).toBe(201)
      expect((await res.json()).name).toBe('Exome 🧬')
    })
  })

  describe('headers', () => {
    it('sends nosniff and a Referrer-Policy on every response, errors included', async () => {
      for (const res of [
        await app.request('/api/v1/users/me', { headers: bearer }),
        await app.request('/api/v1/users/me'),
        await app.request('/openapi.json'),
      ]) {
        expect(res.headers.get('x-content-type-options')).toBe('nosniff')
        expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      }
    })

    it("sends the same headers when served through Node, with the request id, a route's own header winning", async () => {
      const service = createServiceApp({ name: 'test', title: 'Test', description: 'headers', deps: world.deps, projectScoped: false })
      const routes = resourceApp()
      routes.get('/own-policy', (c) => {
        c.header('Referrer-Policy', 'same-origin')
        return c.json({ ok: true })
      })
      routes.get('/raw', () => new Response('plain text', { headers: { 'x-frame-options': 'DENY' } }))
      service.route(API_PREFIX, routes)
      const server = createServer(getRequestListener(service.fetch))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      try {
        const get = (path: string, headers: Record<string, string> = {}) => fetch(base + path, { headers: { ...bearer, ...headers } })
        for (const res of [
          await get('/api/v1/users/me'),
          await fetch(`${base}/api/v1/users/me`),
          await get('/api/v1/no-such-route'),
          await get('/openapi.json'),
        ]) {
          for (const [name, value] of SECURITY_HEADERS) expect(res.headers.get(name), name).toBe(value)
          expect(res.headers.get('x-request-id')).toMatch(/^[\w-]+$/)
          expect(res.headers.get('strict-transport-security')).toBeNull()
        }
        expect((await get('/api/v1/users/me', { 'x-request-id': 'req-node-1' })).headers.get('x-request-id')).toBe('req-node-1')
        const own = await get('/api/v1/own-policy')
        expect(own.headers.get('referrer-policy')).toBe('same-origin')
        expect(own.headers.get('x-content-type-options')).toBe('nosniff')
        const raw = await get('/api/v1/raw')
        expect(await raw.text()).toBe('plain text')
        expect(raw.headers.get('x-frame-options')).toBe('DENY')
        expect(raw.headers.get('x-content-type-options')).toBe('nosniff')
        expect((await get('/api/v1/users/me', { 'x-forwarded-proto': 'https' })).headers.get('strict-transport-security')).toMatch(/^max-age=\d+/)
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    })

    it('sends HSTS over HTTPS only', async () => {
      expect((await app.request('/openapi.json')).headers.get('strict-transport-security')).toBeNull()
      const https = await app.request('/openapi.json', { headers: { 'x-forwarded-proto': 'https' } })
      expect(https.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/)
    })

    it("gives the HTML pages a Content-Security-Policy with frame-ancestors 'none'", async () => {
      for (const page of ['/docs', '/redoc']) {
        const csp = (await app.request(page)).headers.get('content-security-policy') ?? ''
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).toContain("default-src 'self'")
      }
    })
  })

  describe('cross-origin requests with the session cookie', () => {
    const denials = async () =>
      (await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', world.owner.user.id).get()).size

    it('refuses a JSON PUT with a foreign Origin (403 with access.denied)', async () => {
      const before = await denials()
      const res = await setDefault({ ...cookie, origin: 'https://evil.example.com' })
      expect(res.status).toBe(403)
      expect(((await res.json()) as { detail: string }).detail).toMatch(/cross-origin request refused/)
      expect(await denials()).toBe(before + 1)
    })

    it('refuses one without any Origin', async () => {
      expect((await setDefault(cookie)).status).toBe(403)
    })

    it("accepts one from the platform's own origin, and reads from anywhere", async () => {
      expect((await setDefault({ ...cookie, origin: 'https://platform.example.org' })).status).toBe(200)
      expect((await app.request('/api/v1/users/me', { headers: { ...cookie, origin: 'https://evil.example.com' } })).status).toBe(200)
    })

    it('leaves Bearer-token requests alone, whatever their Origin', async () => {
      expect((await setDefault({ ...bearer, origin: 'https://evil.example.com' })).status).toBe(200)
    })
  })
})
