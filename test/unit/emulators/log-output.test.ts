import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatLine, isRoutine, suiteLogLevel, type SuiteLogOptions } from '../../../emulators/log-output.js'
import type { LogRecord } from '../../../lib/log.js'
import { RECONCILE_DONE } from '../../../orchestrator/reconcile.js'
import { repoRoot } from '../../support/suite.js'

// Local time, as the terminal shows it.
const TIME = new Date(2026, 0, 2, 3, 4, 5, 6)
const plain = (record: LogRecord) => formatLine(record, { time: TIME, color: false })
const TOKEN = 'plat_pat_abcdefghijklmnopqrstuvwxyz'
const idleReconcile = {
  republished: 0,
  settled: 0,
  jobs_deleted: 0,
  runs_ingested: 0,
  ingestions_resumed: 0,
  deliveries_published: 0,
  errors: 0,
  remaining: { republish: 0, settle: 0, delete_job: 0 },
}
const access = (status: number): LogRecord => ({
  severity: status >= 500 ? 'ERROR' : status >= 400 ? 'WARNING' : 'INFO',
  message: `GET /api/v1/runs/r1 ${status}`,
  service: 'compute',
  request_id: 'req1',
  httpRequest: { requestMethod: 'GET', status, latency: '0.012s' },
})

describe('the terminal line', () => {
  it.each<[string, LogRecord, string]>([
    [
      'an access line: time, level, service, message, latency, request id',
      access(200),
      '03:04:05.006 INFO  compute      GET /api/v1/runs/r1 200 12ms request=req1',
    ],
    [
      'the ids that matter, in a fixed order, and no other field',
      {
        severity: 'INFO',
        message: 'run accepted',
        service: 'compute',
        request_id: 'q',
        report_id: 'rep',
        run_id: 'r',
        order_id: 'o',
        project_id: 'p',
      },
      '03:04:05.006 INFO  compute      run accepted run=r order=o report=rep request=q',
    ],
    [
      "a warning with its error's message",
      {
        severity: 'WARNING',
        message: 'reconcile: settle failed',
        service: 'orchestrator',
        run_id: 'r',
        error: { name: 'Error', message: 'deadline' },
      },
      '03:04:05.006 WARN  orchestrator reconcile: settle failed run=r error: deadline',
    ],
    ['a debug line', { severity: 'DEBUG', message: 'cache hit', service: 'variants' }, '03:04:05.006 DEBUG variants     cache hit'],
    ['a line without a service', { severity: 'INFO', message: 'seeded' }, '03:04:05.006 INFO               seeded'],
  ])('shows %s', (_name, record, expected) => {
    expect(plain(record)).toBe(expected)
  })

  it("follows an ERROR line with its error's stack, one indented frame a line", () => {
    const err = new Error('boom')
    const text = plain({
      severity: 'ERROR',
      message: 'request failed',
      service: 'admin',
      error: { name: 'Error', message: 'boom', stack: err.stack },
      stack_trace: err.stack,
    })
    const [first, ...frames] = text.split('\n')
    expect(first).toBe('03:04:05.006 ERROR admin        request failed error: boom')
    expect(frames.length).toBeGreaterThan(0)
    for (const frame of frames) expect(frame).toMatch(/^ {4}at /)
  })

  it('colours the level on a colour terminal, and writes no escape sequence without colour', () => {
    const coloured = formatLine(access(404), { time: TIME, color: true })
    expect(coloured).toContain('\u001b[33mWARN')
    expect(plain(access(404))).not.toContain('\u001b')
  })

  it('keeps the redaction of the JSON lines', () => {
    const text = plain({
      severity: 'WARNING',
      message: `bad token ${TOKEN}`,
      service: 'admin',
      error: { name: 'Error', message: `refused ${TOKEN}` },
    })
    expect(text).not.toContain(TOKEN)
    expect(text).toContain('plat_pat_[redacted]')
  })

  it('is one line without control characters for anything but an ERROR line, whatever the fields hold', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<LogRecord['severity']>('DEBUG', 'INFO', 'WARNING'),
        fc.string(),
        fc.string(),
        fc.string(),
        fc.string(),
        (severity, message, service, runId, errorMessage) => {
          const text = plain({
            severity,
            message,
            service,
            run_id: runId,
            error: { name: 'Error', message: errorMessage, stack: `Error\n    at ${errorMessage}` },
          })
          // eslint-disable-next-line no-control-regex -- control characters are what this looks for
          expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
        },
      ),
    )
  })

  it('never shows a platform token, whatever surrounds it', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.constantFrom('pat', 'sat', 'ses'),
        fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/),
        (before, after, kind, secret) => {
          const token = `plat_${kind}_${secret}`
          const text = plain({ severity: 'ERROR', message: `${before}${token}${after}`, service: 'admin', error: { name: 'Error', message: token } })
          expect(text).not.toContain(secret)
        },
      ),
    )
  })
})

describe('routine lines', () => {
  it.each<[string, LogRecord, boolean]>([
    ['a request that succeeded', access(200), true],
    ['a redirect', access(302), true],
    ['a request refused', access(404), false],
    ['a request that failed', access(500), false],
    ['a reconcile pass that found nothing', { severity: 'INFO', message: RECONCILE_DONE, ...idleReconcile }, true],
    ['a reconcile pass that settled a run', { severity: 'INFO', message: RECONCILE_DONE, ...idleReconcile, settled: 1 }, false],
    [
      'a reconcile pass cut short',
      { severity: 'INFO', message: RECONCILE_DONE, ...idleReconcile, remaining: { republish: 3, settle: 0, delete_job: 0 } },
      false,
    ],
    ['a reconcile pass with errors', { severity: 'INFO', message: RECONCILE_DONE, ...idleReconcile, errors: 2 }, false],
    ['any other line', { severity: 'INFO', message: 'run accepted', run_id: 'r' }, false],
  ])('%s: routine %s', (_name, record, routine) => {
    expect(isRoutine(record)).toBe(routine)
  })
})

describe("the suite's log level", () => {
  it.each([
    ['debug', 'debug'],
    ['info', 'info'],
    ['warn', 'info'],
    ['silent', 'info'],
  ] as const)('is %s -> %s: the file keeps info whatever the terminal shows', (shown, logged) => {
    expect(suiteLogLevel(shown)).toBe(logged)
  })
})

/**
 * Runs a suite sink in a child process (its standard streams are the test's to read): the lines
 * of an idle pass, a request that succeeded, one refused, a run accepted and a debug line.
 */
function runSink(opts: Omit<SuiteLogOptions, 'file'>) {
  const file = join(mkdtempSync(join(tmpdir(), 'log-output-')), 'platform.log')
  const script = `
import { createLogger } from './lib/log.ts'
import { suiteLogLevel, suiteLogOutput } from './emulators/log-output.ts'
const opts = ${JSON.stringify({ ...opts, file })}
const out = suiteLogOutput(opts)
const log = createLogger(suiteLogLevel(opts.level), { service: 'compute' }, out.sink)
log.info('GET /api/v1/runs/r1 200', { request_id: 'ok1', httpRequest: { status: 200, latency: '0.003s' } })
log.warn('GET /api/v1/runs/r2 404', { request_id: 'missing1', httpRequest: { status: 404, latency: '0.002s' } })
log.info('${RECONCILE_DONE}', ${JSON.stringify(idleReconcile)})
log.info('run accepted', { run_id: 'run1' })
log.debug('cache hit', { run_id: 'run1' })
setImmediate(() => out.close())`
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
  const fileLines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
  return { stdout: r.stdout, stderr: r.stderr, fileLines }
}

describe("a thread's log output in the local suite", () => {
  it('shows a terminal short lines without the routine ones at info, warnings on stderr, and keeps every info line in the file', () => {
    const { stdout, stderr, fileLines } = runSink({ level: 'info', terminal: true, color: false })
    expect(stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}compute {6}run accepted run=run1$/)])
    expect(stderr).toMatch(/WARN {2}compute {6}GET \/api\/v1\/runs\/r2 404 2ms request=missing1\n$/)
    expect(fileLines.map((l) => l.message)).toEqual(['GET /api/v1/runs/r1 200', 'GET /api/v1/runs/r2 404', RECONCILE_DONE, 'run accepted'])
    expect(fileLines[0]).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), severity: 'INFO', service: 'compute', request_id: 'ok1' })
  })

  it('shows the routine lines and debug ones at debug, and keeps them in the file too', () => {
    const { stdout, fileLines } = runSink({ level: 'debug', terminal: true, color: false })
    expect(stdout).toContain('GET /api/v1/runs/r1 200 3ms request=ok1')
    expect(stdout).toContain(RECONCILE_DONE)
    expect(stdout).toContain('DEBUG compute      cache hit run=run1')
    expect(fileLines.map((l) => l.severity)).toContain('DEBUG')
  })

  it('writes the JSON lines, routine ones included, where standard output is not a terminal', () => {
    const { stdout, stderr } = runSink({ level: 'info', terminal: false, color: false })
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.map((l) => l.message)).toEqual(['GET /api/v1/runs/r1 200', RECONCILE_DONE, 'run accepted'])
    expect(lines[0]).not.toHaveProperty('time')
    expect(JSON.parse(stderr)).toMatchObject({ severity: 'WARNING', request_id: 'missing1' })
  })

  it('shows only warnings at warn, and still keeps the info lines in the file', () => {
    const { stdout, stderr, fileLines } = runSink({ level: 'warn', terminal: true, color: false })
    expect(stdout).toBe('')
    expect(stderr).toContain('GET /api/v1/runs/r2 404')
    expect(fileLines.map((l) => l.message)).toContain('run accepted')
  })
})
