import { describe, expect, it } from 'vitest'
import { SESSION_COOKIE } from '../../../lib/http.js'
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
