import { setTimeout as sleep } from 'node:timers/promises'
import { spawnSync } from 'node:child_process'
import { describe, expect, it, vi } from 'vitest'
import { inScope } from '../../../lib/kernel.js'
import { createLogger, stdioSink, type Level, type Logger, type LogSink } from '../../../lib/log.js'
import { messageType, type Queue } from '../../../lib/queue.js'
import { z } from 'zod'
import { repoRoot } from '../../support/suite.js'

/** A logger whose lines are kept, parsed, for the test to read. */
function capture(level: Level = 'debug', base: Record<string, unknown> = { service: 'test' }) {
  const lines: Array<Record<string, any>> = []
  const raw: string[] = []
  const sink: LogSink = (line) => {
    raw.push(line)
    lines.push(JSON.parse(line) as Record<string, any>)
  }
  return { log: createLogger(level, base, sink), lines, raw }
}

describe('the logger', () => {
  it.each([
    ['debug', 'DEBUG'],
    ['info', 'INFO'],
    ['warn', 'WARNING'],
    ['error', 'ERROR'],
  ] as const)('writes %s calls with the Cloud Logging severity %s', (method, severity) => {
    const { log, lines } = capture()
    log[method]('something happened', { run_id: 'r1' })
    expect(lines).toEqual([{ severity, message: 'something happened', service: 'test', run_id: 'r1' }])
  })

  it('drops lines below LOG_LEVEL and writes nothing when silent', () => {
    const warnOnly = capture('warn')
    warnOnly.log.info('routine')
    warnOnly.log.warn('odd')
    expect(warnOnly.lines.map((l) => l.severity)).toEqual(['WARNING'])
    const silent = capture('silent')
    silent.log.error('lost')
    expect(silent.lines).toEqual([])
  })

  it("keeps the line's own severity and message when a field is named like them", () => {
    const { log, lines } = capture()
    log.info('the real message', { severity: 'DEBUG', message: 'a forged one' })
    expect(lines[0]).toMatchObject({ severity: 'INFO', message: 'the real message' })
  })

  it('writes an error field as its name, message and stack', () => {
    const { log, lines } = capture()
    log.error('failed', { error: new TypeError('bad input') })
    expect(lines[0]!.error).toMatchObject({ name: 'TypeError', message: 'bad input', stack: expect.stringContaining('TypeError: bad input') })
  })

  it('gives an ERROR line the stack of its error as stack_trace, where Error Reporting looks, and a warning none', () => {
    const { log, lines } = capture()
    const err = new Error('disk full')
    log.error('write failed', { run_id: 'r1', error: err })
    log.warn('retrying', { error: err })
    expect(lines[0]!.stack_trace).toBe(err.stack)
    expect(lines[1]!.stack_trace).toBeUndefined()
  })

  it('hands the sink the fields of the line it wrote, errors serialized', () => {
    const records: unknown[] = []
    const log = createLogger('debug', { service: 'test' }, (_line, _severity, record) => records.push(record))
    log.warn('odd', { run_id: 'r1', error: new TypeError('bad') })
    expect(records[0]).toMatchObject({
      severity: 'WARNING',
      message: 'odd',
      service: 'test',
      run_id: 'r1',
      error: { name: 'TypeError', message: 'bad' },
    })
  })

  it('still writes a line when a field cannot be serialized', () => {
    const { log, lines } = capture()
    const circular: Record<string, unknown> = {}
    circular.self = circular
    expect(() => log.warn('odd value', { circular, big: 1n })).not.toThrow()
    expect(lines[0]).toMatchObject({ severity: 'WARNING', message: 'odd value', log_error: { name: 'TypeError' } })
  })

  it('redacts platform tokens and JWTs that slipped into a message or a field', () => {
    const { log, raw } = capture()
    const pat = 'plat_pat_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V'
    const session = 'plat_ses_' + 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp'
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLWJ5dGVz'
    log.error(`rejected Bearer ${pat}`, { cookie: `platform_session=${session}`, header: `Bearer ${jwt}` })
    const line = raw[0]!
    expect(line).not.toContain(pat)
    expect(line).not.toContain(session)
    expect(line).not.toContain(jwt)
    expect(line).toContain('plat_pat_[redacted]')
    expect(line).toContain('[redacted JWT]')
  })

  it('leaves short token hints (prefix and four characters) readable', () => {
    const { log, lines } = capture()
    log.info('token listed', { hint: 'plat_pat_a1B2' })
    expect(lines[0]!.hint).toBe('plat_pat_a1B2')
  })
})

describe('the log scope', () => {
  /** Stands for the run lifecycle: domain code that logs and publishes with the dependencies it is handed. */
  async function deepInside(deps: { log: Logger; queue?: Queue }) {
    await sleep(1)
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        deps.log.warn('publish failed', { run_id: 'r1' })
        resolve()
      }),
    )
  }

  it('puts the request id on every line logged with the scoped dependencies, however deep and however many awaits later', async () => {
    const { log, lines } = capture()
    const deps = inScope({ log }, { requestId: 'req-1', fields: { request_id: 'req-1' } })
    deps.log.info('start')
    await deepInside(deps)
    log.info('outside the request')
    expect(lines.map((l) => [l.message, l.request_id])).toEqual([
      ['start', 'req-1'],
      ['publish failed', 'req-1'],
      ['outside the request', undefined],
    ])
  })

  it('keeps concurrent requests apart', async () => {
    const { log, lines } = capture()
    await Promise.all(
      ['a', 'b', 'c'].map(async (id) => {
        const deps = inScope({ log }, { requestId: id, fields: { request_id: id } })
        await sleep(id === 'a' ? 5 : 1)
        deps.log.info(`work of ${id}`)
      }),
    )
    expect(lines.map((l) => [l.message, l.request_id]).sort()).toEqual([
      ['work of a', 'a'],
      ['work of b', 'b'],
      ['work of c', 'c'],
    ])
  })

  it("adds a nested scope's fields to the outer ones, an undefined field leaving the outer value", () => {
    const { log, lines } = capture()
    log.with({ request_id: 'req-1' }).with({ event_id: 'e1', request_id: undefined }).info('nested')
    expect(lines[0]).toMatchObject({ request_id: 'req-1', event_id: 'e1' })
  })

  it("lets a call's own field win over the scope's, and the scope's over the logger's base", () => {
    const { log, lines } = capture('debug', { service: 'test', component: 'base' })
    log.with({ component: 'scope', request_id: 'req-1' }).info('x', { request_id: 'explicit' })
    expect(lines[0]).toMatchObject({ component: 'scope', request_id: 'explicit' })
  })

  it("hands the request id and the trace on to every message published with the scoped queue, the caller's attributes winning", async () => {
    const sent: Array<Record<string, string> | undefined> = []
    const queue: Queue = { publish: async (_type, _data, attributes) => (sent.push(attributes), 'm1') }
    const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true }
    const sentMessage = messageType('test.sent', z.object({ run_id: z.string() }), () => 'test-topic')
    const base = { log: capture().log, queue }
    const deps = inScope(base, { requestId: 'req-1', trace, fields: { request_id: 'req-1' } })
    await deps.queue.publish(sentMessage, { run_id: 'r1' }, { run_id: 'r1', request_id: 'explicit' })
    await base.queue.publish(sentMessage, { run_id: 'r2' })
    expect(sent).toEqual([
      { request_id: 'explicit', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', run_id: 'r1' },
      undefined,
    ])
  })
})

describe('the standard streams sink', () => {
  it('writes the lines of one turn of the event loop in one write per stream, in order, warnings and errors to stderr', async () => {
    const writes: Array<[string, string]> = []
    const spy = (name: string) =>
      vi.spyOn(process[name as 'stdout'], 'write').mockImplementation((chunk) => (writes.push([name, String(chunk)]), true))
    const out = spy('stdout')
    const err = spy('stderr')
    try {
      const log = createLogger('debug', { service: 'test' }, stdioSink)
      log.info('one')
      log.warn('two')
      log.info('three')
      log.error('four')
      expect(writes).toEqual([])
      await new Promise((r) => setImmediate(r))
      const writesTo = (name: string) => writes.filter(([n]) => n === name).map(([, text]) => text)
      const messages = (text: string) =>
        text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).message)
      expect(writesTo('stdout').map(messages)).toEqual([['one', 'three']])
      expect(writesTo('stderr').map(messages)).toEqual([['two', 'four']])
    } finally {
      out.mockRestore()
      err.mockRestore()
    }
  })

  it('writes what is pending before the process exits, even by process.exit in the same turn', () => {
    const script = `import { createLogger } from './lib/log.ts'
const log = createLogger('info', {}); log.info('last words'); log.error('and an error'); process.exit(3)`
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' })
    expect(r.status).toBe(3)
    expect(JSON.parse(r.stdout).message).toBe('last words')
    expect(JSON.parse(r.stderr.split('\n').find((l) => l.startsWith('{'))!).message).toBe('and an error')
  })
})
