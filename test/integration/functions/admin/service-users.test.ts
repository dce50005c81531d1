import { randomUUID } from 'node:crypto'
import type { Hono } from 'hono'
import { exportSPKI, generateKeyPair, importPKCS8, SignJWT, type CryptoKey } from 'jose'
import { describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { call, createAdminApp, makeWorld, rand } from '../../../support/world.js'

const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
const LOCAL_ENDPOINT = 'http://localhost/api/v1/oauth/token'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

async function exchange(app: Hono<any>, assertion: string, as: 'form' | 'json' = 'form', grantType = GRANT) {
  const fields = { grant_type: grantType, assertion }
  const res = await app.request('/api/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': as === 'form' ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: as === 'form' ? new URLSearchParams(fields).toString() : JSON.stringify(fields),
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

interface Claims {
  iss?: string
  sub?: string
  aud?: string
  exp?: number
  iat?: number
  jti?: string
}

/** An assertion as a well-behaved client makes it; each field can be overridden to break one check. */
async function assertion(key: CryptoKey, kid: string, userId: string, over: Claims & { alg?: string } = {}) {
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: userId, sub: userId, aud: LOCAL_ENDPOINT, iat: now, exp: now + 300, jti: randomUUID(), ...over }
  delete (claims as { alg?: string }).alg
  return new SignJWT(claims).setProtectedHeader({ alg: over.alg ?? 'ES256', kid }).sign(key)
}

describe('admin: service users, keys and the RFC 7523 token exchange', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)
  const owner = world.owner.token
  const eventsFor = async (entityId: string) =>
    (await world.deps.db.col('audit_events').where('entity.id', '==', entityId).get()).docs.map((d) => d.data())

  async function serviceUserWithKey(name = `bot-${rand()}`) {
    const su = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, { token: owner, body: { name } })
    expect(su.status).toBe(201)
    const key = await call(app, 'POST', `/api/v1/service-users/${su.body.id}/keys`, { token: owner })
    expect(key.status).toBe(201)
    const privateKey = await importPKCS8(key.body.private_key_pem, 'ES256')
    return {
      su: su.body,
      key: key.body,
      privateKey,
      sign: (over: Claims & { alg?: string } = {}) => assertion(privateKey, key.body.key_id, su.body.id, over),
    }
  }

  it('creates a service user in the organization and lists it', async () => {
    const res = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: owner,
      body: { name: 'pipeline-runner', description: 'CI' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ kind: 'service_user', org_id: world.org.id, name: 'pipeline-runner', description: 'CI', disabled: false })
    const stored = (await world.deps.db.col('users').doc(res.body.id).get()).data()
    expect(stored).toMatchObject({ kind: 'service_user', org_id: world.org.id })
    const list = await call(app, 'GET', `/api/v1/organizations/${world.org.id}/service-users`, { token: owner })
    expect(list.status).toBe(200)
    expect(list.body.map((u: { id: string }) => u.id)).toContain(res.body.id)
    const dup = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, { token: owner, body: { name: 'pipeline-runner' } })
    expect(dup.status).toBe(409)
    expect(dup.body.detail).toMatch(/pipeline-runner/)
  })

  it('lets only organization admins create service users: 403 for whoever can see the org, 404 outside it', async () => {
    const member = await world.caller([])
    await world.deps.store.setOrgRole(SYSTEM_ACTOR, world.org.id, member.user, 'org_member')
    const asMember = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, { token: member.token, body: { name: 'nope' } })
    expect(asMember.status).toBe(403)
    expect(asMember.body).toEqual({ detail: 'permission service_user.manage is required' })
    const listAsMember = await call(app, 'GET', `/api/v1/organizations/${world.org.id}/service-users`, { token: member.token })
    expect(listAsMember.status).toBe(200)

    // A project admin sees the organization (GET /organizations/{id} shows it), so a refusal is a 403 that says why.
    const projectOnly = await world.caller(['admin'])
    const refused = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: projectOnly.token,
      body: { name: 'nope' },
    })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ detail: 'permission service_user.manage is required' })
    const denied = await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', projectOnly.user.id).get()
    expect(denied.size).toBe(1)

    const other = await world.otherProject()
    const elsewhere = await world.caller(['admin'], other.project)
    const outsider = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: elsewhere.token,
      body: { name: 'nope' },
    })
    expect(outsider.status).toBe(404)
    expect(outsider.body).toEqual({ detail: 'organization not found' })
  })

  it('creates a key pair, returns the private key once and stores only the public JWK', async () => {
    const { su, key } = await serviceUserWithKey()
    expect(key).toMatchObject({ service_user_id: su.id, algorithm: 'ES256', token_endpoint: LOCAL_ENDPOINT })
    expect(key.private_key_pem).toMatch(/^-----BEGIN PRIVATE KEY-----/)
    expect(key.private_key_jwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String), kid: key.key_id })
    expect(key.public_jwk).not.toHaveProperty('d')

    const stored = (await world.deps.db.col('service_keys').doc(key.key_id).get()).data()!
    expect(stored).toMatchObject({ service_user_id: su.id, org_id: world.org.id, alg: 'ES256' })
    expect(stored.public_jwk).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: key.public_jwk.x,
      y: key.public_jwk.y,
      kid: key.key_id,
      alg: 'ES256',
      use: 'sig',
    })
    const text = JSON.stringify(stored)
    expect(text).not.toContain(key.private_key_jwk.d)
    expect(text).not.toContain('PRIVATE KEY')

    const list = await call(app, 'GET', `/api/v1/service-users/${su.id}/keys`, { token: owner })
    expect(list.status).toBe(200)
    expect(list.body).toEqual([expect.objectContaining({ key_id: key.key_id, algorithm: 'ES256' })])
    expect(JSON.stringify(list.body)).not.toContain(key.private_key_jwk.d)
    expect(list.body[0]).not.toHaveProperty('private_key_pem')
  })

  it('exchanges a signed assertion, form-encoded or JSON, for a Bearer token that authenticates the service user', async () => {
    const { su, key, sign } = await serviceUserWithKey()
    for (const as of ['form', 'json'] as const) {
      const res = await exchange(app, await sign(), as)
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.body).toEqual({ access_token: expect.stringMatching(/^plat_sat_/), token_type: 'Bearer', expires_in: 3600 })
      const me = await call(app, 'GET', '/api/v1/users/me', { token: res.body.access_token })
      expect(me.status).toBe(200)
      expect(me.body).toMatchObject({ id: su.id, kind: 'service_user', auth_method: 'service_token' })
    }
    const keys = await call(app, 'GET', `/api/v1/service-users/${su.id}/keys`, { token: owner })
    expect(keys.body[0]).toMatchObject({ key_id: key.key_id, last_used_at: expect.any(String) })
  })

  it('gives the service user the project roles granted through the members endpoint, and nothing before', async () => {
    const { su, sign } = await serviceUserWithKey()
    const token = (await exchange(app, await sign())).body.access_token
    expect((await call(app, 'GET', `/api/v1/projects/${world.project.id}/credentials`, { token })).status).toBe(404)
    const grant = await call(app, 'POST', `/api/v1/projects/${world.project.id}/members`, {
      token: owner,
      body: { user_id: su.id, roles: ['pipeline'] },
    })
    expect(grant.status).toBe(200)
    expect(grant.body).toMatchObject({ user_id: su.id, kind: 'service_user', roles: ['pipeline'] })
    const creds = await call(app, 'GET', `/api/v1/projects/${world.project.id}/credentials`, { token })
    expect(creds.status).toBe(200)
    expect(creds.body.bucket_name).toBe(world.project.bucket_name)
    const detail = await call(app, 'GET', `/api/v1/service-users/${su.id}`, { token: owner })
    expect(detail.body.project_roles).toEqual({ [world.project.id]: ['pipeline'] })
  })

  it('refuses a replayed assertion (same jti) with 401', async () => {
    const { sign } = await serviceUserWithKey()
    const once = await sign()
    expect((await exchange(app, once)).status).toBe(200)
    const again = await exchange(app, once)
    expect(again.status).toBe(401)
    expect(again.body).toEqual({ detail: expect.stringMatching(/^invalid_grant: .*jti replay/) })
  })

  it('issues exactly one token when the same assertion is sent three times at once', async () => {
    const { sign } = await serviceUserWithKey()
    const once = await sign()
    const results = await Promise.all(Array.from({ length: 3 }, () => exchange(app, once)))
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401])
  })

  describe('refuses assertions that fail a check with 401', async () => {
    const a = await serviceUserWithKey()
    const b = await serviceUserWithKey()
    const now = Math.floor(Date.now() / 1000)
    const spki = await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey)
    const cases: Array<[string, () => Promise<string>, RegExp]> = [
      [
        'alg none',
        async () =>
          `${b64({ alg: 'none', kid: a.key.key_id })}.${b64({ iss: a.su.id, sub: a.su.id, aud: LOCAL_ENDPOINT, iat: now, exp: now + 60, jti: randomUUID() })}.`,
        /algorithm 'none'/,
      ],
      [
        'HS256 signed with the public key',
        async () =>
          new SignJWT({ iss: a.su.id, sub: a.su.id, aud: LOCAL_ENDPOINT, jti: randomUUID() })
            .setProtectedHeader({ alg: 'HS256', kid: a.key.key_id })
            .setIssuedAt()
            .setExpirationTime('5m')
            .sign(new TextEncoder().encode(JSON.stringify(a.key.public_jwk) + spki)),
        /algorithm 'HS256'/,
      ],
      ['an expired assertion', () => a.sign({ iat: now - 600, exp: now - 120 }), /expired/],
      ['an exp more than one hour ahead', () => a.sign({ exp: now + 7200 }), /exp may be at most 3600/],
      ['an iat in the future', () => a.sign({ iat: now + 600, exp: now + 900 }), /claim iat/],
      ['a wrong audience', () => a.sign({ aud: 'https://elsewhere.example/api/v1/oauth/token' }), /claim aud/],
      ["an issuer that is not the key's service user", () => a.sign({ iss: b.su.id, sub: b.su.id }), /claim iss/],
      ['a subject that differs from the issuer', () => a.sign({ sub: b.su.id }), /claim sub/],
      ['no jti', () => a.sign({ jti: undefined }), /jti/],
      ['an unknown kid', () => assertion(a.privateKey, randomUUID(), a.su.id), /unknown key/],
      ["a kid of another service user's key", () => assertion(a.privateKey, b.key.key_id, a.su.id), /signature does not verify/],
      ['a signature by another key', () => assertion(b.privateKey, a.key.key_id, a.su.id), /signature does not verify/],
    ]
    it.each(cases)('%s', async (_name, make, detail) => {
      // Each forgery is checked on its own: the failed-attempt lock (tested in throttle.test.ts) would answer 429 from the sixth.
      const throttled = await world.deps.db.col('login_throttle').get()
      await Promise.all(throttled.docs.map((d) => d.ref.delete()))
      const res = await exchange(app, await make())
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ detail: expect.stringMatching(detail) })
    })
  })

  it.each<[string, number, RegExp, () => Promise<Response>]>([
    [
      'an unsupported grant_type',
      400,
      /^unsupported_grant_type/,
      async () =>
        app.request('/api/v1/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&assertion=x',
        }),
    ],
    [
      'a missing assertion',
      400,
      /^invalid_request: assertion: required/,
      async () =>
        app.request('/api/v1/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `grant_type=${encodeURIComponent(GRANT)}`,
        }),
    ],
    [
      'an assertion that is not a JWT',
      400,
      /^invalid_request: assertion is not a compact JWT/,
      async () =>
        app.request('/api/v1/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: GRANT, assertion: 'not-a-jwt' }),
        }),
    ],
    ['no body', 400, /^invalid_request/, async () => app.request('/api/v1/oauth/token', { method: 'POST' })],
    [
      'a text/plain body',
      415,
      /Unsupported Media Type/,
      async () => app.request('/api/v1/oauth/token', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }),
    ],
  ])('answers %s with { detail } and status %i', async (_name, status, detail, send) => {
    const res = await send()
    expect(res.status).toBe(status)
    expect(await res.json()).toEqual({ detail: expect.stringMatching(detail) })
  })

  it('revoking a key stops its tokens at once and refuses new exchanges with it', async () => {
    const { su, key, sign } = await serviceUserWithKey()
    const token = (await exchange(app, await sign())).body.access_token
    expect((await call(app, 'GET', '/api/v1/users/me', { token })).status).toBe(200)
    const del = await call(app, 'DELETE', `/api/v1/service-users/${su.id}/keys/${key.key_id}`, { token: owner })
    expect(del.status).toBe(204)
    const after = await call(app, 'GET', '/api/v1/users/me', { token })
    expect(after.status).toBe(401)
    expect(after.body).toEqual({ detail: 'token revoked' })
    const again = await exchange(app, await sign())
    expect(again.status).toBe(401)
    expect(again.body.detail).toMatch(/revoked/)
    const keys = await call(app, 'GET', `/api/v1/service-users/${su.id}/keys`, { token: owner })
    expect(keys.body[0]).toMatchObject({ key_id: key.key_id, revoked_at: expect.any(String) })
    expect((await call(app, 'DELETE', `/api/v1/service-users/${su.id}/keys/${randomUUID()}`, { token: owner })).status).toBe(404)
  })

  it('disabling a service user stops its tokens and its exchanges; enabling restores the exchange', async () => {
    const { su, sign } = await serviceUserWithKey()
    const token = (await exchange(app, await sign())).body.access_token
    const off = await call(app, 'PATCH', `/api/v1/service-users/${su.id}`, { token: owner, body: { disabled: true } })
    expect(off.status).toBe(200)
    expect(off.body.disabled).toBe(true)
    expect((await call(app, 'GET', '/api/v1/users/me', { token })).body).toEqual({ detail: 'account disabled' })
    const refused = await exchange(app, await sign())
    expect(refused.status).toBe(401)
    expect(refused.body.detail).toMatch(/disabled/)
    await call(app, 'PATCH', `/api/v1/service-users/${su.id}`, { token: owner, body: { disabled: false } })
    expect((await exchange(app, await sign())).status).toBe(200)
    const actions = (await eventsFor(su.id)).map((e) => e.action)
    expect(actions).toEqual(expect.arrayContaining(['service_user.created', 'service_user.disabled', 'service_user.enabled']))
  })

  it('keeps service users from minting long-lived personal access tokens', async () => {
    const { sign } = await serviceUserWithKey()
    const token = (await exchange(app, await sign())).body.access_token
    const res = await call(app, 'POST', '/api/v1/users/me/tokens', { token, body: { name: 'escape' } })
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/oauth\/token/)
  })

  it('limits a service user to 10 active keys', async () => {
    const { su } = await serviceUserWithKey()
    for (let i = 1; i < 10; i++) expect((await call(app, 'POST', `/api/v1/service-users/${su.id}/keys`, { token: owner })).status).toBe(201)
    const eleventh = await call(app, 'POST', `/api/v1/service-users/${su.id}/keys`, { token: owner })
    expect(eleventh.status).toBe(409)
    expect(eleventh.body.detail).toMatch(/at most 10 active keys/)
  })

  it('records service_user.created, service_key.created, service_token.issued and service_key.revoked, without secrets', async () => {
    const { su, key, sign } = await serviceUserWithKey()
    const token = (await exchange(app, await sign())).body.access_token
    await call(app, 'DELETE', `/api/v1/service-users/${su.id}/keys/${key.key_id}`, { token: owner })
    const events = [...(await eventsFor(su.id)), ...(await eventsFor(key.key_id))]
    expect(events.map((e) => e.action).sort()).toEqual(['service_key.created', 'service_key.revoked', 'service_token.issued', 'service_user.created'])
    const issued = events.find((e) => e.action === 'service_token.issued')!
    expect(issued).toMatchObject({ org_id: world.org.id, actor: { type: 'service_user', id: su.id, auth_method: 'jwt_bearer' } })
    const text = JSON.stringify(events)
    for (const secret of [token, key.private_key_jwk.d]) expect(text).not.toContain(secret)
  })

  it('records a refused exchange with a real key as service_token.denied', async () => {
    const { su, sign } = await serviceUserWithKey()
    await exchange(app, await sign({ aud: 'https://elsewhere.example/' }))
    const denied = (await eventsFor(su.id)).find((e) => e.action === 'service_token.denied')
    expect(denied).toMatchObject({ outcome: 'failure', change: { reason: expect.stringMatching(/claim aud/) } })
  })

  it('with ADMIN_PUBLIC_URL set, wants that address as aud and returns it as the token endpoint', async () => {
    const pub = await makeWorld({ ADMIN_PUBLIC_URL: 'https://admin.lab.example/' })
    const pubApp = createAdminApp(pub.deps)
    const su = await call(pubApp, 'POST', `/api/v1/organizations/${pub.org.id}/service-users`, { token: pub.owner.token, body: { name: 'bot' } })
    const key = await call(pubApp, 'POST', `/api/v1/service-users/${su.body.id}/keys`, { token: pub.owner.token })
    expect(key.body.token_endpoint).toBe('https://admin.lab.example/api/v1/oauth/token')
    const pk = await importPKCS8(key.body.private_key_pem, 'ES256')
    const requestUrl = await exchange(pubApp, await assertion(pk, key.body.key_id, su.body.id, { aud: LOCAL_ENDPOINT }))
    expect(requestUrl.status).toBe(401)
    const configured = await exchange(pubApp, await assertion(pk, key.body.key_id, su.body.id, { aud: key.body.token_endpoint }))
    expect(configured.status).toBe(200)
  })
})
