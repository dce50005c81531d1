import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { EXIT, usageError } from '../../errors.js'
import { confirm, isInteractive } from '../../prompt.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('cancel')
    .description('Cancel a queued or running run (asks for confirmation)')
    .argument('<run>', 'run id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(
      action(cli, async (session, command) => {
        const [id] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const run = await client.getRun(project, id)
        if (!yes) {
          if (!isInteractive(cli.io)) throw usageError(`refusing to cancel run ${run.name} without confirmation: stdin is not a terminal; pass --yes`)
          if (!(await confirm(cli.io, `Cancel run ${run.name}?`))) {
            session.out.note(`Run ${run.name} was not cancelled.`)
            return EXIT.ok
          }
        }
        const cancelled = await client.cancelRun(project, id)
        session.out.result(cancelled, () => `Cancelled run ${cancelled.name} (${cancelled.id}).`)
      }),
    )
}
