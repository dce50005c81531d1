import type { Command } from 'commander'
import { createSubjectBody, subjectOptions, type SubjectOptions } from '../../clinical-input.js'
import { subjectDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { parentsOf } from './edit.js'

export function register(subjects: Command, cli: Cli) {
  const create = subjects
    .command('create')
    .description('Register a subject (a person tested); its external id must be new in the project')
    .argument('<external-id>', "the lab's case or MRN identifier, without spaces")
  subjectOptions(create, false)
    .addHelpText(
      'after',
      examples(
        'platform subjects create P-0042-M --sex female --family FAM-0042',
        'platform subjects create P-0042-F --sex male --family FAM-0042',
        'platform subjects create P-0042 --name "Proband, Demo" --sex male --affected-status affected \\',
        '    --phenotype HP:0001250 --phenotype HP:0001263 --family FAM-0042 --mother P-0042-M --father P-0042-F',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [externalId] = command.processedArgs as [string]
        const opts = command.opts<SubjectOptions>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const subject = await client.createSubject(scope.project, createSubjectBody(externalId, opts, await parentsOf(scope, opts)))
        session.out.result(subject, () => `Created subject ${subject.external_id} (${subject.id}).\n\n${subjectDetails(subject)}`)
      }),
    )
}
