import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { runDetails } from '../../views.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('status')
    .description("Show a run's status and details")
    .argument('<run>', 'run id')
    .action(
      action(cli, async (session, command) => {
        const [id] = command.processedArgs as [string]
        const client = session.client()
        const run = await client.getRun(await session.projectId(client), id)
        session.out.result(run, () => runDetails(run))
      }),
    )
}
