import { InvalidArgumentError, type Command } from 'commander'
import { AbortedError, HttpError, sleep, TERMINAL_STATUSES, UnreachableError, type Run, type RunStatus } from '../../client.js'
import { action, type Cli, type Session } from '../../context.js'
import { EXIT, explain, type ExitCode } from '../../errors.js'
import { formatTime } from '../../output.js'
import { runDuration } from '../../views.js'

const MIN_INTERVAL_S = 0.5
/** A watch outlives short outages (a redeploy, a dropped connection) but not a service that stays down. */
const MAX_CONSECUTIVE_FAILURES = 5

const EXIT_FOR: Record<Exclude<RunStatus, 'queued' | 'running'>, ExitCode> = {
  succeeded: EXIT.ok,
  failed: EXIT.runFailed,
  cancelled: EXIT.runCancelled,
}

export function interval(value: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < MIN_INTERVAL_S) throw new InvalidArgumentError(`expected a number of seconds, at least ${MIN_INTERVAL_S}`)
  return n
}

const transient = (error: unknown) =>
  error instanceof UnreachableError || (error instanceof HttpError && (error.status >= 500 || error.status === 429))

function describe(run: Run): string {
  const extra =
    run.status === 'succeeded'
      ? [runDuration(run) && `after ${runDuration(run)}`, run.output && `output ${run.output}`]
      : run.status === 'failed'
        ? [runDuration(run) && `after ${runDuration(run)}`, run.error_message && `error: ${run.error_message}`]
        : run.status === 'queued'
          ? [run.status_reason && `waiting for: ${run.status_reason}`]
          : []
  return [formatTime(new Date().toISOString()), run.name, run.status, ...extra.filter(Boolean)].join('  ')
}

async function watch(session: Session, id: string, seconds: number, signal: AbortSignal): Promise<{ code: ExitCode; last?: Run }> {
  const client = session.client(signal)
  const project = await session.projectId(client)
  let last: Run | undefined
  let failures = 0
  for (;;) {
    let run: Run
    try {
      run = await client.getRun(project, id)
      failures = 0
    } catch (error) {
      // The first poll must succeed: a wrong id or a service that is not there is reported at once.
      if (!last || !transient(error) || ++failures >= MAX_CONSECUTIVE_FAILURES) throw error
      session.out.note(`warning: ${explain(error).message}; trying again in ${seconds}s`)
      await sleep(seconds * 1000, signal)
      continue
    }
    if (!last) session.out.note(`Watching run ${run.name} (${run.id}) every ${seconds}s; Ctrl-C stops watching, not the run.`)
    if (run.status !== last?.status) {
      if (session.out.json) session.out.jsonLine(run)
      else session.out.line(describe(run))
    }
    last = run
    if (TERMINAL_STATUSES.has(run.status)) return { code: EXIT_FOR[run.status as keyof typeof EXIT_FOR], last }
    await sleep(seconds * 1000, signal)
  }
}

export function register(runs: Command, cli: Cli) {
  runs
    .command('watch')
    .description(
      'Poll a run until it ends, printing each status change. Exit code 0 when it succeeded, 1 failed, 2 cancelled; Ctrl-C stops the watch (130), never the run',
    )
    .argument('<run>', 'run id')
    .option('--interval <seconds>', 'seconds between polls', interval, 10)
    .action(
      action(cli, async (session, command) => {
        const [id] = command.processedArgs as [string]
        const { interval: seconds } = command.opts<{ interval: number }>()
        const stop = new AbortController()
        const onInterrupt = () => stop.abort()
        process.once('SIGINT', onInterrupt)
        try {
          return (await watch(session, id, seconds, stop.signal)).code
        } catch (error) {
          if (!(error instanceof AbortedError)) throw error
          session.out.note(`Stopped watching run ${id}; the run goes on (platform runs status ${id}).`)
          return EXIT.interrupted
        } finally {
          process.removeListener('SIGINT', onInterrupt)
        }
      }),
    )
}
