import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { table } from '../../output.js'
import { pipelineColumns } from '../../views.js'

interface ListOptions {
  type?: string
  tag?: string
}

export function register(pipelines: Command, cli: Cli) {
  pipelines
    .command('list')
    .description('List the pipelines of the catalogue')
    .option('--type <type>', 'only this type: direct_nextflow, direct_wdl or container_entrypoint')
    .option('--tag <tag>', 'only pipelines with this tag')
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const list = await client.listPipelines(await session.projectId(client), { type: opts.type, tag: opts.tag })
        session.out.result(list, () => (list.length ? table(list, pipelineColumns) : 'No pipelines.'))
      }),
    )
}
