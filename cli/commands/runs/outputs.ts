import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { formatTime } from '../../output.js'

export function register(runs: Command, cli: Cli) {
  runs
    .command('outputs')
    .description('List the output files of a run (empty until it succeeds)')
    .argument('<run>', 'run id or name')
    .addHelpText('after', examples('platform runs outputs hello-local-20261122T171710Z', 'platform runs outputs <run> --json'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const client = session.client()
        const project = await session.projectId(client)
        const { id } = await session.run(client, project, ref)
        const files = await client.runOutputs(project, id)
        session.out.result(files, () =>
          files.length
            ? session.out.table(files, [
                { header: 'NAME', value: (f) => f.name, fit: true },
                { header: 'SIZE', value: (f) => f.size },
                { header: 'UPDATED', value: (f) => formatTime(f.updated) },
                { header: 'URI', value: (f) => f.uri, fit: true },
              ])
            : 'No output files.',
        )
      }),
    )
}
