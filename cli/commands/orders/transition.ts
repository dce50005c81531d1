import type { Command } from 'commander'
import { orderDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveOrder } from '../../names.js'
import { ORDER_STATUSES, ORDER_VERBS, targetStatus } from '../../order-moves.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('transition')
    .description(
      'Move an order to another status: sign a draft, start, send to review, complete, hold and resume, cancel, or enter it in error. The service says which moves you may make now (platform orders show lists them)',
    )
    .argument('<order>', 'order accession or id')
    .argument('<status>', `a status (${ORDER_STATUSES.join(', ')}) or a transition (${Object.keys(ORDER_VERBS).join(', ')})`)
    .option('--reason <text>', 'why: required to hold, cancel or enter in error')
    .addHelpText(
      'after',
      examples(
        'platform orders transition ORD-2026-000001 sign',
        'platform orders transition ORD-2026-000001 hold --reason "awaiting a new blood sample from the mother"',
        'platform orders transition ORD-2026-000001 resume',
        'platform orders transition ORD-2026-000001 cancelled --reason "requested by the clinician"',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref, word] = command.processedArgs as [string, string]
        const { reason } = command.opts<{ reason?: string }>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const order = await resolveOrder(scope, ref)
        const to = targetStatus(word, order)
        const moved = await client.transitionOrder(scope.project, order.id, to, reason)
        session.out.result(
          moved,
          () =>
            `Order ${moved.accession}: ${order.status} → ${session.out.paint(moved.status)}.\n\n${orderDetails(moved, undefined, session.out.style)}`,
        )
      }),
    )
}
