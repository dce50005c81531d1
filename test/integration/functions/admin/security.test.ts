import { randomUUID } from 'node:crypto'
import { exportJWK, exportSPKI, generateKeyPair, importPKCS8, SignJWT, type CryptoKey, type JWK } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { startJwksServer } from '../../../support/jwks.js'
import { call, createAdminApp, makeWorld, rand } from '../../../support/world.js'

const AUDIENCE = 'https://api.platform.test'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

/**
 * The security set: every way a request can carry bad, stale or foreign credentials, against the
 * real Firestore emulator and a real (local) OIDC key server. 401 for invalid credentials, 403 for
 * a valid caller without the permission, 404 for another tenant's records, and always { detail }.
 */
describe('admin: security', async () => {
  const signing = await generateKeyPair('RS256', { extractable: true })
  const publicJwk: JWK = { ...(await exportJWK(signing.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  const idp = await startJwksServer([publicJwk])
  afterAll(() => idp.close())

  const world = await makeWorld({ OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'platform-web', OIDC_AUDIENCE: AUDIENCE, OIDC_ALLOW_HTTP: 'true' })
  const app = createAdminApp(world.deps)
  const projectPath = `/api/v1/projects/${world.project.id}`

  /** An access token as the identity provider would issue it; `over` breaks one property at a time. */
  async function oidcToken(over: { claims?: Record<string, unknown>; kid?: string; key?: CryptoKey; alg?: string } = {}) {
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: idp.issuer, aud: AUDIENCE, sub: `sub-${rand()}`, iat: now, exp: now + 3600, ...over.claims }
    return new SignJWT(claims).setProtectedHeader({ alg: over.alg ?? 'RS256', kid: over.kid ?? 'k1' }).sign(over.key ?? signing.privateKey)
  }

  const expectDetailOnly = (body: unknown) => expect(body).toEqual({ detail: expect.any(String) })

  describe('answers 401 with { detail } for missing or invalid credentials', async () => {
    const expiredPat = await world.deps.tokens.createPersonal({
      userId: world.owner.user.id,
      name: 'expired',
      now: new Date(Date.now() - 2 * 86_400_000),
      expiresAt: new Date(Date.now() - 60_000),
    })
    const revoked = await call(app, 'POST', '/api/v1/users/me/tokens', { token: world.owner.token, body: { name: 'to revoke' } })
    await call(app, 'DELETE', `/api/v1/users/me/tokens/${revoked.body.id}`, { token: world.owner.token })

    // A service token whose key was revoked after it was issued.
    const su = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: world.owner.token,
      body: { name: `bot-${rand()}` },
    })
    const key = await call(app, 'POST', `/api/v1/service-users/${su.body.id}/keys`, { token: world.owner.token })
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: key.body.key_id })
      .setIssuer(su.body.id)
      .setSubject(su.body.id)
      .setAudience(key.body.token_endpoint)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importPKCS8(key.body.private_key_pem, 'ES256'))
    const exchanged = await app.request('/api/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
    })
    const serviceToken = ((await exchanged.json()) as { access_token: string }).access_token
    await call(app, 'DELETE', `/api/v1/service-users/${su.body.id}/keys/${key.body.key_id}`, { token: world.owner.token })

    const now = Math.floor(Date.now() / 1000)
    const stranger = await generateKeyPair('RS256')
    const pem = await exportSPKI(signing.publicKey)
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['no credentials at all', {}, /authentication required/],
      ['a Basic Authorization header', { authorization: 'Basic dXNlcjpwYXNz' }, /Bearer <token>/],
      ['a Bearer header without a token', { authorization: 'Bearer ' }, /Bearer <token>/],
      ['a Bearer header with two tokens', { authorization: `Bearer ${world.owner.token} extra` }, /Bearer <token>/],
      ['an unknown personal access token', { authorization: `Bearer plat_pat_${rand()}${rand()}` }, /^unknown token$/],
      ['an unknown service token', { authorization: `Bearer plat_sat_${rand()}${rand()}` }, /^unknown token$/],
      ['an opaque token of no known kind', { authorization: `Bearer ${rand()}${rand()}` }, /unrecognized token/],
      ['an expired personal access token', { authorization: `Bearer ${expiredPat.value}` }, /^token expired$/],
      ['a revoked personal access token', { authorization: `Bearer ${revoked.body.token}` }, /^token revoked$/],
      ['a service token whose key was revoked', { authorization: `Bearer ${serviceToken}` }, /^token revoked$/],
      ['an unknown session cookie', { cookie: `platform_session=plat_ses_${rand()}` }, /session/],
      [
        'an OIDC token with alg none',
        { authorization: `Bearer ${b64({ alg: 'none', kid: 'k1' })}.${b64({ iss: idp.issuer, aud: AUDIENCE, sub: 'x', exp: now + 600 })}.` },
        /invalid token/,
      ],
      [
        'an OIDC token signed HS256 with the public key bytes (algorithm confusion)',
        {
          authorization: `Bearer ${await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'x' })
            .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
            .setExpirationTime('10m')
            .sign(new TextEncoder().encode(pem))}`,
        },
        /ERR_JOSE_ALG_NOT_ALLOWED/,
      ],
      [
        'an OIDC token from a wrong issuer',
        { authorization: `Bearer ${await oidcToken({ claims: { iss: 'https://evil.example' } })}` },
        /ERR_JWT_CLAIM_VALIDATION_FAILED/,
      ],
      [
        'an OIDC token for a wrong audience',
        { authorization: `Bearer ${await oidcToken({ claims: { aud: 'https://other-api.example' } })}` },
        /ERR_JWT_CLAIM_VALIDATION_FAILED/,
      ],
      ['an expired OIDC token', { authorization: `Bearer ${await oidcToken({ claims: { iat: now - 7200, exp: now - 3600 } })}` }, /^token expired$/],
      [
        'an OIDC token with an unknown kid',
        { authorization: `Bearer ${await oidcToken({ kid: 'k-unknown', key: stranger.privateKey })}` },
        /ERR_JWKS_NO_MATCHING_KEY/,
      ],
      [
        'an OIDC token with a known kid but a forged signature',
        { authorization: `Bearer ${await oidcToken({ key: stranger.privateKey })}` },
        /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      ],
      [
        'an OIDC token without exp',
        {
          authorization: `Bearer ${await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(signing.privateKey)}`,
        },
        /invalid token/,
      ],
    ]

    it.each(cases)('%s', async (_name, headers, detail) => {
      const res = await call(app, 'GET', projectPath, { headers })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ detail: expect.stringMatching(detail) })
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    })
  })

  it('accepts a good OIDC token, provisions the user with no roles, and gives access once a role is granted', async () => {
    const email = `new-${rand()}@example.org`
    const sub = `sub-${rand()}`
    const token = await oidcToken({ claims: { sub, email, name: 'New Person' } })

    const me = await call(app, 'GET', '/api/v1/users/me', { token })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ kind: 'user', email, auth_method: 'oidc', org_roles: {}, project_roles: {} })
    const stored = await world.deps.db.col('users').where('oidc_subject', '==', sub).get()
    expect(stored.size).toBe(1)
    expect((await call(app, 'GET', '/api/v1/projects', { token })).body).toEqual([])
    expect((await call(app, 'GET', projectPath, { token })).status).toBe(404)

    const granted = await call(app, 'POST', `${projectPath}/members`, { token: world.owner.token, body: { email, roles: ['viewer'] } })
    expect(granted.status).toBe(200)
    expect(granted.body.user_id).toBe(me.body.id)
    const after = await call(app, 'GET', projectPath, { token })
    expect(after.status).toBe(200)
    expect(after.body.id).toBe(world.project.id)
    expect((await call(app, 'GET', '/api/v1/users/me', { token })).body.id).toBe(me.body.id)
  })

  it('links a first OIDC login to the account invited by its verified e-mail, and audits it', async () => {
    const email = `invited-${rand()}@example.org`
    const granted = await call(app, 'POST', `${projectPath}/members`, { token: world.owner.token, body: { email, roles: ['viewer'] } })
    const token = await oidcToken({ claims: { sub: `sub-${rand()}`, email, email_verified: true } })
    const me = await call(app, 'GET', '/api/v1/users/me', { token })
    expect(me.body.id).toBe(granted.body.user_id)
    expect((await call(app, 'GET', projectPath, { token })).status).toBe(200)
    const events = await world.deps.db.col('audit_events').where('entity.id', '==', me.body.id).get()
    expect(events.docs.map((d) => d.get('action'))).toContain('user.linked')
  })

  it('never lets a second identity with the same e-mail take over a linked account', async () => {
    const email = `owned-${rand()}@example.org`
    const first = await call(app, 'GET', '/api/v1/users/me', { token: await oidcToken({ claims: { sub: `sub-${rand()}`, email } }) })
    expect(first.status).toBe(200)
    const second = await call(app, 'GET', '/api/v1/users/me', { token: await oidcToken({ claims: { sub: `sub-${rand()}`, email } }) })
    expect(second.status).toBe(401)
    expect(second.body.detail).toMatch(/belongs to another identity/)
  })

  it('does not link an invited account by an e-mail the provider has not verified', async () => {
    const email = `unverified-${rand()}@example.org`
    const invited = await call(app, 'POST', `${projectPath}/members`, { token: world.owner.token, body: { email, roles: ['viewer'] } })
    const token = await oidcToken({ claims: { sub: `sub-${rand()}`, email, email_verified: false } })
    const me = await call(app, 'GET', '/api/v1/users/me', { token })
    expect(me.status).toBe(200)
    expect(me.body.id).not.toBe(invited.body.user_id)
    expect((await call(app, 'GET', projectPath, { token })).status).toBe(404)
  })

  it('restricts a personal access token on the next request once its user is removed from the project', async () => {
    const analyst = await world.caller(['analyst'])
    expect((await call(app, 'GET', projectPath, { token: analyst.token })).status).toBe(200)
    const removed = await call(app, 'DELETE', `${projectPath}/members/${analyst.user.id}`, { token: world.owner.token })
    expect(removed.status).toBe(204)
    for (const path of [projectPath, `${projectPath}/members`]) {
      const res = await call(app, 'GET', path, { token: analyst.token })
      expect(res.status).toBe(404)
      expectDetailOnly(res.body)
    }
    expect((await call(app, 'GET', '/api/v1/projects', { token: analyst.token })).body).toEqual([])
  })

  it('restricts a token on the next request once its user is demoted', async () => {
    const admin = await world.caller(['admin'])
    expect((await call(app, 'GET', `${projectPath}/credentials`, { token: admin.token })).status).toBe(200)
    const demoted = await call(app, 'PUT', `${projectPath}/members/${admin.user.id}`, { token: world.owner.token, body: { roles: ['viewer'] } })
    expect(demoted.status).toBe(200)
    const res = await call(app, 'GET', `${projectPath}/credentials`, { token: admin.token })
    expect(res.status).toBe(403)
    expectDetailOnly(res.body)
  })

  it('answers 404 for every record of a project the token has no role in, as if it did not exist', async () => {
    const adminOfHome = await world.caller(['admin'])
    const { project: other } = await world.otherProject()
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/projects/${other.id}`],
      ['GET', `/api/v1/projects/${other.id}/members`],
      ['POST', `/api/v1/projects/${other.id}/members`, { user_id: adminOfHome.user.id, roles: ['owner'] }],
      ['GET', `/api/v1/projects/${other.id}/credentials`],
      ['PUT', `/api/v1/projects/${other.id}/credentials`, { service_account_email: 'mine@attacker.iam.gserviceaccount.com' }],
      ['PUT', '/api/v1/users/me/default-context', { project_id: other.id }],
    ]
    for (const [method, path, body] of attempts) {
      const res = await call(app, method, path, { token: adminOfHome.token, body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ detail: 'project not found' })
    }
    const stored = (await world.deps.db.col('projects').doc(other.id).get()).data()!
    expect(stored.credentials.service_account_email).toBe(other.credentials!.service_account_email)
  })

  it('answers 403 with { detail } to a valid caller without the permission, and records access.denied', async () => {
    const viewer = await world.caller(['viewer'])
    const res = await call(app, 'GET', `${projectPath}/credentials`, { token: viewer.token })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: 'permission credentials.read is required' })
    const denied = await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', viewer.user.id).get()
    expect(denied.size).toBe(1)
    expect(denied.docs[0]!.data()).toMatchObject({
      outcome: 'denied',
      project_id: world.project.id,
      org_id: world.org.id,
      entity: { type: 'project', id: world.project.id },
      actor: { type: 'user', id: viewer.user.id, auth_method: 'personal_token' },
      request: { method: 'GET', path: `${projectPath}/credentials` },
      change: { reason: 'missing permission credentials.read' },
    })
  })

  it('records access.denied in the organization chain when an org member tries to create a service user', async () => {
    const member = await world.caller([])
    await world.deps.store.setOrgRole(SYSTEM_ACTOR, world.org.id, member.user, 'org_member')
    const res = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, { token: member.token, body: { name: 'sneaky' } })
    expect(res.status).toBe(403)
    expectDetailOnly(res.body)
    const denied = await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', member.user.id).get()
    expect(denied.docs.map((d) => d.data())).toEqual([
      expect.objectContaining({ org_id: world.org.id, change: { reason: 'missing permission service_user.manage' } }),
    ])
    const users = await world.deps.db.col('users').where('org_id', '==', world.org.id).where('name', '==', 'sneaky').get()
    expect(users.empty).toBe(true)
  })

  it("keeps one user from revoking or listing another user's tokens", async () => {
    const alice = await world.caller(['viewer'])
    const mallory = await world.caller(['viewer'])
    const made = await call(app, 'POST', '/api/v1/users/me/tokens', { token: alice.token, body: { name: 'alice ci' } })
    const list = await call(app, 'GET', '/api/v1/users/me/tokens', { token: mallory.token })
    expect(list.body.map((t: { id: string }) => t.id)).not.toContain(made.body.id)
    const del = await call(app, 'DELETE', `/api/v1/users/me/tokens/${made.body.id}`, { token: mallory.token })
    expect(del.status).toBe(404)
    expectDetailOnly(del.body)
    expect((await call(app, 'GET', '/api/v1/users/me', { token: made.body.token })).status).toBe(200)
  })

  it('keeps an admin of one organization away from the service users and keys of another', async () => {
    const { org: otherOrg } = await world.otherProject()
    const su = await call(app, 'POST', `/api/v1/organizations/${otherOrg.id}/service-users`, { token: world.owner.token, body: { name: 'theirs' } })
    expect(su.status).toBe(201)
    const admin = await world.caller([])
    await world.deps.store.setOrgRole(SYSTEM_ACTOR, world.org.id, admin.user, 'org_admin')
    for (const [method, path] of [
      ['GET', `/api/v1/organizations/${otherOrg.id}/service-users`],
      ['GET', `/api/v1/service-users/${su.body.id}`],
      ['POST', `/api/v1/service-users/${su.body.id}/keys`],
      ['GET', `/api/v1/service-users/${su.body.id}/keys`],
    ] as const) {
      const res = await call(app, method, path, { token: admin.token })
      expect(res.status, `${method} ${path}`).toBe(404)
      expectDetailOnly(res.body)
    }
  })
})
