import type { Command } from 'commander'
import { labflowDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import { resolveOrder, resolveUser } from '../../names.js'

interface LabflowOptions {
  take?: string
  reason?: string
  assignee?: string
}

export function register(orders: Command, cli: Cli) {
  orders
    .command('labflow')
    .description("An order's place in its labflow (stage, assignee, the transitions you may take); --take moves it along")
    .argument('<order>', 'order accession or id')
    .option('--take <transition>', 'take this transition (advance-extraction, repeat-library_prep, rework-sequencing-to-extraction…)')
    .option('--reason <text>', 'with --take: why (required by repeat, rework and remove)')
    .option('--assignee <user id>', 'with --take: who takes the order at its next stage (me: you)')
    .addHelpText(
      'after',
      examples(
        'platform orders labflow ORD-2026-000001',
        'platform orders labflow ORD-2026-000001 --take advance-accessioning',
        'platform orders labflow ORD-2026-000001 --take repeat-extraction --reason "low DNA yield (12 ng)"',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<LabflowOptions>()
        if (opts.take === undefined && (opts.reason !== undefined || opts.assignee !== undefined))
          throw usageError('--reason and --assignee go with --take <transition>')
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const order = await resolveOrder(scope, ref)
        const state =
          opts.take === undefined
            ? await client.orderLabflow(scope.project, order.id)
            : await client.moveOrderLabflow(scope.project, order.id, {
                transition: opts.take,
                ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
                ...(opts.assignee !== undefined ? { assignee: await resolveUser(client, opts.assignee) } : {}),
              })
        session.out.result(state, () => labflowDetails(state, session.out.style))
      }),
    )
}
