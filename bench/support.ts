import { mkdtemp, rm } from 'node:fs/promises'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Firestore } from '@google-cloud/firestore'
import { layout, type SuiteFile } from '../emulators/data-dir.js'
import { emulatorGroup, readEmulatorsFile } from '../emulators/leftovers.js'
import { freeBasePort, killRecordedEmulators, spawnLocalSuite, type SpawnedSuite } from '../test/support/suite.js'

/**
 * What the recovery and load benchmarks share: a local suite of their own in a temporary folder,
 * stopped (and its emulators with it) however the benchmark ends; reading runs straight from the
 * suite's Firestore emulator; counting how often each run's job was made and run.
 */

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled'])

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')
export const seconds = (ms: number) => Math.round(ms / 100) / 10

export const say = (line: string) => process.stderr.write(`[bench] ${line}\n`)

/** Prints rows as an aligned two-column table on stdout. */
export function table(title: string, rows: Array<[string, string | number]>) {
  const width = Math.max(...rows.map(([k]) => k.length))
  process.stdout.write(`\n${title}\n`)
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`)
}

export function firestoreOf(suite: Pick<SuiteFile, 'gcp_project' | 'firestore_emulator_host'>): Firestore {
  return new Firestore({
    projectId: suite.gcp_project,
    host: suite.firestore_emulator_host,
    ssl: false,
    customHeaders: { Authorization: 'Bearer owner' },
  })
}

export interface RunState {
  status: string
  error_message?: string
  created?: number
  finished?: number
}

/** Each run's state by id, absent when Firestore has no such run. */
export async function readRuns(firestore: Firestore, ids: string[]): Promise<Map<string, RunState>> {
  const out = new Map<string, RunState>()
  const col = firestore.collection('runs')
  for (let i = 0; i < ids.length; i += 300) {
    const snaps = await firestore.getAll(...ids.slice(i, i + 300).map((id) => col.doc(id)))
    for (const s of snaps) {
      if (!s.exists) continue
      out.set(s.id, {
        status: s.get('status') as string,
        error_message: s.get('error_message') as string | undefined,
        created: (s.get('created') as { toMillis(): number } | undefined)?.toMillis(),
        finished: (s.get('finished') as { toMillis(): number } | undefined)?.toMillis(),
      })
    }
  }
  return out
}

export function countBy<T>(items: Iterable<T>, key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1
  return out
}

/** Polls until every run is terminal or `timeoutMs` passes; returns when that happened (or undefined) and the last states. */
export async function untilTerminal(firestore: Firestore, ids: string[], timeoutMs: number, progress?: (states: Map<string, RunState>) => void) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const states = await readRuns(firestore, ids)
    progress?.(states)
    const open = ids.filter((id) => !TERMINAL.has(states.get(id)?.status ?? ''))
    if (!open.length) return { at: Date.now(), states }
    if (Date.now() > deadline) return { at: undefined, states }
    await new Promise((r) => setTimeout(r, 2_000))
  }
}

/**
 * Runs that ran more than once, with the witness that says so: more than one run.job_created audit
 * event; a job folder set aside (a job made again) that shows an execution; more than one RUNNING
 * in the job's state; or more than one line written by hello-local in its stdout. A folder set
 * aside before its job was ever written (the suite died between claiming the folder and writing
 * job.json) shows no execution and does not count.
 */
export async function runTwice(firestore: Firestore, dataDir: string, ids: string[]): Promise<Array<{ id: string; why: string }>> {
  const wanted = new Set(ids)
  const twice = new Map<string, string>()
  const jobCreated = new Map<string, number>()
  const events = await firestore.collection('audit_events').where('action', '==', 'run.job_created').select('entity.id').get()
  for (const doc of events.docs) {
    const id = doc.get('entity.id') as string
    if (wanted.has(id)) jobCreated.set(id, (jobCreated.get(id) ?? 0) + 1)
  }
  for (const [id, n] of jobCreated) if (n > 1) twice.set(id, `${n} run.job_created events`)
  const work = join(dataDir, 'work')
  const executions = (dir: string) => {
    const stdout = join(dir, 'stdout.log')
    const wrote = existsSync(stdout)
      ? readFileSync(stdout, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('hello-local: wrote')).length
      : 0
    let running = 0
    try {
      const job = JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8')) as { events: Array<{ newState?: string }> }
      running = job.events.filter((e) => e.newState === 'RUNNING').length
    } catch {
      // never written
    }
    return { wrote, running }
  }
  for (const f of existsSync(work) ? readdirSync(work) : []) {
    const m = /^run-(.+)\.deleted-\d+$/.exec(f)
    if (!m || !wanted.has(m[1]!)) continue
    const e = executions(join(work, f))
    if (e.wrote || e.running) twice.set(m[1]!, `a job folder set aside after it ran (${f})`)
  }
  for (const id of ids) {
    const e = executions(join(work, `run-${id}`))
    if (e.running > 1) twice.set(id, `${e.running} RUNNING states in job.json`)
    if (e.wrote > 1) twice.set(id, `${e.wrote} hello-local lines in stdout.log`)
  }
  return [...twice].map(([id, why]) => ({ id, why }))
}

/** CPU seconds so far, from /proc (Linux): the suite's process, the job processes it has reaped, each emulator's JVM. */
export interface CpuSample {
  suite: number
  jobs: number
  firestore: number
  pubsub: number
}

const TICKS_PER_SECOND = 100

function times(pid: number): { self: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    // utime, stime, cutime, cstime are fields 14 to 17 of the line, 11 to 14 after the command.
    return { self: (f[11]! + f[12]!) / TICKS_PER_SECOND, children: (f[13]! + f[14]!) / TICKS_PER_SECOND }
  } catch {
    return { self: 0, children: 0 }
  }
}

export function cpuSample(dataDir: string, suitePid: number): CpuSample {
  const suite = times(suitePid)
  const sample: CpuSample = { suite: suite.self, jobs: suite.children, firestore: 0, pubsub: 0 }
  for (const record of readEmulatorsFile(layout(dataDir))?.emulators ?? []) {
    sample[record.kind] = emulatorGroup(record).reduce((sum, pid) => sum + times(pid).self, 0)
  }
  return sample
}

/** CPU milliseconds per run between two samples, by part. */
export function cpuPerRun(before: CpuSample, after: CpuSample, runs: number): Record<keyof CpuSample | 'total', number> {
  const per = (k: keyof CpuSample) => Math.round(((after[k] - before[k]) * 1000) / Math.max(1, runs))
  const out = { suite: per('suite'), jobs: per('jobs'), firestore: per('firestore'), pubsub: per('pubsub') }
  return { ...out, total: out.suite + out.jobs + out.firestore + out.pubsub }
}

export interface BenchSuite {
  dataDir: string
  basePort: number
  current?: SpawnedSuite
  start(clean: boolean): Promise<SpawnedSuite>
  /** Stops the suite with SIGINT, kills whatever of it is left, removes the data folder. */
  close(): Promise<void>
}

export async function benchSuite(prefix: string): Promise<BenchSuite> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix))
  const basePort = await freeBasePort()
  const self: BenchSuite = {
    dataDir,
    basePort,
    async start(clean) {
      self.current = await spawnLocalSuite({ dataDir, basePort, clean, timeoutMs: 300_000 })
      return self.current
    },
    async close() {
      try {
        await self.current?.stop('SIGINT', 120_000)
      } finally {
        self.current?.kill()
        killRecordedEmulators(dataDir)
        await rm(dataDir, { recursive: true, force: true })
      }
    },
  }
  return self
}

/**
 * One POST /runs: the answer's status (0 when the request itself failed), the run id when
 * accepted, else what went wrong, and the Retry-After header of a refusal.
 */
export async function submitRun(
  compute: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; id?: string; error?: string; retryAfter?: string }> {
  try {
    const res = await fetch(`${compute}/api/v1/runs`, { method: 'POST', headers, body: JSON.stringify(body) })
    const text = await res.text()
    if (res.status === 201) return { status: res.status, id: (JSON.parse(text) as { id: string }).id }
    // A refusal's detail, so that one 409 (a name taken, contention) can be told from another.
    const error = (JSON.parse(text) as { detail?: string }).detail ?? text.slice(0, 200)
    return { status: res.status, error, retryAfter: res.headers.get('retry-after') ?? undefined }
  } catch (err) {
    return { status: 0, error: err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err) }
  }
}

export function apiHeaders(suite: SuiteFile): Record<string, string> {
  return { authorization: `Bearer ${suite.token}`, 'x-project-id': suite.project_id, 'content-type': 'application/json' }
}

export async function pipelineId(suite: SuiteFile, slug: string): Promise<string> {
  const res = await fetch(`${suite.services.compute}/api/v1/pipelines/slug/${slug}`, { headers: apiHeaders(suite) })
  if (res.status !== 200) throw new Error(`GET /pipelines/slug/${slug} answered ${res.status}`)
  return ((await res.json()) as { id: string }).id
}
