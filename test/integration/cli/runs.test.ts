import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Pipeline, Run } from '../../../cli/client.js'
import { grant } from '../../../domain/tenancy/seed.js'
import { SettingsStore } from '../../../cli/settings.js'
import { configHome, parseJson, runCli, startCli, startCliOnTerminal, startPlatform } from '../../support/cli.js'
import { makeOrder } from '../../support/clinical.js'

describe('platform pipelines and runs', async () => {
  const platform = await startPlatform()
  const { world } = platform
  afterAll(() => platform.stop())

  const analyst = await world.caller(['analyst'])
  /** A config home logged in as the analyst, with the test project as the profile's project. */
  const home = await configHome(platform, world.project.id)
  new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: analyst.token, saved_at: new Date().toISOString() })
  const cli = (args: string[], input?: string) => runCli(args, { configDir: home, input })

  /** Moves a run as the orchestrator does on a Batch job state event. */
  const apply = (id: string, status: 'running' | 'succeeded' | 'failed', extra: { output?: string; error_message?: string } = {}) =>
    platform.compute.runs.applyJobState(id, { status, at: new Date(), source: 'test', ...extra })

  async function submitHello(extra: string[] = []): Promise<Run> {
    const res = await cli(['runs', 'submit', 'hello-local', '--json', ...extra])
    expect(res.code, res.stderr).toBe(0)
    return parseJson<Run>(res)
  }

  describe('pipelines', () => {
    it('lists the catalogue as a table of slug, version, type, tags and name, one line per slug', async () => {
      const res = await cli(['pipelines', 'list'])
      expect(res.code).toBe(0)
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^SLUG\s+VERSION\s+TYPE\s+TAGS\s+NAME$/)
      const bySlug = new Map(lines.slice(1).map((l) => [l.split(/\s+/)[0], l]))
      for (const slug of ['nextflow-minimal', 'wdl-minimal', 'hereditary-mock', 'nfcore-demo', 'hello-local', 'fail-local'])
        expect(bySlug.has(slug)).toBe(true)
      expect(lines.filter((l) => l.startsWith('nextflow-minimal '))).toHaveLength(1)
      expect(bySlug.get('hereditary-mock')).toMatch(/direct_wdl/)
      // The columns line up: every row starts its VERSION column where the header does.
      const versionAt = lines[0]!.indexOf('VERSION')
      for (const line of lines.slice(1)) expect(line[versionAt - 1]).toBe(' ')
    })

    it('lists every version with --all-versions, and the raw array with --json', async () => {
      const res = await cli(['pipelines', 'list', '--all-versions', '--json'])
      const list = parseJson<Pipeline[]>(res)
      expect(list.filter((p) => p.slug === 'nextflow-minimal').length).toBeGreaterThan(1)
      expect(list[0]).toEqual(expect.objectContaining({ id: expect.any(String), inputs: expect.any(Array) }))
    })

    it('shows a pipeline by slug with its inputs: name, type and whether required', async () => {
      const res = await cli(['pipelines', 'show', 'nextflow-minimal'])
      expect(res.code).toBe(0)
      expect(res.stdout).toMatch(/type\s+container_entrypoint/)
      expect(res.stdout).toMatch(/INPUTS\nNAME\s+TYPE\s+REQUIRED\s+DESCRIPTION/)
      expect(res.stdout).toMatch(/fastq_tumor\s+array<storage_path>\[2\]\s+yes/)
      expect(res.stdout).toMatch(/sample_id\s+string\s+yes/)
      expect(res.stdout).toMatch(/versions\s+\S+, /)
    })

    it('shows a named version, and the same pipeline by its id', async () => {
      const versions = parseJson<Pipeline[]>(await cli(['pipelines', 'list', '--all-versions', '--json'])).filter(
        (p) => p.slug === 'nextflow-minimal',
      )
      const oldest = versions.at(-1)!
      const byVersion = parseJson<Pipeline>(await cli(['pipelines', 'show', 'nextflow-minimal', '--version', oldest.version, '--json']))
      expect(byVersion.id).toBe(oldest.id)
      const byId = parseJson<Pipeline>(await cli(['pipelines', 'show', oldest.id, '--json']))
      expect(byId).toMatchObject({ slug: 'nextflow-minimal', version: oldest.version })
    })

    it('reports an unknown pipeline as not found, exit code 6', async () => {
      const res = await cli(['pipelines', 'show', 'no-such-pipeline'])
      expect(res.code).toBe(6)
      expect(res.stderr).toMatch(/^platform: not found: .*pipeline/)
    })
  })

  describe('runs', () => {
    it('submits a run and prints its id and name; status shows it queued', async () => {
      const order = await makeOrder(platform.compute, world.project)
      const res = await cli([
        'runs',
        'submit',
        'hello-local',
        '--param',
        'greeting=bonjour',
        '--tag',
        'cli',
        '--tag',
        'smoke',
        '--order',
        order.accession,
      ])
      expect(res.code, res.stderr).toBe(0)
      const id = /^id\s+(\S+)$/m.exec(res.stdout)?.[1]
      expect(res.stdout).toMatch(/^name\s+hello-local-\d{8}T\d{6}/m)
      expect(res.stdout).toMatch(/^status\s+queued$/m)
      expect(res.stderr).toContain(`platform runs watch ${id}`)

      const status = await cli(['runs', 'status', id!])
      expect(status.code).toBe(0)
      expect(status.stdout).toMatch(/^status\s+queued$/m)
      expect(status.stdout).toMatch(new RegExp(`^order\\s+${order.id}$`, 'm'))
      expect(status.stdout).toMatch(/^tags\s+cli, smoke$/m)
      expect(status.stdout).toMatch(/^greeting\s+bonjour$/m)
    })

    it('types --param values by the pipeline inputs: arrays split on commas or repeat, JSON with :=', async () => {
      const params = join(home, 'params.json')
      await writeFile(params, JSON.stringify({ nf_profile_name: 'test', analysis_name: 'from-file', sample_id: 'S1' }))
      const res = await cli([
        'runs',
        'submit',
        'nextflow-minimal',
        '--json',
        '--params-file',
        params,
        '--param',
        'analysis_name=from-flag',
        '--param',
        'fastq_tumor=gs://lab-bucket/r1.fq.gz',
        '--param',
        'fastq_tumor=gs://lab-bucket/r2.fq.gz',
      ])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Run>(res).params).toEqual({
        nf_profile_name: 'test',
        analysis_name: 'from-flag',
        sample_id: 'S1',
        fastq_tumor: ['gs://lab-bucket/r1.fq.gz', 'gs://lab-bucket/r2.fq.gz'],
      })

      const viaComma = await cli([
        'runs',
        'submit',
        'hereditary-mock',
        '--json',
        '--param',
        'case_id=C1',
        '--param',
        'child_fastq=gs://lab-bucket/c_R1.fq,gs://lab-bucket/c_R2.fq',
        '--param',
        'hpo_terms:=["HP:0001250"]',
      ])
      expect(viaComma.code, viaComma.stderr).toBe(0)
      expect(parseJson<Run>(viaComma).params).toMatchObject({ case_id: 'C1', child_fastq: ['gs://lab-bucket/c_R1.fq', 'gs://lab-bucket/c_R2.fq'] })
    })

    it("shows the service's detail for invalid params, exit code 7", async () => {
      const res = await cli(['runs', 'submit', 'hereditary-mock', '--param', 'case_id=C1'])
      expect(res.code).toBe(7)
      expect(res.stderr).toMatch(/^platform: .*child_fastq/)
    })

    it('refuses a malformed --param before calling the service, exit code 3', async () => {
      const res = await cli(['runs', 'submit', 'hello-local', '--param', 'no-equals-sign'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain('expected key=value or key:=JSON')
    })

    it('returns the first run when a submission is repeated with the same idempotency key', async () => {
      const first = await submitHello(['--idempotency-key', `retry-${world.project.id}`])
      const again = await submitHello(['--idempotency-key', `retry-${world.project.id}`])
      expect(again.id).toBe(first.id)
    })

    it('retries a submission whose answer was lost with the same idempotency key, making one run', async () => {
      // A proxy in front of the compute service that forwards the first POST /runs, then drops the
      // connection instead of answering, as a broken network would.
      let dropped = 0
      const proxy = createServer(async (req, res) => {
        const chunks: Buffer[] = []
        for await (const chunk of req) chunks.push(chunk as Buffer)
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
        ) as Record<string, string>
        const upstream = await fetch(`${platform.computeUrl}${req.url}`, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        })
        const body = Buffer.from(await upstream.arrayBuffer())
        if (req.method === 'POST' && dropped === 0) {
          dropped++
          req.socket.destroy()
          return
        }
        upstream.headers.forEach((value, key) => {
          if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(key)) res.setHeader(key, value)
        })
        res.writeHead(upstream.status)
        res.end(body)
      })
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
      const proxyHome = await configHome(
        { adminUrl: platform.adminUrl, computeUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
        world.project.id,
      )
      try {
        const order = (await makeOrder(platform.compute, world.project)).accession
        const res = await runCli(['runs', 'submit', 'hello-local', '--order', order, '--json'], {
          configDir: proxyHome,
          env: { PLATFORM_TOKEN: analyst.token },
        })
        expect(res.code, res.stderr).toBe(0)
        expect(dropped).toBe(1)
        const runs = parseJson<Run[]>(await cli(['runs', 'list', '--order', order, '--json']))
        expect(runs.map((r) => r.id)).toEqual([parseJson<Run>(res).id])
      } finally {
        proxy.closeAllConnections()
        await new Promise((r) => proxy.close(r))
      }
    })

    it('lists runs newest first with --limit, and filters by order and status', async () => {
      const order = (await makeOrder(platform.compute, world.project)).accession
      const a = await submitHello(['--order', order])
      const b = await submitHello(['--order', order])
      const all = await cli(['runs', 'list', '--limit', '2'])
      expect(all.code).toBe(0)
      const lines = all.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^ID\s+NAME\s+STATUS\s+CREATED\s+DURATION\s+ORDER$/)
      expect(lines).toHaveLength(3)
      expect(lines[1]).toContain(b.id)
      expect(lines[2]).toContain(a.id)

      const byOrder = parseJson<Run[]>(await cli(['runs', 'list', '--order', order, '--json']))
      expect(byOrder.map((r) => r.id)).toEqual([b.id, a.id])
      const cancelled = parseJson<Run[]>(await cli(['runs', 'list', '--status', 'cancelled', '--order', order, '--json']))
      expect(cancelled).toEqual([])
    })

    it('cancels with --yes; the run is then cancelled', async () => {
      const run = await submitHello()
      const res = await cli(['runs', 'cancel', run.id, '--yes'])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout.trim()).toBe(`Cancelled run ${run.name} (${run.id}).`)
      const status = parseJson<Run>(await cli(['runs', 'status', run.id, '--json']))
      expect(status.status).toBe('cancelled')
    })

    it('refuses to cancel without --yes when stdin is not a terminal, and leaves the run alone', async () => {
      const run = await submitHello()
      const res = await cli(['runs', 'cancel', run.id])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain(`refusing to cancel run ${run.name} without confirmation: stdin is not a terminal; pass --yes`)
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('queued')
    })

    it('asks "Cancel run <name>? [y/N]" on a terminal and cancels only on yes', async () => {
      const run = await submitHello()
      const no = startCliOnTerminal(['runs', 'cancel', run.id], { configDir: home })
      await no.waitFor(`Cancel run ${run.name}? [y/N] `)
      no.type('\r')
      expect((await no.exited).stdout).toContain(`Run ${run.name} was not cancelled.`)
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('queued')

      const yes = startCliOnTerminal(['runs', 'cancel', run.id], { configDir: home })
      await yes.waitFor(`Cancel run ${run.name}? [y/N] `)
      yes.type('y\r')
      const done = await yes.exited
      expect(done.code).toBe(0)
      expect(done.stdout).toContain(`Cancelled run ${run.name}`)
    })

    it("shows the service's detail when a finished run is cancelled, exit code 7", async () => {
      const run = await submitHello()
      await apply(run.id, 'running')
      await apply(run.id, 'succeeded', { output: `gs://${world.project.bucket_name}/runs/${run.id}/` })
      const again = await cli(['runs', 'cancel', run.id, '--yes'])
      expect(again.code).toBe(7)
      expect(again.stderr).toMatch(/^platform: .*cancel/)
    })

    it('reports an unknown run as not found, exit code 6', async () => {
      const res = await cli(['runs', 'status', '00000000-0000-4000-8000-000000000000'])
      expect(res.code).toBe(6)
      expect(res.stderr).toBe('platform: not found: run not found\n')
    })

    it("reports a viewer's submission as permission denied, exit code 5", async () => {
      const viewer = await world.caller(['viewer'])
      const res = await runCli(['runs', 'submit', 'hello-local'], { configDir: home, env: { PLATFORM_TOKEN: viewer.token } })
      expect(res.code).toBe(5)
      expect(res.stderr).toMatch(/^platform: permission denied: .*run\.submit/)
    })
  })

  describe('runs watch', () => {
    it('prints each status change and exits 0 when the run succeeds', async () => {
      const run = await submitHello()
      const watch = startCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home })
      await watch.waitFor(/\squeued\n/)
      await apply(run.id, 'running')
      await watch.waitFor(/\srunning\n/)
      await apply(run.id, 'succeeded', { output: `gs://${world.project.bucket_name}/runs/${run.id}/` })
      const done = await watch.exited
      expect(done.code).toBe(0)
      const lines = done.stdout.trim().split('\n')
      expect(lines.map((l) => l.split(/\s{2,}/)[2])).toEqual(['queued', 'running', 'succeeded'])
      expect(lines[2]).toContain(`output gs://${world.project.bucket_name}/runs/${run.id}/`)
      expect(done.stderr).toContain('Ctrl-C stops watching, not the run')
    })

    it('exits 1 when the run fails, printing its error message', async () => {
      const run = await submitHello()
      await apply(run.id, 'running')
      const watch = startCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home })
      await watch.waitFor(/\srunning\n/)
      await apply(run.id, 'failed', { error_message: 'exit status 3' })
      const done = await watch.exited
      expect(done.code).toBe(1)
      expect(done.stdout).toMatch(/failed .*error: exit status 3/)
    })

    it('exits 2 when the run is cancelled, with one JSON document per change under --json', async () => {
      const run = await submitHello()
      const watch = startCli(['runs', 'watch', run.id, '--interval', '0.5', '--json'], { configDir: home })
      await watch.waitFor('"queued"')
      await cli(['runs', 'cancel', run.id, '--yes'])
      const done = await watch.exited
      expect(done.code).toBe(2)
      const events = done.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Run)
      expect(events.map((e) => e.status)).toEqual(['queued', 'cancelled'])
    })

    it('stops on Ctrl-C with exit code 130 and leaves the run going', async () => {
      const run = await submitHello()
      await apply(run.id, 'running')
      const watch = startCli(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home })
      await watch.waitFor(/\srunning\n/)
      watch.child.kill('SIGINT')
      const done = await watch.exited
      expect(done.code).toBe(130)
      expect(done.stderr).toContain('the run goes on')
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('running')
    })

    it('refuses an interval below half a second', async () => {
      const res = await cli(['runs', 'watch', '00000000-0000-4000-8000-000000000000', '--interval', '0.1'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain('at least 0.5')
    })
  })

  describe('project choice', () => {
    it("uses the user's default context when neither --project nor the profile names one", async () => {
      const noProject = await configHome(platform)
      const user = await world.caller(['analyst'])
      const { project: second } = await world.otherProject()
      await grant(world.deps, second, user.user, ['analyst'])
      const env = { PLATFORM_TOKEN: user.token }
      const before = await runCli(['runs', 'list'], { configDir: noProject, env })
      expect(before.code).toBe(3)
      expect(before.stderr).toContain('no project chosen')
      const put = await fetch(`${platform.adminUrl}/api/v1/users/me/default-context`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: second.id }),
      })
      expect(put.status).toBe(200)
      const submitted = await runCli(['runs', 'submit', 'hello-local', '--json'], { configDir: noProject, env })
      expect(submitted.code, submitted.stderr).toBe(0)
      expect(parseJson(submitted).project_id).toBe(second.id)
    })

    it('uses the only project a user can see without being told', async () => {
      const noProject = await configHome(platform)
      const run = await submitHello()
      const viewer = await world.caller(['viewer'])
      const res = await runCli(['runs', 'list', '--json'], { configDir: noProject, env: { PLATFORM_TOKEN: viewer.token } })
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Run[]>(res).map((r) => r.id)).toContain(run.id)
    })

    it('takes a project slug for --project', async () => {
      const noProject = await configHome(platform)
      const res = await runCli(['runs', 'list', '--project', 'germline', '--json'], { configDir: noProject, env: { PLATFORM_TOKEN: analyst.token } })
      expect(res.code, res.stderr).toBe(0)
      expect(Array.isArray(parseJson(res))).toBe(true)
    })
  })
})
