import { InvalidArgumentError, Option, type Command } from 'commander'
import { RUN_STATUSES, type RunStatus } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { table } from '../../output.js'
import { runColumns } from '../../views.js'

interface ListOptions {
  limit: number
  all?: boolean
  pageToken?: string
  order?: string
  status?: RunStatus
}

const DEFAULT_LIMIT = 20

export function positiveInteger(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer')
  return n
}

/** A word as the shell reads it back: quoted when it holds anything but safe characters. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** The same listing from where this one stopped: a page token is only valid with the filters it was made with. */
function nextCommand(opts: ListOptions, token: string): string {
  const words = ['platform', 'runs', 'list']
  if (opts.order !== undefined) words.push('--order', opts.order)
  if (opts.status !== undefined) words.push('--status', opts.status)
  if (opts.limit !== DEFAULT_LIMIT) words.push('--limit', String(opts.limit))
  words.push('--page-token', token)
  return words.map(shellWord).join(' ')
}

export function register(runs: Command, cli: Cli) {
  runs
    .command('list')
    .description("List the project's runs, newest first; says when more exist and how to get them")
    .option('--limit <n>', 'at most this many runs', positiveInteger, DEFAULT_LIMIT)
    .addOption(new Option('--all', 'every run (all pages), however many').conflicts('limit'))
    .option('--page-token <token>', 'continue where a previous listing with the same filters stopped')
    .option('--order <id>', 'only the runs linked to this order')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .addHelpText(
      'after',
      examples(
        'platform runs list --status running',
        'platform runs list --order ORD-7 --limit 50',
        'platform runs list --page-token <token>     # the next runs, as the previous listing said',
        'platform runs list --all --json             # {"items": [...], "next_page_token": null}',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const page = await client.listRuns(
          project,
          { order_id: opts.order, status: opts.status },
          { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken },
        )
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? table(page.items, runColumns) : 'No runs.',
        )
        if (next && !session.out.json) session.out.note(`More runs exist: ${nextCommand(opts, next)}  (or --all for every run)`)
      }),
    )
}
