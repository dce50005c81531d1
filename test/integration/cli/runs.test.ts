import { mkdir, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Pipeline, Run } from '../../../cli/client.js'
import { CLEAR_LINE } from '../../../cli/output.js'
import { JobLogWriter, LocalLogReader } from '../../../lib/batch/local-logs.js'
import { systemClock } from '../../../lib/clock.js'
import { SettingsStore } from '../../../cli/settings.js'
import { newId } from '../../../lib/ids.js'
import { grant } from '../../../domain/tenancy/seed.js'
import { configHome, parseJson, runCli, runMain, startCli, startCliOnTerminal, startMain, startPlatform } from '../../support/cli.js'
import { makeOrder } from '../../support/clinical.js'

/** `runs list --json`: the page of runs and the token of the next one. */
interface RunList {
  items: Run[]
  next_page_token: string | null
}

describe('platform pipelines and runs', async () => {
  const platform = await startPlatform()
  const { world } = platform
  afterAll(() => platform.stop())

  const analyst = await world.caller(['analyst'])
  /** A config home logged in as the analyst, with the test project as the profile's project. */
  const home = await configHome(platform, world.project.id)
  new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: analyst.token, saved_at: new Date().toISOString() })
  const cli = (args: string[], input?: string) => runMain(args, { configDir: home, input })

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
        `fastq_tumor=gs://${world.project.bucket_name}/r1.fq.gz`,
        '--param',
        `fastq_tumor=gs://${world.project.bucket_name}/r2.fq.gz`,
      ])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Run>(res).params).toEqual({
        nf_profile_name: 'test',
        analysis_name: 'from-flag',
        sample_id: 'S1',
        fastq_tumor: [`gs://${world.project.bucket_name}/r1.fq.gz`, `gs://${world.project.bucket_name}/r2.fq.gz`],
      })

      const viaComma = await cli([
        'runs',
        'submit',
        'hereditary-mock',
        '--json',
        '--param',
        'case_id=C1',
        '--param',
        `child_fastq=gs://${world.project.bucket_name}/c_R1.fq,gs://${world.project.bucket_name}/c_R2.fq`,
        '--param',
        'hpo_terms:=["HP:0001250"]',
      ])
      expect(viaComma.code, viaComma.stderr).toBe(0)
      expect(parseJson<Run>(viaComma).params).toMatchObject({
        case_id: 'C1',
        child_fastq: [`gs://${world.project.bucket_name}/c_R1.fq`, `gs://${world.project.bucket_name}/c_R2.fq`],
      })
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
        const res = await runMain(['runs', 'submit', 'hello-local', '--order', order, '--json'], {
          configDir: proxyHome,
          env: { PLATFORM_TOKEN: analyst.token },
        })
        expect(res.code, res.stderr).toBe(0)
        expect(dropped).toBe(1)
        const runs = parseJson<RunList>(await cli(['runs', 'list', '--order', order, '--json'])).items
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

      const byOrder = parseJson<RunList>(await cli(['runs', 'list', '--order', order, '--json'])).items
      expect(byOrder.map((r) => r.id)).toEqual([b.id, a.id])
      const cancelled = parseJson<RunList>(await cli(['runs', 'list', '--status', 'cancelled', '--order', order, '--json'])).items
      expect(cancelled).toEqual([])
    })

    it('says when more runs exist and prints the command for the next page, which lists the rest', async () => {
      const order = (await makeOrder(platform.compute, world.project)).accession
      const [a, b, c] = [await submitHello(['--order', order]), await submitHello(['--order', order]), await submitHello(['--order', order])]
      const first = await cli(['runs', 'list', '--order', order, '--limit', '2'])
      expect(first.code).toBe(0)
      expect(
        first.stdout
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual([c!.id, b!.id])
      const hint = /^More runs exist: (platform runs list --order \S+ --limit 2 --page-token (\S+)) {2}\(or --all for every run\)$/m.exec(
        first.stderr,
      )
      expect(hint, first.stderr).not.toBeNull()

      const next = await cli(hint![1]!.split(' ').slice(1))
      expect(next.code).toBe(0)
      expect(
        next.stdout
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual([a!.id])
      expect(next.stderr).toBe('')

      const all = await cli(['runs', 'list', '--order', order, '--all'])
      expect(all.stdout.trim().split('\n')).toHaveLength(4)
      expect(all.stderr).toBe('')
    })

    it('keeps the next page token in --json output, null on the last page', async () => {
      const order = (await makeOrder(platform.compute, world.project)).accession
      const [a, b] = [await submitHello(['--order', order]), await submitHello(['--order', order])]
      const first = parseJson<RunList>(await cli(['runs', 'list', '--order', order, '--limit', '1', '--json']))
      expect(first.items.map((r) => r.id)).toEqual([b!.id])
      expect(first.next_page_token).toEqual(expect.any(String))
      const rest = await cli(['runs', 'list', '--order', order, '--limit', '1', '--page-token', first.next_page_token!, '--json'])
      expect(rest.stderr).toBe('')
      expect(parseJson<RunList>(rest)).toEqual({ items: [expect.objectContaining({ id: a!.id })], next_page_token: null })
    })

    it('refuses --all together with --limit, exit code 3', async () => {
      const res = await cli(['runs', 'list', '--all', '--limit', '5'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain("option '--all' cannot be used with option '--limit <n>'")
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

    it('asks "Cancel run <name>? [y/N]" on a terminal and cancels only on yes; any other answer declines, exit code 3', async () => {
      const run = await submitHello()
      const no = startMain(['runs', 'cancel', run.id], { configDir: home, tty: { stdin: true, stdout: true } })
      await no.waitFor(`Cancel run ${run.name}? [y/N] `)
      no.type('\r')
      const declined = await no.exited
      expect(declined.code).toBe(3)
      expect(declined.stderr).toContain(`platform: run ${run.name} was not cancelled`)
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('queued')

      const yes = startMain(['runs', 'cancel', run.id], { configDir: home, tty: { stdin: true, stdout: true } })
      await yes.waitFor(`Cancel run ${run.name}? [y/N] `)
      yes.type('y\r')
      const done = await yes.exited
      expect(done.code).toBe(0)
      expect(done.stdout).toContain(`Cancelled run ${run.name}`)
    })

    it('exits 130 on Ctrl-C at the confirmation, and the run goes on (the binary on a terminal, under script)', async () => {
      const run = await submitHello()
      const asking = startCliOnTerminal(['runs', 'cancel', run.id], { configDir: home })
      await asking.waitFor(`Cancel run ${run.name}? [y/N] `)
      asking.type('\x03')
      const done = await asking.exited
      expect(done.code, done.stdout).toBe(130)
      expect(done.stdout).toContain('platform: interrupted')
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('queued')
    })

    it('exits 3 when the confirmation is declined on a real terminal (the binary under script)', async () => {
      const run = await submitHello()
      const asking = startCliOnTerminal(['runs', 'cancel', run.id], { configDir: home })
      await asking.waitFor(`Cancel run ${run.name}? [y/N] `)
      asking.type('n\r')
      const done = await asking.exited
      expect(done.code, done.stdout).toBe(3)
      expect(parseJson<Run>(await cli(['runs', 'status', run.id, '--json'])).status).toBe('queued')
    })

    it("shows the service's detail when a finished run is cancelled, exit code 7", async () => {
      const run = await submitHello()
      await apply(run.id, 'running')
      await apply(run.id, 'succeeded', { output: `gs://${world.project.bucket_name}/runs/${run.id}/` })
      const again = await cli(['runs', 'cancel', run.id, '--yes'])
      expect(again.code).toBe(7)
      expect(again.stderr).toMatch(/^platform: .*cancel/)
    })

    it('reports an unknown run as not found with exit code 6, from the binary itself', async () => {
      const res = await runCli(['runs', 'status', '00000000-0000-4000-8000-000000000000'], { configDir: home })
      expect(res.code).toBe(6)
      expect(res.stderr).toBe('platform: not found: run not found\n')
    })

    it('takes a run name for status, cancel and outputs as well as its id', async () => {
      const run = await submitHello()
      const status = await cli(['runs', 'status', run.name])
      expect(status.code, status.stderr).toBe(0)
      expect(status.stdout).toMatch(new RegExp(`^id\\s+${run.id}$`, 'm'))
      const outputs = await cli(['runs', 'outputs', run.name, '--json'])
      expect(outputs.code, outputs.stderr).toBe(0)
      expect(parseJson(outputs)).toEqual([])
      const cancel = await cli(['runs', 'cancel', run.name, '--yes'])
      expect(cancel.code, cancel.stderr).toBe(0)
      expect(cancel.stdout.trim()).toBe(`Cancelled run ${run.name} (${run.id}).`)
    })

    it('reports a run name that matches no run as not found, and one shared by two runs as ambiguous', async () => {
      const missing = await cli(['runs', 'status', 'hello-local-19990101T000000Z'])
      expect(missing.code).toBe(6)
      expect(missing.stderr).toBe("platform: not found: no run 'hello-local-19990101T000000Z' in this project (platform runs list shows the names)\n")

      // The service never gives a name twice; a record written around it (a restored copy, say) can still share one.
      const run = await submitHello()
      const twin = { ...(await platform.compute.runs.getById(run.id))!, id: newId() }
      await platform.compute.db.col('runs').doc(twin.id).set(twin)
      const ambiguous = await cli(['runs', 'status', run.name])
      expect(ambiguous.code).toBe(3)
      expect(ambiguous.stderr).toContain(`run name '${run.name}' is ambiguous: `)
      expect(ambiguous.stderr).toContain(run.id)
      expect(ambiguous.stderr).toContain(twin.id)
    })

    it('relaunches a run by name with changed params, and resumes a failed one in its work session', async () => {
      const run = await submitHello(['--param', 'greeting=hi', '--tag', 'first'])
      const early = await cli(['runs', 'relaunch', run.name, '--resume'])
      expect(early.code).toBe(7)
      expect(early.stderr).toMatch(/still queued/)
      const again = await cli(['runs', 'relaunch', run.name, '--param', 'greeting=bonjour', '--json'])
      expect(again.code, again.stderr).toBe(0)
      expect(parseJson<Run>(again)).toMatchObject({
        params: { greeting: 'bonjour' },
        tags: ['first'],
        relaunched_from: { id: run.id, name: run.name, resume: false },
      })
      await apply(run.id, 'failed', { error_message: 'exit code 3' })
      const resumed = await cli(['runs', 'relaunch', run.id, '--resume', '--param', 'greeting:=null'])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stdout).toMatch(new RegExp(`^relaunched from\\s+${run.name} \\(resumed\\)$`, 'm'))
      const id = /^id\s+(\S+)$/m.exec(resumed.stdout)![1]!
      expect(await platform.compute.runs.getById(id)).toMatchObject({ params: {}, work_session: run.id })
    })

    it("reports a viewer's submission as permission denied, exit code 5", async () => {
      const viewer = await world.caller(['viewer'])
      const res = await runMain(['runs', 'submit', 'hello-local'], { configDir: home, env: { PLATFORM_TOKEN: viewer.token } })
      expect(res.code).toBe(5)
      expect(res.stderr).toMatch(/^platform: permission denied: .*run\.submit/)
    })
  })

  describe('runs watch', () => {
    it('prints each status change and exits 0 when the run succeeds; without a terminal, nothing but the changes', async () => {
      const run = await submitHello()
      const watch = startMain(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home })
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
      expect(done.stdout).not.toContain('\r')
    })

    it('shows on a terminal the time the run has spent in its current state, redrawn in place, and erases it at the end', async () => {
      const run = await submitHello()
      const watch = startMain(['runs', 'watch', run.name, '--interval', '0.5'], { configDir: home, tty: { stdout: true } })
      await watch.waitFor(`${CLEAR_LINE}${run.name}  queued for `)
      await apply(run.id, 'running')
      await watch.waitFor(`${CLEAR_LINE}${run.name}  running for `)
      await apply(run.id, 'succeeded', { output: `gs://${world.project.bucket_name}/runs/${run.id}/` })
      const done = await watch.exited
      expect(done.code).toBe(0)
      expect(done.stdout).toMatch(new RegExp(`${run.name}  running for \\d+s`))
      // What the terminal shows in the end: the status lines, the elapsed-time line erased.
      const screen = done.stdout.split('\n').map((line) => line.split(CLEAR_LINE).at(-1))
      // On a terminal each status is in its colour.
      expect(screen.filter(Boolean).map((l) => l!.split(/\s{2,}/)[2])).toEqual([
        '\x1b[33mqueued\x1b[39m',
        '\x1b[36mrunning\x1b[39m',
        '\x1b[32msucceeded\x1b[39m',
      ])
      expect(done.stdout.endsWith('\n')).toBe(true)
    })

    it('follows a run given by its name', async () => {
      const run = await submitHello()
      await cli(['runs', 'cancel', run.id, '--yes'])
      const done = await runMain(['runs', 'watch', run.name, '--interval', '0.5'], { configDir: home })
      expect(done.code).toBe(2)
      expect(done.stderr).toContain(`Watching run ${run.name} (${run.id})`)
    })

    it('exits 1 when the run fails, printing its error message', async () => {
      const run = await submitHello()
      await apply(run.id, 'running')
      const watch = startMain(['runs', 'watch', run.id, '--interval', '0.5'], { configDir: home })
      await watch.waitFor(/\srunning\n/)
      await apply(run.id, 'failed', { error_message: 'exit status 3' })
      const done = await watch.exited
      expect(done.code).toBe(1)
      expect(done.stdout).toMatch(/failed .*error: exit status 3/)
    })

    it('exits 2 when the run is cancelled, with one JSON document per change under --json', async () => {
      const run = await submitHello()
      const watch = startMain(['runs', 'watch', run.id, '--interval', '0.5', '--json'], { configDir: home })
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

    it('stops on Ctrl-C with exit code 130 and leaves the run going (the binary, sent SIGINT)', async () => {
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

  describe('runs submit --watch', () => {
    /** Submits with --watch and, once the run's id is printed, moves the run to `end` as the orchestrator would. */
    async function submitAndWatch(end: 'succeeded' | 'failed' | 'cancelled', extra: string[] = []) {
      const watch = startMain(['runs', 'submit', 'hello-local', '--watch', '--interval', '0.5', ...extra], { configDir: home })
      await watch.waitFor(extra.includes('--json') ? '"queued"' : /\squeued\n/)
      const id = /^id\s+(\S+)$/m.exec(watch.stdout())?.[1] ?? (JSON.parse(watch.stdout().split('\n')[0]!) as Run).id
      if (end === 'cancelled') await cli(['runs', 'cancel', id, '--yes'])
      else {
        await apply(id, 'running')
        await apply(id, end, end === 'failed' ? { error_message: 'exit status 3' } : { output: `gs://${world.project.bucket_name}/runs/${id}/` })
      }
      return { id, done: await watch.exited }
    }

    it.each([
      ['succeeded', 0],
      ['failed', 1],
      ['cancelled', 2],
    ] as const)('prints the submitted run, then watches it: %s exits %i', async (end, code) => {
      const { id, done } = await submitAndWatch(end)
      expect(done.code, done.stderr).toBe(code)
      expect(done.stdout).toMatch(new RegExp(`^id\\s+${id}$`, 'm'))
      expect(done.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`\\s${end}(\\s|$)`))
      expect(done.stderr).toContain('Ctrl-C stops watching, not the run')
      expect(done.stderr).not.toContain('Follow it with')
    })

    it('prints only the watch, one JSON document per status change, under --json', async () => {
      const { id, done } = await submitAndWatch('cancelled', ['--json'])
      expect(done.code).toBe(2)
      const events = done.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Run)
      expect(events.map((e) => [e.id, e.status])).toEqual([
        [id, 'queued'],
        [id, 'cancelled'],
      ])
    })
  })

  describe('runs logs', () => {
    /** Makes the run running with a job whose log is written here as the local executor writes it. */
    async function withLog(run: Run) {
      const jobId = `run-${run.id}`
      const dir = join((platform.compute.logs as LocalLogReader).workRoot, jobId)
      await mkdir(dir, { recursive: true })
      await platform.compute.runs.applyJobState(run.id, {
        status: 'running',
        at: new Date(),
        source: 'test',
        job: { name: `projects/p/locations/r/jobs/${jobId}`, uid: `${jobId}-uid` },
      })
      const writer = new JobLogWriter(dir, systemClock)
      return {
        write: (stream: 'stdout' | 'stderr', text: string) => writer.write(`${jobId}-uid-group0-0`, stream, text),
        close: () => writer.close(),
      }
    }

    it('prints what the log holds now, one line each; --stream picks one stream; --json one document per line', async () => {
      const run = await submitHello()
      const log = await withLog(run)
      log.write('stdout', 'reading sample sheet')
      log.write('stderr', 'warning: 2 samples without sex')
      log.write('stdout', 'aligning')
      await log.close()
      const all = await cli(['runs', 'logs', run.name])
      expect(all.code, all.stderr).toBe(0)
      expect(all.stdout).toBe('reading sample sheet\nwarning: 2 samples without sex\naligning\n')
      expect((await cli(['runs', 'logs', run.id, '--stream', 'stderr'])).stdout).toBe('warning: 2 samples without sex\n')
      const json = (await cli(['runs', 'logs', run.id, '--json'])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { stream: string; text: string; task: string; time: string })
      expect(json.map((l) => [l.stream, l.text])).toEqual([
        ['stdout', 'reading sample sheet'],
        ['stderr', 'warning: 2 samples without sex'],
        ['stdout', 'aligning'],
      ])
      expect(json[0]!.task).toBe(`run-${run.id}-uid-group0-0`)
      expect((await cli(['runs', 'logs', run.id, '--timestamps'])).stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ reading sample sheet$/m)
      expect((await cli(['runs', 'logs', run.id, '--stream', 'stdin'])).code).toBe(3)
    })

    it('follows the log as lines come until the run ends, and exits with its outcome', async () => {
      const run = await submitHello()
      const log = await withLog(run)
      log.write('stdout', 'step 1')
      const follow = startMain(['runs', 'logs', run.id, '--follow'], { configDir: home })
      await follow.waitFor('step 1\n')
      log.write('stderr', 'step 2 failed: out of memory')
      await follow.waitFor('out of memory\n')
      await log.close()
      await apply(run.id, 'failed', { error_message: 'exit code 137' })
      const done = await follow.exited
      expect(done.code).toBe(1)
      expect(done.stdout).toBe('step 1\nstep 2 failed: out of memory\n')
    })

    it("streams the log with runs submit --watch --logs, between the status changes, and exits with the run's exit code", async () => {
      const watch = startMain(['runs', 'submit', 'hello-local', '--watch', '--logs', '--interval', '0.5'], { configDir: home })
      await watch.waitFor(/\squeued\n/)
      const id = /^id\s+(\S+)$/m.exec(watch.stdout())![1]!
      const log = await withLog(parseJson<Run>(await cli(['runs', 'status', id, '--json'])))
      await watch.waitFor(/\srunning\n/)
      log.write('stdout', 'hello from the task')
      await watch.waitFor('hello from the task\n')
      await log.close()
      await apply(id, 'succeeded', { output: `gs://${world.project.bucket_name}/runs/${id}/` })
      const done = await watch.exited
      expect(done.code, done.stderr).toBe(0)
      const lines = done.stdout.trim().split('\n')
      expect(lines.indexOf('hello from the task')).toBeGreaterThan(lines.findIndex((l) => /\srunning$/.test(l)))
      expect(lines.at(-1)).toMatch(/\ssucceeded(\s|$)/)
    })

    it('refuses --logs without --watch, exit code 3', async () => {
      const res = await cli(['runs', 'submit', 'hello-local', '--logs'])
      expect(res.code).toBe(3)
      expect(res.stderr).toContain('--logs goes with --watch')
    })
  })

  describe('project choice', () => {
    it("uses the user's default context when neither --project nor the profile names one", async () => {
      const noProject = await configHome(platform)
      const user = await world.caller(['analyst'])
      const { project: second } = await world.otherProject()
      await grant(world.deps, second, user.user, ['analyst'])
      const env = { PLATFORM_TOKEN: user.token }
      const before = await runMain(['runs', 'list'], { configDir: noProject, env })
      expect(before.code).toBe(3)
      expect(before.stderr).toContain('no project chosen')
      const put = await fetch(`${platform.adminUrl}/api/v1/users/me/default-context`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: second.id }),
      })
      expect(put.status).toBe(200)
      const submitted = await runMain(['runs', 'submit', 'hello-local', '--json'], { configDir: noProject, env })
      expect(submitted.code, submitted.stderr).toBe(0)
      expect(parseJson(submitted).project_id).toBe(second.id)
    })

    it('uses the only project a user can see without being told', async () => {
      const noProject = await configHome(platform)
      const run = await submitHello()
      const viewer = await world.caller(['viewer'])
      const res = await runMain(['runs', 'list', '--json'], { configDir: noProject, env: { PLATFORM_TOKEN: viewer.token } })
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<RunList>(res).items.map((r) => r.id)).toContain(run.id)
    })

    it('takes a project slug for --project', async () => {
      const noProject = await configHome(platform)
      const res = await runMain(['runs', 'list', '--project', 'germline', '--json'], { configDir: noProject, env: { PLATFORM_TOKEN: analyst.token } })
      expect(res.code, res.stderr).toBe(0)
      expect(Array.isArray(parseJson<RunList>(res).items)).toBe(true)
    })
  })
})
