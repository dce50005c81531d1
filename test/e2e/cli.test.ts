import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
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

  it('lists the demo FASTQ files, downloads one with its checksum checked, uploads and deletes a file, finds their audit events', async () => {
    expect((await cli(['config', 'set', 'files_url', suite.suite.services.files!])).code).toBe(0)
    expect((await cli(['config', 'set', 'audit_url', suite.suite.services.audit!])).code).toBe(0)
    const ls = await cli(['files', 'ls', 'fastq/'])
    expect(ls.code, ls.stderr).toBe(0)
    for (const sample of ['S-DEMO-PROBAND', 'S-DEMO-MOTHER', 'S-DEMO-FATHER'])
      for (const read of ['R1', 'R2'])
        expect(ls.stdout).toMatch(new RegExp(`^${sample}_${read}\\.fastq\\.gz\\s+[\\d.]+ (B|KiB|MiB)\\s+\\S+Z\\s+application/gzip$`, 'm'))

    // Into the current folder, under the file's own name.
    const folder = await mkdtemp(join(tmpdir(), 'cli-e2e-files-'))
    try {
      const down = await runCli(['files', 'download', 'fastq/S-DEMO-PROBAND_R1.fastq.gz'], { configDir: home, cwd: folder, timeoutMs: 60_000 })
      expect(down.code, down.stderr).toBe(0)
      expect(down.stdout).toMatch(
        /^Downloaded gs:\/\/demo-lab-demo\/fastq\/S-DEMO-PROBAND_R1\.fastq\.gz to S-DEMO-PROBAND_R1\.fastq\.gz: .*, crc32c verified\n$/,
      )
      const gz = await readFile(join(folder, 'S-DEMO-PROBAND_R1.fastq.gz'))
      expect([gz[0], gz[1]]).toEqual([0x1f, 0x8b])

      const local = join(folder, 'notes.txt')
      await writeFile(local, 'uploaded by the end-to-end test\n'.repeat(10_000))
      const up = parseJson<{ uri: string; verified: string; size: number }>(await cli(['files', 'upload', local, 'e2e/', '--json']))
      expect(up).toMatchObject({ uri: 'gs://demo-lab-demo/e2e/notes.txt', verified: 'crc32c+md5', size: 320_000 })
      expect((await cli(['files', 'rm', 'e2e/notes.txt', '--yes'])).code).toBe(0)
    } finally {
      await rm(folder, { recursive: true, force: true })
    }

    const events = await cli(['audit', 'events', '--action', 'file.*', '--since', '1h'])
    expect(events.code, events.stderr).toBe(0)
    for (const action of ['file.download_url_issued', 'file.upload_url_issued', 'file.deleted'])
      expect(events.stdout).toMatch(
        new RegExp(`\\s${action.replace('.', '\\.')}\\s+success\\s+${suite.suite.user.email}\\s+file:gs://demo-lab-demo/`),
      )
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
