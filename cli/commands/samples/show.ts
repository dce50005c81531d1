import type { Command } from 'commander'
import { sampleDetails, sampleInfoDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSample } from '../../names.js'

export function register(samples: Command, cli: Cli) {
  samples
    .command('show')
    .description('Show a sample: its subject, material, data files and the orders holding it; --info: as a pipeline reads it')
    .argument('<sample>', 'sample id or external id')
    .option('--info', "the sample's samplesheet row (nf-core/raredisease keys), subject and HPO terms, as a pipeline consumes it")
    .addHelpText('after', examples('platform samples show S-2026-0042-B1', 'platform samples show S-2026-0042-B1 --info --json'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { info } = command.opts<{ info?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const sample = await resolveSample({ client, project }, ref)
        if (!info) {
          // The subject by its external id, for the person reading; the JSON is the sample as the API gives it.
          const subject = session.out.human ? await client.getSubject(project, sample.subject_id) : undefined
          return session.out.result(sample, () => sampleDetails(sample, subject))
        }
        const sampleInfo = await client.sampleInfo(project, sample.id)
        session.out.result(sampleInfo, () => sampleInfoDetails(sampleInfo))
      }),
    )
}
