import { Option, type Command } from 'commander'
import { sampleRoleValues } from '../../api/clinical.js'
import type { SampleRole } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder, resolveSample } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('add-sample')
    .description('Add a sample with its role to a draft order, or give a sample already in it another role')
    .argument('<order>', 'order accession or id')
    .argument('<sample>', 'sample id or external id')
    .addOption(new Option('--role <role>', 'its role in the order').choices(sampleRoleValues).makeOptionMandatory())
    .addHelpText(
      'after',
      examples(
        'platform orders add-sample ORD-2026-000001 S-0042-B1 --role proband',
        'platform orders add-sample ORD-2026-000001 S-0042-M1 --role mother',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [orderRef, sampleRef] = command.processedArgs as [string, string]
        const { role } = command.opts<{ role: SampleRole }>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const [order, sample] = await Promise.all([resolveOrder(scope, orderRef), resolveSample(scope, sampleRef)])
        const { sample: added, added: isNew } = await client.addOrderSample(scope.project, order.id, sample.id, role)
        session.out.result(added, () =>
          isNew
            ? `Added sample ${added.external_id} to order ${order.accession} as ${role}.`
            : `Sample ${added.external_id} is now the ${role} of order ${order.accession}.`,
        )
      }),
    )
}
