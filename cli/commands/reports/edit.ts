import { Option, type Command } from 'commander'
import { TEMPLATE_TYPES, type UpdateReport } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { reportDetails } from '../../results-views.js'
import { REPORT_ARGUMENT } from './show.js'

export function register(reports: Command, cli: Cli) {
  reports
    .command('edit')
    .description('Change the text of a draft report: summary, conclusion, notes, template (a signed report is amended instead, in the console)')
    .argument('<report>', REPORT_ARGUMENT)
    .addOption(new Option('--template <type>', 'the kind of report').choices(TEMPLATE_TYPES))
    .option('--summary <text>', 'the result in a sentence or two')
    .option('--conclusion <text>', 'the conclusion the reviewer signs (needed to send it to review)')
    .option('--notes <text>', 'methods, limitations, further notes')
    .addHelpText('after', examples("platform reports edit ORD-2026-000123 --conclusion 'Positive: a pathogenic variant in SCN2A.'"))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<{ template?: UpdateReport['template_type']; summary?: string; conclusion?: string; notes?: string }>()
        const change: UpdateReport = { template_type: opts.template, summary: opts.summary, conclusion: opts.conclusion, notes: opts.notes }
        if (Object.values(change).every((v) => v === undefined))
          throw usageError('nothing to change: pass --summary, --conclusion, --notes or --template')
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        const updated = await client.updateReport(project, report.id, change)
        session.out.result(updated, () => reportDetails(updated, session.out.style))
      }),
    )
}
