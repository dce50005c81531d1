import { describe, expect, it } from 'vitest'
import { computeDeps } from '../../../../functions/compute/deps.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { PubSubQueue } from '../../../../lib/queue.js'
import { call, rand } from '../../../support/world.js'
import { makeOrder } from '../../../support/clinical.js'
import { makeComputeWorld } from './support.js'

const R1 = 'gs://demo-lab-demo/fastq/child_R1.fastq.gz'

describe('compute: runs', async () => {
  const w = await makeComputeWorld()
  const hello = w.platformId('hello-local', '1.0.0')
  const hereditary = w.platformId('hereditary-mock', '1.0.0')
  const submit = (body: Record<string, unknown>, opts: { token?: string; headers?: Record<string, string>; project?: string } = {}) =>
    w.api('POST', '/runs', { body, ...opts })
  const auditActions = async (runId: string) => {
    const q = await w.deps.db.col('audit_events').where('entity.id', '==', runId).get()
    return q.docs.map((d) => d.get('action') as string).sort()
  }

  it('queues a run named <slug>-<timestamp>, records run.submitted and publishes run.requested', async () => {
    const order = await makeOrder(w.deps, w.project)
    const received = w.receive(1)
    const res = await submit({ pipeline_id: hello, params: { greeting: 'hi' }, tags: ['smoke'], order_id: order.accession })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      status: 'queued',
      pipeline_id: hello,
      pipeline_slug: 'hello-local',
      pipeline_version: '1.0.0',
      params: { greeting: 'hi' },
      tags: ['smoke'],
      order_id: order.id,
      order_accession: order.accession,
      project_id: w.project.id,
      created_by: w.owner.user.id,
    })
    expect(res.body.name).toMatch(/^hello-local-\d{8}T\d{6}Z$/)
    expect(res.body.started).toBeUndefined()
    const [message] = await received
    expect(message!.data).toEqual({ run_id: res.body.id, project_id: w.project.id })
    expect(message!.attributes).toMatchObject({ kind: 'run.requested', run_id: res.body.id })
    const stored = await w.deps.runs.getById(res.body.id)
    expect(stored).toMatchObject({
      dispatch: { published: true, attempts: 1 },
      bucket_name: w.project.bucket_name,
      service_account_email: w.project.credentials!.service_account_email,
      execution: { type: 'container_entrypoint', entrypoint: '/bin/sh' },
    })
    expect(await auditActions(res.body.id)).toEqual(['run.submitted'])
  })

  it('gives concurrent submissions of one pipeline distinct names, -2, -3 … within one second, none waiting on another', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => submit({ pipeline_id: hello, params: {} })))
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201))
    const names = results.map((r) => r.body.name as string)
    expect(new Set(names).size).toBe(8)
    for (const name of names) expect(name).toMatch(/^hello-local-\d{8}T\d{6}Z(-\d+)?$/)
    // Each name finds exactly its run.
    for (const r of results) {
      const found = await w.api('GET', `/runs?name=${r.body.name}`)
      expect(found.body.map((x: { id: string }) => x.id)).toEqual([r.body.id])
    }
  })

  it('answers 400 naming each missing or mistyped param', async () => {
    const res = await submit({ pipeline_id: hereditary, params: { child_fastq: [R1], patient_age_years: 'seven' } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toBe(
      'params.case_id: required; params.child_fastq: expected an array of 2 files, got 1; params.patient_age_years: expected an integer',
    )
  })

  it('answers 404 for an unknown pipeline and 400 for a malformed body', async () => {
    const unknown = await submit({ pipeline_id: '00000000-0000-4000-8000-000000000000', params: {} })
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toMatch(/pipeline/)
    const malformed = await submit({ params: {} })
    expect(malformed.status).toBe(400)
    expect(malformed.body.detail).toMatch(/pipeline_id/)
  })

  it('refuses a project without cloud credentials with a 400 that mentions credentials', async () => {
    const { project } = await w.otherProject()
    await w.admin.store.setCredentials(SYSTEM_ACTOR, project, null, [])
    const res = await submit({ pipeline_id: hello, params: {} }, { project: project.id })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/credentials/)
  })

  it('lists runs newest first, pages them, and filters by order and status', async () => {
    const order = (await makeOrder(w.deps, w.project)).accession
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await submit({ pipeline_id: hello, params: {}, order_id: order })
      ids.push(res.body.id)
    }
    const first = await w.api('GET', `/runs?order_id=${order}&limit=2`)
    expect(first.status).toBe(200)
    expect(first.body.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]])
    const token = first.headers.get('x-next-page-token')
    expect(token).toBeTruthy()
    const second = await w.api('GET', `/runs?order_id=${order}&limit=2&page_token=${token}`)
    expect(second.body.map((r: { id: string }) => r.id)).toEqual([ids[0]])
    expect(second.headers.get('x-next-page-token')).toBeNull()

    await w.api('DELETE', `/runs/${ids[1]}`)
    const cancelled = await w.api('GET', `/runs?order_id=${order}&status=cancelled`)
    expect(cancelled.body.map((r: { id: string }) => r.id)).toEqual([ids[1]])
    const byOrder = await w.api('GET', `/runs/by-order/${order}`)
    expect(byOrder.body.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1], ids[0]])
    const byOrderQueued = await w.api('GET', `/runs/by-order/${order}?status=queued`)
    expect(byOrderQueued.body.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[0]])
    const all = await w.api('GET', '/runs?page_size=1000')
    const created = all.body.map((r: { created: string }) => r.created)
    expect(created).toEqual([...created].sort().reverse())
    expect((await w.api('GET', '/runs?status=paused')).status).toBe(400)
  })

  it('shows started, finished, duration and output once the run succeeds, and lists its output files', async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    expect((await w.api('GET', `/runs/${run.id}/outputs`)).body).toEqual([])
    await w.storage.write(w.project.bucket_name, `runs/${run.id}/hello.txt`, 'hello\n')
    await w.storage.write(w.project.bucket_name, `runs/${run.id}/logs/task.log`, 'log line\n')
    await w.deps.runs.applyJobState(run.id, { status: 'running', at: new Date('2026-11-22T06:00:00Z'), source: 'test' })
    expect((await w.api('GET', `/runs/${run.id}/outputs`)).body).toEqual([])
    await w.deps.runs.applyJobState(run.id, { status: 'succeeded', at: new Date('2026-11-22T06:01:30Z'), source: 'test' })
    const got = await w.api('GET', `/runs/${run.id}`)
    expect(got.body).toMatchObject({
      status: 'succeeded',
      started: '2026-11-22T06:00:00.000Z',
      finished: '2026-11-22T06:01:30.000Z',
      duration: 90,
      output: `gs://${w.project.bucket_name}/runs/${run.id}/`,
    })
    const outputs = await w.api('GET', `/runs/${run.id}/outputs`)
    expect(outputs.status).toBe(200)
    expect(outputs.body).toEqual([
      expect.objectContaining({
        name: 'hello.txt',
        path: `runs/${run.id}/hello.txt`,
        uri: `gs://${w.project.bucket_name}/runs/${run.id}/hello.txt`,
        size: 6,
        content_type: 'text/plain',
      }),
      expect.objectContaining({ name: 'logs/task.log', size: 9 }),
    ])
    const paged = await w.api('GET', `/runs/${run.id}/outputs?page_size=1`)
    expect(paged.body).toHaveLength(1)
    expect(paged.headers.get('x-next-page-token')).toBeTruthy()
    expect(await auditActions(run.id)).toEqual(['run.running', 'run.submitted', 'run.succeeded'])
  })

  it('shows the error message of a failed run', async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    await w.deps.runs.applyJobState(run.id, { status: 'failed', at: new Date(), error_message: 'exit status 3', source: 'test' })
    const got = await w.api('GET', `/runs/${run.id}`)
    expect(got.body).toMatchObject({ status: 'failed', error_message: 'exit status 3' })
    expect(got.body.output).toBeUndefined()
  })

  it('cancels a queued run with run.cancelled; a repeated cancel returns it unchanged', async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    const res = await w.api('DELETE', `/runs/${run.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: run.id, status: 'cancelled' })
    expect(res.body.finished).toBeDefined()
    const again = await w.api('DELETE', `/runs/${run.id}`)
    expect(again.status).toBe(200)
    expect(again.body.status).toBe('cancelled')
    expect(await auditActions(run.id)).toEqual(['run.cancelled', 'run.submitted'])
    // A late RUNNING event from Batch does not revive it.
    expect((await w.deps.runs.applyJobState(run.id, { status: 'running', at: new Date(), source: 'test' })).changed).toBe(false)
    expect((await w.api('GET', `/runs/${run.id}`)).body.status).toBe('cancelled')
  })

  it('answers 409 with a clear detail when cancelling a finished run', async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    await w.deps.runs.applyJobState(run.id, { status: 'succeeded', at: new Date(), source: 'test' })
    const res = await w.api('DELETE', `/runs/${run.id}`)
    expect(res.status).toBe(409)
    expect(res.body.detail).toBe(`run ${run.name} has already succeeded; only a queued or running run can be cancelled`)
  })

  it('cancels a running run by deleting its Batch job, killing the process', async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    const parent = 'projects/test/locations/local'
    const job = await w.batch.createJob({
      parent,
      jobId: `run-${run.id}`,
      job: { taskGroups: [{ taskSpec: { runnables: [{ script: { text: 'sleep 60' } }] } }], labels: { 'run-id': run.id } },
    })
    await w.deps.runs.recordJob(run.id, job)
    await w.deps.runs.applyJobState(run.id, { status: 'running', at: new Date(), source: 'test' })
    const res = await w.api('DELETE', `/runs/${run.id}`)
    expect(res.status).toBe(200)
    expect(res.body.status).toBe('cancelled')
    expect(await w.batch.getJob(job.name)).toBeUndefined()
    const stored = await w.deps.runs.getById(run.id)
    expect(stored?.cancel?.job_deleted_at).toBeDefined()
    expect(stored?.job_cleanup_pending).toBe(false)
    expect(await w.deps.runs.listCancelledWithLiveJob(100)).not.toContainEqual(expect.objectContaining({ id: run.id }))
  })

  it("finds a run by its exact name, only in the caller's project, and refuses name combined with other filters", async () => {
    const { body: run } = await submit({ pipeline_id: hello, params: {} })
    const found = await w.api('GET', `/runs?name=${run.name}`)
    expect(found.status).toBe(200)
    expect(found.body.map((r: { id: string }) => r.id)).toContain(run.id)
    expect(found.body.every((r: { name: string }) => r.name === run.name)).toBe(true)
    expect((await w.api('GET', '/runs?name=hello-local-19990101T000000Z')).body).toEqual([])
    const { project: other } = await w.otherProject()
    expect((await w.api('GET', `/runs?name=${run.name}`, { project: other.id })).body).toEqual([])
    const combined = await w.api('GET', `/runs?name=${run.name}&status=queued`)
    expect(combined.status).toBe(400)
    expect(combined.body.detail).toContain('query.name')
  })

  describe('idempotency', () => {
    it('returns the same run for a retried submission with the same key and body', async () => {
      const key = `key-${rand()}`
      const body = { pipeline_id: hello, params: { greeting: 'once' }, tags: ['a'] }
      const first = await submit(body, { headers: { 'idempotency-key': key } })
      expect(first.status).toBe(201)
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      const retry = await submit({ tags: ['a'], params: { greeting: 'once' }, pipeline_id: hello }, { headers: { 'idempotency-key': key } })
      expect(retry.status).toBe(201)
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(retry.body.id).toBe(first.body.id)
    })

    it('answers 409 for the same key with a different body', async () => {
      const key = `key-${rand()}`
      await submit({ pipeline_id: hello, params: { greeting: 'a' } }, { headers: { 'idempotency-key': key } })
      const res = await submit({ pipeline_id: hello, params: { greeting: 'b' } }, { headers: { 'idempotency-key': key } })
      expect(res.status).toBe(409)
      expect(res.body.detail).toMatch(/Idempotency-Key/)
    })

    it('makes one run from concurrent retries with the same key', async () => {
      const key = `key-${rand()}`
      const order = (await makeOrder(w.deps, w.project)).id
      const results = await Promise.all(
        Array.from({ length: 5 }, () => submit({ pipeline_id: hello, params: {}, order_id: order }, { headers: { 'idempotency-key': key } })),
      )
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201])
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1)
      const listed = await w.api('GET', `/runs/by-order/${order}`)
      expect(listed.body).toHaveLength(1)
    })

    it('keeps keys per user: another user with the same key gets a run of their own', async () => {
      const key = `key-${rand()}`
      const analyst = await w.caller(['analyst'])
      const mine = await submit({ pipeline_id: hello, params: {} }, { headers: { 'idempotency-key': key } })
      const theirs = await submit({ pipeline_id: hello, params: {} }, { token: analyst.token, headers: { 'idempotency-key': key } })
      expect(theirs.status).toBe(201)
      expect(theirs.body.id).not.toBe(mine.body.id)
    })
  })

  describe('tenancy and permissions', () => {
    it("answers 404 for another project's run, on every run endpoint", async () => {
      const { body: run } = await submit({ pipeline_id: hello, params: {} })
      const { project: other } = await w.otherProject()
      for (const [method, path] of [
        ['GET', `/runs/${run.id}`],
        ['GET', `/runs/${run.id}/outputs`],
        ['DELETE', `/runs/${run.id}`],
      ] as const) {
        const res = await w.api(method, path, { project: other.id })
        expect(res.status, `${method} ${path}`).toBe(404)
      }
      expect((await w.api('GET', `/runs/${run.id}`)).body.status).toBe('queued')
    })

    it('refuses submission and cancellation to a viewer (403) but lets them read', async () => {
      const viewer = await w.caller(['viewer'])
      const { body: run } = await submit({ pipeline_id: hello, params: {} })
      expect((await submit({ pipeline_id: hello, params: {} }, { token: viewer.token })).status).toBe(403)
      expect((await w.api('DELETE', `/runs/${run.id}`, { token: viewer.token })).status).toBe(403)
      expect((await w.api('GET', `/runs/${run.id}`, { token: viewer.token })).status).toBe(200)
    })

    it('lets an analyst submit and cancel', async () => {
      const analyst = await w.caller(['analyst'])
      const res = await submit({ pipeline_id: hello, params: {} }, { token: analyst.token })
      expect(res.status).toBe(201)
      expect((await w.api('DELETE', `/runs/${res.body.id}`, { token: analyst.token })).status).toBe(200)
    })

    it('answers 400 without X-Project-ID, 401 without a token and 403 for a user outside the project', async () => {
      const noProject = await w.api('GET', '/runs', { project: null })
      expect(noProject.status).toBe(400)
      expect(noProject.body.detail).toMatch(/X-Project-ID/)
      const anonymous = await call(w.app, 'GET', '/api/v1/runs', { project: w.project.id })
      expect(anonymous.status).toBe(401)
      const outsider = await w.caller([])
      expect((await w.api('GET', '/runs', { token: outsider.token })).status).toBe(403)
    })
  })

  it('keeps the run queued and unpublished, with a reason, when the queue cannot be reached', async () => {
    const brokenQueue = new PubSubQueue({ ...w.deps.config, topics: { ...w.deps.config.topics, runRequested: `missing-${rand()}` } })
    const app = createComputeApp(computeDeps(w.deps, { batch: w.batch, storage: w.storage, queue: brokenQueue }))
    const res = await call(app, 'POST', '/api/v1/runs', { token: w.owner.token, project: w.project.id, body: { pipeline_id: hello, params: {} } })
    expect(res.status).toBe(201)
    expect(res.body.status).toBe('queued')
    const stored = await w.deps.runs.getById(res.body.id)
    expect(stored).toMatchObject({ status: 'queued', dispatch: { published: false, attempts: 1 } })
    expect(stored?.status_reason).toMatch(/dispatched/)
    const unpublished = await w.deps.runs.listUnpublished(new Date(Date.now() + 1000), 100)
    expect(unpublished.map((r) => r.id)).toContain(res.body.id)
    await brokenQueue.pubsub.close()
  })

  it('gives runs submitted together distinct names, so a name always finds one run', async () => {
    const submitted = await Promise.all(Array.from({ length: 6 }, () => submit({ pipeline_id: hello, params: {} })))
    expect(submitted.map((r) => r.status)).toEqual(Array(6).fill(201))
    const names = submitted.map((r) => r.body.name as string)
    expect(new Set(names).size).toBe(6)
    for (const name of names) expect(name).toMatch(/^hello-local-\d{8}T\d{6}Z(-\d+)?$/)
    for (const name of names) {
      const found = await w.api('GET', `/runs?name=${name}`)
      expect(found.body.map((r: { name: string }) => r.name)).toEqual([name])
    }
  })
})
