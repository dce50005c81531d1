import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder, resolveSample } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('remove-sample')
    .description('Take a sample out of a draft order (a signed order keeps its samples: exit 7)')
    .argument('<order>', 'order accession or id')
    .argument('<sample>', 'sample id or external id')
    .addHelpText('after', examples('platform orders remove-sample ORD-2026-000001 S-0042-B1'))
    .action(
      action(cli, async (session, command) => {
        const [orderRef, sampleRef] = command.processedArgs as [string, string]
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const [order, sample] = await Promise.all([resolveOrder(scope, orderRef), resolveSample(scope, sampleRef)])
        await client.removeOrderSample(scope.project, order.id, sample.id)
        const result = { order_id: order.id, accession: order.accession, sample_id: sample.id, external_id: sample.external_id, removed: true }
        session.out.result(result, () => `Removed sample ${sample.external_id} from order ${order.accession}.`)
      }),
    )
}
