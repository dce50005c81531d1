import { Option, type Command } from 'commander'
import { RUN_STATUSES, type RunStatus } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'
import { runColumns } from '../../views.js'

interface ListOptions extends PagingOptions {
  order?: string
  status?: RunStatus
}

const DEFAULT_LIMIT = 20

/** The same listing from where this one stopped. */
function nextRuns(opts: ListOptions, token: string): string {
  const words = ['runs', 'list']
  if (opts.order !== undefined) words.push('--order', opts.order)
  if (opts.status !== undefined) words.push('--status', opts.status)
  return nextCommand(words, opts, DEFAULT_LIMIT, token)
}

export function register(runs: Command, cli: Cli) {
  const list = runs.command('list').description("List the project's runs, newest first; says when more exist and how to get them")
  pagingOptions(list, 'runs', 'run', DEFAULT_LIMIT)
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
          page.items.length ? session.out.table(page.items, runColumns) : 'No runs.',
        )
        if (next && !session.out.whole) session.out.note(`More runs exist: ${nextRuns(opts, next)}  (or --all for every run)`)
      }),
    )
}
