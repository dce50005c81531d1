import { startReceiver } from '../test/support/webhooks.js'
import { apiHeaders, benchSuite, fmt, percentile, pipelineId, say, seconds, submitRun, table } from './support.js'

/**
 * The webhooks benchmark (in npm run bench; alone: npm run bench:webhooks): a local suite of its
 * own, a receiver on 127.0.0.1 that verifies every delivery with the standardwebhooks package, one
 * webhook for the terminal run events, and BENCH_WEBHOOK_RUNS (200) hello-local runs submitted by
 * 10 clients. For each run it measures the delay from its terminal status (the `timestamp` of the
 * event: when the status was committed, with its delivery, in one transaction) to the receiver
 * holding the verified delivery, and prints p50, p99 and the maximum, then one line of JSON. Every
 * run must be delivered once, verified, within the wait; it exits 1 otherwise.
 */

const RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 200)
const CLIENTS = 10
const WAIT_MS = Number(process.env.BENCH_WEBHOOK_WAIT_MS ?? 10 * 60_000)
const TERMINAL_EVENTS = ['run.succeeded', 'run.failed', 'run.cancelled']

async function main() {
  const bench = await benchSuite('platform-bench-webhooks-')
  const receiver = await startReceiver()
  try {
    say(`starting the local suite (data in ${bench.dataDir})`)
    const { suite } = await bench.start(true)
    const compute = suite.services.compute!
    const headers = apiHeaders(suite)
    const res = await fetch(`${compute}/api/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, events: TERMINAL_EVENTS, description: 'bench' }),
    })
    if (res.status !== 201) throw new Error(`POST /webhooks answered ${res.status}: ${await res.text()}`)
    receiver.verifyWith(((await res.json()) as { secret: string }).secret)
    const hello = await pipelineId(suite, 'hello-local')

    say(`submitting ${RUNS} hello-local runs from ${CLIENTS} clients`)
    const accepted: string[] = []
    let next = 0
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < RUNS; i = next++) {
          // A refusal under load (503 with Retry-After) is sent again: every run is measured.
          for (;;) {
            const r = await submitRun(compute, headers, { pipeline_id: hello, params: {}, tags: ['bench-webhooks'] })
            if (r.id) {
              accepted.push(r.id)
              break
            }
            await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.retryAfter ?? 1)))
          }
        }
      }),
    )

    say(`waiting for the ${RUNS} terminal deliveries (at most ${WAIT_MS / 1000} s)`)
    const deadline = Date.now() + WAIT_MS
    const wanted = new Set(accepted)
    const byRun = () => {
      const got = new Map<string, typeof receiver.received>()
      for (const r of receiver.received) {
        const run = r.payload.data.run_id
        if (run && wanted.has(run)) got.set(run, [...(got.get(run) ?? []), r])
      }
      return got
    }
    while (byRun().size < accepted.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500))
    const delivered = byRun()
    const first = [...delivered.values()].map((rs) => rs[0]!)
    const delays = first.map((r) => r.at - Date.parse(r.payload.timestamp)).sort((a, b) => a - b)
    const unverified = first.filter((r) => !r.verified[0]).length
    const summary = {
      runs: accepted.length,
      delivered: delivered.size,
      verified: first.length - unverified,
      // Deliveries are at least once: a repeat is allowed, and counted.
      repeated: [...delivered.values()].filter((rs) => rs.length > 1).length,
      delay_ms: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays.at(-1) ?? NaN },
      ok: delivered.size === accepted.length && unverified === 0,
    }
    table(`Run terminal status → verified webhook delivery (${RUNS} runs, ${CLIENTS} clients)`, [
      ['delivered, verified', `${summary.verified} of ${summary.runs}${summary.repeated ? ` (${summary.repeated} more than once)` : ''}`],
      ['delay p50', `${fmt(summary.delay_ms.p50, 0)} ms`],
      ['delay p99', `${fmt(summary.delay_ms.p99, 0)} ms`],
      ['delay max', `${seconds(summary.delay_ms.max)} s`],
    ])
    process.stdout.write(`${JSON.stringify({ webhooks: summary })}\n`)
    process.exitCode = summary.ok ? 0 : 1
  } finally {
    await receiver.close()
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
