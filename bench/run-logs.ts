import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { constants as os, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freeBasePort, repoRoot, spawnLocalSuite, type SpawnedSuite } from '../test/support/suite.js'
import { apiHeaders, fmt, say, submitRun, table } from './support.js'

/**
 * The run-log benchmark (npm run bench:run-logs, and part of npm run bench). Starts the local
 * suite, registers a pipeline whose task prints BENCH_LOG_LINES (default 100,000) numbered lines
 * as fast as the shell can, and follows each of its runs from submission to the log's end:
 *
 *   sse         GET /runs/{id}/logs with Accept: text/event-stream, one stream to the end event
 *   long poll   GET /runs/{id}/logs?wait=20&page_size=1000 again and again, as platform runs logs --follow
 *
 * For each: lines received (every line, once, in order, is checked), lines per second served from the
 * first line received to the log's end, how long the task took to print them (first to last line's
 * time), and how long after the last line was written the follower saw the end. Prints a table and
 * one line of JSON (also bench/results/run-logs.json); stops the suite (its emulators too) and
 * exits, also on an error, Ctrl-C or SIGTERM.
 */
const LINES = Number(process.env.BENCH_LOG_LINES ?? 100_000)
const RUN_TIMEOUT_MS = 600_000

const started: { dataDir?: string; suite?: SpawnedSuite } = {}
let stopping: Promise<void> | undefined

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    if (started.suite) {
      const { code } = await started.suite.stop('SIGINT', 60_000)
      if (code !== 0) started.suite.kill()
    }
    if (started.dataDir) await rm(started.dataDir, { recursive: true, force: true })
  })()
  return stopping
}

let signalled = false
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (signalled) return
    signalled = true
    say(`${sig}: stopping the suite`)
    void stopAll().finally(() => process.exit(128 + os.signals[sig]))
  })
}

interface Line {
  time: string
  text: string
}

/** What a follower saw: lines in order, when the first came, when the end was known, and the last line's own time. */
class Tally {
  count = 0
  firstAt?: number
  endAt?: number
  firstWritten?: number
  lastWritten?: number
  outOfOrder = 0

  take(lines: Line[]) {
    if (lines.length && this.firstAt === undefined) this.firstAt = performance.now()
    for (const l of lines) {
      if (l.text !== `line ${this.count}`) this.outOfOrder++
      this.count++
      const t = Date.parse(l.time)
      this.firstWritten ??= t
      this.lastWritten = t
    }
  }

  result(name: string) {
    const serving = ((this.endAt ?? NaN) - (this.firstAt ?? NaN)) / 1000
    const printing = ((this.lastWritten ?? NaN) - (this.firstWritten ?? NaN)) / 1000
    return {
      name,
      lines: this.count,
      complete: this.count === LINES && this.outOfOrder === 0,
      lines_per_s: this.count / serving,
      serving_s: serving,
      task_printing_s: printing,
      // Wall clock against the lines' own times: the executor and this process share the host's clock.
      end_after_last_line_s: ((this.endAt ?? NaN) + performance.timeOrigin - (this.lastWritten ?? NaN)) / 1000,
    }
  }
}

async function followSse(compute: string, headers: Record<string, string>, id: string): Promise<Tally> {
  const tally = new Tally()
  const res = await fetch(`${compute}/api/v1/runs/${id}/logs`, { headers: { ...headers, accept: 'text/event-stream' } })
  if (res.status !== 200 || !res.body) throw new Error(`the log stream answered ${res.status}`)
  const decoder = new TextDecoder()
  let buffer = ''
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
      if (event === 'lines') tally.take(JSON.parse(data) as Line[])
      if (event === 'end') {
        tally.endAt = performance.now()
        await reader.cancel()
        return tally
      }
    }
  }
  throw new Error(`the log stream closed after ${tally.count} lines without an end event`)
}

async function followLongPoll(compute: string, headers: Record<string, string>, id: string): Promise<Tally> {
  const tally = new Tally()
  let token: string | undefined
  for (;;) {
    const url = `${compute}/api/v1/runs/${id}/logs?wait=20&page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`
    const res = await fetch(url, { headers })
    if (res.status !== 200) throw new Error(`GET /runs/${id}/logs answered ${res.status}: ${await res.text()}`)
    tally.take((await res.json()) as Line[])
    token = res.headers.get('x-next-page-token') ?? undefined
    if (!token) {
      tally.endAt = performance.now()
      return tally
    }
  }
}

async function main() {
  process.env.METADATA_SERVER_DETECTION ??= 'none'
  const dataDir = (started.dataDir = await mkdtemp(join(tmpdir(), 'platform-bench-logs-')))
  say('starting the local suite')
  const spawned = (started.suite = await spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, timeoutMs: 300_000 }))
  const { suite } = spawned
  const compute = suite.services.compute!
  const headers = apiHeaders(suite)

  const slug = `print-${LINES}-lines`
  const created = await fetch(`${compute}/api/v1/pipelines`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      slug,
      name: `Prints ${LINES} lines`,
      type: 'container_entrypoint',
      container: 'docker.io/library/busybox:1.36',
      version: '1.0.0',
      entrypoint: '/bin/sh',
      commands: ['-c', `i=0; while [ $i -lt ${LINES} ]; do echo "line $i"; i=$((i+1)); done`],
      resources: { cpu_milli: 1000, memory_mib: 256, max_run_duration_seconds: 600 },
    }),
  })
  if (created.status !== 201) throw new Error(`POST /pipelines answered ${created.status}: ${await created.text()}`)
  const pipelineId = ((await created.json()) as { id: string }).id

  const results = []
  for (const [name, follow] of [
    ['sse', followSse],
    ['long poll', followLongPoll],
  ] as const) {
    const submitted = await submitRun(compute, headers, { pipeline_id: pipelineId })
    if (!submitted.id) throw new Error(`POST /runs answered ${submitted.status}: ${submitted.error}`)
    say(`${name}: following run ${submitted.id} while it prints ${LINES} lines`)
    const tally = await Promise.race([
      follow(compute, headers, submitted.id),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${name}: the log did not end within ${RUN_TIMEOUT_MS / 1000} s`)), RUN_TIMEOUT_MS).unref(),
      ),
    ])
    results.push(tally.result(name))
  }

  table(
    `Run log: lines served to a follower while a run prints ${LINES} lines`,
    results.flatMap((r) => [
      [`${r.name}: lines received (all, in order: ${r.complete ? 'yes' : 'NO'})`, r.lines] as [string, number],
      [`${r.name}: lines per second served`, fmt(r.lines_per_s, 0)] as [string, string],
      [`${r.name}: the task printed them in (s)`, fmt(r.task_printing_s, 2)] as [string, string],
      [`${r.name}: end seen after the last line (s)`, fmt(r.end_after_last_line_s, 2)] as [string, string],
    ]),
  )
  const summary = { bench: 'run-logs', lines: LINES, results }
  process.stdout.write(`\n${JSON.stringify(summary)}\n`)
  await mkdir(join(repoRoot, 'bench/results'), { recursive: true })
  await writeFile(join(repoRoot, 'bench/results/run-logs.json'), JSON.stringify(summary, null, 2) + '\n')
  if (results.some((r) => !r.complete)) throw new Error('a follower missed, repeated or reordered lines')
}

let failed = false
try {
  await main()
} catch (error) {
  failed = true
  process.stderr.write(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
} finally {
  await stopAll()
}
process.exit(failed ? 1 : signalled ? 130 : 0)
