import { describe, expect, it } from 'vitest'
import { call, createAdminApp, makeWorld } from '../../../support/world.js'

describe('admin: organizations and projects', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)

  it('lists the projects of the caller as a JSON array of Project', async () => {
    const res = await call(app, 'GET', '/api/v1/projects', { token: world.owner.token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      expect.objectContaining({
        id: world.project.id,
        name: 'Germline',
        slug: 'germline',
        org_id: world.org.id,
        org_name: 'Test Lab',
        bucket_name: world.project.bucket_name,
      }),
    ])
  })

  it('lists organizations under both /orgs and /organizations', async () => {
    for (const path of ['/api/v1/orgs', '/api/v1/organizations']) {
      const res = await call(app, 'GET', path, { token: world.owner.token })
      expect(res.status).toBe(200)
      expect(res.body.map((o: { id: string }) => o.id)).toContain(world.org.id)
    }
  })

  it('creates an organization and a project in it, then finds the project by id', async () => {
    const org = await call(app, 'POST', '/api/v1/organizations', { token: world.owner.token, body: { name: 'Second Lab' } })
    expect(org.status).toBe(201)
    expect(org.body).toMatchObject({ name: 'Second Lab', slug: 'second-lab' })
    const proj = await call(app, 'POST', '/api/v1/projects', { token: world.owner.token, body: { org_id: org.body.id, name: 'Somatic' } })
    expect(proj.status).toBe(201)
    expect(proj.body).toMatchObject({
      name: 'Somatic',
      slug: 'somatic',
      org_id: org.body.id,
      org_name: 'Second Lab',
      bucket_name: 'second-lab-somatic',
      credentials_configured: false,
    })
    const got = await call(app, 'GET', `/api/v1/projects/${proj.body.id}`, { token: world.owner.token })
    expect(got.status).toBe(200)
    expect(got.body.id).toBe(proj.body.id)
  })

  it('answers 409 for a second organization with the same slug', async () => {
    const first = await call(app, 'POST', '/api/v1/organizations', { token: world.owner.token, body: { name: 'Dup Lab', slug: 'dup-lab' } })
    expect(first.status).toBe(201)
    const second = await call(app, 'POST', '/api/v1/organizations', { token: world.owner.token, body: { name: 'Dup Lab', slug: 'dup-lab' } })
    expect(second.status).toBe(409)
    expect(second.body.detail).toMatch(/dup-lab/)
  })

  it('refuses organization creation to a user who is not a platform admin', async () => {
    const viewer = await world.caller(['viewer'])
    const res = await call(app, 'POST', '/api/v1/organizations', { token: viewer.token, body: { name: 'Nope' } })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: expect.any(String) })
  })

  it('names the invalid field in a 400', async () => {
    const res = await call(app, 'POST', '/api/v1/projects', { token: world.owner.token, body: { name: 'x' } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/org_id/)
  })

  it('answers 404 for a project of another organization, as if it did not exist', async () => {
    const viewer = await world.caller(['viewer'])
    const { project: other } = await world.otherProject()
    const res = await call(app, 'GET', `/api/v1/projects/${other.id}`, { token: viewer.token })
    expect(res.status).toBe(404)
  })

  it("refuses to grant project roles to another organization's service user", async () => {
    const { org: otherOrg } = await world.otherProject()
    const created = await call(app, 'POST', `/api/v1/organizations/${otherOrg.id}/service-users`, {
      token: world.owner.token,
      body: { name: 'ingest-bot' },
    })
    expect(created.status).toBe(201)
    const grant = await call(app, 'POST', `/api/v1/projects/${world.project.id}/members`, {
      token: world.owner.token,
      body: { user_id: created.body.id, roles: ['pipeline'] },
    })
    expect(grant.status).toBe(404)
    const members = await call(app, 'GET', `/api/v1/projects/${world.project.id}/members`, { token: world.owner.token })
    expect(members.body.map((m: { user_id: string }) => m.user_id)).not.toContain(created.body.id)
  })

  it('sets and reads the default context', async () => {
    const analyst = await world.caller(['analyst'])
    const before = await call(app, 'GET', '/api/v1/users/me/default-context', { token: analyst.token })
    expect(before.body).toEqual({ project_id: null, org_id: null })
    const put = await call(app, 'PUT', '/api/v1/users/me/default-context', { token: analyst.token, body: { project_id: world.project.id } })
    expect(put.status).toBe(200)
    const after = await call(app, 'GET', '/api/v1/users/me/default-context', { token: analyst.token })
    expect(after.body).toEqual({ project_id: world.project.id, org_id: world.org.id })
  })

  it("sets and removes the project's letterhead (project admins), shown on the project", async () => {
    const p = (await call(app, 'POST', '/api/v1/projects', { token: world.owner.token, body: { org_id: world.org.id, name: 'Letterhead' } })).body
    expect(p.letterhead).toBeUndefined()
    const letterhead = {
      laboratory: 'Test Lab, Molecular Genetics',
      address: ['1 Helix Road', 'Berlin'],
      accreditation: 'ISO 15189:2022',
      director: 'Dr. G. Hopper',
    }
    const set = await call(app, 'PUT', `/api/v1/projects/${p.id}/letterhead`, { token: world.owner.token, body: letterhead })
    expect(set.status).toBe(200)
    expect(set.body).toEqual(letterhead)
    expect((await call(app, 'GET', `/api/v1/projects/${p.id}`, { token: world.owner.token })).body.letterhead).toEqual(letterhead)
    const bad = await call(app, 'PUT', `/api/v1/projects/${p.id}/letterhead`, { token: world.owner.token, body: { laboratory: '', email: 'x' } })
    expect(bad.status).toBe(400)
    expect(bad.body.detail).toContain('laboratory')
    const reviewer = await world.caller(['reviewer'])
    const refused = await call(app, 'PUT', `/api/v1/projects/${world.project.id}/letterhead`, { token: reviewer.token, body: letterhead })
    expect(refused.status).toBe(403)
    expect((await call(app, 'DELETE', `/api/v1/projects/${p.id}/letterhead`, { token: world.owner.token })).status).toBe(204)
    expect((await call(app, 'GET', `/api/v1/projects/${p.id}`, { token: world.owner.token })).body.letterhead).toBeUndefined()
    expect((await call(app, 'DELETE', `/api/v1/projects/${p.id}/letterhead`, { token: world.owner.token })).status).toBe(404)
  })

  it('pages the project list with page_size and X-Next-Page-Token', async () => {
    for (const name of ['P1', 'P2', 'P3']) {
      await call(app, 'POST', '/api/v1/projects', { token: world.owner.token, body: { org_id: world.org.id, name } })
    }
    const seen: string[] = []
    let token: string | undefined
    do {
      const res = await call(app, 'GET', `/api/v1/projects?page_size=2${token ? `&page_token=${token}` : ''}`, { token: world.owner.token })
      expect(res.status).toBe(200)
      expect(res.body.length).toBeLessThanOrEqual(2)
      seen.push(...res.body.map((p: { id: string }) => p.id))
      token = res.headers.get('x-next-page-token') ?? undefined
      if (token) expect(res.headers.get('link')).toContain('rel="next"')
    } while (token)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.length).toBeGreaterThanOrEqual(4)
  })
})
