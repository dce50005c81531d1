/** How variants and reports look in a terminal: the columns of their listings and their detail views. */
import type { CatalogueVariant, Comment, OrderVariant, Report, ReportVariant } from './client.js'
import { fields, paint, PLAIN, table, type Column, type Style } from './format.js'
import { formatTime } from './output.js'

type Located = Pick<OrderVariant, 'chrom' | 'pos' | 'ref' | 'alt'>

/** 2:165310406 G>A; long alleles (indels, symbolic ones) stay whole: the column may be cut to fit instead. */
const position = (v: Pick<OrderVariant, 'chrom' | 'pos'>) => `${v.chrom}:${v.pos}`
const change = (v: Located) => `${v.ref}>${v.alt}`

/** Each sample's zygosity under its role: "proband het, mother hom_ref". */
const zygosities = (v: Pick<OrderVariant, 'calls'>) => v.calls.map((c) => `${c.role ?? c.sample} ${c.zygosity ?? '-'}`).join(', ')

export const orderVariantColumns: Column<OrderVariant>[] = [
  { header: 'ID', value: (v) => v.id },
  { header: 'POSITION', value: position },
  { header: 'CHANGE', value: change, fit: true },
  { header: 'GENES', value: (v) => v.genes, fit: true },
  { header: 'CONSEQUENCE', value: (v) => v.consequence, fit: true },
  { header: 'HGVS', value: (v) => v.hgvs_p ?? v.hgvs_c, fit: true },
  { header: 'QUAL', value: (v) => v.qual },
  { header: 'ZYGOSITY', value: zygosities, fit: true },
]

const callColumns: Column<OrderVariant['calls'][number]>[] = [
  { header: 'ROLE', value: (c) => c.role },
  { header: 'SAMPLE', value: (c) => c.sample },
  { header: 'GENOTYPE', value: (c) => c.genotype },
  { header: 'ZYGOSITY', value: (c) => c.zygosity },
  { header: 'DEPTH', value: (c) => c.depth },
  { header: 'GQ', value: (c) => c.genotype_quality },
  { header: 'AF', value: (c) => c.allele_fraction },
]

const variantPairs = (v: Omit<CatalogueVariant, 'observations' | 'observed_in'>): Array<[string, unknown]> => [
  ['id', v.id],
  ['assembly', v.assembly],
  ['position', position(v)],
  ['change', change(v)],
  ['type', v.svtype ? `${v.variant_type} (${v.svtype})` : v.variant_type],
  ['genes', v.genes],
  ['consequence', v.consequence],
  ['transcript', v.transcript],
  ['hgvs_c', v.hgvs_c],
  ['hgvs_p', v.hgvs_p],
]

/** One variant of an order's cache, with every sample's call. */
export function orderVariantDetails(v: OrderVariant, style: Style = PLAIN): string {
  const pairs = [...variantPairs(v), ['qual', v.qual], ['filter', v.filter]] as Array<[string, unknown]>
  return `${fields(pairs)}\n\nCALLS\n${v.calls.length ? table(v.calls, callColumns, style) : 'none'}`
}

/** One variant of the project's catalogue, with the orders observing it. */
export function catalogueVariantDetails(v: CatalogueVariant, style: Style = PLAIN): string {
  const o = v.observations
  const pairs = [...variantPairs(v), ['observed', `${o.orders} orders, ${o.samples} samples (${o.homozygous} homozygous)`]] as Array<
    [string, unknown]
  >
  const orders = v.observed_in ?? []
  const section = orders.length
    ? table(
        orders,
        [
          { header: 'ORDER', value: (r) => r.accession },
          { header: 'CARRIERS', value: (r) => r.samples, fit: true },
          { header: 'HOMOZYGOUS', value: (r) => r.homozygous, fit: true },
        ],
        style,
      )
    : 'none'
  return `${fields(pairs)}\n\nORDERS\n${section}`
}

export const reportColumns: Column<Report>[] = [
  { header: 'ID', value: (r) => r.id },
  { header: 'ORDER', value: (r) => r.order_accession },
  { header: 'REV', value: (r) => r.revision },
  { header: 'STATUS', value: (r) => r.status, status: true },
  { header: 'TEMPLATE', value: (r) => r.template_type },
  { header: 'VARIANTS', value: (r) => r.variant_count },
  { header: 'OPEN REVIEWS', value: (r) => r.open_review_comments },
  { header: 'UPDATED', value: (r) => formatTime(r.updated) },
]

/** A report with what may happen to it next: the moves this caller may make here, and where it is signed (a browser). */
export function reportDetails(r: Report, style: Style = PLAIN): string {
  const pairs: Array<[string, unknown]> = [
    ['id', r.id],
    ['order', `${r.order_accession} (${r.order_id})`],
    ['status', paint(style, r.status)],
    ['revision', r.replaces ? `${r.revision} (replaces ${r.replaces})` : r.revision],
    ['template', r.template_type],
    ['author', r.author.email ?? r.author.name ?? r.author.id],
    ['summary', r.summary],
    ['conclusion', r.conclusion],
    ['notes', r.notes],
    ['variants', `${r.variant_count} (${r.unclassified_count} unclassified)`],
    ['comments', `${r.comment_count} (${r.open_review_comments} open review)`],
    ['created', formatTime(r.created)],
    ['updated', formatTime(r.updated)],
    ['moves', r.available_transitions],
  ]
  for (const s of r.signatures ?? [])
    pairs.push(['signed', `${formatTime(s.at)} by ${s.signer.email ?? s.signer.id} (${s.meaning}, sha256 ${s.sha256})`])
  if (r.sign_off) {
    pairs.push(['sign-off', `${r.sign_off.url} (in a browser: signing asks you to log in again)`])
    if (r.sign_off.blockers.length) pairs.push(['not yet', r.sign_off.blockers.join('; ')])
  }
  return fields(pairs)
}

export const reportVariantColumns: Column<ReportVariant>[] = [
  { header: 'VARIANT', value: (v) => v.variant_id },
  { header: 'GENES', value: (v) => v.variant?.genes, fit: true },
  { header: 'HGVS', value: (v) => v.hgvs_p ?? v.hgvs_c ?? v.variant?.hgvs_p ?? v.variant?.hgvs_c, fit: true },
  { header: 'CLASSIFICATION', value: (v) => v.acmg_classification },
  { header: 'IN REPORT', value: (v) => (v.include_in_report ? 'yes' : 'no') },
]

export const commentColumns: Column<Comment>[] = [
  { header: 'ID', value: (c) => c.id },
  { header: 'TYPE', value: (c) => c.type },
  { header: 'AUTHOR', value: (c) => c.author.email ?? c.author.name ?? c.author.id },
  { header: 'CREATED', value: (c) => formatTime(c.created) },
  { header: 'RESOLVED', value: (c) => (c.resolved ? `by ${c.resolved.by}` : c.type === 'review' ? 'open' : undefined) },
  { header: 'COMMENT', value: (c) => c.comment, fit: true },
]
