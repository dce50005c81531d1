import { Option, type Command } from 'commander'
import { ACMG_CLASSIFICATIONS, type AddReportVariant } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { REPORT_ARGUMENT } from './show.js'

interface AddOptions {
  classification?: AddReportVariant['acmg_classification']
  criteria?: string
  inheritance?: AddReportVariant['inheritance']
  interpretation?: string
  exclude?: boolean
}

export function register(reports: Command, cli: Cli) {
  reports
    .command('add-variant')
    .description("Add a variant of the order's variant cache to a draft report, with its classification")
    .argument('<report>', REPORT_ARGUMENT)
    .argument('<variant>', 'variant id of the cache (platform variants list <order> shows them)')
    .addOption(new Option('--classification <acmg>', 'ACMG/AMP 2015 classification').choices(ACMG_CLASSIFICATIONS))
    .option('--criteria <codes>', 'ACMG/AMP criteria met, comma-separated (PS2,PM2_Supporting,PP3)')
    .option('--inheritance <mode>', 'de_novo, autosomal_dominant, autosomal_recessive, x_linked, compound_heterozygous, …')
    .option('--interpretation <text>', 'what the variant means for this patient')
    .option('--exclude', 'keep it on the report without printing it (include_in_report false)')
    .addHelpText(
      'after',
      examples(
        'platform reports add-variant ORD-2026-000123 ga4gh:VA.Oop4kjdTtKcg1kiZjIJAAR3bp7qi4aNT --classification pathogenic --criteria PS2,PM2_Supporting,PP3',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref, variantId] = command.processedArgs as [string, string]
        const opts = command.opts<AddOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        const added = await client.addReportVariant(project, report.id, {
          variant_id: variantId,
          acmg_classification: opts.classification,
          acmg_criteria: opts.criteria
            ?.split(',')
            .map((c) => c.trim())
            .filter(Boolean),
          inheritance: opts.inheritance,
          interpretation: opts.interpretation,
          include_in_report: opts.exclude ? false : undefined,
        })
        session.out.result(added, () => `Added ${added.variant_id} to report ${report.id} (${added.acmg_classification ?? 'unclassified'}).`)
      }),
    )
}
