import { Timestamp } from '@google-cloud/firestore'
import { afterAll, describe, expect, it } from 'vitest'
import { seedBase } from '../../../../emulators/seed.js'
import type { ProjectRecord } from '../../../../lib/auth/access.js'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { newId } from '../../../../lib/ids.js'
import { seedOrgAndProject, seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { localFiles } from '../../../support/files.js'
import { testKernel } from '../../../support/env.js'
import { call, createAdminApp, makeWorld, rand } from '../../../support/world.js'

/**
 * Tenancy of cloud resources (issue 17, the review's critical finding): a bucket and a service
 * account belong to one project, so another organization's admin can never make a project of theirs
 * point at this project's storage or identity, and so never reads or writes its files.
 */
describe('admin: a bucket and a service account belong to one project', async () => {
  const world = await makeWorld({ SHARED_REFERENCE_BUCKETS: 'genomes-reference' })
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

describe('admin: how buckets are assigned and service accounts bound and released', async () => {
  const world = await makeWorld({ SHARED_REFERENCE_BUCKETS: 'genomes-reference' })
  const app = createAdminApp(world.deps)
  const owner = world.owner.token
  const post = (body: Record<string, unknown>, token = owner) => call(app, 'POST', '/api/v1/projects', { token, body })
  const credentials = (id: string, email: string | null) =>
    call(app, email ? 'PUT' : 'DELETE', `/api/v1/projects/${id}/credentials`, {
      token: owner,
      body: email ? { service_account_email: email } : undefined,
    })
  const claimOf = async (key: string) => (await world.deps.db.col('resource_claims').doc(key).get()).data()
  const newOrg = async (slug: string) =>
    (await call(app, 'POST', '/api/v1/organizations', { token: owner, body: { name: slug, slug } })).body.id as string
  const account = () => `runner-${rand()}@lab.iam.gserviceaccount.com`

  it('derives <org>-<project>, and a name with a suffix from the project id when that one is taken (org a-b + c, org a + b-c)', async () => {
    const r = rand()
    const first = await post({ org_id: await newOrg(`x${r}-b`), name: 'C', slug: 'c' })
    const second = await post({ org_id: await newOrg(`x${r}`), name: 'B C', slug: 'b-c' })
    expect([first.status, second.status]).toEqual([201, 201])
    expect(first.body.bucket_name).toBe(`x${r}-b-c`)
    expect(second.body.bucket_name).toBe(`x${r}-b-c-${second.body.id.replaceAll('-', '').slice(0, 8)}`)
    expect(await claimOf(`bucket:${first.body.bucket_name}`)).toMatchObject({ kind: 'bucket', project_id: first.body.id })
    expect(await claimOf(`bucket:${second.body.bucket_name}`)).toMatchObject({ project_id: second.body.id })
  })

  it.each([
    ['Bad_Bucket', /bucket_name: .*lowercase/],
    ['ab', /bucket_name: .*at least 3/],
    ['goog-lab', /bucket_name: .*goog/],
    ['10.0.0.1', /bucket_name: .*IP address/],
  ])('answers 400 naming bucket_name for %s', async (bucket_name, detail) => {
    const res = await post({ org_id: world.org.id, name: `Bad ${rand()}`, bucket_name })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ detail: expect.stringMatching(detail) })
  })

  it('lets an operator bring a free bucket under a project, and refuses a shared reference bucket (409)', async () => {
    const bucket_name = `existing-${rand()}`
    const res = await post({ org_id: world.org.id, name: `Brought ${rand()}`, bucket_name })
    expect(res.status).toBe(201)
    expect(res.body.bucket_name).toBe(bucket_name)
    expect(await claimOf(`bucket:${bucket_name}`)).toMatchObject({ project_id: res.body.id, org_id: world.org.id })
    const shared = await post({ org_id: world.org.id, name: `Shared ${rand()}`, bucket_name: 'genomes-reference' })
    expect(shared.status).toBe(409)
    expect(shared.body.detail).toMatch(/bucket genomes-reference is a shared reference bucket/)
  })

  it('keeps what a project made before claims existed its own: its bucket and account are refused to others', async () => {
    const old: ProjectRecord = {
      id: newId(),
      org_id: world.org.id,
      name: 'Old',
      slug: `old-${rand()}`,
      bucket_name: `old-bucket-${rand()}`,
      credentials: { service_account_email: account(), configured_at: Timestamp.now() },
      created: Timestamp.now(),
    }
    await world.deps.db.col('projects').doc(old.id).set(old)
    const bucket = await post({ org_id: world.org.id, name: `Takes ${rand()}`, bucket_name: old.bucket_name })
    expect(bucket.status).toBe(409)
    expect(bucket.body.detail).toContain(`bucket ${old.bucket_name}`)
    const other = (await post({ org_id: world.org.id, name: `Other ${rand()}` })).body
    const put = await credentials(other.id, old.credentials!.service_account_email)
    expect(put.status).toBe(409)
    expect(put.body.detail).toContain(`service account ${old.credentials!.service_account_email}`)
    // The old project binding its own account again gets the claim it never had.
    expect((await credentials(old.id, old.credentials!.service_account_email)).status).toBe(200)
    expect(await claimOf(`service_account:${old.credentials!.service_account_email}`)).toMatchObject({ project_id: old.id })
  })

  it('binds an account to one project, idempotently; changing or removing it releases it for another', async () => {
    const [p1, p2] = [
      (await post({ org_id: world.org.id, name: `P1 ${rand()}` })).body,
      (await post({ org_id: world.org.id, name: `P2 ${rand()}` })).body,
    ]
    const x = account()
    const y = account()
    const first = await credentials(p1.id, x)
    expect(first.status).toBe(200)
    const again = await credentials(p1.id, x.toUpperCase())
    expect(again.status).toBe(200)
    expect(again.body.configured_at).toBe(first.body.configured_at)
    expect((await credentials(p2.id, x)).status).toBe(409)

    expect((await credentials(p1.id, y)).status).toBe(200)
    expect(await claimOf(`service_account:${x}`)).toBeUndefined()
    expect((await credentials(p2.id, x)).status).toBe(200)
    expect((await credentials(p1.id, x)).status).toBe(409)

    expect((await credentials(p2.id, null)).status).toBe(204)
    expect(await claimOf(`service_account:${x}`)).toBeUndefined()
    expect((await credentials(p1.id, x)).status).toBe(200)
    expect(await claimOf(`service_account:${x}`)).toMatchObject({ project_id: p1.id })
    expect(await claimOf(`service_account:${y}`)).toBeUndefined()

    const events = await world.deps.db.col('audit_events').where('project_id', '==', p1.id).where('action', '==', 'credentials.configured').get()
    expect(events.docs.map((d) => d.get('change'))).toEqual(expect.arrayContaining([{ fields: ['credentials'], from: y, to: x }]))
  })

  it('gives an account asked for by two projects at once to exactly one of them', async () => {
    const ps = await Promise.all([1, 2].map(async (i) => (await post({ org_id: world.org.id, name: `Race ${i} ${rand()}` })).body))
    const x = account()
    const answers = await Promise.all(ps.map((p) => credentials(p.id, x)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    const holders = await world.deps.db.col('projects').where('credentials.service_account_email', '==', x).get()
    expect(holders.size).toBe(1)
  })

  it('gives a bucket two operators name at once to exactly one project', async () => {
    const bucket_name = `race-${rand()}`
    const answers = await Promise.all([1, 2].map((i) => post({ org_id: world.org.id, name: `Bucket race ${i} ${rand()}`, bucket_name })))
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409])
    expect((await world.deps.db.col('projects').where('bucket_name', '==', bucket_name).get()).size).toBe(1)
  })

  it("claims the seed's bucket and account, and those of a project it finds from before claims", async () => {
    const kernel = testKernel('admin')
    const base = await seedBase(kernel)
    const claims = kernel.db.col('resource_claims')
    const keys = [`bucket:${base.project.bucket_name}`, `service_account:${base.project.credentials!.service_account_email}`]
    for (const key of keys) expect((await claims.doc(key).get()).get('project_id')).toBe(base.project.id)
    // A data folder from before claims: the project is there, its claims are not. Seeding again claims them.
    await Promise.all(keys.map((key) => claims.doc(key).delete()))
    const again = await seedBase(kernel, { token: base.token, reviewerToken: base.reviewerToken })
    expect(again.project.id).toBe(base.project.id)
    for (const key of keys) expect((await claims.doc(key).get()).get('project_id')).toBe(base.project.id)
    // Another project holding the seed's bucket stops the seed with a message naming it.
    const { deps, owner: someone } = await makeWorld()
    const squatter = await seedOrgAndProject(deps, {
      owner: someone.user,
      orgName: 'Squat',
      orgSlug: `squat-${rand()}`,
      projectName: 'Squat',
      projectSlug: 'squat',
      bucketName: `held-${rand()}`,
    })
    await expect(
      seedOrgAndProject(deps, {
        owner: someone.user,
        orgName: 'Late',
        orgSlug: `late-${rand()}`,
        projectName: 'Late',
        projectSlug: 'late',
        bucketName: squatter.project.bucket_name,
      }),
    ).rejects.toThrow(`bucket ${squatter.project.bucket_name} belongs to another project`)
  })
})
