import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createComputeApp } from '../../../functions/compute/service.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../domain/pipelines/model.js'
import { API_PREFIX, createServiceApp, resourceApp } from '../../../lib/http.js'
import { createLogger, type LogSink } from '../../../lib/log.js'
import type { Queue } from '../../../lib/queue.js'
import { localCompute } from '../../support/compute.js'
import { call, makeWorld } from '../../support/world.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`

type Line = Record<string, any>

/**
 * The compute service as deployed, its log lines captured: what an operator reading Cloud Logging
 * would see for each request.
 */
describe('the log lines of a request', async () => {
  // A client behind a load balancer: Google's front end appended the client, then the balancer.
  const world = await makeWorld({ TRUSTED_PROXY_HOPS: '2' })
  const local = await localCompute(world)
  afterAll(() => local.close())

  const raw: string[] = []
  const sink: LogSink = (line) => raw.push(line)
  const lines = () => raw.map((l) => JSON.parse(l) as Line)
  const accessLines = () => lines().filter((l) => l.httpRequest)
  beforeEach(() => {
    raw.length = 0
  })

  const log = createLogger('debug', { service: 'compute' }, sink)
  const gcpProject = world.deps.config.gcpProject
  const app = createComputeApp({ ...local.deps, log })
  const unreachable: Queue = {
    publish: async () => {
      throw new Error('Pub/Sub unreachable')
    },
  }
  const appWithoutQueue = createComputeApp({ ...local.deps, log, queue: unreachable })
  const hello = pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0')
  const token = world.owner.token

  it('writes one access line with the httpRequest fields, the request id, the trace and the caller', async () => {
    const res = await call(app, 'GET', '/api/v1/pipelines', {
      token,
      project: world.project.id,
      headers: {
        'x-request-id': 'req-list-1',
        traceparent: TRACEPARENT,
        'user-agent': 'platform-cli/1.0',
        'x-forwarded-for': '203.0.113.7, 10.0.0.1',
      },
    })
    expect(res.status).toBe(200)
    expect(accessLines()).toHaveLength(1)
    const [line] = accessLines()
    expect(line).toMatchObject({
      severity: 'INFO',
      message: 'GET /api/v1/pipelines 200',
      service: 'compute',
      request_id: 'req-list-1',
      'logging.googleapis.com/trace': `projects/${gcpProject}/traces/${TRACE}`,
      'logging.googleapis.com/spanId': '00f067aa0ba902b7',
      'logging.googleapis.com/trace_sampled': true,
      principal: world.owner.user.id,
      auth_method: 'personal_token',
      project_id: world.project.id,
      httpRequest: {
        requestMethod: 'GET',
        requestUrl: 'http://localhost/api/v1/pipelines',
        status: 200,
        userAgent: 'platform-cli/1.0',
        remoteIp: '203.0.113.7',
      },
    })
    expect(line!.httpRequest.latency).toMatch(/^\d+\.\d{3}s$/)
  })

  it('takes the trace from X-Cloud-Trace-Context when there is no traceparent', async () => {
    await call(app, 'GET', '/api/v1/pipelines', { token, project: world.project.id, headers: { 'x-cloud-trace-context': `${TRACE}/12345;o=1` } })
    expect(accessLines()[0]).toMatchObject({
      'logging.googleapis.com/trace': `projects/${gcpProject}/traces/${TRACE}`,
      'logging.googleapis.com/spanId': (12345).toString(16).padStart(16, '0'),
    })
  })

  it('puts the request id and the trace on a line logged deep inside the run lifecycle, not only on the access line', async () => {
    const res = await call(appWithoutQueue, 'POST', '/api/v1/runs', {
      token,
      project: world.project.id,
      body: { pipeline_id: hello, params: {} },
      headers: { traceparent: TRACEPARENT },
    })
    expect(res.status).toBe(201)
    const requestId = res.headers.get('x-request-id')
    const warning = lines().find((l) => l.message.startsWith('run.requested publish failed'))
    expect(warning).toMatchObject({
      severity: 'WARNING',
      run_id: res.body.id,
      request_id: requestId,
      'logging.googleapis.com/trace': `projects/${gcpProject}/traces/${TRACE}`,
    })
    expect(accessLines()).toHaveLength(1)
    expect(lines().every((l) => l.request_id === requestId)).toBe(true)
  })

  it('hands the request id and the trace on to the run.requested message, for the orchestrator to log with', async () => {
    const [subscription] = await local.topic.createSubscription(`logs-test-${Date.now()}`)
    try {
      const received = new Promise<Record<string, string>>((resolve) =>
        subscription.on('message', (m) => {
          m.ack()
          resolve(m.attributes)
        }),
      )
      const res = await call(app, 'POST', '/api/v1/runs', {
        token,
        project: world.project.id,
        body: { pipeline_id: hello, params: {} },
        headers: { 'x-request-id': 'req-submit-1', traceparent: TRACEPARENT },
      })
      expect(res.status).toBe(201)
      const attributes = await received
      expect(attributes).toMatchObject({ kind: 'run.requested', run_id: res.body.id, request_id: 'req-submit-1' })
      expect(attributes.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`))
    } finally {
      await subscription.close()
      await subscription.delete().catch(() => undefined)
    }
  })

  it.each([
    ['no credentials', undefined],
    ['an unknown token', 'plat_pat_' + 'x'.repeat(43)],
    ['a malformed JWT', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJub2JvZHkifQ.bm90LWEtc2lnbmF0dXJl'],
  ])('logs a 401 for %s as a WARNING access line without a principal', async (_what, badToken) => {
    const res = await call(app, 'GET', '/api/v1/runs', { token: badToken, project: world.project.id })
    expect(res.status).toBe(401)
    expect(accessLines()).toHaveLength(1)
    const [line] = accessLines()
    expect(line).toMatchObject({ severity: 'WARNING', httpRequest: { status: 401 }, request_id: res.headers.get('x-request-id') })
    expect(line!.principal).toBeUndefined()
  })

  it('logs an unknown route as a 404 access line', async () => {
    const res = await call(app, 'GET', '/nowhere')
    expect(res.status).toBe(404)
    expect(accessLines()).toEqual([expect.objectContaining({ severity: 'WARNING', httpRequest: expect.objectContaining({ status: 404 }) })])
  })

  it('never writes a token, an Authorization header or a session cookie into any line', async () => {
    const cookie = 'plat_ses_' + 'c'.repeat(43)
    await call(app, 'GET', '/api/v1/pipelines', { token, project: world.project.id })
    await call(app, 'GET', '/api/v1/pipelines', { project: world.project.id, headers: { cookie: `platform_session=${cookie}` } })
    await call(app, 'GET', '/api/v1/runs', { token: 'plat_pat_' + 'y'.repeat(43), project: world.project.id })
    await call(appWithoutQueue, 'POST', '/api/v1/runs', { token, project: world.project.id, body: { pipeline_id: hello, params: {} } })
    expect(accessLines()).toHaveLength(4)
    const all = raw.join('\n')
    for (const secret of [token, cookie, 'y'.repeat(43), 'Bearer', 'platform_session=']) expect(all).not.toContain(secret)
  })

  it('keeps the lines of concurrent requests apart', async () => {
    const ids = ['req-a', 'req-b', 'req-c', 'req-d']
    const responses = await Promise.all(
      ids.map((id) =>
        call(appWithoutQueue, 'POST', '/api/v1/runs', {
          token,
          project: world.project.id,
          body: { pipeline_id: hello, params: {} },
          headers: { 'x-request-id': id },
        }),
      ),
    )
    for (const [i, id] of ids.entries()) {
      const mine = lines().filter((l) => l.request_id === id)
      expect(mine.filter((l) => l.httpRequest)).toHaveLength(1)
      expect(mine.find((l) => l.message.startsWith('run.requested publish failed'))?.run_id).toBe(responses[i]!.body.id)
    }
    expect(lines().every((l) => ids.includes(l.request_id as string))).toBe(true)
  })

  it('answers GET /healthz without credentials, and logs it like any request', async () => {
    const res = await call(app, 'GET', '/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', service: 'compute' })
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(accessLines()).toEqual([expect.objectContaining({ severity: 'INFO', httpRequest: expect.objectContaining({ status: 200 }) })])
  })

  it('replaces an X-Request-ID that is not an id, and ignores a malformed traceparent', async () => {
    const res = await call(app, 'GET', '/healthz', { headers: { 'x-request-id': 'x'.repeat(5000), traceparent: `00-${'z'.repeat(32)}-0-01` } })
    const id = res.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const [line] = accessLines()
    expect(line!.request_id).toBe(id)
    expect(line!['logging.googleapis.com/trace']).toBeUndefined()
  })
})

describe('the log lines of a failed request', async () => {
  const world = await makeWorld()
  const raw: string[] = []
  const log = createLogger('debug', { service: 'test' }, (line) => raw.push(line))
  const app = createServiceApp({ name: 'test', title: 'Test', description: 'fails', deps: { ...world.deps, log }, projectScoped: false })
  const routes = resourceApp()
  routes.get('/boom', () => {
    throw new Error('disk on fire')
  })
  app.route(API_PREFIX, routes)

  it('logs the unhandled error and an ERROR access line with status 500, both with the request id', async () => {
    const res = await call(app, 'GET', '/api/v1/boom', { token: world.owner.token, headers: { 'x-request-id': 'req-boom' } })
    expect(res.status).toBe(500)
    const lines = raw.map((l) => JSON.parse(l) as Line)
    expect(lines).toEqual([
      expect.objectContaining({
        severity: 'ERROR',
        message: 'unhandled error',
        request_id: 'req-boom',
        error: expect.objectContaining({ message: 'disk on fire' }),
      }),
      expect.objectContaining({
        severity: 'ERROR',
        message: 'GET /api/v1/boom 500',
        request_id: 'req-boom',
        principal: world.owner.user.id,
        httpRequest: expect.objectContaining({ status: 500 }),
      }),
    ])
  })
})
