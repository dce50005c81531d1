import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import { settleFromJob } from '../../../../domain/runs/lifecycle.js'
import { call } from '../../../support/world.js'
import { wesContract } from '../../../support/wes.js'
import { makeComputeWorld } from './support.js'

const WES = '/ga4gh/wes/v1'

/**
 * GA4GH WES 1.1 on the compute service: every answer is checked against the official document
 * (../shared/fixtures/wes/, through test/support/wes.ts), and the runs it makes are the platform's
 * own, with the same tenancy, permissions and audit as POST /runs.
 */
describe('compute: GA4GH WES 1.1 under /ga4gh/wes/v1', async () => {
  const w = await makeComputeWorld()
  let contract: Awaited<ReturnType<typeof wesContract>>
  beforeAll(async () => {
    contract = await wesContract()
  })
  const settings = { gcpProject: w.deps.config.gcpProject, region: 'local', jobStatusTopic: w.deps.config.topics.jobStatus }

  /** A WES call as the owner in the world's project unless told otherwise; its answer checked against the document for `template`. */
  async function wes(
    method: string,
    path: string,
    template: string,
    opts: {
      token?: string | null
      project?: string | null
      form?: Record<string, string | Blob>
      json?: unknown
      headers?: Record<string, string>
    } = {},
  ) {
    const headers: Record<string, string> = { ...opts.headers }
    const token = opts.token === undefined ? w.owner.token : opts.token
    if (token) headers.authorization = `Bearer ${token}`
    const project = opts.project === undefined ? w.project.id : opts.project
    if (project) headers['x-project-id'] = project
    let body: BodyInit | undefined
    if (opts.form) {
      const form = new FormData()
      for (const [k, v] of Object.entries(opts.form)) form.append(k, v)
      body = form
    } else if (opts.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(opts.json)
    }
    const res = await w.app.request(`${WES}${path}`, { method, headers, body })
    const json = (await res.json()) as any
    const conformance = contract.check(method, template, res.status, json)
    expect(conformance.errors, `${method} ${path} ${res.status} ${JSON.stringify(json)}`).toEqual([])
    return { status: res.status, body: json, documented: conformance.documented }
  }

  const submitForm = (fields: Record<string, string>, opts: Parameters<typeof wes>[3] = {}) =>
    wes('POST', '/runs', '/runs', {
      form: { workflow_type: 'CONTAINER', workflow_type_version: '1.0', ...fields },
      ...opts,
    })

  async function runToEnd(runId: string) {
    const run = (await w.deps.runs.getById(runId))!
    const created = await w.batch.createJob(buildRunJob(settings, run))
    await w.deps.runs.recordJob(run.id, created)
    const deadline = Date.now() + 20_000
    for (;;) {
      const job = await w.batch.getJob(created.name)
      if (job && ['SUCCEEDED', 'FAILED'].includes(job.state)) {
        // As the orchestrator does on the job's news (orchestrator/job-state-changed.ts).
        await settleFromJob(
          { ...w.deps, batch: w.batch },
          (await w.deps.runs.getById(run.id))!,
          job.state === 'SUCCEEDED' ? 'succeeded' : 'failed',
          new Date(),
          job,
          'test',
        )
        return
      }
      if (Date.now() > deadline) throw new Error(`job ${created.name} did not finish: ${job?.state}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  it('submits a catalogue pipeline from a multipart/form-data RunRequest, as the platform API would, audited alike', async () => {
    const res = await submitForm({
      workflow_url: 'hello-local@1.0.0',
      workflow_params: JSON.stringify({ greeting: 'hej' }),
      tags: JSON.stringify({ batch: '42', smoke: '' }),
    })
    expect(res.status).toBe(200)
    const run = (await w.deps.runs.getById(res.body.run_id))!
    expect(run).toMatchObject({
      project_id: w.project.id,
      pipeline_slug: 'hello-local',
      pipeline_version: '1.0.0',
      params: { greeting: 'hej' },
      tags: ['batch=42', 'smoke'],
    })
    expect(run.dispatch.published).toBe(true)
    const events = await w.deps.db.col('audit_events').where('entity.id', '==', run.id).get()
    expect(events.docs.map((d) => [d.get('action'), d.get('actor.id'), d.get('request.path')])).toEqual([
      ['run.submitted', w.owner.user.id, `${WES}/runs`],
    ])
  })

  it('accepts the same RunRequest as JSON, and an Idempotency-Key as POST /runs does', async () => {
    const request = { workflow_url: 'hello-local@1.0.0', workflow_type: 'CONTAINER', workflow_type_version: '1.0', workflow_params: {}, tags: {} }
    const key = randomUUID()
    const first = await wes('POST', '/runs', '/runs', { json: request, headers: { 'idempotency-key': key } })
    const again = await wes('POST', '/runs', '/runs', { json: request, headers: { 'idempotency-key': key } })
    expect(first.status).toBe(200)
    expect(again.body.run_id).toBe(first.body.run_id)
  })

  it.each<[string, Record<string, string>, string]>([
    ['no workflow_url', {}, 'workflow_url: required'],
    [
      'a workflow_url that names no pipeline',
      { workflow_url: 'https://example.org/main.cwl' },
      'workflow_url: name a pipeline of the project catalogue as <slug>@<version>',
    ],
    [
      'a version the catalogue lacks',
      { workflow_url: 'hello-local@9.9.9' },
      'workflow_url: the project catalogue has no pipeline hello-local version 9.9.9',
    ],
    [
      'another workflow type',
      { workflow_url: 'hello-local@1.0.0', workflow_type: 'CWL' },
      'workflow_type: hello-local@1.0.0 is a CONTAINER workflow, not CWL',
    ],
    ['workflow_params that are not JSON', { workflow_url: 'hello-local@1.0.0', workflow_params: '{greeting' }, 'workflow_params: not JSON'],
    [
      'params the pipeline refuses',
      { workflow_url: 'hereditary-mock@1.0.0', workflow_type: 'WDL', workflow_params: '{}' },
      'workflow_params.case_id: required',
    ],
    ['a tag value that is not a string', { workflow_url: 'hello-local@1.0.0', tags: '{"n": 1}' }, 'tags.n: '],
    ['a field WES does not have', { workflow_url: 'hello-local@1.0.0', pipeline_id: 'x' }, 'pipeline_id: not a field of a WES run request'],
  ])('refuses %s with 400 in both error shapes, naming the field', async (_, fields, detail) => {
    const res = await submitForm(fields)
    expect(res.status).toBe(400)
    expect(res.documented).toBe(true)
    expect(res.body).toEqual({ detail: expect.stringContaining(detail), msg: res.body.detail, status_code: 400 })
  })

  it('refuses workflow attachments: it runs the catalogue’s pipelines only', async () => {
    const res = await submitForm({ workflow_url: 'hello-local@1.0.0', workflow_attachment: new Blob(['cwlVersion: v1.2']) as unknown as string })
    expect(res.status).toBe(400)
    expect(res.body.msg).toMatch(/^workflow_attachment: not accepted/)
  })

  it('reads a run as its RunLog, status and tasks; a failed pipeline is an EXECUTOR_ERROR with its exit code', async () => {
    const submitted = await submitForm({ workflow_url: 'fail-local@1.0.0', tags: JSON.stringify({ case: 'C1' }) })
    const runId = submitted.body.run_id as string
    const queued = await wes('GET', `/runs/${runId}`, '/runs/{run_id}')
    expect(queued.body).toMatchObject({
      run_id: runId,
      state: 'QUEUED',
      request: {
        workflow_url: 'fail-local@1.0.0',
        workflow_type: 'CONTAINER',
        workflow_type_version: '1.0',
        tags: { case: 'C1' },
        workflow_params: {},
      },
      task_logs_url: expect.stringMatching(new RegExp(`${WES}/runs/${runId}/tasks$`)),
    })
    expect((await wes('GET', `/runs/${runId}/tasks`, '/runs/{run_id}/tasks')).body).toEqual({ task_logs: [], next_page_token: '' })

    await runToEnd(runId)
    expect((await wes('GET', `/runs/${runId}/status`, '/runs/{run_id}/status')).body).toEqual({ run_id: runId, state: 'EXECUTOR_ERROR' })
    const log = await wes('GET', `/runs/${runId}`, '/runs/{run_id}')
    expect(log.body.run_log).toMatchObject({
      exit_code: 3,
      start_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      end_time: expect.any(String),
    })
    expect(log.body.run_log.system_logs[0]).toMatch(/exit code 3/)
    const tasks = await wes('GET', `/runs/${runId}/tasks?page_size=5`, '/runs/{run_id}/tasks')
    expect(tasks.body.task_logs).toEqual([expect.objectContaining({ id: '0', name: 'fail-local', exit_code: 3 })])
    expect((await wes('GET', `/runs/${runId}/tasks/0`, '/runs/{run_id}/tasks/{task_id}')).body).toEqual(tasks.body.task_logs[0])
    const missing = await wes('GET', `/runs/${runId}/tasks/1`, '/runs/{run_id}/tasks/{task_id}')
    expect(missing.status).toBe(404)
  })

  it('reports a succeeded run COMPLETE with exit code 0 and its output folder', async () => {
    const submitted = await submitForm({ workflow_url: 'hello-local@1.0.0' })
    await runToEnd(submitted.body.run_id)
    const log = await wes('GET', `/runs/${submitted.body.run_id}`, '/runs/{run_id}')
    expect(log.body).toMatchObject({
      state: 'COMPLETE',
      run_log: { exit_code: 0 },
      outputs: { output: `gs://${w.project.bucket_name}/runs/${submitted.body.run_id}/` },
    })
  })

  it('cancels a queued run (CANCELED, audited as run.cancelled) and answers 409 for a finished one', async () => {
    const submitted = await submitForm({ workflow_url: 'hello-local@1.0.0' })
    const runId = submitted.body.run_id as string
    const cancelled = await wes('POST', `/runs/${runId}/cancel`, '/runs/{run_id}/cancel')
    expect(cancelled.body).toEqual({ run_id: runId })
    expect((await wes('GET', `/runs/${runId}/status`, '/runs/{run_id}/status')).body.state).toBe('CANCELED')
    const actions = (await w.deps.db.col('audit_events').where('entity.id', '==', runId).get()).docs.map((d) => d.get('action'))
    expect(actions.sort()).toEqual(['run.cancelled', 'run.submitted'])

    const done = await submitForm({ workflow_url: 'hello-local@1.0.0' })
    await runToEnd(done.body.run_id)
    const refused = await wes('POST', `/runs/${done.body.run_id}/cancel`, '/runs/{run_id}/cancel')
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ detail: expect.stringMatching(/has already succeeded/), msg: refused.body.detail, status_code: 409 })
  })

  it('lists the project’s runs newest first, page by page with page tokens, ending with an empty token', async () => {
    const { project } = await w.otherProject()
    const owner = w.owner.token
    const ids: string[] = []
    // Submitted through the platform API: WES lists every run of the project, whichever door it came by.
    for (let i = 0; i < 3; i++) {
      const res = await call(w.app, 'POST', '/api/v1/runs', {
        token: owner,
        project: w.project.id,
        body: { pipeline_id: w.platformId('hello-local', '1.0.0') },
      })
      ids.unshift(res.body.id)
    }
    const seen: string[] = []
    let token = ''
    do {
      const page = await wes('GET', `/runs?page_size=2${token ? `&page_token=${token}` : ''}`, '/runs')
      expect(page.body.runs.length).toBeLessThanOrEqual(2)
      for (const r of page.body.runs) expect(Object.keys(r).sort()).toEqual(expect.arrayContaining(['run_id', 'state', 'tags']))
      seen.push(...page.body.runs.map((r: { run_id: string }) => r.run_id))
      token = page.body.next_page_token
    } while (token)
    expect(seen.slice(0, 3)).toEqual(ids)
    expect(new Set(seen).size).toBe(seen.length)
    // Another project lists none of them.
    const other = await wes('GET', '/runs', '/runs', { project: project.id })
    expect(other.body).toEqual({ runs: [], next_page_token: '' })
    expect((await wes('GET', '/runs?page_size=0', '/runs')).status).toBe(400)
    expect((await wes('GET', '/runs?page_token=garbage', '/runs')).body.msg).toMatch(/page_token/)
  })

  it('describes itself in service-info (GA4GH service-info, WES 1.1), with the project’s runs counted by state', async () => {
    const res = await wes('GET', '/service-info', '/service-info')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      type: { group: 'org.ga4gh', artifact: 'wes', version: '1.1.0' },
      environment: w.deps.config.environment,
      supported_wes_versions: ['1.1.0'],
      workflow_type_versions: {
        NFL: { workflow_type_version: ['DSL2'] },
        WDL: { workflow_type_version: ['1.0', 'draft-2'] },
        CONTAINER: { workflow_type_version: ['1.0'] },
      },
      workflow_engine_versions: { nextflow: { workflow_engine_version: ['24.10.0'] }, cromwell: { workflow_engine_version: ['87'] } },
    })
    const counts = res.body.system_state_counts as Record<string, number>
    expect(Object.keys(counts).filter((s) => !contract.states.includes(s))).toEqual([])
    expect(counts.EXECUTOR_ERROR).toBeGreaterThanOrEqual(1)
    expect(counts.COMPLETE).toBeGreaterThanOrEqual(1)
    const all = await w.deps.runs.count(w.project.id, {})
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(all)
  })

  it('keeps the platform’s tenancy: 401 without credentials, 400 without X-Project-ID, 404 for another project’s run, each in both error shapes', async () => {
    const { project } = await w.otherProject()
    const submitted = await submitForm({ workflow_url: 'hello-local@1.0.0' })
    const cases = [
      await wes('GET', '/runs', '/runs', { token: null }),
      await wes('GET', '/service-info', '/service-info', { project: null }),
      await wes('GET', `/runs/${submitted.body.run_id}`, '/runs/{run_id}', { project: project.id }),
      await wes('GET', `/runs/not-a-run/status`, '/runs/{run_id}/status'),
    ]
    expect(cases.map((c) => c.status)).toEqual([401, 400, 404, 404])
    for (const c of cases) expect(c.body).toEqual({ detail: expect.any(String), msg: c.body.detail, status_code: c.status })
  })

  it('refuses a viewer’s submission and cancel with 403, recording access.denied as POST /runs does', async () => {
    const viewer = await w.caller(['viewer'])
    const refused = await submitForm({ workflow_url: 'hello-local@1.0.0' }, { token: viewer.token })
    expect(refused.status).toBe(403)
    expect(refused.body.msg).toBe('permission run.submit is required')
    const submitted = await submitForm({ workflow_url: 'hello-local@1.0.0' })
    expect((await wes('POST', `/runs/${submitted.body.run_id}/cancel`, '/runs/{run_id}/cancel', { token: viewer.token })).status).toBe(403)
    const denied = await w.deps.db.col('audit_events').where('actor.id', '==', viewer.user.id).where('action', '==', 'access.denied').get()
    expect(denied.docs.map((d) => d.get('change.reason')).sort()).toEqual(['missing permission run.cancel', 'missing permission run.submit'])
    // A viewer reads.
    expect((await wes('GET', `/runs/${submitted.body.run_id}/status`, '/runs/{run_id}/status', { token: viewer.token })).status).toBe(200)
  })

  it('answers an unknown WES path 404 in both shapes, and leaves the platform API’s errors {detail} alone', async () => {
    const res = await w.app.request(`${WES}/workflows`, { headers: { authorization: `Bearer ${w.owner.token}`, 'x-project-id': w.project.id } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ detail: `no route for GET ${WES}/workflows`, msg: `no route for GET ${WES}/workflows`, status_code: 404 })
    const platform = await call(w.app, 'GET', `/api/v1/runs/${randomUUID()}`, { token: w.owner.token, project: w.project.id })
    expect(platform.body).toEqual({ detail: 'run not found' })
  })

  it('answers a body over the platform’s 1 MiB limit 413 in both shapes, before reading it', async () => {
    const res = await submitForm({ workflow_url: 'hello-local@1.0.0', workflow_params: JSON.stringify({ big: 'x'.repeat(1024 * 1024) }) })
    expect(res.status).toBe(413)
    expect(res.body).toEqual({ detail: expect.stringMatching(/larger than 1 MiB/), msg: res.body.detail, status_code: 413 })
  })

  it('does not list WES among the operations of the service’s own OpenAPI document', async () => {
    const doc = (await (await w.app.request('/openapi.json')).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths).filter((p) => p.includes('ga4gh'))).toEqual([])
  })

  it('checks answers for real: the document refuses what WES does not allow, service-info’s GA4GH fields included', () => {
    expect(contract.check('GET', '/runs/{run_id}/status', 200, { run_id: 'x', state: 'DONE' }).errors).not.toEqual([])
    expect(contract.check('GET', '/runs/{run_id}/status', 200, { state: 'QUEUED' }).errors).not.toEqual([])
    const info = contract.check('GET', '/service-info', 200, { supported_wes_versions: ['1.1.0'] }).errors.join('\n')
    for (const field of ['id', 'name', 'type', 'organization', 'version', 'system_state_counts']) expect(info).toContain(field)
  })
})
