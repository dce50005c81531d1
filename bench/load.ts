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
 * would. It reports the answers (accepted, 429, other 4xx, 5xx, failed requests), the latency of
 * POST /runs measured from each request's scheduled time (so a saturated server shows in it), and
 * the time until every accepted run is terminal, with runs lost (accepted, never terminal) and run
 * twice. Prints a table, then one line of JSON; exits 0 with no 5xx, no failed request (a
 * connection refused or timed out) and nothing lost, 1 otherwise.
 */

const RATE = Number(process.env.BENCH_LOAD_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60)
const WAIT_MS = Number(process.env.BENCH_LOAD_WAIT_MS ?? 15 * 60_000)

interface Answer {
  status: number
  ms: number
  id?: string
  error?: string
}

async function main() {
  const bench = await benchSuite('platform-bench-load-')
  try {
    say(`starting the local suite (data in ${bench.dataDir})`)
    const { suite } = await bench.start(true)
    const headers = apiHeaders(suite)
    const hello = await pipelineId(suite, 'hello-local')
    const compute = suite.services.compute!

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
        submitRun(compute, headers, { pipeline_id: hello, params: {}, tags: ['bench-load'] }).then((r) => ({ ...r, ms: performance.now() - due })),
      )
    }
    const sentSeconds = (performance.now() - t0) / 1000
    const results = await Promise.all(answers)
    const lastAnswer = Date.now()
    const answeredSeconds = (performance.now() - t0) / 1000

    const accepted = results.filter((r) => r.status === 201 && r.id).map((r) => r.id!)
    const counts = {
      accepted: accepted.length,
      too_many_requests: results.filter((r) => r.status === 429).length,
      other_4xx: results.filter((r) => r.status >= 400 && r.status < 500 && r.status !== 429).length,
      server_errors: results.filter((r) => r.status >= 500).length,
      failed_requests: results.filter((r) => r.status === 0).length,
    }
    const other = countBy(
      results.filter((r) => r.status !== 201),
      (r) => (r.status ? `${r.status} ${r.error ?? ''}`.trim() : `request failed: ${r.error ?? 'unknown'}`),
    )
    const latencies = results
      .filter((r) => r.status !== 0)
      .map((r) => r.ms)
      .sort((a, b) => a - b)
    say(`${counts.accepted} accepted; waiting for every accepted run to be terminal`)

    const firestore = firestoreOf(suite)
    try {
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
        latency_ms: {
          p50: Math.round(percentile(latencies, 50)),
          p90: Math.round(percentile(latencies, 90)),
          p99: Math.round(percentile(latencies, 99)),
          max: Math.round(latencies.at(-1) ?? NaN),
        },
        accepted_per_second: Math.round((accepted.length / answeredSeconds) * 10) / 10,
        first_request_to_all_terminal_seconds: startToTerminal,
        last_answer_to_all_terminal_seconds: done.at === undefined ? null : seconds(done.at - lastAnswer),
        outcomes,
        cpu_ms_per_run: cpu,
        lost: lost.length,
        run_twice: twice.length,
        ...(twice.length ? { run_twice_examples: twice.slice(0, 5) } : {}),
        ok: counts.server_errors === 0 && counts.failed_requests === 0 && lost.length === 0 && twice.length === 0,
      }
      table(`POST /runs at ${RATE}/s for ${SECONDS} s (open loop), hello-local`, [
        ['requests', `${total}, sent over ${summary.send_seconds} s, last answered at ${summary.last_answer_seconds} s`],
        ['201 accepted', counts.accepted],
        ['429', counts.too_many_requests],
        ['other 4xx', counts.other_4xx],
        ['5xx', counts.server_errors],
        ['failed requests', counts.failed_requests],
        ...(Object.keys(other).length ? ([['not accepted, by answer', JSON.stringify(other)]] as Array<[string, string]>) : []),
        [
          'latency p50 / p90 / p99 / max',
          `${fmt(summary.latency_ms.p50, 0)} / ${fmt(summary.latency_ms.p90, 0)} / ${fmt(summary.latency_ms.p99, 0)} / ${fmt(summary.latency_ms.max, 0)} ms`,
        ],
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
