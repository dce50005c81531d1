import type { Command } from 'commander'
import type { CreateOrder } from '../../client.js'
import { createOrderBody, orderOptions, parseSampleRole, type OrderOptions } from '../../clinical-input.js'
import { orderDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSample, resolveUser } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  const create = orders.command('create').description('Create a draft order; prints its accession (ORD-<year>-<6 digits>)')
  orderOptions(create, false)
    .addHelpText(
      'after',
      examples(
        'platform orders create --test-code WGS-trio --priority urgent --indication "Seizures" \\',
        '    --sample S-0042-B1=proband --sample S-0042-M1=mother --sample S-0042-F1=father',
        'platform orders create --test-code WES-single --requester "Dr. Ada Lovelace" --requester-org "Children\'s Hospital" --due-date 2026-12-15',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<OrderOptions>()
        const wanted = (opts.sample ?? []).map(parseSampleRole)
        createOrderBody(opts, []) // says what is missing before anything is looked up
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const samples: CreateOrder['samples'] = await Promise.all(
          wanted.map(async ({ sample, role }) => ({ sample_id: (await resolveSample(scope, sample)).id, role })),
        )
        const assignee = await resolveUser(client, opts.assignee)
        const order = await client.createOrder(scope.project, createOrderBody({ ...opts, assignee }, samples))
        session.out.result(order, () => `Created order ${order.accession} (${order.id}).\n\n${orderDetails(order, undefined, session.out.style)}`)
      }),
    )
}
