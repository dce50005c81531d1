import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Run } from '../../cli/client.js'
import { freeBasePort, spawnLocalSuite, type SpawnedSuite } from '../support/suite.js'
import { parseJson, runCli, startCli } from '../support/cli.js'

/**
 * The CLI against the whole local suite (`npm start`: emulators, services, orchestrator, local
 * executor, OIDC provider), typed as a user would after starting it.
 */
describe('the CLI against the running local suite', () => {
  let suite: SpawnedSuite
  let home: string
  let dataDir: string
  const cli = (args: string[], input?: string) => runCli(args, { configDir: home, input, timeoutMs: 60_000 })

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cli-e2e-suite-'))
    home = await mkdtemp(join(tmpdir(), 'cli-e2e-home-'))
    suite = await spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, timeoutMs: 150_000 })
  }, 180_000)

  afterAll(async () => {
    if (suite) {
      const stopped = await suite.stop('SIGINT')
      if (stopped.code !== 0) suite.kill()
    }
    await rm(dataDir, { recursive: true, force: true })
    await rm(home, { recursive: true, force: true })
  }, 90_000)

  const submit = async (args: string[]) => {
    const res = await cli(['runs', 'submit', ...args, '--json'])
    expect(res.code, res.stderr).toBe(0)
    return parseJson<Run>(res)
  }

  it('points the local profile at the suite and logs in with the seeded e-mail and password', async () => {
    expect((await cli(['config', 'set', 'admin_url', suite.suite.services.admin!])).code).toBe(0)
    expect((await cli(['config', 'set', 'compute_url', suite.suite.services.compute!])).code).toBe(0)
    const login = await cli(['login', '--email', suite.suite.user.email, '--password-stdin'], suite.suite.user.password)
    expect(login.code, login.stderr).toBe(0)
    const who = await cli(['whoami'])
    expect(who.stdout).toMatch(new RegExp(`email\\s+${suite.suite.user.email}`))
  })

  it('finds the seeded project by itself and lists the pre-registered pipelines', async () => {
    const list = await cli(['pipelines', 'list'])
    expect(list.code, list.stderr).toBe(0)
    for (const slug of ['nextflow-minimal', 'wdl-minimal', 'hereditary-mock', 'nfcore-demo', 'hello-local']) expect(list.stdout).toContain(slug)
  })

  it('submits hello-local, watches it succeed (exit 0) and lists its output file', async () => {
    const run = await submit(['hello-local', '--param', 'greeting=bonjour'])
    const watch = await runCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home, timeoutMs: 60_000 })
    expect(watch.code, watch.stdout + watch.stderr).toBe(0)
    expect(watch.stdout).toMatch(/succeeded .*output gs:\/\/demo-lab-demo\/runs\//)
    const outputs = await cli(['runs', 'outputs', run.id])
    expect(outputs.stdout).toMatch(/^hello\.txt\s/m)
    const status = parseJson<Run>(await cli(['runs', 'status', run.id, '--json']))
    expect(status).toMatchObject({ status: 'succeeded', started: expect.any(String), finished: expect.any(String), duration: expect.any(Number) })
  })

  it('submits fail-local and watches it fail (exit 1) with its error message', async () => {
    const run = await submit(['fail-local'])
    const watch = await runCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home, timeoutMs: 60_000 })
    expect(watch.code).toBe(1)
    expect(watch.stdout).toMatch(/failed .*error: .*exit code 3/s)
    expect(watch.stdout).toContain('this pipeline always fails')
  })

  it('cancels a running run: the watch ends with exit 2 and the job stops', async () => {
    // A pipeline of the project that runs until it is stopped, created through the public API.
    const created = await fetch(`${suite.suite.services.compute}/api/v1/pipelines`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'sleep-local',
        name: 'Sleeps for a minute',
        type: 'container_entrypoint',
        container: 'docker.io/library/busybox:1.36',
        version: '1.0.0',
        entrypoint: '/bin/sh',
        commands: ['-c', 'sleep 60'],
      }),
    })
    expect([201, 409]).toContain(created.status)
    const run = await submit(['sleep-local'])
    const watch = startCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home, timeoutMs: 60_000 })
    await watch.waitFor(/\srunning\n/, 30_000)
    expect(suite.descendants().some((p) => /\bsleep 60\b/.test(p.args))).toBe(true)
    const cancel = await cli(['runs', 'cancel', run.id, '--yes'])
    expect(cancel.code, cancel.stderr).toBe(0)
    const done = await watch.exited
    expect(done.code).toBe(2)
    expect(done.stdout).toMatch(/\scancelled\n/)
    // The local executor kills the job's process group: no `sleep 60` stays behind.
    await expect.poll(() => suite.descendants().filter((p) => /\bsleep 60\b/.test(p.args)), { timeout: 15_000, interval: 250 }).toEqual([])
  })

  it('lists the runs newest first', async () => {
    const list = await cli(['runs', 'list', '--limit', '3'])
    expect(list.code).toBe(0)
    const lines = list.stdout.trim().split('\n').slice(1)
    expect(lines.map((l) => l.split(/\s+/)[2])).toEqual(['cancelled', 'failed', 'succeeded'])
  })
})
