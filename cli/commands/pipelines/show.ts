import type { Command } from 'commander'
import { UUID_RE } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { pipelineDetails } from '../../views.js'

export function register(pipelines: Command, cli: Cli) {
  pipelines
    .command('show')
    .description('Show a pipeline and its inputs')
    .argument('<pipeline>', 'slug or id')
    .option('--version <version>', 'a version of the slug (default: the latest)')
    .addHelpText('after', examples('platform pipelines show hereditary-mock', 'platform pipelines show nextflow-minimal --version 1.0.0 --json'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { version } = command.opts<{ version?: string }>()
        const client = session.client()
        const project = await session.projectId(client)
        const pipeline = await session.pipeline(client, project, ref, version)
        const versions = UUID_RE.test(ref) ? undefined : (await client.pipelineVersions(project, pipeline.slug)).map((p) => p.version)
        session.out.result(pipeline, () => pipelineDetails(pipeline, versions, session.out.style))
      }),
    )
}
