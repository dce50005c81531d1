import { Argument, type Command } from 'commander'
import { REPORT_MOVES, type ReportTransition } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { reportDetails } from '../../results-views.js'
import { REPORT_ARGUMENT } from './show.js'

export function register(reports: Command, cli: Cli) {
  reports
    .command('transition')
    .description('Move a report: to review (with a conclusion and every included variant classified), back to draft, cancelled or entered in error')
    .argument('<report>', REPORT_ARGUMENT)
    .addArgument(new Argument('<status>', 'the status to move it to').choices(REPORT_MOVES))
    .option('--reason <text>', 'why (required for cancelled and entered_in_error)')
    .addHelpText(
      'after',
      examples(
        'platform reports transition ORD-2026-000123 in_review',
        "platform reports transition ORD-2026-000123 cancelled --reason 'Sample swap: order re-run.'",
      ) +
        `
Signing is not a move made here: a reviewer signs in a browser, at the sign-off page that
platform reports show prints while the report is in review, because signing asks the identity
provider to authenticate the signer again (21 CFR 11.200). An amendment of a signed report starts
in the console too.
`,
    )
    .action(
      action(cli, async (session, command) => {
        const [ref, to] = command.processedArgs as [string, ReportTransition['to']]
        const { reason } = command.opts<{ reason?: string }>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        const moved = await client.transitionReport(project, report.id, { to, reason })
        session.out.result(moved, () => `Report ${moved.id} is now ${moved.status}.\n\n${reportDetails(moved, session.out.style)}`)
      }),
    )
}
