import { afterAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { localFiles } from '../../../support/files.js'
import { call, createAdminApp, makeWorld, rand } from '../../../support/world.js'

/**
 * Tenancy of cloud resources (issue 17, the review's critical finding): a bucket and a service
 * account belong to one project, so another organization's admin can never make a project of theirs
 * point at this project's storage or identity, and so never reads or writes its files.
 */
describe('admin: a bucket and a service account belong to one project', async () => {
  const world = await makeWorld()
  const app = createAdminApp(world.deps)
  const files = await localFiles(world)
  afterAll(() => files.close())
  const mine = { bucket: world.project.bucket_name, account: world.project.credentials!.service_account_email }
  await files.storage.write(mine.bucket, 'fastq/P1_R1.fastq.gz', 'ACGT', 'application/gzip')

  /** Organization B, made by the platform operator, with an admin of its own who is no operator. */
  const orgB = (await call(app, 'POST', '/api/v1/organizations', { token: world.owner.token, body: { name: `Org B ${rand()}` } })).body as {
    id: string
  }
  const bAdminUser = await seedUser(world.deps, { email: `b-admin-${rand()}@example.org` })
  await world.deps.store.setOrgRole(SYSTEM_ACTOR, orgB.id, bAdminUser, 'org_admin')
  const bAdmin = await seedToken(world.deps, bAdminUser, 'b admin')

  const projectsOf = async (orgId: string) => (await world.deps.db.col('projects').where('org_id', '==', orgId).get()).docs.map((d) => d.id)
  const deniedFor = async (userId: string) =>
    (await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', userId).get()).docs.map((d) => d.data())

  it("refuses org B's admin naming A's bucket: 403 (naming a bucket is an operator's act), access.denied, no project", async () => {
    const res = await call(app, 'POST', '/api/v1/projects', {
      token: bAdmin,
      body: { org_id: orgB.id, name: 'Mirror bucket', bucket_name: mine.bucket },
    })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ detail: expect.stringMatching(/platform administrator/) })
    expect(await projectsOf(orgB.id)).toEqual([])
    expect(await deniedFor(bAdminUser.id)).toEqual([
      expect.objectContaining({ org_id: orgB.id, entity: expect.objectContaining({ type: 'bucket' }) }),
    ])
  })

  it("refuses even a platform operator naming A's bucket for B: 409 naming the bucket, not A's project, and no project", async () => {
    const res = await call(app, 'POST', '/api/v1/projects', {
      token: world.owner.token,
      body: { org_id: world.org.id, name: 'Mirror bucket', bucket_name: mine.bucket },
    })
    expect(res.status).toBe(409)
    expect(res.body.detail).toContain(`bucket ${mine.bucket}`)
    expect(res.body.detail).not.toContain(world.project.id)
    expect(await projectsOf(world.org.id)).toEqual([world.project.id])
  })

  it("refuses org B's admin naming A's service account on POST /projects: 409 naming it, and no project", async () => {
    const res = await call(app, 'POST', '/api/v1/projects', {
      token: bAdmin,
      body: { org_id: orgB.id, name: 'Mirror account', service_account_email: mine.account.toUpperCase() },
    })
    expect(res.status).toBe(409)
    expect(res.body.detail).toContain(`service account ${mine.account}`)
    expect(res.body.detail).not.toContain(world.project.id)
    expect(await projectsOf(orgB.id)).toEqual([])
  })

  it("refuses org B's admin putting A's service account on B's project (409 naming it); B's project never reaches A's files", async () => {
    const created = await call(app, 'POST', '/api/v1/projects', { token: bAdmin, body: { org_id: orgB.id, name: 'Mirror' } })
    expect(created.status).toBe(201)
    const b = created.body as { id: string; bucket_name: string }
    expect(b.bucket_name).not.toBe(mine.bucket)

    const put = await call(app, 'PUT', `/api/v1/projects/${b.id}/credentials`, { token: bAdmin, body: { service_account_email: mine.account } })
    expect(put.status).toBe(409)
    expect(put.body).toEqual({ detail: expect.stringContaining(`service account ${mine.account}`) })
    expect((await world.deps.db.col('projects').doc(b.id).get()).get('credentials')).toBeUndefined()

    // With an account of its own, B's project works, on its own bucket only.
    const own = `runner-${rand()}@org-b.iam.gserviceaccount.com`
    expect((await call(app, 'PUT', `/api/v1/projects/${b.id}/credentials`, { token: bAdmin, body: { service_account_email: own } })).status).toBe(200)
    const asB = (path: string) => call(files.app, 'GET', `/api/v1${path}`, { token: bAdmin, project: b.id })
    expect((await asB('/files?path=fastq/')).body).toEqual([])
    expect((await asB('/files?path=fastq/P1_R1.fastq.gz')).body).toEqual([])
    expect((await asB('/files/download-url?path=fastq/P1_R1.fastq.gz')).status).toBe(404)
    expect((await asB(`/files?path=gs://${mine.bucket}/fastq/`)).status).toBe(400)
  })
})
