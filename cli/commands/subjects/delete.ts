import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSubject } from '../../names.js'
import { confirmOrStop } from '../../prompt.js'

export function register(subjects: Command, cli: Cli) {
  subjects
    .command('delete')
    .description('Delete a subject and its samples in one step (asks for confirmation); refused while a signed order holds one of them (exit 7)')
    .argument('<subject>', 'subject id or external id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText('after', examples('platform subjects delete P-2026-0042', 'platform subjects delete P-2026-0042 --yes'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const subject = await resolveSubject({ client, project }, ref)
        const samples = subject.sample_count ? ` and its ${subject.sample_count} sample${subject.sample_count === 1 ? '' : 's'}` : ''
        await confirmOrStop(cli.io, { yes, verb: 'delete', thing: `subject ${subject.external_id}`, detail: samples })
        await client.deleteSubject(project, subject.id)
        const result = { id: subject.id, external_id: subject.external_id, deleted: true }
        session.out.result(result, () => `Deleted subject ${subject.external_id}${samples}.`)
      }),
    )
}
