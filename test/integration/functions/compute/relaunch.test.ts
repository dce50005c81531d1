import { describe, expect, it } from 'vitest'
import { makeOrder } from '../../../support/clinical.js'
import { rand } from '../../../support/world.js'
import { makeComputeWorld } from './support.js'

describe('compute: POST /runs/{id}/relaunch', async () => {
  const w = await makeComputeWorld()
  const hello = w.platformId('hello-local', '1.0.0')
  const submit = (body: Record<string, unknown>) => w.api('POST', '/runs', { body })
  const relaunch = (id: string, body: Record<string, unknown>, opts: { token?: string; headers?: Record<string, string>; project?: string } = {}) =>
    w.api('POST', `/runs/${id}/relaunch`, { body, ...opts })
  const failed = async (body: Record<string, unknown>) => {
    const res = await submit(body)
    expect(res.status).toBe(201)
    await w.deps.runs.applyJobState(res.body.id, { status: 'failed', at: new Date(), error_message: 'exit code 3', source: 'test' })
    return res.body as { id: string; name: string }
  }
  const eventsOf = async (runId: string) => {
    const q = await w.deps.db.col('audit_events').where('entity.id', '==', runId).get()
    return q.docs.map((d) => ({ action: d.get('action') as string, change: d.get('change') as Record<string, unknown> }))
  }

  it('makes a new run of the same pipeline version with every setting of the first, linked both ways and audited on both', async () => {
    const order = await makeOrder(w.deps, w.project)
    const received = w.receive(2)
    const first = await submit({ pipeline_id: hello, params: { greeting: 'hi' }, tags: ['trio'], profile: 'test', order_id: order.id })
    const res = await relaunch(first.body.id, {})
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    expect(res.body).toMatchObject({
      status: 'queued',
      pipeline_id: hello,
      pipeline_version: '1.0.0',
      params: { greeting: 'hi' },
      tags: ['trio'],
      profile: 'test',
      order_id: order.id,
      relaunched_from: { id: first.body.id, name: first.body.name, resume: false },
      work_session: res.body.id,
      relaunches: [],
    })
    expect(res.body.id).not.toBe(first.body.id)
    expect((await received).map((m) => m.data)).toContainEqual({ run_id: res.body.id, project_id: w.project.id })
    const original = await w.api('GET', `/runs/${first.body.id}`)
    expect(original.body.relaunches).toEqual([res.body.id])
    expect((await eventsOf(res.body.id)).map((e) => e.action)).toEqual(['run.submitted'])
    const onFirst = await eventsOf(first.body.id)
    expect(onFirst.find((e) => e.action === 'run.relaunched')?.change.reason).toBe(`relaunched as run ${res.body.name} (${res.body.id})`)
  })

  it('changes params by a merge patch (null removes one), replaces tags and profile, and names the changes in the audit event', async () => {
    const first = await submit({ pipeline_id: hello, params: { greeting: 'hi' }, tags: ['a'] })
    const res = await relaunch(first.body.id, { params: { greeting: 'bonjour' }, tags: ['b'], profile: 'docker' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ params: { greeting: 'bonjour' }, tags: ['b'], profile: 'docker' })
    const removed = await relaunch(first.body.id, { params: { greeting: null } })
    expect(removed.body.params).toEqual({})
    const [submitted] = await eventsOf(res.body.id)
    expect(submitted!.change.fields).toEqual(['params.greeting', 'tags', 'profile'])
  })

  it('checks changed params against the pipeline (400 naming the param)', async () => {
    const first = await submit({ pipeline_id: hello, params: {} })
    const res = await relaunch(first.body.id, { params: { greeting: 42 } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/^params\.greeting: /)
  })

  it('resumes an ended run in its work session, and refuses to resume one still queued (409)', async () => {
    const queued = await submit({ pipeline_id: hello, params: {} })
    const early = await relaunch(queued.body.id, { resume: true })
    expect(early.status).toBe(409)
    expect(early.body.detail).toMatch(/still queued/)

    const first = await failed({ pipeline_id: hello, params: {} })
    const resumed = await relaunch(first.id, { resume: true })
    expect(resumed.status).toBe(201)
    expect(resumed.body).toMatchObject({ work_session: first.id, relaunched_from: { id: first.id, resume: true } })
    // A resume of the resume stays in the session that began it.
    await w.deps.runs.applyJobState(resumed.body.id, { status: 'failed', at: new Date(), error_message: 'again', source: 'test' })
    const again = await relaunch(resumed.body.id, { resume: true })
    expect(again.body.work_session).toBe(first.id)
    expect((await w.api('GET', `/runs/${first.id}`)).body.relaunches).toEqual([resumed.body.id])
  })

  it('lets one resume of a session work at a time: of two sent together one is made, the other is a 409 until it ends', async () => {
    const first = await failed({ pipeline_id: hello, params: {} })
    const answers = await Promise.all([relaunch(first.id, { resume: true }), relaunch(first.id, { resume: true, tags: ['b'] })])
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409])
    const made = answers.find((a) => a.status === 201)!
    expect(answers.find((a) => a.status === 409)!.body.detail).toBe(
      `run ${made.body.name} is queued in the work session of run ${first.name}; resume once it has ended, or relaunch afresh now`,
    )
    // The resumed run itself failing and being resumed: the session's first run is not at work any more.
    await w.deps.runs.applyJobState(made.body.id, { status: 'failed', at: new Date(), error_message: 'again', source: 'test' })
    expect((await relaunch(first.id, { resume: true })).status).toBe(201)
    // Relaunching afresh never waits.
    expect((await relaunch(first.id, {})).status).toBe(201)
  })

  it('is idempotent like POST /runs: a retry answers the first relaunch, the key with another request is a 409', async () => {
    const first = await submit({ pipeline_id: hello, params: {} })
    const key = `relaunch-${rand()}`
    const a = await relaunch(first.body.id, { tags: ['x'] }, { headers: { 'idempotency-key': key } })
    const b = await relaunch(first.body.id, { tags: ['x'] }, { headers: { 'idempotency-key': key } })
    expect([a.status, b.status]).toEqual([201, 201])
    expect(b.body.id).toBe(a.body.id)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const other = await relaunch(first.body.id, { tags: ['y'] }, { headers: { 'idempotency-key': key } })
    expect(other.status).toBe(409)
    expect((await w.api('GET', `/runs/${first.body.id}`)).body.relaunches).toEqual([a.body.id])
  })

  it("answers 404 for another project's run or an unknown id, 403 for a viewer, 400 for a malformed body", async () => {
    const other = await w.otherProject()
    const theirs = await w.api('POST', '/runs', { body: { pipeline_id: hello, params: {} }, project: other.project.id })
    expect(theirs.status).toBe(201)
    expect((await relaunch(theirs.body.id, {})).status).toBe(404)
    expect((await relaunch('00000000-0000-4000-8000-000000000000', {})).status).toBe(404)
    expect((await relaunch('not-a-run', {})).status).toBe(404)
    const mine = await submit({ pipeline_id: hello, params: {} })
    const viewer = await w.caller(['viewer'])
    expect((await relaunch(mine.body.id, {}, { token: viewer.token })).status).toBe(403)
    const bad = await relaunch(mine.body.id, { resume: 'yes' })
    expect(bad.status).toBe(400)
    expect(bad.body.detail).toMatch(/resume/)
  })
})
