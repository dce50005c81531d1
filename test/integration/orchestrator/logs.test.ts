import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../../lib/log.js'
import { registerOrchestrator } from '../../../orchestrator/functions.js'
import { makeStage, type Stage } from './stage.js'

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const TRACEPARENT = `00-${TRACE}-b7ad6b7169203331-01`
const UNKNOWN_RUN = '00000000-0000-4000-8000-000000000000'

type Line = Record<string, any>

/** The orchestrator's functions served as in the cloud, their log lines captured. */
describe('the log lines of the orchestrator', () => {
  let stage: Stage
  let runRequested: string
  let reconcileUrl: string
  const raw: string[] = []
  const lines = () => raw.map((l) => JSON.parse(l) as Line)

  beforeAll(async () => {
    stage = await makeStage()
    registerOrchestrator({ ...stage.deps, log: createLogger('debug', { service: 'orchestrator' }, (line) => raw.push(line)) })
    runRequested = await stage.serve('runRequested')
    reconcileUrl = await stage.serve('reconcile')
  })
  afterAll(async () => {
    await stage?.close()
  })
  beforeEach(() => {
    raw.length = 0
  })

  it('puts the event and message ids, and the request id and trace the message carries, on the lines of its handling', async () => {
    const status = await stage.push(runRequested, stage.config.topics.runRequested, {
      json: { run_id: UNKNOWN_RUN, project_id: stage.world.project.id },
      attributes: { kind: 'run.requested', request_id: 'req-from-compute', traceparent: TRACEPARENT },
    })
    expect(status).toBeLessThan(300)
    const line = lines().find((l) => l.message === 'run.requested: no such run')
    expect(line).toMatchObject({
      severity: 'WARNING',
      service: 'orchestrator',
      request_id: 'req-from-compute',
      event_id: expect.any(String),
      message_id: expect.any(String),
      'logging.googleapis.com/trace': `projects/${stage.config.gcpProject}/traces/${TRACE}`,
    })
  })

  it('ignores a request id or a traceparent attribute that is not well formed', async () => {
    await stage.push(runRequested, stage.config.topics.runRequested, {
      json: { run_id: UNKNOWN_RUN, project_id: stage.world.project.id },
      attributes: { request_id: 'not an id\n{"severity":"ERROR"}', traceparent: 'garbage' },
    })
    const line = lines().find((l) => l.message === 'run.requested: no such run')
    expect(line).toBeDefined()
    expect(line!.request_id).toBeUndefined()
    expect(line!['logging.googleapis.com/trace']).toBeUndefined()
    expect(line!.event_id).toEqual(expect.any(String))
  })

  it('gives a reconcile call a request id, on its lines and in its response', async () => {
    const res = await fetch(reconcileUrl, { method: 'POST', headers: { 'x-request-id': 'sched-1', traceparent: TRACEPARENT } })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toBe('sched-1')
    expect(lines().find((l) => l.message === 'reconcile done')).toMatchObject({
      severity: 'INFO',
      request_id: 'sched-1',
      'logging.googleapis.com/trace': `projects/${stage.config.gcpProject}/traces/${TRACE}`,
    })
  })
})
