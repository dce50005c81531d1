import { Option, type Command } from 'commander'
import { pipelineTypeValues } from '../../api/compute.js'
import type { Pipeline } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { pipelineColumns } from '../../views.js'

interface ListOptions {
  type?: Pipeline['type']
  tag?: string
  allVersions?: boolean
}

export function register(pipelines: Command, cli: Cli) {
  pipelines
    .command('list')
    .description('List the pipelines of the catalogue')
    .addOption(new Option('--type <type>', 'only pipelines of this type').choices(pipelineTypeValues))
    .option('--tag <tag>', 'only pipelines with this tag')
    .option('--all-versions', 'every version of each slug, not only the latest')
    .addHelpText(
      'after',
      examples('platform pipelines list', 'platform pipelines list --type direct_wdl --tag trio', 'platform pipelines list --all-versions --json'),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const all = await client.listPipelines(await session.projectId(client), { type: opts.type, tag: opts.tag })
        // The service lists each slug's versions highest first, so the first seen is the latest.
        const seen = new Set<string>()
        const list = opts.allVersions ? all : all.filter((p) => !seen.has(p.slug) && seen.add(p.slug))
        session.out.result(list, () => (list.length ? session.out.table(list, pipelineColumns) : 'No pipelines.'))
      }),
    )
}
