import {
  apiHeaders,
  benchSuite,
  countBy,
  cpuPerRun,
  cpuSample,
  firestoreOf,
  pipelineId,
  readRuns,
  runTwice,
  say,
  seconds,
  submitRun,
  table,
  TERMINAL,
  untilTerminal,
} from './support.js'

/**
 * The recovery benchmark (npm run bench:recovery): a local suite of its own accepts
 * BENCH_RECOVERY_RUNS (1,000) hello-local runs from 50 clients, its process is killed with SIGKILL
 * as soon as the last is accepted, and `npm start` runs again on the same data folder. It reports
 * how the runs stood at the kill (read from the Firestore emulator the dead suite left running),
 * the time from the restart until every run is terminal (target: 5 minutes), runs lost (accepted
 * but absent after the restart, or never terminal) and runs run twice. Prints a table, then one
 * line of JSON; exits 0 when the target is met, 1 otherwise.
 */

const RUNS = Number(process.env.BENCH_RECOVERY_RUNS ?? 1000)
const CLIENTS = 50
const TARGET_MS = 5 * 60_000
/** How long the benchmark waits for the runs after the restart before it counts the rest as lost. */
const WAIT_MS = Number(process.env.BENCH_RECOVERY_WAIT_MS ?? 10 * 60_000)

async function main() {
  const bench = await benchSuite('platform-bench-recovery-')
  try {
    say(`starting the local suite (data in ${bench.dataDir})`)
    const first = await bench.start(true)
    const headers = apiHeaders(first.suite)
    const hello = await pipelineId(first.suite, 'hello-local')

    say(`submitting ${RUNS} hello-local runs from ${CLIENTS} clients`)
    const accepted: string[] = []
    const refused: Record<string, number> = {}
    let next = 0
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < RUNS; i = next++) {
          const r = await submitRun(first.suite.services.compute!, headers, { pipeline_id: hello, params: {}, tags: ['bench-recovery'] })
          if (r.id) accepted.push(r.id)
          else refused[String(r.status)] = (refused[String(r.status)] ?? 0) + 1
        }
      }),
    )
    const submitSeconds = (performance.now() - t0) / 1000

    say(`killing the suite's process (pid ${first.suite.pid}) with SIGKILL`)
    await first.stop('SIGKILL')
    // The Firestore emulator outlives the suite's process: how the runs stood at the kill.
    const leftover = firestoreOf(first.suite)
    const atKill = await readRuns(leftover, accepted).finally(() => leftover.terminate())
    const inFlight = accepted.filter((id) => !TERMINAL.has(atKill.get(id)?.status ?? ''))
    const stages = countBy(accepted, (id) => atKill.get(id)?.status ?? 'absent')

    say('starting the suite again on the same data folder')
    const restart = Date.now()
    const second = await bench.start(false)
    const ready = Date.now()
    const cpuBefore = cpuSample(bench.dataDir, second.suite.pid)
    const firestore = firestoreOf(second.suite)
    try {
      let lastLine = 0
      const done = await untilTerminal(firestore, accepted, WAIT_MS, (states) => {
        if (Date.now() - lastLine < 10_000) return
        lastLine = Date.now()
        const open = accepted.filter((id) => !TERMINAL.has(states.get(id)?.status ?? '')).length
        say(`${seconds(Date.now() - restart)} s after the restart: ${open} runs not terminal yet`)
      })
      const cpu = cpuPerRun(cpuBefore, cpuSample(bench.dataDir, second.suite.pid), inFlight.length)
      const states = done.states
      const lost = accepted.filter((id) => !TERMINAL.has(states.get(id)?.status ?? ''))
      const twice = await runTwice(firestore, bench.dataDir, accepted)
      const outcomes = countBy(
        accepted.filter((id) => TERMINAL.has(states.get(id)?.status ?? '')),
        (id) => {
          const s = states.get(id)!
          return s.status === 'failed' && s.error_message?.includes('executor restarted') ? 'failed (running at the kill)' : s.status
        },
      )
      const total = done.at === undefined ? undefined : done.at - restart
      const summary = {
        benchmark: 'recovery',
        runs_submitted: RUNS,
        accepted: accepted.length,
        refused,
        submit_seconds: Math.round(submitSeconds * 10) / 10,
        in_flight_at_kill: inFlight.length,
        at_kill: stages,
        restart_to_ready_seconds: seconds(ready - restart),
        restart_to_all_terminal_seconds: total === undefined ? null : seconds(total),
        ready_to_all_terminal_seconds: done.at === undefined ? null : seconds(done.at - ready),
        outcomes,
        cpu_ms_per_run_after_ready: cpu,
        lost: lost.length,
        run_twice: twice.length,
        ...(twice.length ? { run_twice_examples: twice.slice(0, 5) } : {}),
        target_seconds: TARGET_MS / 1000,
        target_met: total !== undefined && total <= TARGET_MS && lost.length === 0 && twice.length === 0,
      }
      table('Recovery after kill -9 of the suite', [
        ['runs accepted', `${accepted.length} of ${RUNS} in ${summary.submit_seconds} s`],
        [
          'in flight at the kill',
          `${inFlight.length} (${Object.entries(stages)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')})`,
        ],
        ['restart → suite ready', `${summary.restart_to_ready_seconds} s`],
        ['restart → all terminal', total === undefined ? `not within ${WAIT_MS / 1000} s` : `${summary.restart_to_all_terminal_seconds} s`],
        [
          'outcomes',
          Object.entries(outcomes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
        [
          'CPU per run in flight, after ready',
          `${cpu.total} ms: suite process ${cpu.suite}, job processes ${cpu.jobs}, Firestore emulator ${cpu.firestore}, Pub/Sub emulator ${cpu.pubsub}`,
        ],
        ['lost', lost.length],
        ['run twice', twice.length],
        ['target (≤ 5 min, 0 lost, 0 twice)', summary.target_met ? 'met' : 'NOT met'],
      ])
      process.stdout.write(`${JSON.stringify(summary)}\n`)
      process.exitCode = summary.target_met ? 0 : 1
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
