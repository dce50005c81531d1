import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Firestore } from '@google-cloud/firestore'
import { freePort } from '../emulators/processes.js'
import { freeBasePort, repoRoot, spawnLocalSuite } from '../test/support/suite.js'

/**
 * The runs benchmark (npm run bench). Starts the local suite in a child process, then prints:
 *  (a) runs accepted per second by POST /runs, and runs reaching "job created" per second, with
 *      1, 10 and 50 concurrent clients;
 *  (b) p50/p99 latency and requests per second of GET /runs/{id} with 50 concurrent clients,
 *      beside a bare endpoint that only reads one Firestore document, and their ratio.
 * Every request goes to 127.0.0.1; every loop is bounded in count and time.
 */

const SUBMITS_PER_CLIENT = Number(process.env.BENCH_SUBMITS_PER_CLIENT ?? 4)
const MIN_SUBMITS = Number(process.env.BENCH_MIN_SUBMITS ?? 40)
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 10)
const READ_CLIENTS = 50
const JOB_WAIT_MS = 180_000

interface Sample {
  ms: number
  status: number
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

async function timed(url: string, init: RequestInit): Promise<Sample & { body: string }> {
  const t0 = performance.now()
  const res = await fetch(url, init)
  const body = await res.text()
  return { ms: performance.now() - t0, status: res.status, body }
}

/** `clients` loops share `total` requests; returns every sample and the wall time. */
async function load(clients: number, total: number, one: (i: number) => Promise<Sample>) {
  let next = 0
  const samples: Sample[] = []
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) samples.push(await one(i))
    }),
  )
  return { samples, seconds: (performance.now() - t0) / 1000 }
}

/** `clients` loops for `seconds`; returns every sample and the wall time. */
async function soak(clients: number, seconds: number, one: () => Promise<Sample>) {
  const samples: Sample[] = []
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) samples.push(await one())
    }),
  )
  return { samples, seconds: (performance.now() - t0) / 1000 }
}

function summarize(name: string, r: { samples: Sample[]; seconds: number }) {
  const ok = r.samples.filter((s) => s.status === 200)
  const ms = ok.map((s) => s.ms).sort((a, b) => a - b)
  return {
    name,
    requests: r.samples.length,
    errors: r.samples.length - ok.length,
    rps: ok.length / r.seconds,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
  }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')

async function main() {
  const dataDir = await mkdtemp(join(tmpdir(), 'platform-bench-'))
  process.stdout.write(`starting the local suite (data in ${dataDir})…\n`)
  const suite = await spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, timeoutMs: 180_000 })
  let bare: ReturnType<typeof spawn> | undefined
  const firestore = new Firestore({
    projectId: suite.suite.gcp_project,
    host: suite.suite.firestore_emulator_host,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  })
  try {
    const compute = suite.suite.services.compute
    if (!compute) throw new Error('the suite has no compute service')
    const headers = {
      authorization: `Bearer ${suite.suite.token}`,
      'x-project-id': suite.suite.project_id,
      'content-type': 'application/json',
    }
    const pipeline = await fetch(`${compute}/api/v1/pipelines/slug/hello-local`, { headers })
    if (pipeline.status !== 200) throw new Error(`GET /pipelines/slug/hello-local answered ${pipeline.status}`)
    const pipelineId = ((await pipeline.json()) as { id: string }).id

    process.stdout.write('\n(a) POST /runs: accepted per second, and reaching "job created" per second\n')
    process.stdout.write('clients  runs  accepted/s  p50 ms  p99 ms  job-created/s  errors\n')
    const firstRunIds: string[] = []
    for (const clients of [1, 10, 50]) {
      const total = Math.max(MIN_SUBMITS, clients * SUBMITS_PER_CLIENT)
      const ids: string[] = []
      const r = await load(clients, total, async (i) => {
        const s = await timed(`${compute}/api/v1/runs`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ pipeline_id: pipelineId, params: {}, tags: ['bench', `c${clients}`, `n${i}`] }),
        })
        if (s.status === 201) ids.push((JSON.parse(s.body) as { id: string }).id)
        return { ms: s.ms, status: s.status === 201 ? 200 : s.status }
      })
      const accepted = summarize('submit', r)
      firstRunIds.push(...ids.slice(0, 1))
      // "Job created" is when the orchestrator recorded the Batch job; measured from the first submission.
      const deadline = Date.now() + JOB_WAIT_MS
      let created: number[] = []
      const runs = firestore.collection('runs')
      while (Date.now() < deadline) {
        const snaps = await firestore.getAll(...ids.map((id) => runs.doc(id)))
        created = snaps.map((s) => s.get('job.created_at')?.toMillis?.() as number | undefined).filter((t): t is number => t !== undefined)
        if (created.length === ids.length) break
        await new Promise((r) => setTimeout(r, 250))
      }
      const firstSubmit = Math.min(
        ...(await firestore.getAll(...ids.map((id) => runs.doc(id)))).map((s) => (s.get('created') as { toMillis(): number }).toMillis()),
      )
      const jobsPerSecond = created.length ? created.length / ((Math.max(...created) - firstSubmit) / 1000) : NaN
      process.stdout.write(
        `${String(clients).padStart(7)}  ${String(total).padStart(4)}  ${fmt(accepted.rps).padStart(10)}  ${fmt(accepted.p50).padStart(6)}  ${fmt(accepted.p99).padStart(6)}  ${fmt(jobsPerSecond).padStart(13)}  ${accepted.errors}${created.length < ids.length ? ` (${ids.length - created.length} jobs not created in time)` : ''}\n`,
      )
    }

    const runId = firstRunIds[0]
    if (!runId) throw new Error('no run was accepted')
    const barePort = await freePort()
    bare = spawn('npx', ['tsx', 'bench/bare-server.ts', suite.suite.firestore_emulator_host, suite.suite.gcp_project, 'runs', String(barePort)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve, reject) => {
      bare!.stdout!.once('data', () => resolve())
      bare!.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)))
    })

    process.stdout.write(`\n(b) GET one run, ${READ_CLIENTS} concurrent clients, ${READ_SECONDS} s each (after 2 s of warm-up)\n`)
    const platformGet = () => timed(`${compute}/api/v1/runs/${runId}`, { headers })
    const bareGet = () => timed(`http://127.0.0.1:${barePort}/runs/${runId}`, {})
    await soak(READ_CLIENTS, 2, platformGet)
    const platform = summarize('GET /api/v1/runs/{id}', await soak(READ_CLIENTS, READ_SECONDS, platformGet))
    await soak(READ_CLIENTS, 2, bareGet)
    const baseline = summarize('bare Firestore read', await soak(READ_CLIENTS, READ_SECONDS, bareGet))
    process.stdout.write('endpoint                  requests  errors   req/s  p50 ms  p99 ms\n')
    for (const row of [platform, baseline]) {
      process.stdout.write(
        `${row.name.padEnd(24)}  ${String(row.requests).padStart(8)}  ${String(row.errors).padStart(6)}  ${fmt(row.rps).padStart(6)}  ${fmt(row.p50).padStart(6)}  ${fmt(row.p99).padStart(6)}\n`,
      )
    }
    process.stdout.write(
      `platform / bare: p50 ${fmt(platform.p50 / baseline.p50, 2)}x, p99 ${fmt(platform.p99 / baseline.p99, 2)}x, throughput ${fmt(platform.rps / baseline.rps, 2)}x\n`,
    )
  } finally {
    bare?.kill('SIGTERM')
    await firestore.terminate()
    await suite.stop('SIGINT', 60_000)
    await rm(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
