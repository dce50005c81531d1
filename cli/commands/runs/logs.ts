import { Option, type Command } from 'commander'
import { AbortedError, isTransient, sleep, type PlatformClient } from '../../client.js'
import { action, type Cli, type Session } from '../../context.js'
import { EXIT, EXIT_FOR, explain, type ExitCode } from '../../errors.js'
import { examples } from '../../help.js'
import { formatTime } from '../../output.js'

export interface LogOptions {
  /** Wait for new lines until the run has ended and its log is read to the end. */
  follow: boolean
  stream?: 'stdout' | 'stderr'
  timestamps?: boolean
}

/** Seconds the service holds a follower's request when nothing is new: well within the client's 30 s timeout. */
const WAIT_S = 20
const PAGE_SIZE = 1000
/** A follower outlives short outages (a redeploy, a dropped connection) but not a service that stays down. */
const MAX_CONSECUTIVE_FAILURES = 5
const RETRY_S = 2

/**
 * Prints a run's log lines as they are read (text, or with --json one document per line). Without
 * `follow`, what the log holds now; with it, until the service says the log is complete.
 */
export async function printRunLog(session: Session, client: PlatformClient, project: string, id: string, opts: LogOptions, signal?: AbortSignal) {
  let token: string | undefined
  let failures = 0
  for (;;) {
    let page
    try {
      page = await client.runLogs(project, id, { pageToken: token, stream: opts.stream, wait: opts.follow ? WAIT_S : undefined, pageSize: PAGE_SIZE })
      failures = 0
    } catch (error) {
      if (!opts.follow || !isTransient(error) || ++failures >= MAX_CONSECUTIVE_FAILURES) throw error
      session.out.note(`warning: ${explain(error).message}; reading the log again in ${RETRY_S}s`)
      await sleep(RETRY_S * 1000, signal)
      continue
    }
    for (const line of page.items) session.out.record(line, opts.timestamps ? `${formatTime(line.time)} ${line.text}` : line.text)
    if (!page.nextPageToken) return
    token = page.nextPageToken
    if (!opts.follow && page.items.length < PAGE_SIZE) return
  }
}

async function logs(session: Session, ref: string, opts: LogOptions, signal: AbortSignal): Promise<ExitCode> {
  const client = session.client(signal)
  const project = await session.projectId(client)
  const { id } = await session.run(client, project, ref)
  await printRunLog(session, client, project, id, opts, signal)
  if (!opts.follow) return EXIT.ok
  // The log is complete: the run has ended, and its outcome is the exit code, as with runs watch.
  const run = await client.getRun(project, id)
  return EXIT_FOR[run.status as keyof typeof EXIT_FOR] ?? EXIT.ok
}

export function register(runs: Command, cli: Cli) {
  runs
    .command('logs')
    .description(
      "Print a run's log: the stdout and stderr lines of its tasks, oldest first. With --follow, wait for new lines until the run ends, then exit with its outcome (0 succeeded, 1 failed, 2 cancelled); Ctrl-C stops following (130), never the run",
    )
    .argument('<run>', 'run id or name')
    .option('-f, --follow', 'wait for new lines until the run has ended and its log is read')
    .addOption(new Option('--stream <stream>', 'only the lines of one stream').choices(['stdout', 'stderr']))
    .option('--timestamps', 'start each line with the time it was written')
    .addHelpText(
      'after',
      examples(
        'platform runs logs hello-local-20261122T171710Z',
        'platform runs logs <run> --follow --stream stderr',
        'platform runs logs <run> --json | jq -r "select(.stream == \\"stderr\\") | .text"    # one JSON document per line',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<{ follow?: boolean; stream?: 'stdout' | 'stderr'; timestamps?: boolean }>()
        const stop = new AbortController()
        const onInterrupt = () => stop.abort()
        process.once('SIGINT', onInterrupt)
        try {
          return await logs(session, ref, { follow: opts.follow ?? false, stream: opts.stream, timestamps: opts.timestamps }, stop.signal)
        } catch (error) {
          if (!(error instanceof AbortedError)) throw error
          session.out.note(`Stopped following the log of run ${ref}; the run goes on (platform runs status ${ref}).`)
          return EXIT.interrupted
        } finally {
          process.removeListener('SIGINT', onInterrupt)
        }
      }),
    )
}
