import { InvalidArgumentError, type Command } from 'commander'
import type { VariantFilters } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'
import { orderVariantColumns } from '../../results-views.js'

interface ListOptions extends PagingOptions {
  gene?: string
  region?: string
  consequence?: string
  minQual?: number
  pass?: boolean
  zygosity?: string
}

const DEFAULT_LIMIT = 50

function quality(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number of at least 0')
  return n
}

/** The same listing from where this one stopped: a page token is only valid with the filters it was made with. */
function nextVariants(order: string, opts: ListOptions, token: string): string {
  const words = ['variants', 'list', order]
  const add = (flag: string, value: string | number | undefined) => value !== undefined && words.push(flag, String(value))
  add('--gene', opts.gene)
  add('--region', opts.region)
  add('--consequence', opts.consequence)
  add('--min-qual', opts.minQual)
  if (opts.pass) words.push('--pass')
  add('--zygosity', opts.zygosity)
  return nextCommand(words, opts, DEFAULT_LIMIT, token)
}

export function register(variants: Command, cli: Cli) {
  const list = variants
    .command('list')
    .description("List an order's variants from its variant cache, in genome order, with the cache's filters")
    .argument('<order>', 'order accession (ORD-2026-000123) or id')
    .option('--gene <symbol>', 'variants affecting this gene (symbol or gene id)')
    .option('--region <region>', 'chr17:43044295-43125483, 17:43044295-43125483 or a whole contig (17)')
    .option('--consequence <terms>', 'most severe consequence: one SO term or several, comma-separated (missense_variant,stop_gained)')
    .option('--min-qual <qual>', 'QUAL at least this', quality)
    .option('--pass', 'only variants whose FILTER is PASS')
    .option(
      '--zygosity <role:zygosity,…>',
      'per role: proband:het,mother:hom_ref; several joined by | (proband:het|hom_alt); alt is het|hom_alt|hemi',
    )
  pagingOptions(list, 'variants', 'variant', DEFAULT_LIMIT)
    .addHelpText(
      'after',
      examples(
        'platform variants list ORD-2026-000123',
        'platform variants list ORD-2026-000123 --gene SCN2A --pass',
        "platform variants list ORD-2026-000123 --zygosity 'proband:het,mother:hom_ref,father:hom_ref'   # de novo candidates",
        'platform variants list ORD-2026-000123 --consequence stop_gained,frameshift_variant --min-qual 30 --all --format csv',
      ) + '\nThe order needs a ready variant cache (a 404 says so): see its ingestions with platform api /orders/<order>/status.\n',
    )
    .action(
      action(cli, async (session, command) => {
        const [order] = command.processedArgs as [string]
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const filters: VariantFilters = {
          gene: opts.gene,
          region: opts.region,
          consequence: opts.consequence,
          min_qual: opts.minQual,
          filter: opts.pass ? 'PASS' : undefined,
          zygosity: opts.zygosity,
        }
        const page = await client.listOrderVariants(project, order, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, orderVariantColumns) : 'No variants.',
        )
        if (next && !session.out.whole) session.out.note(`More variants exist: ${nextVariants(order, opts, next)}  (or --all for every variant)`)
      }),
    )
}
