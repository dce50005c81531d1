import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSample } from '../../names.js'
import { confirmOrStop } from '../../prompt.js'

export function register(samples: Command, cli: Cli) {
  samples
    .command('delete')
    .description('Delete a sample (asks for confirmation); it leaves the draft orders holding it, and a signed order keeps it (exit 7)')
    .argument('<sample>', 'sample id or external id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText('after', examples('platform samples delete S-2026-0042-B1', 'platform samples delete S-2026-0042-B1 --yes'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const sample = await resolveSample({ client, project }, ref)
        await confirmOrStop(cli.io, { yes, verb: 'delete', thing: `sample ${sample.external_id}` })
        await client.deleteSample(project, sample.id)
        const result = { id: sample.id, external_id: sample.external_id, deleted: true }
        session.out.result(result, () => `Deleted sample ${sample.external_id}.`)
      }),
    )
}
