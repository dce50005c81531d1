import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { reportDetails, reportVariantColumns } from '../../results-views.js'

export const REPORT_ARGUMENT = "report id, or its order's accession (the order's current report)"

export function register(reports: Command, cli: Cli) {
  reports
    .command('show')
    .description('Show a report: its text, counts, the status moves you may make, and in review the browser page where it is signed')
    .argument('<report>', REPORT_ARGUMENT)
    .option('--variants', "also list the report's variants with their classification")
    .addHelpText(
      'after',
      examples('platform reports show ORD-2026-000123', 'platform reports show 6a1f0c3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b --variants --json'),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { variants } = command.opts<{ variants?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        if (!variants) return session.out.result(report, () => reportDetails(report, session.out.style))
        const { items } = await client.listReportVariants(project, report.id, {})
        session.out.result({ ...report, variants: items }, () => {
          const section = items.length ? session.out.table(items, reportVariantColumns) : 'none'
          return `${reportDetails(report, session.out.style)}\n\nVARIANTS\n${section}`
        })
      }),
    )
}
