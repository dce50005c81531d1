import { Option, type Command } from 'commander'
import { priorityValues } from '../../api/clinical.js'
import type { OrderFilters } from '../../client.js'
import { orderColumns } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { ORDER_STATUSES } from '../../order-moves.js'
import { resolveUser } from '../../names.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'

interface ListOptions extends PagingOptions {
  status?: OrderFilters['status']
  priority?: OrderFilters['priority']
  assignee?: string
}

const DEFAULT_LIMIT = 20

export function register(orders: Command, cli: Cli) {
  const list = orders.command('list').description("List the project's orders, newest first; says when more exist and how to get them")
  pagingOptions(list, 'orders', 'order', DEFAULT_LIMIT)
    .addOption(new Option('--status <status>', 'only orders in this status').choices(ORDER_STATUSES))
    .addOption(new Option('--priority <priority>', 'only orders of this priority').choices(priorityValues))
    .option('--assignee <user id>', 'only the orders assigned to this user (platform whoami shows yours)')
    .addHelpText(
      'after',
      examples(
        'platform orders list --status draft',
        'platform orders list --assignee me --status in_progress',
        "platform orders list --all --format 'csv(accession,status,test_code,due_date)'",
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const filters: OrderFilters = { status: opts.status, priority: opts.priority, assignee: await resolveUser(client, opts.assignee) }
        const page = await client.listOrders(project, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, orderColumns) : 'No orders.',
        )
        if (next && !session.out.whole) {
          const words = ['orders', 'list']
          const add = (flag: string, value: string | undefined) => value !== undefined && words.push(flag, value)
          add('--status', opts.status)
          add('--priority', opts.priority)
          add('--assignee', opts.assignee)
          session.out.note(`More orders exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every order)`)
        }
      }),
    )
}
