import type { Command } from 'commander'
import { subjectOptions, updateSubjectBody, type Parents, type SubjectOptions } from '../../clinical-input.js'
import { subjectDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSubject, type Scope } from '../../names.js'

/** --mother and --father, named by id or external id, as the subject ids the API takes. */
export async function parentsOf(scope: Scope, opts: Pick<SubjectOptions, 'mother' | 'father'>): Promise<Parents> {
  const [mother, father] = await Promise.all([
    opts.mother === undefined ? undefined : resolveSubject(scope, opts.mother),
    opts.father === undefined ? undefined : resolveSubject(scope, opts.father),
  ])
  return { ...(mother ? { mother_id: mother.id } : {}), ...(father ? { father_id: father.id } : {}) }
}

export function register(subjects: Command, cli: Cli) {
  const edit = subjects
    .command('edit')
    .description(
      'Change a subject: only the fields given change, --clear removes one. While a signed order holds one of its samples, the fields its samplesheet is made of are frozen (exit 7)',
    )
    .argument('<subject>', 'subject id or external id')
  subjectOptions(edit, true)
    .addHelpText(
      'after',
      examples(
        'platform subjects edit P-0042 --affected-status affected --phenotype HP:0001250',
        'platform subjects edit P-0042 --mother P-0042-M --clear birth-date',
        'platform subjects edit P-0042 --external-id P-2026-0042',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<SubjectOptions>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const [subject, parents] = await Promise.all([resolveSubject(scope, ref), parentsOf(scope, opts)])
        const updated = await client.updateSubject(scope.project, subject.id, updateSubjectBody(opts, parents))
        session.out.result(updated, () => `Updated subject ${updated.external_id}.\n\n${subjectDetails(updated)}`)
      }),
    )
}
