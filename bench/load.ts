import { randomUUID } from 'node:crypto'
import type { Firestore } from '@google-cloud/firestore'
import { AUDIT_SHARDS } from '../lib/audit.js'
import { loadConfig } from '../lib/config.js'
import { isRetryableTransaction } from '../lib/db.js'
import {
  apiHeaders,
  benchSuite,
  countBy,
  cpuPerRun,
  cpuSample,
  firestoreOf,
  fmt,
  percentile,
  pipelineId,
  runTwice,
  say,
  seconds,
  submitRun,
  table,
  TERMINAL,
  untilTerminal,
} from './support.js'

/**
 * The load benchmark (npm run bench:load): a local suite of its own gets BENCH_LOAD_RATE (50)
 * hello-local submissions per second for BENCH_LOAD_SECONDS (60) s, open loop: each request is
 * sent at its scheduled time whether or not earlier ones were answered, as independent clients
 * would. Before that, for BENCH_LOAD_BARE_SECONDS (15) s, it measures the bare capacity of the
 * suite's Firestore emulator for the same work: as many loops as a service handles requests at a
 * time (MAX_CONCURRENT_REQUESTS) each doing the reads and writes of one POST /runs, with nothing
 * else (no HTTP, no checks, no audit keys, no Pub/Sub), so that "accepted per second" reads beside
 * what the emulator itself sustains (their ratio; meaningful when the offered rate exceeds both).
 * It reports the answers (accepted; refused 503/429 with Retry-After, and without; 409s of
 * transactions that lost a race; other 4xx and 5xx; failed requests), the answer times measured
 * from each request's scheduled time (so a saturated server shows in them) and how many took more
 * than 2 s or never came, and the time until every accepted run is terminal, with runs lost
 * (accepted, never terminal) and run twice. Prints a table, then one line of JSON; exits 0 when
 * every request was answered within 2 s, none with a 409 or a 5xx other than a 503 with
 * Retry-After, and no run was lost or run twice; 1 otherwise.
 */

const RATE = Number(process.env.BENCH_LOAD_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60)
const WAIT_MS = Number(process.env.BENCH_LOAD_WAIT_MS ?? 15 * 60_000)
const BARE_SECONDS = Number(process.env.BENCH_LOAD_BARE_SECONDS ?? 15)
/** What every request must be answered within, past the capacity of the service (issue 18). */
const ANSWER_WITHIN_MS = 2_000
/** The suite's services run with the configuration's defaults: as many requests at a time as a deployed instance. */
const CONCURRENCY = loadConfig({}).admission.maxConcurrent
const FAILED_PRECONDITION = 9

interface Answer {
  status: number
  ms: number
  id?: string
  error?: string
  retryAfter?: string
}

/**
 * The Firestore work of one POST /runs, bare: the caller's credential, account, project and
 * address throttle in one getAll; the pipeline; the run's name read and claimed; an audit chain
 * head read (one of AUDIT_SHARDS, as a run's events pick theirs) and one transaction creating the
 * run, writing its event and the head; then the run marked published. Documents of about the
 * platform's sizes, in collections of their own. A transaction that loses a race (the head written
 * by another since it was read) is not run again: it counts as lost, not as done.
 */
async function bareSubmissions(firestore: Firestore, concurrency: number, seconds: number) {
  const col = (name: string) => firestore.collection(`bench_bare_${name}`)
  const padding = 'x'.repeat(600)
  const auth = await Promise.all(
    ['credential', 'account', 'project', 'throttle'].map(async (kind) => {
      const ref = col('auth').doc(kind)
      await ref.set({ kind, padding })
      return ref
    }),
  )
  const pipeline = col('pipelines').doc('hello-local')
  await pipeline.set({ slug: 'hello-local', padding })
  let done = 0
  let lostRaces = 0
  const end = performance.now() + seconds * 1000
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await firestore.getAll(...auth)
        await pipeline.get()
        const id = randomUUID()
        const name = col('run_names').doc(id)
        await firestore.getAll(name)
        await name.create({ run_id: id })
        const run = col('runs').doc(id)
        const head = col('audit_heads').doc(`shard-${Math.floor(Math.random() * AUDIT_SHARDS)}`)
        // As the platform writes a chain head: read outside the transaction, written under a precondition (lib/db.ts writeIfUnchanged).
        const current = await head.get()
        const seq = ((current.get('seq') as number | undefined) ?? 0) + 1
        try {
          await firestore.runTransaction(
            async (tx) => {
              tx.create(run, { id, status: 'queued', padding, dispatch: { published: false } })
              tx.set(col('audit_events').doc(), { run: id, seq, padding })
              if (current.exists) tx.update(head, { seq }, { lastUpdateTime: current.updateTime! })
              else tx.create(head, { seq })
            },
            { maxAttempts: 1 },
          )
        } catch (err) {
          if (!isRetryableTransaction(err) && (err as { code?: unknown }).code !== FAILED_PRECONDITION) throw err
          lostRaces++
          continue
        }
        await run.update({ 'dispatch.published': true })
        done++
      }
    }),
  )
  const elapsed = (performance.now() - t0) / 1000
  return { per_second: Math.round((done / elapsed) * 10) / 10, done, lost_races: lostRaces }
}

async function main() {
  const bench = await benchSuite('platform-bench-load-')
  try {
    say(`starting the local suite (data in ${bench.dataDir})`)
    const { suite } = await bench.start(true)
    const headers = apiHeaders(suite)
    const hello = await pipelineId(suite, 'hello-local')
    const compute = suite.services.compute!
    const firestore = firestoreOf(suite)
    try {
      say(`the bare emulator: ${CONCURRENCY} loops of the Firestore work of POST /runs for ${BARE_SECONDS} s`)
      const bare = await bareSubmissions(firestore, CONCURRENCY, BARE_SECONDS)

      const cpuBefore = cpuSample(bench.dataDir, suite.pid)
      const total = Math.round(RATE * SECONDS)
      say(`sending ${total} POST /runs at ${RATE} per second for ${SECONDS} s (open loop)`)
      const answers: Promise<Answer>[] = []
      const t0 = performance.now()
      const startedAt = Date.now()
      for (let i = 0; i < total; i++) {
        const due = t0 + (i * 1000) / RATE
        const wait = due - performance.now()
        if (wait > 1) await new Promise((r) => setTimeout(r, wait))
        answers.push(
          submitRun(compute, headers, { pipeline_id: hello, params: {}, tags: ['bench-load'] }).then((r): Answer => ({
            ...r,
            ms: performance.now() - due,
          })),
        )
      }
      const sentSeconds = (performance.now() - t0) / 1000
      const results = await Promise.all(answers)
      const lastAnswer = Date.now()
      const answeredSeconds = (performance.now() - t0) / 1000

      const accepted = results.filter((r) => r.status === 201 && r.id).map((r) => r.id!)
      const refusal = (r: Answer) => r.status === 429 || r.status === 503
      const lostRace = (r: Answer) => r.status === 409 && /concurrent requests/.test(r.error ?? '')
      const counts = {
        accepted: accepted.length,
        overloaded_with_retry_after: results.filter((r) => refusal(r) && r.retryAfter !== undefined).length,
        overloaded_without_retry_after: results.filter((r) => refusal(r) && r.retryAfter === undefined).length,
        contention_409: results.filter(lostRace).length,
        other_4xx: results.filter((r) => r.status >= 400 && r.status < 500 && !refusal(r) && !lostRace(r)).length,
        server_errors: results.filter((r) => r.status >= 500 && r.status !== 503).length,
        failed_requests: results.filter((r) => r.status === 0).length,
      }
      const unanswered = results.filter((r) => r.status === 0 || r.ms > ANSWER_WITHIN_MS).length
      const other = countBy(
        results.filter((r) => r.status !== 201),
        // Numbers left out (a 503 names the limit of the moment), so that one kind of answer is one line.
        (r) => (r.status ? `${r.status} ${(r.error ?? '').replace(/\d+/g, 'N')}`.trim() : `request failed: ${r.error ?? 'unknown'}`),
      )
      const answerTimes = (rs: Answer[]) =>
        rs
          .filter((r) => r.status !== 0)
          .map((r) => r.ms)
          .sort((a, b) => a - b)
      const times = (sorted: number[]) => ({
        p50: Math.round(percentile(sorted, 50)),
        p90: Math.round(percentile(sorted, 90)),
        p99: Math.round(percentile(sorted, 99)),
        max: Math.round(sorted.at(-1) ?? NaN),
      })
      const latencies = answerTimes(results)
      const acceptedLatencies = answerTimes(results.filter((r) => r.status === 201))
      // A refusal slow in coming was slow before the gate (the connection, the event loop), not in it.
      const refusalLatencies = answerTimes(results.filter(refusal))
      say(`${counts.accepted} accepted; waiting for every accepted run to be terminal`)

      let lastLine = 0
      const done = await untilTerminal(firestore, accepted, WAIT_MS, (states) => {
        if (Date.now() - lastLine < 10_000) return
        lastLine = Date.now()
        const open = accepted.filter((id) => !TERMINAL.has(states.get(id)?.status ?? '')).length
        say(`${seconds(Date.now() - lastAnswer)} s after the last answer: ${open} runs not terminal yet`)
      })
      const cpu = cpuPerRun(cpuBefore, cpuSample(bench.dataDir, suite.pid), accepted.length)
      const lost = accepted.filter((id) => !TERMINAL.has(done.states.get(id)?.status ?? ''))
      const twice = await runTwice(firestore, bench.dataDir, accepted)
      const outcomes = countBy(
        accepted.filter((id) => done.states.has(id)),
        (id) => done.states.get(id)!.status,
      )
      const startToTerminal = done.at === undefined ? null : seconds(done.at - startedAt)
      const summary = {
        benchmark: 'load',
        rate_per_second: RATE,
        seconds: SECONDS,
        requests: total,
        send_seconds: Math.round(sentSeconds * 10) / 10,
        last_answer_seconds: Math.round(answeredSeconds * 10) / 10,
        ...counts,
        other_answers: other,
        unanswered_after_2s: unanswered,
        answer_ms: times(latencies),
        accepted_answer_ms: times(acceptedLatencies),
        refusal_answer_ms: times(refusalLatencies),
        accepted_per_second: Math.round((accepted.length / answeredSeconds) * 10) / 10,
        concurrency: CONCURRENCY,
        bare_per_second: bare.per_second,
        bare_lost_races: bare.lost_races,
        accepted_to_bare: Math.round((accepted.length / answeredSeconds / bare.per_second) * 100) / 100,
        first_request_to_all_terminal_seconds: startToTerminal,
        last_answer_to_all_terminal_seconds: done.at === undefined ? null : seconds(done.at - lastAnswer),
        outcomes,
        cpu_ms_per_run: cpu,
        lost: lost.length,
        run_twice: twice.length,
        ...(twice.length ? { run_twice_examples: twice.slice(0, 5) } : {}),
        ok:
          unanswered === 0 &&
          counts.server_errors === 0 &&
          counts.failed_requests === 0 &&
          counts.contention_409 === 0 &&
          counts.overloaded_without_retry_after === 0 &&
          lost.length === 0 &&
          twice.length === 0,
      }
      table(`POST /runs at ${RATE}/s for ${SECONDS} s (open loop), hello-local`, [
        ['requests', `${total}, sent over ${summary.send_seconds} s, last answered at ${summary.last_answer_seconds} s`],
        ['201 accepted', counts.accepted],
        [
          'accepted per second',
          `${summary.accepted_per_second}, bare emulator ${bare.per_second} (${CONCURRENCY} at a time): ${fmt(summary.accepted_to_bare, 2)} ×`,
        ],
        ['429/503 with Retry-After', counts.overloaded_with_retry_after],
        ['429/503 without Retry-After', counts.overloaded_without_retry_after],
        ['409 lost a race', counts.contention_409],
        ['other 4xx', counts.other_4xx],
        ['other 5xx', counts.server_errors],
        ['failed requests', counts.failed_requests],
        ...(Object.keys(other).length ? ([['not accepted, by answer', JSON.stringify(other)]] as Array<[string, string]>) : []),
        [
          'answer p50 / p90 / p99 / max',
          `${fmt(summary.answer_ms.p50, 0)} / ${fmt(summary.answer_ms.p90, 0)} / ${fmt(summary.answer_ms.p99, 0)} / ${fmt(summary.answer_ms.max, 0)} ms`,
        ],
        [
          '201 answer p50 / p90 / p99 / max',
          `${fmt(summary.accepted_answer_ms.p50, 0)} / ${fmt(summary.accepted_answer_ms.p90, 0)} / ${fmt(summary.accepted_answer_ms.p99, 0)} / ${fmt(summary.accepted_answer_ms.max, 0)} ms`,
        ],
        [
          '429/503 answer p50 / p90 / p99 / max',
          `${fmt(summary.refusal_answer_ms.p50, 0)} / ${fmt(summary.refusal_answer_ms.p90, 0)} / ${fmt(summary.refusal_answer_ms.p99, 0)} / ${fmt(summary.refusal_answer_ms.max, 0)} ms`,
        ],
        [`unanswered after ${ANSWER_WITHIN_MS / 1000} s`, unanswered],
        ['first request → all terminal', startToTerminal === null ? `not within ${WAIT_MS / 1000} s` : `${startToTerminal} s`],
        [
          'last answer → all terminal',
          summary.last_answer_to_all_terminal_seconds === null ? '-' : `${summary.last_answer_to_all_terminal_seconds} s`,
        ],
        [
          'outcomes',
          Object.entries(outcomes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
        [
          'CPU per run',
          `${cpu.total} ms: suite process ${cpu.suite}, job processes ${cpu.jobs}, Firestore emulator ${cpu.firestore}, Pub/Sub emulator ${cpu.pubsub}`,
        ],
        ['lost', lost.length],
        ['run twice', twice.length],
      ])
      process.stdout.write(`${JSON.stringify(summary)}\n`)
      process.exitCode = summary.ok ? 0 : 1
    } finally {
      await firestore.terminate()
    }
  } finally {
    say('stopping the suite')
    await bench.close()
  }
}

process.env.METADATA_SERVER_DETECTION ??= 'none'
main().then(
  () => process.exit(),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
    process.exit(1)
  },
)
