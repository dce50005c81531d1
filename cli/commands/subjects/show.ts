import type { Command } from 'commander'
import { subjectDetails } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSubject } from '../../names.js'

export function register(subjects: Command, cli: Cli) {
  subjects
    .command('show')
    .description('Show a subject: sex, affected status, phenotypes, family and parents')
    .argument('<subject>', 'subject id or external id')
    .addHelpText('after', examples('platform subjects show P-2026-0042', 'platform subjects show P-2026-0042 --format yaml'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const client = session.client()
        const project = await session.projectId(client)
        const subject = await resolveSubject({ client, project }, ref)
        // The parents by their external ids, for the person reading; the JSON is the subject as the API gives it.
        const parent = (id: string | undefined) => (id && session.out.human ? client.getSubject(project, id) : undefined)
        const [mother, father] = await Promise.all([parent(subject.mother_id), parent(subject.father_id)])
        session.out.result(subject, () => subjectDetails(subject, { mother, father }))
      }),
    )
}
