import { Option, type Command } from 'commander'
import { REPORT_STATUSES, TEMPLATE_TYPES, type ReportFilters } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'
import { reportColumns } from '../../results-views.js'

interface ListOptions extends PagingOptions {
  order?: string
  status?: ReportFilters['status']
  template?: ReportFilters['template_type']
}

const DEFAULT_LIMIT = 20

export function register(reports: Command, cli: Cli) {
  const list = reports
    .command('list')
    .description("List the project's reports, newest first")
    .option('--order <order>', "only this order's reports: accession (ORD-2026-000123) or id")
    .addOption(new Option('--status <status>', 'only reports in this status').choices(REPORT_STATUSES))
    .addOption(new Option('--template <type>', 'only reports of this template').choices(TEMPLATE_TYPES))
  pagingOptions(list, 'reports', 'report', DEFAULT_LIMIT)
    .addHelpText(
      'after',
      examples(
        'platform reports list --status in_review',
        'platform reports list --order ORD-2026-000123',
        'platform reports list --all --format csv',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const filters: ReportFilters = { order_id: opts.order, status: opts.status, template_type: opts.template }
        const page = await client.listReports(project, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, reportColumns) : 'No reports.',
        )
        if (next && !session.out.whole) {
          const words = ['reports', 'list']
          if (opts.order !== undefined) words.push('--order', opts.order)
          if (opts.status !== undefined) words.push('--status', opts.status)
          if (opts.template !== undefined) words.push('--template', opts.template)
          session.out.note(`More reports exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every report)`)
        }
      }),
    )
}
