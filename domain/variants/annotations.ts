import type { InfoValue } from '@gmod/vcf'
import type { HeaderField } from './vcf.js'
import { trimAllele } from './vrs.js'

/**
 * Functional annotations from VEP (`CSQ`) and snpEff (`ANN`): each INFO value is one transcript's
 * annotation, `|`-separated in the order the header's `Format:` description gives. Entries are
 * attributed to the ALT allele they name, and summed up per allele: the genes, the most severe
 * consequence by VEP's order, and the HGVS of the transcript that has it.
 */

/**
 * Sequence Ontology consequence terms, most severe first: Ensembl VEP's order ("Calculated
 * variant consequences", release 110 and later), with snpEff's own terms placed beside the VEP
 * term of the same kind and impact (marked).
 */
export const CONSEQUENCE_ORDER = [
  'chromosome_number_variation', // snpEff
  'transcript_ablation',
  'feature_ablation', // snpEff
  'exon_loss_variant', // snpEff
  'gene_fusion', // snpEff
  'bidirectional_gene_fusion', // snpEff
  'splice_acceptor_variant',
  'splice_donor_variant',
  'stop_gained',
  'frameshift_variant',
  'stop_lost',
  'start_lost',
  'rare_amino_acid_variant', // snpEff
  'transcript_amplification',
  'feature_elongation',
  'feature_truncation',
  'inframe_insertion',
  'disruptive_inframe_insertion', // snpEff
  'conservative_inframe_insertion', // snpEff
  'inframe_deletion',
  'disruptive_inframe_deletion', // snpEff
  'conservative_inframe_deletion', // snpEff
  'missense_variant',
  'protein_altering_variant',
  'structural_interaction_variant', // snpEff
  'protein_protein_contact', // snpEff
  'splice_donor_5th_base_variant',
  'splice_region_variant',
  'splice_donor_region_variant',
  'splice_polypyrimidine_tract_variant',
  'incomplete_terminal_codon_variant',
  'initiator_codon_variant', // snpEff
  'start_retained_variant',
  'stop_retained_variant',
  'synonymous_variant',
  'coding_sequence_variant',
  'mature_miRNA_variant',
  '5_prime_UTR_premature_start_codon_gain_variant', // snpEff
  '5_prime_UTR_variant',
  '3_prime_UTR_variant',
  'non_coding_transcript_exon_variant',
  'non_coding_exon_variant', // snpEff (older name)
  'intron_variant',
  'conserved_intron_variant', // snpEff
  'NMD_transcript_variant',
  'non_coding_transcript_variant',
  'coding_transcript_variant',
  'intragenic_variant', // snpEff
  'upstream_gene_variant',
  'downstream_gene_variant',
  'TFBS_ablation',
  'TFBS_amplification',
  'TF_binding_site_variant',
  'regulatory_region_ablation',
  'regulatory_region_amplification',
  'regulatory_region_variant',
  'conserved_intergenic_variant', // snpEff
  'intergenic_variant',
  'intergenic_region', // snpEff
  'sequence_feature', // snpEff
  'sequence_variant',
] as const

const RANK = new Map<string, number>(CONSEQUENCE_ORDER.map((term, i) => [term.toLowerCase(), i]))

/** A term's place in CONSEQUENCE_ORDER (0 is the most severe); unknown terms come after every known one. */
export function consequenceRank(term: string): number {
  return RANK.get(term.toLowerCase()) ?? CONSEQUENCE_ORDER.length
}

export type AnnotationSource = 'CSQ' | 'ANN'

export interface AnnotationFormat {
  source: AnnotationSource
  /** The header's field names, in order. */
  fields: string[]
}

/** The fields of a `Format: A|B|C` (VEP) or `'A | B | C'` (snpEff) description, or undefined. */
export function parseFormatDescription(description: string): string[] | undefined {
  const text = /Format:\s*(.*)$/is.exec(description)?.[1] ?? /'([^']*\|[^']*)'/.exec(description)?.[1]
  if (!text) return undefined
  const fields = text
    .replace(/^['"\s]+|['"\s]+$/g, '')
    .split('|')
    .map((f) => f.trim())
  return fields.length > 1 ? fields : undefined
}

/** The annotation field the VCF carries: VEP's `CSQ` when declared, else snpEff's `ANN`, else none. */
export function annotationFormat(info: Record<string, HeaderField>): AnnotationFormat | undefined {
  for (const source of ['CSQ', 'ANN'] as const) {
    const description = info[source]?.Description
    const fields = typeof description === 'string' ? parseFormatDescription(description) : undefined
    if (fields) return { source, fields }
  }
  return undefined
}

export interface TranscriptAnnotation {
  /** The Allele field as written. */
  allele: string
  consequences: string[]
  impact: string | null
  gene: string | null
  gene_id: string | null
  feature_type: string | null
  /** The transcript (VEP Feature, snpEff Feature_ID, or the reference of the HGVS c.). */
  transcript: string | null
  biotype: string | null
  /** HGVS without its reference: `c.526C>T`, `p.Arg176Cys`. */
  hgvs_c: string | null
  hgvs_p: string | null
  /** VEP's CANONICAL=YES, a MANE Select transcript, or VEP's PICK. */
  canonical: boolean
  /** VEP's ALLELE_NUM (1-based ALT index), when the VCF was annotated with --allele_number. */
  allele_num: number | null
}

/** Field names as each tool writes them, to ours. */
const FIELD_NAMES: Record<string, string[]> = {
  allele: ['allele'],
  consequence: ['consequence', 'annotation'],
  impact: ['impact', 'annotation_impact'],
  gene: ['symbol', 'gene_name'],
  gene_id: ['gene', 'gene_id'],
  feature_type: ['feature_type'],
  transcript: ['feature', 'feature_id'],
  biotype: ['biotype', 'transcript_biotype'],
  hgvs_c: ['hgvsc', 'hgvs.c'],
  hgvs_p: ['hgvsp', 'hgvs.p'],
  canonical: ['canonical'],
  mane: ['mane_select', 'mane'],
  pick: ['pick'],
  allele_num: ['allele_num'],
}

/** Where each of our fields is in an entry of this format. */
export function fieldIndex(format: AnnotationFormat): Record<string, number> {
  const lower = format.fields.map((f) => f.toLowerCase())
  const index: Record<string, number> = {}
  for (const [ours, names] of Object.entries(FIELD_NAMES)) {
    const at = lower.findIndex((f) => names.includes(f))
    if (at !== -1) index[ours] = at
  }
  return index
}

/** `ENST00000252486.9:c.526C>T` → [`ENST00000252486.9`, `c.526C>T`]. */
export function splitHgvs(hgvs: string): { reference: string | null; expression: string } {
  const at = hgvs.search(/:[cgmnpr]\./)
  return at === -1 ? { reference: null, expression: hgvs } : { reference: hgvs.slice(0, at), expression: hgvs.slice(at + 1) }
}

function fieldValue(parts: string[], at: number | undefined): string | null {
  const v = at === undefined ? undefined : parts[at]?.trim()
  return v ? v : null
}

/** The transcript annotations of a record's CSQ or ANN value. */
export function parseAnnotations(value: InfoValue | undefined, format: AnnotationFormat, index = fieldIndex(format)): TranscriptAnnotation[] {
  if (!Array.isArray(value)) return []
  const out: TranscriptAnnotation[] = []
  for (const item of value) {
    if (item === undefined || item === '') continue
    const parts = String(item).split('|')
    const get = (field: string) => fieldValue(parts, index[field])
    const hgvsC = get('hgvs_c')
    const hgvsP = get('hgvs_p')
    const c = hgvsC ? splitHgvs(hgvsC) : undefined
    const p = hgvsP ? splitHgvs(hgvsP) : undefined
    const alleleNum = Number(get('allele_num'))
    out.push({
      allele: get('allele') ?? '',
      consequences: (get('consequence') ?? '').split('&').filter(Boolean),
      impact: get('impact'),
      gene: get('gene'),
      gene_id: get('gene_id'),
      feature_type: get('feature_type'),
      transcript: get('transcript') ?? c?.reference ?? null,
      biotype: get('biotype'),
      hgvs_c: c?.expression ?? null,
      hgvs_p: p?.expression ?? null,
      canonical: get('canonical')?.toUpperCase() === 'YES' || get('mane') !== null || get('pick') === '1',
      allele_num: Number.isSafeInteger(alleleNum) && alleleNum > 0 ? alleleNum : null,
    })
  }
  return out
}

const SV_TERMS: Record<string, string[]> = {
  DEL: ['deletion'],
  DUP: ['duplication', 'tandem_duplication'],
  INS: ['insertion'],
  INV: ['inversion'],
  CNV: ['copy_number_variation', 'copy_number_change'],
  BND: ['breakend', 'chromosome_breakpoint'],
}

/**
 * How each ALT may be written in an entry's Allele field, most specific first: as written (snpEff,
 * and VEP for SNVs); VEP's form, the ALT without the first base when REF and every ALT share it
 * (`-` when nothing is left); the allele trimmed on both sides (VEP --minimal); the SV's SO term.
 */
function alleleSpellings(ref: string, alts: readonly string[]): string[][] {
  const firstBases = new Set([ref, ...alts].map((a) => a[0]?.toUpperCase()))
  const shareFirst = alts.every((a) => /^[A-Z*]+$/i.test(a)) && firstBases.size === 1
  return alts.map((alt) => {
    const spellings = [alt.toUpperCase()]
    if (shareFirst) spellings.push(alt.slice(1).toUpperCase() || '-')
    if (/^[A-Z]+$/i.test(alt)) spellings.push(trimAllele(1, ref, alt).alt || '-')
    const symbol = /^<([A-Z]+)/i.exec(alt)?.[1]?.toUpperCase()
    if (symbol) spellings.push(...(SV_TERMS[symbol] ?? []).map((t) => t.toUpperCase()))
    if (/[[\]]/.test(alt)) spellings.push(...SV_TERMS.BND!.map((t) => t.toUpperCase()))
    return spellings
  })
}

/**
 * The entries of each ALT (index 0 is the first ALT). An entry goes to the ALT its ALLELE_NUM
 * names, else to the one ALT its Allele field spells (trying each spelling level in turn); with a
 * single ALT every entry is that ALT's. Entries naming no ALT, or more than one, are dropped.
 */
export function annotationsByAllele(entries: readonly TranscriptAnnotation[], ref: string, alts: readonly string[]): TranscriptAnnotation[][] {
  const out: TranscriptAnnotation[][] = alts.map(() => [])
  if (alts.length === 1) {
    out[0]!.push(...entries)
    return out
  }
  const spellings = alleleSpellings(ref, alts)
  const levels = Math.max(0, ...spellings.map((s) => s.length))
  for (const entry of entries) {
    if (entry.allele_num !== null) {
      out[entry.allele_num - 1]?.push(entry)
      continue
    }
    const allele = entry.allele.toUpperCase()
    for (let level = 0; level < levels; level++) {
      const hits = spellings.flatMap((s, k) => (s[level] === allele ? [k] : []))
      if (hits.length === 1) {
        out[hits[0]!]!.push(entry)
        break
      }
      if (hits.length > 1) break
    }
  }
  return out
}

export interface AnnotationSummary {
  /** Gene symbols (or ids when no symbol), the most severely affected first. */
  genes: string[]
  /** The most severe consequence of any entry, or null without annotation. */
  consequence: string | null
  impact: string | null
  /** The entry with the most severe consequence (canonical first): its transcript and HGVS. */
  transcript: string | null
  hgvs_c: string | null
  hgvs_p: string | null
}

const EMPTY: AnnotationSummary = { genes: [], consequence: null, impact: null, transcript: null, hgvs_c: null, hgvs_p: null }

function worstRank(entry: TranscriptAnnotation): number {
  return Math.min(CONSEQUENCE_ORDER.length + 1, ...entry.consequences.map(consequenceRank))
}

const INTERGENIC = /intergenic/i

/** One allele's entries summed up. */
export function summarizeAnnotations(entries: readonly TranscriptAnnotation[]): AnnotationSummary {
  if (entries.length === 0) return EMPTY
  const ranked = entries.map((entry, i) => ({ entry, rank: worstRank(entry), i }))
  ranked.sort((a, b) => a.rank - b.rank || Number(b.entry.canonical) - Number(a.entry.canonical) || a.i - b.i)
  const best = ranked[0]!
  const consequence = best.entry.consequences.slice().sort((a, b) => consequenceRank(a) - consequenceRank(b))[0] ?? null
  // Prefer, among the most severe entries, one that has HGVS: a canonical transcript first.
  const withHgvs = ranked.find((r) => r.rank === best.rank && (r.entry.hgvs_c || r.entry.hgvs_p)) ?? best
  const genes: string[] = []
  for (const { entry } of ranked) {
    const gene = entry.gene ?? entry.gene_id
    if (!gene || entry.consequences.every((c) => INTERGENIC.test(c)) || genes.includes(gene)) continue
    genes.push(gene)
  }
  return {
    genes,
    consequence,
    impact: best.entry.impact,
    transcript: withHgvs.entry.transcript,
    hgvs_c: withHgvs.entry.hgvs_c,
    hgvs_p: withHgvs.entry.hgvs_p,
  }
}
