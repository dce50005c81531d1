import { InvalidArgumentError, Option, type Command } from 'commander'
import { RUN_STATUSES, type RunStatus } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { table } from '../../output.js'
import { runColumns } from '../../views.js'

interface ListOptions {
  limit: number
  order?: string
  status?: RunStatus
}

export function positiveInteger(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer')
  return n
}

export function register(runs: Command, cli: Cli) {
  runs
    .command('list')
    .description("List the project's runs, newest first")
    .option('--limit <n>', 'at most this many runs', positiveInteger, 20)
    .option('--order <id>', 'only the runs linked to this order')
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const list = await client.listRuns(await session.projectId(client), { limit: opts.limit, order_id: opts.order, status: opts.status })
        session.out.result(list, () => (list.length ? table(list, runColumns) : 'No runs.'))
      }),
    )
}
