import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { catalogueVariantDetails, orderVariantDetails } from '../../results-views.js'

export function register(variants: Command, cli: Cli) {
  variants
    .command('show')
    .description(
      "Show a variant: in an order's variant cache with each sample's call (--order), else in the project's catalogue with the orders observing it",
    )
    .argument('<variant>', 'variant id (ga4gh:VA.…, platform:VA.…, platform:SV.…)')
    .option('--order <order>', "the order's call of it: accession (ORD-2026-000123) or id")
    .addHelpText(
      'after',
      examples(
        'platform variants show ga4gh:VA.Oop4kjdTtKcg1kiZjIJAAR3bp7qi4aNT --order ORD-2026-000123',
        'platform variants show ga4gh:VA.Oop4kjdTtKcg1kiZjIJAAR3bp7qi4aNT          # observations across the project',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [id] = command.processedArgs as [string]
        const { order } = command.opts<{ order?: string }>()
        const client = session.client()
        const project = await session.projectId(client)
        if (order !== undefined) {
          const variant = await client.getOrderVariant(project, order, id)
          session.out.result(variant, () => orderVariantDetails(variant, session.out.style))
        } else {
          const variant = await client.getCatalogueVariant(project, id)
          session.out.result(variant, () => catalogueVariantDetails(variant, session.out.style))
        }
      }),
    )
}
