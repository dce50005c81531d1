import type { Command } from 'commander'
import { createSampleBody, sampleOptions, type SampleOptions } from '../../clinical-input.js'
import { sampleDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import { resolveSubject } from '../../names.js'

export function register(samples: Command, cli: Cli) {
  const create = samples
    .command('create')
    .description("Register a sample of a subject, with its data files in the project's bucket; its external id must be new in the project")
    .argument('<external-id>', 'the tube or accession barcode, without spaces: the sample name in samplesheets')
  sampleOptions(create, false)
    .addHelpText(
      'after',
      examples(
        'platform samples create S-0042-B1 --subject P-0042 --type blood --collected-at 2026-11-20 \\',
        '    --fastq gs://demo-lab-demo/fastq/S-0042-B1_R1.fastq.gz --fastq gs://demo-lab-demo/fastq/S-0042-B1_R2.fastq.gz',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [externalId] = command.processedArgs as [string]
        const opts = command.opts<SampleOptions>()
        if (opts.subject === undefined) throw usageError('--subject is required: the id or external id of the subject it was taken from')
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const body = createSampleBody(externalId, opts, (await resolveSubject(scope, opts.subject)).id)
        const sample = await client.createSample(scope.project, body)
        session.out.result(sample, () => `Created sample ${sample.external_id} (${sample.id}).\n\n${sampleDetails(sample)}`)
      }),
    )
}
