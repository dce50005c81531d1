import { Option, type Command } from 'commander'
import { TEMPLATE_TYPES, type CreateReport } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { reportDetails } from '../../results-views.js'

export function register(reports: Command, cli: Cli) {
  reports
    .command('create')
    .description('Create a draft report for an order (in progress or in review; its variants come from its variant cache)')
    .argument('<order>', 'order accession (ORD-2026-000123) or id')
    .addOption(new Option('--template <type>', 'the kind of report').choices(TEMPLATE_TYPES).default('germline_diagnostic'))
    .option('--summary <text>', 'the result in a sentence or two')
    .option('--conclusion <text>', 'the conclusion the reviewer signs')
    .option('--notes <text>', 'methods, limitations, further notes')
    .addHelpText(
      'after',
      examples(
        'platform reports create ORD-2026-000123',
        "platform reports create ORD-2026-000123 --template negative --summary 'No causal variant found.'",
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [order] = command.processedArgs as [string]
        const opts = command.opts<{ template: CreateReport['template_type']; summary?: string; conclusion?: string; notes?: string }>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await client.createReport(project, {
          order_id: order,
          template_type: opts.template,
          summary: opts.summary,
          conclusion: opts.conclusion,
          notes: opts.notes,
        })
        session.out.result(
          report,
          () => `Created draft report ${report.id} of order ${report.order_accession}.\n\n${reportDetails(report, session.out.style)}`,
        )
      }),
    )
}
