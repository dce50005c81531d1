import type { Command } from 'commander'
import { orderOptions, updateOrderBody, type OrderOptions } from '../../clinical-input.js'
import { orderDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder, resolveUser } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  const edit = orders
    .command('edit')
    .description(
      'Change an order: any field of a draft; once signed only --assignee and --due-date, and --outcome in review or completed (exit 7 otherwise)',
    )
    .argument('<order>', 'order accession or id')
  orderOptions(edit, true)
    .addHelpText(
      'after',
      examples(
        'platform orders edit ORD-2026-000001 --assignee me --due-date 2026-12-20',
        'platform orders edit ORD-2026-000001 --priority stat --clear notes',
        'platform orders edit ORD-2026-000001 --outcome positive',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<OrderOptions>()
        updateOrderBody(opts) // says what is wrong before anything is looked up
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const order = await resolveOrder(scope, ref)
        const updated = await client.updateOrder(
          scope.project,
          order.id,
          updateOrderBody({ ...opts, assignee: await resolveUser(client, opts.assignee) }),
        )
        session.out.result(updated, () => `Updated order ${updated.accession}.\n\n${orderDetails(updated, undefined, session.out.style)}`)
      }),
    )
}
