import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { runDetails } from '../../views.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('status')
    .description("Show a run's status and details")
    .argument('<run>', 'run id or name')
    .addHelpText(
      'after',
      examples('platform runs status hello-local-20261122T171710Z', 'platform runs status 5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11 --json'),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const client = session.client()
        const run = await session.run(client, await session.projectId(client), ref)
        session.out.result(run, () => runDetails(run, session.out.style))
      }),
    )
}
