import { describe, expect, it } from 'vitest'
import type { ProjectRole } from '../../../../lib/auth/roles.js'
import { call, createAdminApp, makeWorld } from '../../../support/world.js'

describe('admin: project credentials', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)
  const owner = world.owner.token
  const path = (id = world.project.id) => `/api/v1/projects/${id}/credentials`

  async function projectWithout() {
    const res = await call(app, 'POST', '/api/v1/projects', { token: owner, body: { org_id: world.org.id, name: `No creds ${Math.random()}` } })
    expect(res.body.credentials_configured).toBe(false)
    return res.body.id as string
  }

  it('describes impersonation of the project service account, with no secret in it', async () => {
    const res = await call(app, 'GET', path(), { token: owner })
    expect(res.status).toBe(200)
    const email = 'runner@test-project.iam.gserviceaccount.com'
    expect(res.body).toEqual({
      project_id: world.project.id,
      bucket_name: world.project.bucket_name,
      bucket_uri: `gs://${world.project.bucket_name}`,
      mode: 'impersonation',
      service_account_email: email,
      configured_at: expect.any(String),
      scopes: ['https://www.googleapis.com/auth/devstorage.read_write'],
      access_token_lifetime_seconds: 900,
      signed_url_ttl_seconds: 900,
      required_role: 'roles/iam.serviceAccountTokenCreator',
      iam_credentials: {
        generate_access_token: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${encodeURIComponent(email)}:generateAccessToken`,
        sign_blob: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${encodeURIComponent(email)}:signBlob`,
      },
    })
    expect(JSON.stringify(res.body)).not.toMatch(/private_key|secret|BEGIN/i)
  })

  it.each<[ProjectRole[], number]>([
    [['viewer'], 403],
    [['lab'], 403],
    [['analyst'], 403],
    [['reviewer'], 403],
    [['auditor'], 403],
    [['admin'], 200],
    [['owner'], 200],
    [['pipeline'], 200],
  ])('answers a caller with roles %j with %i', async (roles, status) => {
    const who = await world.caller(roles)
    const res = await call(app, 'GET', path(), { token: who.token })
    expect(res.status).toBe(status)
    if (status === 403) expect(res.body).toEqual({ detail: 'permission credentials.read is required' })
  })

  it('says that no cloud credentials are configured, distinct from an unknown project', async () => {
    const id = await projectWithout()
    const res = await call(app, 'GET', path(id), { token: owner })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ detail: expect.stringMatching(/^no cloud credentials are configured for project /) })
    const unknown = await call(app, 'GET', path('00000000-0000-4000-8000-000000000000'), { token: owner })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ detail: 'project not found' })
  })

  it('sets credentials with PUT, then removes them with DELETE, each audited', async () => {
    const id = await projectWithout()
    const put = await call(app, 'PUT', path(id), { token: owner, body: { service_account_email: 'Runs@Lab-Prod.iam.gserviceaccount.com' } })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ project_id: id, mode: 'impersonation', service_account_email: 'runs@lab-prod.iam.gserviceaccount.com' })
    expect((await call(app, 'GET', path(id), { token: owner })).status).toBe(200)
    expect((await call(app, 'GET', `/api/v1/projects/${id}`, { token: owner })).body.credentials_configured).toBe(true)

    const del = await call(app, 'DELETE', path(id), { token: owner })
    expect(del.status).toBe(204)
    expect((await call(app, 'GET', path(id), { token: owner })).body.detail).toMatch(/no cloud credentials/)
    expect((await call(app, 'DELETE', path(id), { token: owner })).status).toBe(404)

    const events = await world.deps.db.col('audit_events').where('project_id', '==', id).get()
    const actions = events.docs.map((d) => d.get('action'))
    expect(actions).toEqual(expect.arrayContaining(['credentials.configured', 'credentials.removed']))
  })

  it.each([
    [{}, /service_account_email: required/],
    [{ service_account_email: 'not an address' }, /service_account_email/],
    [{ service_account_email: 'alice@example.org' }, /service_account_email: must be a Google Cloud service account/],
  ])('refuses PUT %j with a 400 naming the field', async (body, detail) => {
    const res = await call(app, 'PUT', path(), { token: owner, body })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ detail: expect.stringMatching(detail) })
  })

  it('lets only project admins change credentials: 403 for a pipeline service role and an analyst', async () => {
    for (const roles of [['pipeline'], ['analyst']] as ProjectRole[][]) {
      const who = await world.caller(roles)
      for (const method of ['PUT', 'DELETE'] as const) {
        const res = await call(app, method, path(), {
          token: who.token,
          body: method === 'PUT' ? { service_account_email: 'x-runner@evil.iam.gserviceaccount.com' } : undefined,
        })
        expect(res.status).toBe(403)
        expect(res.body).toEqual({ detail: 'permission credentials.manage is required' })
      }
    }
    expect((await call(app, 'GET', path(), { token: owner })).body.service_account_email).toBe('runner@test-project.iam.gserviceaccount.com')
  })

  it('answers 404 for the credentials of a project the caller has no role in', async () => {
    const admin = await world.caller(['admin'])
    const { project: other } = await world.otherProject()
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await call(app, method, path(other.id), {
        token: admin.token,
        body: method === 'PUT' ? { service_account_email: 'a-runner@x.iam.gserviceaccount.com' } : undefined,
      })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ detail: 'project not found' })
    }
  })
})
