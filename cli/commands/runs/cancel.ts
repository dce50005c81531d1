import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { confirmOrStop } from '../../prompt.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('cancel')
    .description('Cancel a queued or running run (asks for confirmation)')
    .argument('<run>', 'run id or name')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      examples('platform runs cancel hello-local-20261122T171710Z', 'platform runs cancel 5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11 --yes'),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const run = await session.run(client, project, ref)
        await confirmOrStop(cli.io, { yes, verb: 'cancel', thing: `run ${run.name}` })
        const cancelled = await client.cancelRun(project, run.id)
        session.out.result(cancelled, () => `Cancelled run ${cancelled.name} (${cancelled.id}).`)
      }),
    )
}
