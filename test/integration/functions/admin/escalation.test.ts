import { randomUUID } from 'node:crypto'
import { importPKCS8, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { call, createAdminApp, makeWorld } from '../../../support/world.js'

/**
 * No escalation through role grants (OWASP API5): a grant never exceeds the granter's own highest
 * role in its scope, and nobody changes their own roles. Each refusal is a 403 with an
 * access.denied event.
 */
describe('admin: role grants never escalate', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)
  const members = (id: string) => `/api/v1/projects/${world.project.id}/members${id ? `/${id}` : ''}`
  const deniedFor = async (userId: string) =>
    (await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', userId).get()).docs.map((d) => d.data())

  /** A service user of the organization holding `admin` in the project, with a token from the RFC 7523 exchange. */
  async function serviceAdmin() {
    const su = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/service-users`, {
      token: world.owner.token,
      body: { name: `bot-${randomUUID().slice(0, 8)}` },
    })
    const key = await call(app, 'POST', `/api/v1/service-users/${su.body.id}/keys`, { token: world.owner.token })
    await call(app, 'POST', members(''), { token: world.owner.token, body: { user_id: su.body.id, roles: ['admin'] } })
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({
      iss: su.body.id,
      sub: su.body.id,
      aud: key.body.token_endpoint,
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', kid: key.body.key_id })
      .sign(await importPKCS8(key.body.private_key_pem, 'ES256'))
    const token = await call(app, 'POST', '/api/v1/oauth/token', {
      body: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion },
      headers: { host: new URL(key.body.token_endpoint).host },
    })
    expect(token.status).toBe(200)
    return { id: su.body.id as string, token: token.body.access_token as string }
  }

  it('refuses a service user with admin making itself owner, and records access.denied', async () => {
    const bot = await serviceAdmin()
    const res = await call(app, 'PUT', members(bot.id), { token: bot.token, body: { roles: ['owner'] } })
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/own roles/)
    expect(await deniedFor(bot.id)).toHaveLength(1)
    const me = await call(app, 'GET', '/api/v1/users/me', { token: bot.token })
    expect(me.body.project_roles[world.project.id]).toEqual(['admin'])
  })

  it('refuses an admin granting owner to anyone, by POST or PUT', async () => {
    const admin = await world.caller(['admin'])
    const other = await world.caller(['viewer'])
    const byPost = await call(app, 'POST', members(''), { token: admin.token, body: { user_id: other.user.id, roles: ['owner'] } })
    expect(byPost.status).toBe(403)
    expect(byPost.body.detail).toMatch(/owner.*above your own highest role/)
    const byPut = await call(app, 'PUT', members(other.user.id), { token: admin.token, body: { roles: ['viewer', 'owner'] } })
    expect(byPut.status).toBe(403)
    expect(await deniedFor(admin.user.id)).toHaveLength(2)
  })

  it('refuses anyone changing or removing their own roles, even an owner', async () => {
    const owner = await world.caller(['owner'])
    expect((await call(app, 'PUT', members(owner.user.id), { token: owner.token, body: { roles: ['viewer'] } })).status).toBe(403)
    expect((await call(app, 'DELETE', members(owner.user.id), { token: owner.token })).status).toBe(403)
  })

  it('refuses an admin demoting or removing an owner', async () => {
    const admin = await world.caller(['admin'])
    const owner = await world.caller(['owner'])
    expect((await call(app, 'PUT', members(owner.user.id), { token: admin.token, body: { roles: ['viewer'] } })).status).toBe(403)
    expect((await call(app, 'DELETE', members(owner.user.id), { token: admin.token })).status).toBe(403)
  })

  it('lets an admin grant roles up to admin, side roles included, and an owner grant owner', async () => {
    const admin = await world.caller(['admin'])
    const other = await world.caller(['viewer'])
    const up = await call(app, 'PUT', members(other.user.id), { token: admin.token, body: { roles: ['admin', 'auditor', 'pipeline'] } })
    expect(up.status).toBe(200)
    expect(up.body.roles).toEqual(['admin', 'auditor', 'pipeline'])
    const owner = await world.caller(['owner'])
    expect((await call(app, 'PUT', members(other.user.id), { token: owner.token, body: { roles: ['owner'] } })).status).toBe(200)
  })

  it('refuses an organization admin making an owner, changing their own role or removing an owner', async () => {
    const orgAdmin = await world.caller([])
    await world.deps.store.setOrgRole(SYSTEM_ACTOR, world.org.id, orgAdmin.user, 'org_admin')
    const orgMembers = `/api/v1/organizations/${world.org.id}/members`
    const newcomer = `new-${randomUUID().slice(0, 8)}@example.org`
    const makeOwner = await call(app, 'POST', orgMembers, { token: orgAdmin.token, body: { email: newcomer, role: 'org_owner' } })
    expect(makeOwner.status).toBe(403)
    const self = await call(app, 'POST', orgMembers, { token: orgAdmin.token, body: { email: orgAdmin.user.email, role: 'org_member' } })
    expect(self.status).toBe(403)
    expect((await call(app, 'DELETE', `${orgMembers}/${world.owner.user.id}`, { token: orgAdmin.token })).status).toBe(403)
    expect(await deniedFor(orgAdmin.user.id)).toHaveLength(3)
    const ok = await call(app, 'POST', orgMembers, { token: orgAdmin.token, body: { email: newcomer, role: 'org_admin' } })
    expect(ok.status).toBe(200)
  })

  it('answers 403 with access.denied, not 404, to a refused operation on an organization the caller can see', async () => {
    const projectAdmin = await world.caller(['admin'])
    expect((await call(app, 'GET', `/api/v1/organizations/${world.org.id}`, { token: projectAdmin.token })).status).toBe(200)
    const res = await call(app, 'POST', `/api/v1/organizations/${world.org.id}/members`, {
      token: projectAdmin.token,
      body: { email: 'x@example.org', role: 'org_member' },
    })
    expect(res.status).toBe(403)
    expect(await deniedFor(projectAdmin.user.id)).toHaveLength(1)
  })
})
