import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import { resolveOrder } from '../../names.js'

export function register(orders: Command, cli: Cli) {
  orders
    .command('samplesheet')
    .description(
      "The order's samplesheet in the nf-core/raredisease input format (CSV, one row per FASTQ pair), to stdout or a file: it feeds the pipeline unchanged",
    )
    .argument('<order>', 'order accession or id')
    .option('-o, --output <file.csv>', 'write it to this file (default: stdout)')
    .option('--overwrite', 'replace an existing file (default: refuse, exit 3)')
    .addHelpText(
      'after',
      examples(
        'platform orders samplesheet ORD-2026-000001 > samplesheet.csv',
        'platform orders samplesheet ORD-2026-000001 -o samplesheet.csv --overwrite',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const { output, overwrite } = command.opts<{ output?: string; overwrite?: boolean }>()
        const client = session.client()
        const scope = { client, project: await session.projectId(client) }
        const order = await resolveOrder(scope, ref)
        // The service's CSV as it is: --format does not apply, the columns are the pipeline's.
        const csv = await client.samplesheet(scope.project, order.id)
        if (output === undefined) return void cli.io.stdout.write(csv)
        try {
          writeFileSync(output, csv, { flag: overwrite ? 'w' : 'wx' })
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'EEXIST') throw usageError(`${output} exists: pass --overwrite to replace it`)
          throw usageError(`cannot write ${output}: ${(error as Error).message}`)
        }
        const rows = csv.trimEnd().split('\n').length - 1
        session.out.note(`Wrote the samplesheet of ${order.accession} to ${resolve(output)}: ${rows} row${rows === 1 ? '' : 's'}.`)
      }),
    )
}
