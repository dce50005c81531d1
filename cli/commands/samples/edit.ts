import type { Command } from 'commander'
import { sampleOptions, updateSampleBody, type SampleOptions } from '../../clinical-input.js'
import { sampleDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSample, resolveSubject } from '../../names.js'

export function register(samples: Command, cli: Cli) {
  const edit = samples
    .command('edit')
    .description('Change a sample: only the fields given change, --clear removes one. A sample held by a signed order is frozen (exit 7)')
    .argument('<sample>', 'sample id or external id')
  sampleOptions(edit, true)
    .addHelpText(
      'after',
      examples(
        'platform samples edit S-0042-B1 --received-at 2026-11-21T08:00:00Z',
        'platform samples edit S-0042-B1 --vcf gs://demo-lab-demo/vcf/S-0042-B1.vcf.gz --clear cram',
        'platform samples edit S-0042-B1 --fastq gs://demo-lab-demo/fastq/L1_R1.fastq.gz --fastq gs://demo-lab-demo/fastq/L1_R2.fastq.gz',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<SampleOptions>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const [sample, subject] = await Promise.all([
          resolveSample(scope, ref),
          opts.subject === undefined ? undefined : resolveSubject(scope, opts.subject),
        ])
        const updated = await client.updateSample(scope.project, sample.id, updateSampleBody(opts, subject?.id))
        session.out.result(updated, () => `Updated sample ${updated.external_id}.\n\n${sampleDetails(updated)}`)
      }),
    )
}
