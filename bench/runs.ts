import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { constants as os, cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Firestore } from '@google-cloud/firestore'
import { freePort, groupGone, startProcess, type RunningProcess } from '../emulators/processes.js'
import { TERMINAL, type RunStatus } from '../domain/runs/status.js'
import { descendantsOf, freeBasePort, processTable, repoRoot, spawnLocalSuite, type SpawnedSuite } from '../test/support/suite.js'
import { countBy } from './support.js'

/**
 * The runs benchmark (npm run bench). Starts the local suite in a child process, then prints:
 *  (a) runs accepted per second by POST /runs, and runs reaching "job created" per second, with
 *      1, 10 and 50 concurrent clients;
 *  (b) p50/p99 latency and requests per second of GET /runs/{id} with 50 concurrent clients,
 *      beside a bare endpoint that only reads one Firestore document, and their ratio;
 * and then the same figures as one line of JSON (also written to bench/results/latest.json).
 * Every request goes to 127.0.0.1; every loop is bounded in count and time. It exits by itself:
 * whether it ends, fails or gets SIGINT/SIGTERM, it stops every process it started (the suite with
 * its emulators, the bare server, each in its own process group) and terminates its Firestore client.
 */

const SUBMITS_PER_CLIENT = Number(process.env.BENCH_SUBMITS_PER_CLIENT ?? 4)
const MIN_SUBMITS = Number(process.env.BENCH_MIN_SUBMITS ?? 40)
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 10)
/** The read windows alternate in this many slices, so that a change of load on the machine weighs on both alike. */
const READ_SLICES = Number(process.env.BENCH_READ_SLICES ?? 5)
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
/** JSON has no NaN: a figure that could not be measured is null. */
const num = (n: number, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null)

/** The targets of issue 6 for GET /runs/{id} against the bare read, measured in one run. */
const TARGET = { throughput_ratio_at_least: 0.5, p50_ratio_at_most: 2 }

// ---------------------------------------------------------------------------------------------
// What the benchmark started, and stopping all of it once, on every way out.

const started: { dataDir?: string; suite?: SpawnedSuite; bare?: RunningProcess; firestore?: Firestore } = {}
let stopping: Promise<void> | undefined

/**
 * Every process seen descending from the benchmark, by pid with its command line: one orphaned
 * when its parent died (re-parented to init, so no longer a descendant: the emulators of a suite
 * that crashed while stopping) is still found, and a pid reused by another command is not.
 */
const seen = new Map<number, string>()
const noteDescendants = () => descendantsOf(process.pid).forEach((p) => seen.set(p.pid, p.args))

/**
 * The last resort of stopping: SIGTERM to each process group of a process descended from the
 * benchmark, or seen so, other than the benchmark's own group (the suite and the bare server are
 * each started in a group of their own, and the emulators in theirs; the benchmark's own group
 * holds only its helpers, tsx's esbuild service and the `ps` listing itself), SIGKILL to a group
 * that outlives `graceMs`. Returns what it found.
 */
async function sweep(graceMs: number): Promise<string[]> {
  const table = processTable()
  const ownGroup = table.find((p) => p.pid === process.pid)?.pgid
  const descendants = new Set(descendantsOf(process.pid, table).map((p) => p.pid))
  const left = table.filter((p) => p.pgid !== ownGroup && (descendants.has(p.pid) || seen.get(p.pid) === p.args))
  const groups = new Set(left.map((p) => p.pgid))
  const signal = (group: number, sig: NodeJS.Signals) => {
    try {
      process.kill(-group, sig)
    } catch {
      // already gone
    }
  }
  for (const g of groups) signal(g, 'SIGTERM')
  for (const g of groups) if (!(await groupGone(g, graceMs))) signal(g, 'SIGKILL')
  return left.map((p) => `${p.pid} ${p.args.slice(0, 120)}`)
}

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    noteDescendants()
    // First, while the emulator still answers: terminate() waits for the reads in flight, and a read
    // sent after it would never settle (main sends none once a signal came).
    await started.firestore?.terminate()
    await started.bare?.stop()
    if (started.suite) {
      // SIGINT as Ctrl-C would: the suite stops its servers and both emulator JVMs; SIGKILL to all of it after 60 s.
      const { code, signal } = await started.suite.stop('SIGINT', 60_000)
      if (code !== 0) {
        const said = started.suite.output().trimEnd().split('\n').slice(-15).join('\n  ')
        process.stderr.write(`the local suite did not stop cleanly (${signal ?? `exit ${code}`}); its last lines:\n  ${said}\n`)
      }
    }
    // A suite still starting when a signal came, or anything that outlived its stop.
    const left = await sweep(15_000)
    if (left.length) process.stderr.write(`still running at the end, now stopped:\n  ${left.join('\n  ')}\n`)
    if (started.dataDir) await rm(started.dataDir, { recursive: true, force: true })
  })()
  return stopping
}

let signalled: NodeJS.Signals | undefined
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (signalled) return
    signalled = sig
    process.stderr.write(`\n${sig}: stopping everything the benchmark started…\n`)
    void stopAll().finally(() => process.exit(128 + os.signals[sig]))
  })
}

// ---------------------------------------------------------------------------------------------

async function main() {
  // Nothing here runs on Google Cloud: the client libraries must not probe for a metadata server.
  process.env.METADATA_SERVER_DETECTION ??= 'none'
  const dataDir = (started.dataDir = await mkdtemp(join(tmpdir(), 'platform-bench-')))
  process.stdout.write(`starting the local suite (data in ${dataDir})…\n`)
  const suite = (started.suite = await spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, timeoutMs: 180_000 }))
  noteDescendants()
  if (signalled) return
  const firestore = (started.firestore = new Firestore({
    projectId: suite.suite.gcp_project,
    host: suite.suite.firestore_emulator_host,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  }))
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
  const allIds: string[] = []
  const submitRows = []
  for (const clients of [1, 10, 50]) {
    const total = Math.max(MIN_SUBMITS, clients * SUBMITS_PER_CLIENT)
    const ids: string[] = []
    const refusals: string[] = []
    const r = await load(clients, total, async (i) => {
      const s = await timed(`${compute}/api/v1/runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ pipeline_id: pipelineId, params: {}, tags: ['bench', `c${clients}`, `n${i}`] }),
      })
      if (s.status === 201) ids.push((JSON.parse(s.body) as { id: string }).id)
      else refusals.push(`${s.status} ${s.body.slice(0, 200)}`)
      return { ms: s.ms, status: s.status === 201 ? 200 : s.status }
    })
    const accepted = summarize('submit', r)
    allIds.push(...ids)
    firstRunIds.push(...ids.slice(0, 1))
    // "Job created" is when the orchestrator recorded the Batch job; measured from the first submission.
    const deadline = Date.now() + JOB_WAIT_MS
    let created: number[] = []
    const runs = firestore.collection('runs')
    while (Date.now() < deadline && !signalled) {
      const snaps = await firestore.getAll(...ids.map((id) => runs.doc(id)))
      created = snaps.map((s) => s.get('job.created_at')?.toMillis?.() as number | undefined).filter((t): t is number => t !== undefined)
      if (created.length === ids.length) break
      await new Promise((r) => setTimeout(r, 250))
    }
    if (signalled) return
    const firstSubmit = Math.min(
      ...(await firestore.getAll(...ids.map((id) => runs.doc(id)))).map((s) => (s.get('created') as { toMillis(): number }).toMillis()),
    )
    const jobsPerSecond = created.length ? created.length / ((Math.max(...created) - firstSubmit) / 1000) : NaN
    process.stdout.write(
      `${String(clients).padStart(7)}  ${String(total).padStart(4)}  ${fmt(accepted.rps).padStart(10)}  ${fmt(accepted.p50).padStart(6)}  ${fmt(accepted.p99).padStart(6)}  ${fmt(jobsPerSecond).padStart(13)}  ${accepted.errors}${created.length < ids.length ? ` (${ids.length - created.length} jobs not created in time)` : ''}\n`,
    )
    // What a refusal said, so that an error in the table can be told from another (contention, a timeout, a bug).
    const refused = countBy(refusals, (answer) => answer)
    for (const [answer, count] of Object.entries(refused)) process.stdout.write(`         ${count} × ${answer}\n`)
    submitRows.push({
      clients,
      refusals: refused,
      runs: total,
      accepted_per_s: num(accepted.rps, 1),
      p50_ms: num(accepted.p50, 1),
      p99_ms: num(accepted.p99, 1),
      job_created_per_s: num(jobsPerSecond, 1),
      errors: accepted.errors,
      jobs_not_created: ids.length - created.length,
    })
  }

  const runId = firstRunIds[0]
  if (!runId) throw new Error('no run was accepted')
  const barePort = await freePort()
  // Node runs tsx as a loader, so the bare server is one process, in a process group of its own.
  started.bare = await startProcess({
    name: 'bare server',
    command: process.execPath,
    args: ['--import', 'tsx', 'bench/bare-server.ts', suite.suite.firestore_emulator_host, suite.suite.gcp_project, 'runs', String(barePort)],
    host: `127.0.0.1:${barePort}`,
    readyUrl: `http://127.0.0.1:${barePort}/runs/ready`,
    cwd: repoRoot,
  })
  noteDescendants()

  // The reads are measured on a quiet suite: the runs of (a) have ended, their jobs' processes with them.
  const settleBy = Date.now() + JOB_WAIT_MS
  while (Date.now() < settleBy && !signalled) {
    const snaps = await firestore.getAll(...allIds.map((id) => firestore.collection('runs').doc(id)))
    if (snaps.every((snap) => TERMINAL.has(snap.get('status') as RunStatus))) break
    await new Promise((r) => setTimeout(r, 500))
  }
  if (signalled) return

  process.stdout.write(
    `\n(b) GET one run, ${READ_CLIENTS} concurrent clients, ${READ_SECONDS} s each in ${READ_SLICES} alternating slices (after 2 s of warm-up each)\n`,
  )
  const platformGet = () => timed(`${compute}/api/v1/runs/${runId}`, { headers })
  const bareGet = () => timed(`http://127.0.0.1:${barePort}/runs/${runId}`, {})
  await soak(READ_CLIENTS, 2, platformGet)
  await soak(READ_CLIENTS, 2, bareGet)
  const windows = { platform: { samples: [] as Sample[], seconds: 0 }, bare: { samples: [] as Sample[], seconds: 0 } }
  for (let slice = 0; slice < READ_SLICES; slice++) {
    for (const [key, get] of [
      ['platform', platformGet],
      ['bare', bareGet],
    ] as const) {
      const r = await soak(READ_CLIENTS, READ_SECONDS / READ_SLICES, get)
      windows[key].samples.push(...r.samples)
      windows[key].seconds += r.seconds
    }
  }
  const platform = summarize('GET /api/v1/runs/{id}', windows.platform)
  const baseline = summarize('bare Firestore read', windows.bare)
  process.stdout.write('endpoint                  requests  errors   req/s  p50 ms  p99 ms\n')
  for (const row of [platform, baseline]) {
    process.stdout.write(
      `${row.name.padEnd(24)}  ${String(row.requests).padStart(8)}  ${String(row.errors).padStart(6)}  ${fmt(row.rps).padStart(6)}  ${fmt(row.p50).padStart(6)}  ${fmt(row.p99).padStart(6)}\n`,
    )
  }
  const ratio = { throughput: platform.rps / baseline.rps, p50: platform.p50 / baseline.p50, p99: platform.p99 / baseline.p99 }
  process.stdout.write(`platform / bare: p50 ${fmt(ratio.p50, 2)}x, p99 ${fmt(ratio.p99, 2)}x, throughput ${fmt(ratio.throughput, 2)}x\n`)

  const readRow = (row: ReturnType<typeof summarize>) => ({
    endpoint: row.name,
    requests: row.requests,
    errors: row.errors,
    rps: num(row.rps, 1),
    p50_ms: num(row.p50, 1),
    p99_ms: num(row.p99, 1),
  })
  return {
    bench: 'runs',
    finished_at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    submit: submitRows,
    read: {
      clients: READ_CLIENTS,
      seconds: READ_SECONDS,
      slices: READ_SLICES,
      platform: readRow(platform),
      bare: readRow(baseline),
      ratio: { throughput: num(ratio.throughput), p50: num(ratio.p50), p99: num(ratio.p99) },
      target: { ...TARGET, met: ratio.throughput >= TARGET.throughput_ratio_at_least && ratio.p50 <= TARGET.p50_ratio_at_most },
    },
  }
}

/** After the end, nothing should hold the event loop; if something does, name it and exit anyway rather than hang. */
function exitWatchdog() {
  setTimeout(() => {
    process.stderr.write(`the benchmark did not exit by itself; still active: ${process.getActiveResourcesInfo().join(', ')}\n`)
    process.exit(3)
  }, 10_000).unref()
}

main().then(
  async (summary) => {
    await stopAll()
    if (signalled || !summary) return
    const json = JSON.stringify(summary)
    const file = join(repoRoot, 'bench/results/latest.json')
    await mkdir(join(repoRoot, 'bench/results'), { recursive: true })
    await writeFile(file, JSON.stringify(summary, null, 2) + '\n')
    process.stdout.write(`\nsummary (JSON, also in bench/results/latest.json):\n${json}\n`)
    exitWatchdog()
  },
  async (err) => {
    if (!signalled) process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
    process.exitCode = 1
    await stopAll()
    exitWatchdog()
  },
)
