import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder } from '../../names.js'
import { confirmOrStop } from '../../prompt.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('delete')
    .description('Delete an order that was never signed (asks for confirmation); a signed order is cancelled instead (exit 7)')
    .argument('<order>', 'order accession or id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      examples('platform orders delete ORD-2026-000001', 'platform orders transition ORD-2026-000001 cancel --reason "…"   # a signed order'),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const order = await resolveOrder({ client, project }, ref)
        await confirmOrStop(cli.io, { yes, verb: 'delete', thing: `order ${order.accession}`, detail: ` (${order.status})` })
        await client.deleteOrder(project, order.id)
        const result = { id: order.id, accession: order.accession, deleted: true }
        session.out.result(result, () => `Deleted order ${order.accession}.`)
      }),
    )
}
