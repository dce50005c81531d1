import type { Command } from 'commander'
import { orderDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('show')
    .description('Show an order: status, what may come next, its samples with their roles, and its runs')
    .argument('<order>', 'order accession or id')
    .addHelpText('after', examples('platform orders show ORD-2026-000001', 'platform orders show ORD-2026-000001 --json'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const client = session.client()
        const project = await session.projectId(client)
        const order = await resolveOrder({ client, project }, ref)
        // The samples' names and types are for the person reading; the JSON is the order as the API gives it.
        const samples = session.out.human ? await client.orderSamples(project, order.id) : undefined
        session.out.result(order, () => orderDetails(order, samples, session.out.style))
      }),
    )
}
