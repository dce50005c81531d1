import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freeBasePort, processTable, runStart, spawnLocalSuite, type ProcessInfo, type SpawnedSuite } from '../support/suite.js'

/**
 * `npm start` as a user runs it: a real child process, its real emulators and servers on real
 * ports, stopped by a signal. Serial: each step builds on the previous one's data folder.
 */
describe.sequential('the local suite (npm start)', () => {
  let dataDir: string
  let basePort: number
  let first: SpawnedSuite | undefined
  let second: SpawnedSuite | undefined

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'local-suite-'))
    basePort = await freeBasePort()
  })

  afterAll(() => {
    first?.kill()
    second?.kill()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function projects(suite: SpawnedSuite, token: string) {
    const res = await fetch(`${suite.suite.services.admin}/api/v1/projects`, { headers: { authorization: `Bearer ${token}` } })
    return { status: res.status, body: (await res.json()) as Array<{ id: string; name: string; bucket_name: string; org_id: string }> }
  }

  async function compute(suite: SpawnedSuite, path: string, init: { method?: string; body?: unknown } = {}) {
    const res = await fetch(`${suite.suite.services.compute}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  let runId: string | undefined

  function emulatorProcesses(base: number): ProcessInfo[] {
    return processTable().filter((p) => p.args.includes(`--port=${base + 80}`) || p.args.includes(`--port=${base + 85}`))
  }

  it('starts clean and serves the seeded Demo project to the seeded token', { timeout: 120_000 }, async () => {
    first = await spawnLocalSuite({ dataDir, basePort, clean: true })
    const { suite } = first
    expect(suite.services.admin).toBe(`http://127.0.0.1:${basePort + 1}`)
    expect(suite.firestore_emulator_host).toBe(`127.0.0.1:${basePort + 80}`)
    expect(suite.pubsub_emulator_host).toBe(`127.0.0.1:${basePort + 85}`)
    expect(suite.user.email).toBe('admin@example.org')
    expect(suite.user.password.length).toBeGreaterThanOrEqual(12)
    expect(suite.token).toMatch(/^plat_pat_/)
    expect(first.output()).toContain(suite.token)

    const { status, body } = await projects(first, suite.token)
    expect(status).toBe(200)
    expect(body).toEqual([expect.objectContaining({ id: suite.project_id, name: 'Demo', bucket_name: 'demo-lab-demo', org_id: suite.org_id })])
  })

  it("points the CLI's local profiles at the suite, and the summary's curl works as printed", { timeout: 60_000 }, async () => {
    const { suite, configDir } = first!
    // The summary follows suite.json.
    for (const deadline = Date.now() + 10_000; !first!.output().includes('Try:') && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100))
    const output = first!.output()
    expect(output).toContain(`profile 'local' → ${suite.services.admin}, logged in as admin@example.org`)
    expect(output).toContain(`profile 'local-reviewer' → ${suite.services.admin}, logged in as reviewer@example.org`)
    const lines = output.split('\n')
    const at = lines.findIndex((l) => l.startsWith('Try:'))
    const tryLines = [lines[at]!.slice('Try:'.length), lines[at + 1]!].join('\n')
    expect(tryLines).toContain('curl -H "Authorization: Bearer $TOKEN"')
    const ran = spawnSync('bash', ['-c', `set -eo pipefail\n${tryLines}`], {
      cwd: join(import.meta.dirname, '../..'),
      env: { ...process.env, PLATFORM_CONFIG_DIR: configDir, PLATFORM_PROFILE: '', PLATFORM_TOKEN: '' },
      encoding: 'utf8',
      timeout: 50_000,
    })
    expect(ran.status, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout)).toEqual([expect.objectContaining({ id: suite.project_id, name: 'Demo' })])
  })

  it('prints the console address, which sends a browser without a session to the sign-in', async () => {
    const { suite } = first!
    const console = `${suite.services.admin}/console`
    expect(first!.output()).toMatch(new RegExp(`console +${console.replaceAll('.', '\\.')} `))
    // The console's root is the account page, which sends a browser without a session to the sign-in.
    const hops: string[] = []
    for (let at = console; hops.length < 3 && !at.includes('/api/v1/auth/login');) {
      const res = await fetch(at, { redirect: 'manual' })
      expect(res.status, at).toBeGreaterThanOrEqual(300)
      expect(res.status, at).toBeLessThan(400)
      at = new URL(res.headers.get('location')!, at).href
      hops.push(at)
    }
    expect(hops.at(-1)).toContain(`${suite.services.admin}/api/v1/auth/login?return_to=`)
  })

  it('answers GET /healthz on every service, and writes one access line per request with its id and the caller', { timeout: 30_000 }, async () => {
    const { suite } = first!
    for (const [name, url] of Object.entries(suite.services)) {
      const res = await fetch(`${url}/healthz`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ status: 'ok', service: name })
    }

    const trace = '4bf92f3577b34da6a3ce929d0e0e4736'
    const res = await fetch(`${suite.services.admin}/api/v1/projects`, {
      headers: { authorization: `Bearer ${suite.token}`, 'x-request-id': 'e2e-access-1', traceparent: `00-${trace}-00f067aa0ba902b7-01` },
    })
    expect(res.status).toBe(200)
    const accessLine = () =>
      first!
        .output()
        .split('\n')
        .filter((l) => l.includes('"e2e-access-1"'))
        .map((l) => JSON.parse(l) as Record<string, any>)
        .filter((l) => l.httpRequest)
    await expect.poll(() => accessLine().length, { timeout: 5_000 }).toBe(1)
    expect(accessLine()[0]).toMatchObject({
      severity: 'INFO',
      service: 'admin',
      request_id: 'e2e-access-1',
      'logging.googleapis.com/trace': `projects/${suite.gcp_project}/traces/${trace}`,
      principal: expect.any(String),
      httpRequest: {
        requestMethod: 'GET',
        requestUrl: `${suite.services.admin}/api/v1/projects`,
        status: 200,
        remoteIp: '127.0.0.1',
        protocol: 'HTTP/1.1',
      },
    })
    expect(first!.output()).not.toContain(`Bearer ${suite.token}`)
  })

  it(
    "serves the demo family's FASTQ files: listed by the file service, fetched from the storage server with no Authorization",
    { timeout: 60_000 },
    async () => {
      const { suite } = first!
      expect(suite.services.files).toBe(`http://127.0.0.1:${basePort + 4}`)
      expect(suite.services.audit).toBe(`http://127.0.0.1:${basePort + 7}`)
      expect(suite.storage_url).toBe(`http://127.0.0.1:${basePort + 40}`)
      expect(first!.output()).toContain(suite.storage_url)
      const headers = { authorization: `Bearer ${suite.token}`, 'x-project-id': suite.project_id }
      const listed = await fetch(`${suite.services.files}/api/v1/files?path=fastq/`, { headers })
      expect(listed.status).toBe(200)
      const names = ((await listed.json()) as Array<{ name: string; size: number }>).map((f) => f.name)
      expect(names).toEqual([
        'S-DEMO-FATHER_R1.fastq.gz',
        'S-DEMO-FATHER_R2.fastq.gz',
        'S-DEMO-MOTHER_R1.fastq.gz',
        'S-DEMO-MOTHER_R2.fastq.gz',
        'S-DEMO-PROBAND_R1.fastq.gz',
        'S-DEMO-PROBAND_R2.fastq.gz',
      ])
      const signed = await fetch(`${suite.services.files}/api/v1/files/download-url?path=fastq/S-DEMO-PROBAND_R1.fastq.gz`, { headers })
      const { url } = (await signed.json()) as { url: string }
      expect(url.startsWith(`${suite.storage_url}/demo-lab-demo/fastq/S-DEMO-PROBAND_R1.fastq.gz?X-Goog-Algorithm=GOOG4-RSA-SHA256`)).toBe(true)
      const got = await fetch(url)
      expect(got.status).toBe(200)
      expect(got.headers.get('content-type')).toBe('application/gzip')
      const fastq = gunzipSync(Buffer.from(await got.arrayBuffer()))
        .toString('utf8')
        .split('\n')
      expect(fastq[0]).toMatch(/^@S-DEMO-PROBAND:1:/)
      expect(fastq[1]).toMatch(/^[ACGT]{150}$/)
      expect(fastq.length).toBe(4001)
      const events = await fetch(`${suite.services.audit}/api/v1/events?action=file.download_url_issued`, { headers })
      expect(((await events.json()) as unknown[]).length).toBeGreaterThan(0)
    },
  )

  it('lets the seeded user log in with the printed e-mail and password through its OIDC provider', { timeout: 60_000 }, async () => {
    const { suite } = first!
    const discovery = await fetch(`${suite.oidc_issuer}/.well-known/openid-configuration`)
    expect(discovery.status).toBe(200)
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(suite.oidc_issuer)

    const login = await fetch(`${suite.services.admin}/api/v1/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(suite.user),
    })
    expect(login.status).toBe(200)
    const { access_token } = (await login.json()) as { access_token: string }
    const { status, body } = await projects(first!, access_token)
    expect(status).toBe(200)
    expect(body.map((p) => p.id)).toEqual([suite.project_id])

    const wrong = await fetch(`${suite.services.admin}/api/v1/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: suite.user.email, password: 'not-the-password' }),
    })
    expect(wrong.status).toBe(401)
  })

  it('runs a submitted hello-local run to success through the orchestrator functions and the local executor', { timeout: 60_000 }, async () => {
    const pipelines = await compute(first!, '/pipelines')
    expect(pipelines.status).toBe(200)
    const hello = (pipelines.body as Array<{ id: string; slug: string }>).find((p) => p.slug === 'hello-local')
    expect(hello).toBeDefined()

    const submitted = await compute(first!, '/runs', {
      method: 'POST',
      body: { pipeline_id: hello!.id, params: { greeting: 'hello from the e2e test' } },
    })
    expect(submitted.status).toBe(201)
    runId = submitted.body.id as string
    // Pub/Sub push → runRequested → local executor → job-state push → jobStateChanged: nothing here calls them directly.
    await expect.poll(async () => (await compute(first!, `/runs/${runId}`)).body.status, { timeout: 30_000, interval: 250 }).toBe('succeeded')
    const outputs = await compute(first!, `/runs/${runId}/outputs`)
    expect((outputs.body as Array<{ name: string }>).map((o) => o.name)).toContain('hello.txt')

    const reconcile = await fetch(first!.suite.functions.reconcile!, { method: 'POST' })
    expect(reconcile.status).toBe(200)
  })

  it(
    'seeds a demo trio whose draft order a newcomer signs and downloads as a samplesheet in the three requests of docs/second-terminal.md',
    { timeout: 60_000 },
    async () => {
      const { suite } = first!
      expect(suite.services.clinical).toBe(`http://127.0.0.1:${basePort + 3}`)
      const headers = { authorization: `Bearer ${suite.token}`, 'x-project-id': suite.project_id, 'content-type': 'application/json' }
      const clinical = (path: string, init: { method?: string; body?: unknown } = {}) =>
        fetch(`${suite.services.clinical}/api/v1${path}`, {
          method: init.method ?? 'GET',
          headers,
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
        })

      const drafts = (await (await clinical('/orders?status=draft')).json()) as Array<{ accession: string; test_code: string }>
      expect(drafts).toEqual([expect.objectContaining({ test_code: 'WGS-trio' })])
      const accession = drafts[0]!.accession
      const signed = await clinical(`/orders/${accession}/transition`, { method: 'POST', body: { to: 'signed' } })
      expect(signed.status).toBe(200)
      const sheet = await clinical(`/orders/${accession}/samplesheet`)
      expect(sheet.headers.get('content-type')).toMatch(/^text\/csv/)
      expect((await sheet.text()).trim().split('\n')).toEqual([
        'sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id',
        `S-DEMO-PROBAND,1,gs://demo-lab-demo/fastq/S-DEMO-PROBAND_R1.fastq.gz,gs://demo-lab-demo/fastq/S-DEMO-PROBAND_R2.fastq.gz,1,2,S-DEMO-FATHER,S-DEMO-MOTHER,${accession}`,
        `S-DEMO-MOTHER,1,gs://demo-lab-demo/fastq/S-DEMO-MOTHER_R1.fastq.gz,gs://demo-lab-demo/fastq/S-DEMO-MOTHER_R2.fastq.gz,2,1,0,0,${accession}`,
        `S-DEMO-FATHER,1,gs://demo-lab-demo/fastq/S-DEMO-FATHER_R1.fastq.gz,gs://demo-lab-demo/fastq/S-DEMO-FATHER_R2.fastq.gz,1,1,0,0,${accession}`,
      ])
      // The FASTQ files are there, in the project's local bucket.
      expect(existsSync(join(dataDir, 'buckets', 'demo-lab-demo', 'fastq', 'S-DEMO-PROBAND_R1.fastq.gz'))).toBe(true)
    },
  )

  it(
    "runs trio-local for the signed demo order and shows its variants with the family's genotypes (the trio demo of docs/second-terminal.md)",
    { timeout: 60_000 },
    async () => {
      const { suite } = first!
      const headers = { authorization: `Bearer ${suite.token}`, 'x-project-id': suite.project_id, 'content-type': 'application/json' }
      const api = async (service: string, path: string, body?: unknown) => {
        const res = await fetch(`${suite.services[service]}/api/v1${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        return { status: res.status, body: (await res.json()) as any }
      }
      const order = (await api('clinical', '/orders?status=signed')).body[0]
      expect(order).toMatchObject({ test_code: 'WGS-trio' })
      const pipeline = (await api('compute', '/pipelines/slug/trio-local')).body
      const run = await api('compute', '/runs', {
        pipeline_id: pipeline.id,
        order_id: order.accession,
        params: { samplesheet: `gs://${suite.bucket_name}/samplesheets/demo-trio.csv` },
      })
      expect(run.status, JSON.stringify(run.body)).toBe(201)
      let status: any
      for (const deadline = Date.now() + 45_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
        status = (await api('variant_cache', `/orders/${order.accession}/status`)).body
        if (['ready', 'failed'].includes(status.status)) break
      }
      expect(status).toMatchObject({ status: 'ready', ingestion: { trigger: 'run', run_id: run.body.id, sample_mismatch: null } })
      const denovo = await api('variant_cache', `/orders/${order.accession}/variants?gene=SCN2A&zygosity=proband:het,mother:hom_ref,father:hom_ref`)
      expect(
        denovo.body.map((v: { calls: Array<{ role: string; sample: string; genotype: string }> }) =>
          v.calls.map((c) => `${c.role}:${c.sample}:${c.genotype}`),
        ),
      ).toEqual([['proband:S-DEMO-PROBAND:0/1', 'mother:S-DEMO-MOTHER:0/0', 'father:S-DEMO-FATHER:0/0']])
    },
  )

  it('refuses a second start on the same data folder while the first runs, naming its pid', { timeout: 60_000 }, async () => {
    const other = await freeBasePort()
    const result = await runStart(['--data-dir', dataDir, '--base-port', String(other)])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('already running')
    expect(result.stderr).toContain(`pid ${first!.suite.pid}`)
  })

  it('stops every process it started on SIGINT, emulator JVMs and a running job included, and exits 0', { timeout: 90_000 }, async () => {
    // A job still running when the user presses Ctrl-C: its process must not outlive the suite.
    const sleeper = await compute(first!, '/pipelines', {
      method: 'POST',
      body: {
        slug: 'sleep-e2e',
        name: 'Sleeps until stopped',
        type: 'container_entrypoint',
        container: 'docker.io/library/busybox:1.36',
        version: '1.0.0',
        entrypoint: '/bin/sh',
        commands: ['-c', 'sleep 120'],
      },
    })
    expect(sleeper.status).toBe(201)
    const run = await compute(first!, '/runs', { method: 'POST', body: { pipeline_id: sleeper.body.id, params: {} } })
    expect(run.status).toBe(201)
    await expect.poll(async () => (await compute(first!, `/runs/${run.body.id}`)).body.status, { timeout: 30_000, interval: 250 }).toBe('running')

    // The run says running once its job is under way, which may be a moment before the executor's
    // child process exists (on a busy machine): wait for the process itself.
    const isJob = (p: { args: string }) => /\bsleep 120\b/.test(p.args)
    await expect.poll(() => first!.descendants().some(isJob), { timeout: 15_000, interval: 100 }).toBe(true)
    const started = first!.descendants()
    const job = started.find(isJob)
    expect(job).toBeDefined()
    // Jobs, like the orchestrator's thread that starts them, yield the CPU to the services (nice 10): field 19 of /proc/<pid>/stat.
    const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16])
    expect(niceOf(job!.pid)).toBe(10)
    expect(niceOf(first!.child.pid!)).toBe(0)
    expect(started.filter((p) => p.args.includes('java')).length).toBeGreaterThanOrEqual(2)
    expect(emulatorProcesses(basePort).length).toBeGreaterThanOrEqual(2)

    const exit = await first!.stop('SIGINT')
    expect(exit).toEqual({ code: 0, signal: null })
    // A script waiting for suite.json must not find the file of a suite that is gone.
    expect(existsSync(join(dataDir, 'suite.json'))).toBe(false)

    // Helpers such as tsx's esbuild service end on their own once their parent is gone: allow them a moment.
    const leftovers = () => {
      const table = processTable()
      const alive = new Set(table.map((p) => p.pid))
      return [...started.filter((p) => alive.has(p.pid)), ...table.filter((p) => p.pgid === first!.child.pid)]
    }
    await expect.poll(leftovers, { timeout: 5_000, interval: 200 }).toEqual([])
    expect(emulatorProcesses(basePort)).toEqual([])
  })

  it('keeps the token, the project and the organization across a restart without --clean', { timeout: 120_000 }, async () => {
    second = await spawnLocalSuite({ dataDir, basePort })
    expect(second.suite.token).toBe(first!.suite.token)
    expect(second.suite.project_id).toBe(first!.suite.project_id)
    expect(second.suite.org_id).toBe(first!.suite.org_id)
    expect(second.suite.user.password).toBe(first!.suite.user.password)
    expect(second.output()).toContain('(unchanged; see suite.json)')

    const { status, body } = await projects(second, first!.suite.token)
    expect(status).toBe(200)
    expect(body.map((p) => p.id)).toEqual([first!.suite.project_id])
    const orders = await fetch(`${second.suite.services.clinical}/api/v1/orders`, {
      headers: { authorization: `Bearer ${second.suite.token}`, 'x-project-id': second.suite.project_id },
    })
    // The demo order, signed and then run (the trio demo) before the restart, keeps its status: it is not seeded again as a draft.
    const listed = (await orders.json()) as Array<{ accession: string; status: string; created: string; samples: Array<{ sample_id: string }> }>
    // Should this fail, the message names each order: which one was made, when, and of which samples.
    const named = listed.map((o) => `${o.accession} ${o.status} created ${o.created} samples ${o.samples.map((s) => s.sample_id).join(',')}`)
    expect(
      listed.map((o) => o.status),
      named.join('; '),
    ).toEqual(['in_progress'])
    const run = await compute(second, `/runs/${runId}`)
    expect(run.status).toBe(200)
    expect(run.body.status).toBe('succeeded')

    // The audit key stayed in the data folder: an event of the first start still verifies under it.
    const audit = (path: string) =>
      fetch(`${second!.suite.services.audit}/api/v1${path}`, {
        headers: { authorization: `Bearer ${second!.suite.token}`, 'x-project-id': second!.suite.project_id },
      }).then((r) => r.json() as Promise<any>)
    const [submitted] = (await audit(`/events?entity=run:${runId}&action=run.submitted`)) as Array<{ id: string }>
    expect((await audit(`/events/${submitted!.id}`)).verification).toEqual({ method: 'hmac-sha256', key_id: 'local-1', result: 'verified' })

    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null })
    expect(emulatorProcesses(basePort)).toEqual([])
    expect(existsSync(join(dataDir, 'suite.json'))).toBe(false)
  })

  it('removes the suite.json a crashed run left behind as soon as it starts, even when the start then fails', { timeout: 60_000 }, async () => {
    const suiteFile = join(dataDir, 'suite.json')
    const gone = spawnSync(process.execPath, ['-e', '']).pid
    writeFileSync(suiteFile, JSON.stringify({ ...first!.suite, pid: gone, started_at: new Date().toISOString() }))
    // The admin service's port is taken: the start fails after it has claimed the data folder.
    const blocker = createServer()
    await new Promise<void>((resolveListen) => blocker.listen(basePort + 1, '127.0.0.1', resolveListen))
    try {
      const result = await runStart(['--data-dir', dataDir, '--base-port', String(basePort)])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('is in use')
      expect(existsSync(suiteFile)).toBe(false)
    } finally {
      await new Promise((resolveClose) => blocker.close(resolveClose))
    }
  })

  it('says what to install and exits 1 when the Google Cloud CLI is missing', { timeout: 60_000 }, async () => {
    const emptyPath = mkdtempSync(join(tmpdir(), 'no-tools-'))
    try {
      const result = await runStart(['--data-dir', dataDir, '--base-port', String(basePort)], { env: { PATH: emptyPath } })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('Google Cloud CLI (gcloud) is not installed')
      expect(result.stderr).toContain('cloud-firestore-emulator')
    } finally {
      rmSync(emptyPath, { recursive: true, force: true })
    }
  })
})
