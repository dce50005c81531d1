import { InvalidArgumentError, type Command } from 'commander'
import { AbortedError, isTransient, sleep, TERMINAL_STATUSES, type PlatformClient, type Run } from '../../client.js'
import { action, type Cli, type Session } from '../../context.js'
import { EXIT, EXIT_FOR, explain, type ExitCode } from '../../errors.js'
import { examples } from '../../help.js'
import { formatDuration, formatTime } from '../../output.js'
import { runDuration } from '../../views.js'
import { printRunLog, type LogOptions } from './logs.js'

const MIN_INTERVAL_S = 0.5
export const DEFAULT_INTERVAL_S = 10
/** A watch outlives short outages (a redeploy, a dropped connection) but not a service that stays down. */
const MAX_CONSECUTIVE_FAILURES = 5
/** How often the elapsed time on a terminal is redrawn between polls. */
const TICK_MS = 1000

export function interval(value: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < MIN_INTERVAL_S) throw new InvalidArgumentError(`expected a number of seconds, at least ${MIN_INTERVAL_S}`)
  return n
}

function describe(run: Run, session: Session): string {
  const extra =
    run.status === 'succeeded'
      ? [runDuration(run) && `after ${runDuration(run)}`, run.output && `output ${run.output}`]
      : run.status === 'failed'
        ? [runDuration(run) && `after ${runDuration(run)}`, run.error_message && `error: ${run.error_message}`]
        : run.status === 'queued'
          ? [run.status_reason && `waiting for: ${run.status_reason}`]
          : []
  return [formatTime(new Date().toISOString()), run.name, session.out.paint(run.status), ...extra.filter(Boolean)].join('  ')
}

/** "hello-local-20261122T171710Z  running for 1m 05s": how long the run has been in its current state. */
function elapsed(run: Run, since: number, now = Date.now()): string {
  const at = run.status === 'running' && run.started ? Date.parse(run.started) : run.status === 'queued' ? Date.parse(run.created) : since
  return `${run.name}  ${run.status} for ${formatDuration((now - (Number.isNaN(at) ? since : at)) / 1000)}`
}

/** Waits `ms` like sleep; on a terminal, redraws the status line every second meanwhile. */
async function wait(session: Session, ms: number, signal: AbortSignal, line: () => string) {
  if (!session.out.live) return sleep(ms, signal)
  const end = Date.now() + ms
  for (;;) {
    session.out.status(line())
    const left = end - Date.now()
    if (left <= 0) return
    await sleep(Math.min(TICK_MS, left), signal)
  }
}

async function follow(session: Session, ref: string, seconds: number, signal: AbortSignal, logs?: Omit<LogOptions, 'follow'>): Promise<ExitCode> {
  const client = session.client(signal)
  const project = await session.projectId(client)
  const { id } = await session.run(client, project, ref)
  // The log is followed beside the status polls; the watch ends when both have: the run's end, then its last lines.
  let logFailure: { error: unknown } | undefined
  const printing = logs
    ? printRunLog(session, client, project, id, { ...logs, follow: true }, signal).catch((error: unknown) => {
        logFailure = { error }
      })
    : undefined
  const code = await watchStatus(session, client, project, id, seconds, signal)
  await printing
  if (logFailure) throw logFailure.error
  return code
}

async function watchStatus(
  session: Session,
  client: PlatformClient,
  project: string,
  id: string,
  seconds: number,
  signal: AbortSignal,
): Promise<ExitCode> {
  let last: Run | undefined
  let since = Date.now()
  let failures = 0
  for (;;) {
    let run: Run
    try {
      run = await client.getRun(project, id)
      failures = 0
    } catch (error) {
      // The first poll must succeed: a wrong id or a service that is not there is reported at once.
      if (!last || !isTransient(error) || ++failures >= MAX_CONSECUTIVE_FAILURES) throw error
      session.out.note(`warning: ${explain(error).message}; trying again in ${seconds}s`)
      await sleep(seconds * 1000, signal)
      continue
    }
    if (!last) session.out.note(`Watching run ${run.name} (${run.id}) every ${seconds}s; Ctrl-C stops watching, not the run.`)
    if (run.status !== last?.status) {
      since = Date.now()
      session.out.record(run, describe(run, session))
    }
    last = run
    if (TERMINAL_STATUSES.has(run.status)) return EXIT_FOR[run.status as keyof typeof EXIT_FOR]
    const current = run
    await wait(session, seconds * 1000, signal, () => elapsed(current, since))
  }
}

/**
 * Follows a run (by id or name) to its end: a line per status change, and on a terminal the time
 * spent in the current state, redrawn in place. Exit code 0, 1 or 2 by the run's outcome; 130 when
 * Ctrl-C stops the watch (never the run).
 */
export async function watchRun(session: Session, ref: string, seconds: number, logs?: Omit<LogOptions, 'follow'>): Promise<ExitCode> {
  const stop = new AbortController()
  const onInterrupt = () => stop.abort()
  process.once('SIGINT', onInterrupt)
  try {
    return await follow(session, ref, seconds, stop.signal, logs)
  } catch (error) {
    if (!(error instanceof AbortedError)) throw error
    session.out.note(`Stopped watching run ${ref}; the run goes on (platform runs status ${ref}).`)
    return EXIT.interrupted
  } finally {
    process.removeListener('SIGINT', onInterrupt)
    session.out.clearStatus()
  }
}

export function register(runs: Command, cli: Cli) {
  runs
    .command('watch')
    .description(
      'Poll a run until it ends, printing each status change (on a terminal, also the time in the current state). Exit code 0 when it succeeded, 1 failed, 2 cancelled; Ctrl-C stops the watch (130), never the run',
    )
    .argument('<run>', 'run id or name')
    .option('--interval <seconds>', 'seconds between polls', interval, DEFAULT_INTERVAL_S)
    .addHelpText(
      'after',
      examples(
        'platform runs watch hello-local-20261122T171710Z',
        'platform runs watch 5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11 --interval 2 && echo succeeded',
        'platform runs watch <run> --json | jq -r .status    # one JSON document per status change',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { interval: seconds } = command.opts<{ interval: number }>()
        return watchRun(session, ref, seconds)
      }),
    )
}
