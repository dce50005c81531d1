import { afterAll, describe, expect, it } from 'vitest'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import { localFiles } from '../../../support/files.js'
import { call } from '../../../support/world.js'
import { makeComputeWorld } from '../compute/support.js'

/** A run's outputs are files like any other: listed by the compute service, downloaded through the file service. */
describe("files: a finished run's outputs", async () => {
  const w = await makeComputeWorld()
  const files = await localFiles(w, { storage: w.storage })
  afterAll(() => files.close())

  it('are downloaded through GET /files/download-url and a plain GET to the storage server', async () => {
    const submitted = await w.api('POST', '/runs', { body: { pipeline_id: w.platformId('hello-local', '1.0.0'), params: { greeting: 'hej' } } })
    const run = (await w.deps.runs.getById(submitted.body.id))!
    const settings = { gcpProject: w.deps.config.gcpProject, region: 'local', jobStatusTopic: w.deps.config.topics.jobStatus }
    const job = await w.batch.createJob(buildRunJob(settings, run))
    const deadline = Date.now() + 20_000
    while ((await w.batch.getJob(job.name))?.state !== 'SUCCEEDED') {
      if (Date.now() > deadline) throw new Error('hello-local did not finish')
      await new Promise((r) => setTimeout(r, 100))
    }
    await w.deps.runs.applyJobState(run.id, { status: 'succeeded', at: new Date(), source: 'test' })

    const outputs = await w.api('GET', `/runs/${run.id}/outputs`)
    const hello = (outputs.body as Array<{ name: string; path: string; uri: string }>).find((o) => o.name === 'hello.txt')!
    expect(hello.uri).toBe(`gs://${w.project.bucket_name}/runs/${run.id}/hello.txt`)

    const byPath = await call(files.app, 'GET', `/api/v1/files/download-url?path=${encodeURIComponent(hello.path)}`, {
      token: w.owner.token,
      project: w.project.id,
    })
    const byUri = await call(files.app, 'GET', `/api/v1/files/download-url?path=${encodeURIComponent(hello.uri)}`, {
      token: w.owner.token,
      project: w.project.id,
    })
    expect([byPath.status, byUri.status]).toEqual([200, 200])
    const got = await fetch(byUri.body.url)
    expect(got.status).toBe(200)
    expect(got.headers.get('content-type')).toBe('text/plain')
    expect(await got.text()).toBe(`hej from run ${run.id}\n`)
    const listed = await call(files.app, 'GET', `/api/v1/files?path=runs/${run.id}/`, { token: w.owner.token, project: w.project.id })
    expect(listed.body.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['hello.txt', 'params.json']))
  })
})
