import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpError, PlatformClient, retryAfterMs } from '../../../cli/client.js'

const PROJECT = '00000000-0000-4000-8000-000000000001'
const RUN = { id: '00000000-0000-4000-8000-000000000002', name: 'hello-local-20261122T061530Z', status: 'queued' }

/** A service that answers each request with the next of `answers` (the last one again once they run out), and records what came. */
function scripted() {
  let answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }> = []
  const seen: Array<{ method: string; at: number; key?: string }> = []
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method!, at: performance.now(), key: req.headers['idempotency-key'] as string | undefined })
    req.resume()
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
    res.end(JSON.stringify(answer.body))
  })
  return {
    server,
    seen,
    script(next: typeof answers) {
      answers = next
      seen.length = 0
    },
  }
}

const busy = (retryAfter?: string, status = 503) => ({
  status,
  headers: retryAfter === undefined ? undefined : { 'retry-after': retryAfter },
  body: { detail: 'the service is at capacity' },
})

describe('the CLI client under overload', () => {
  const service = scripted()
  let client: PlatformClient
  beforeAll(async () => {
    await new Promise<void>((r) => service.server.listen(0, '127.0.0.1', () => r()))
    const base = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`
    client = new PlatformClient({ baseUrl: () => base, retryDelaysMs: [50, 50] })
  })
  afterAll(() => new Promise<void>((r) => service.server.close(() => r())))

  it.each([
    ['a 503', 503],
    ['a 429', 429],
  ])('waits the Retry-After of %s before sending a GET again', async (_, status) => {
    service.script([busy('1', status), { status: 200, body: [] }])
    await expect(client.pipelineVersions(PROJECT, 'hello-local')).resolves.toEqual([])
    expect(service.seen).toHaveLength(2)
    expect(service.seen[1]!.at - service.seen[0]!.at).toBeGreaterThanOrEqual(1000)
  })

  it('sends a submission again with the same Idempotency-Key, so that a retry never makes a second run', async () => {
    service.script([busy('1'), { status: 201, body: RUN }])
    await expect(client.submitRun(PROJECT, { pipeline_id: 'p', params: {} } as never, 'key-1')).resolves.toMatchObject({ id: RUN.id })
    expect(service.seen.map((s) => [s.method, s.key])).toEqual([
      ['POST', 'key-1'],
      ['POST', 'key-1'],
    ])
  })

  it('does not send a POST without an Idempotency-Key again', async () => {
    service.script([busy('1')])
    await expect(client.cancelRun(PROJECT, RUN.id)).rejects.toBeInstanceOf(HttpError)
    expect(service.seen).toHaveLength(1)
  })

  it('does not wait out a Retry-After of minutes (a locked login): the error says it at once', async () => {
    service.script([busy('900', 429)])
    await expect(client.pipelineVersions(PROJECT, 'hello-local')).rejects.toMatchObject({ status: 429 })
    expect(service.seen).toHaveLength(1)
  })

  it('gives up after its retries, with the service’s detail', async () => {
    service.script([busy()])
    await expect(client.pipelineVersions(PROJECT, 'hello-local')).rejects.toMatchObject({ status: 503, detail: 'the service is at capacity' })
    expect(service.seen).toHaveLength(3)
  })
})

describe('Retry-After', () => {
  const now = Date.parse('2026-11-22T06:15:30Z')
  it.each([
    ['delay-seconds', '2', 2000],
    ['zero', '0', 0],
    ['an HTTP-date', 'Sun, 22 Nov 2026 06:15:35 GMT', 5000],
    ['an HTTP-date already past', 'Sun, 22 Nov 2026 06:15:00 GMT', 0],
    ['nothing readable', 'soon', undefined],
    ['a negative number', '-1', undefined],
  ])('%s: %s', (_, value, ms) => {
    expect(retryAfterMs(value, now)).toBe(ms)
  })
  it('absent', () => expect(retryAfterMs(null, now)).toBeUndefined())
})
