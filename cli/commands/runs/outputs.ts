import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { formatTime, table } from '../../output.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('outputs')
    .description('List the output files of a run (empty until it succeeds)')
    .argument('<run>', 'run id')
    .action(
      action(cli, async (session, command) => {
        const [id] = command.processedArgs as [string]
        const client = session.client()
        const files = await client.runOutputs(await session.projectId(client), id)
        session.out.result(files, () =>
          files.length
            ? table(files, [
                { header: 'NAME', value: (f) => f.name },
                { header: 'SIZE', value: (f) => f.size },
                { header: 'UPDATED', value: (f) => formatTime(f.updated) },
                { header: 'URI', value: (f) => f.uri },
              ])
            : 'No output files.',
        )
      }),
    )
}
