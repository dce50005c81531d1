import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RECONCILE_DONE } from '../../orchestrator/reconcile.js'
import { freeBasePort, spawnLocalSuite, type SpawnedSuite } from '../support/suite.js'

/**
 * `npm start` in a terminal (a pseudo-terminal): what a person sees while the suite idles and
 * serves a request that succeeds and one that is refused, and what the log file keeps.
 */
describe.sequential("the local suite's logs on a terminal", () => {
  let dataDir: string
  let suite: SpawnedSuite | undefined
  const fileLines = () =>
    readFileSync(join(dataDir, 'logs', 'platform.log'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>)

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'suite-logs-'))
    suite = await spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, terminal: true, timeoutMs: 150_000 })
  }, 160_000)

  afterAll(() => {
    suite?.kill()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('shows no routine line over an idle period of two reconcile passes, and keeps them in the file', { timeout: 90_000 }, async () => {
    const { services, token, project_id } = suite!.suite
    const headers = { authorization: `Bearer ${token}`, 'x-project-id': project_id, 'x-request-id': 'e2e-ok-1' }
    expect((await fetch(`${services.compute}/api/v1/runs`, { headers })).status).toBe(200)
    const missing = await fetch(`${services.compute}/api/v1/runs/no-such-run`, { headers: { ...headers, 'x-request-id': 'e2e-missing-1' } })
    expect(missing.status).toBe(404)
    // The pass at start and the next, 30 s later: the file has both.
    await expect
      .poll(() => fileLines().filter((l) => l.message === RECONCILE_DONE).length, { timeout: 75_000, interval: 1_000 })
      .toBeGreaterThanOrEqual(2)
    expect(fileLines().find((l) => l.request_id === 'e2e-ok-1' && l.httpRequest)).toMatchObject({
      time: expect.any(String),
      severity: 'INFO',
      service: 'compute',
      httpRequest: { status: 200 },
    })

    const { code } = await suite!.stop('SIGINT')
    expect(code).toBe(0)
    const shown = suite!
      .output()
      .split(/\r?\n/)
      // eslint-disable-next-line no-control-regex -- the colours' escape sequences are what this removes
      .map((l) => l.replace(/\u001b\[\d+m/g, ''))
      .filter((l) => l.trim())
    // Short lines only: not one JSON line, no routine line.
    expect(shown.filter((l) => l.startsWith('{'))).toEqual([])
    expect(shown.filter((l) => l.includes(RECONCILE_DONE))).toEqual([])
    expect(shown.filter((l) => l.includes('e2e-ok-1'))).toEqual([])
    expect(shown.filter((l) => l.includes('request=e2e-missing-1'))).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}compute {6}GET \/api\/v1\/runs\/no-such-run 404 \d+ms request=e2e-missing-1$/),
    ])
  })
})
