import { parseBreakend, type InfoValue, type SampleData } from '@gmod/vcf'
import { normalizeContig, refgetAccessionFor, type Assembly, type BuildDetection } from './assembly.js'
import {
  annotationFormat,
  annotationsByAllele,
  fieldIndex,
  parseAnnotations,
  summarizeAnnotations,
  type AnnotationFormat,
  type TranscriptAnnotation,
} from './annotations.js'
import { genomeOrderKey } from './genome-order.js'
import type { VcfHeader, VcfRecord } from './vcf.js'
import { sha512t24u, trimAllele, vcfAlleleId } from './vrs.js'

/**
 * A VCF record as the platform's variants: one per ALT allele (multi-allelic records are split),
 * each with its identity, annotation summary and every sample's call recoded for that allele.
 *
 * Conventions (docs/variants.md):
 * - Splitting: the variant of ALT k recodes each genotype allele k as 1, the reference as 0, any
 *   other ALT as 0 too, and keeps `.` and the phasing separators (`1/2` is `1/0` for ALT 1 and
 *   `0/1` for ALT 2; `1|2` is `1|0` and `0|1`): what `bcftools norm -m-` and Hail's
 *   `split_multi_hts` do, so zygosity says how many copies of *this* allele a sample carries. The
 *   VCF's own genotype stays in `source_genotype`.
 * - Zygosity, on the recoded genotype: no called allele is `no_call`; one allele (a haploid call)
 *   is `hemi` when it is the ALT, `hom_ref` when it is the reference; on X or Y outside the
 *   pseudoautosomal regions a male's all-ALT call is `hemi`; otherwise all ALT is `hom_alt`, ALT
 *   and reference `het`, all reference `hom_ref`; a half call is `het` with the ALT (`1/.`) and
 *   `no_call` without it (`0/.`).
 * - Ids: a sequence allele on a contig whose refget accession is known gets its VRS Allele id
 *   (`ga4gh:VA.…`); without one (unknown build, unplaced or mismatched contig) a platform digest
 *   `platform:VA.<sha512t24u of "assembly|chrom|start|end|alt">` of the same trimmed interbase
 *   coordinates; symbolic alleles and breakends, which VRS Alleles do not express, get
 *   `platform:SV.<sha512t24u of "assembly|chrom|pos|end|alt">` from the record's own
 *   coordinates. `assembly` is `unknown` when the build cannot be told.
 */

export const ZYGOSITIES = ['het', 'hom_alt', 'hemi', 'hom_ref', 'no_call'] as const
export type Zygosity = (typeof ZYGOSITIES)[number]

export type VariantType = 'snv' | 'mnv' | 'insertion' | 'deletion' | 'delins' | 'structural' | 'breakend'

export type Sex = 'male' | 'female' | 'unknown' | 'other'

export interface SampleCall {
  /** The VCF's sample column name (see `matchSamples` for the order sample it is). */
  sample: string
  /** The genotype for this variant's ALT (`0/1`, `1|1`, `./.`). */
  genotype: string
  /** The genotype as the VCF wrote it (`1/2` on a multi-allelic record), or null without GT. */
  source_genotype: string | null
  zygosity: Zygosity
  /** FORMAT DP, else the sum of AD. */
  depth: number | null
  genotype_quality: number | null
  /** FORMAT AF for this ALT, else this ALT's reads over all reads in AD; rounded to 4 decimals. */
  allele_fraction: number | null
  /** AD of the reference and of this ALT. */
  allele_depths: [number, number] | null
}

export interface VariantRecord {
  id: string
  /** `vrs` for a GA4GH VRS Allele id, `platform` for a platform digest. */
  id_type: 'vrs' | 'platform'
  assembly: Assembly | null
  /** The contig, normalized (`7`, `X`, `MT`; others as written). */
  chrom: string
  pos: number
  /** The last reference base the variant covers: POS + len(REF) − 1, or the SV's end. */
  end: number
  ref: string
  alt: string
  qual: number | null
  /** `['PASS']`, the filters failed, or `[]` when the VCF says `.`. */
  filter: string[]
  /** The VCF ID column (`rs…`). */
  vcf_ids: string[]
  variant_type: VariantType
  /** Structural variants: INFO SVTYPE or the symbolic allele's type (`DEL`, `DUP`, `INV`, `INS`, `CNV`, `BND`). */
  svtype: string | null
  svlen: number | null
  /** A breakend's mate. */
  mate: { chrom: string; pos: number } | null
  genes: string[]
  /** The most severe consequence (SO term), from CSQ or ANN. */
  consequence: string | null
  impact: string | null
  transcript: string | null
  hgvs_c: string | null
  hgvs_p: string | null
  /** This ALT's CSQ or ANN entries. */
  annotations: TranscriptAnnotation[]
  samples: SampleCall[]
  /** 1-based index of this ALT in the record, and how many ALTs the record had. */
  alt_index: number
  alt_count: number
  /** The VCF line it came from. */
  source_line: number
  /** The genome order key (`genomeOrderKey`). */
  genome_order: string
}

export interface RecordContext {
  build: BuildDetection
  samples: readonly string[]
  annotation: AnnotationFormat | undefined
  annotationIndex: Record<string, number>
  /** The sex of a VCF sample (from the order's subject), for hemizygous calls on X and Y. */
  sexOf: (vcfSample: string) => Sex | null | undefined
}

export function recordContext(header: VcfHeader, sexOf: RecordContext['sexOf'] = () => undefined): RecordContext {
  const annotation = annotationFormat(header.info)
  return { build: header.build, samples: header.samples, annotation, annotationIndex: annotation ? fieldIndex(annotation) : {}, sexOf }
}

/** ALT alleles that are not variants: gVCF's reference blocks and the spanning deletion. */
const NOT_A_VARIANT = new Set(['*', '<*>', '<NON_REF>', '<X>'])

/** Whether an ALT is one `recordToVariants` makes a variant of. */
export function isVariantAllele(alt: string): boolean {
  return !NOT_A_VARIANT.has(alt.toUpperCase())
}

/** The pseudoautosomal regions (1-based, inclusive), where X and Y are diploid in males. */
const PAR: Record<Assembly, Record<'X' | 'Y', [number, number][]>> = {
  GRCh37: {
    X: [
      [60001, 2699520],
      [154931044, 155260560],
    ],
    Y: [
      [10001, 2649520],
      [59034050, 59363566],
    ],
  },
  GRCh38: {
    X: [
      [10001, 2781479],
      [155701383, 156030895],
    ],
    Y: [
      [10001, 2781479],
      [56887903, 57217415],
    ],
  },
}

/** Whether a position of X or Y is in a pseudoautosomal region (of either build when the build is unknown). */
export function inPar(assembly: Assembly | undefined, chrom: 'X' | 'Y', pos: number): boolean {
  const builds = assembly ? [assembly] : (['GRCh37', 'GRCh38'] as const)
  return builds.some((a) => PAR[a][chrom].some(([s, e]) => pos >= s && pos <= e))
}

/** A genotype for the variant of ALT `k` (1-based): k → 1, every other allele index → 0, `.` kept. */
export function recodeGenotype(gt: string, k: number): string {
  return gt.replace(/\d+/g, (allele) => (Number(allele) === k ? '1' : '0'))
}

/** The zygosity of a recoded (bi-allelic) genotype; `hemizygous` says X/Y outside PAR in a male. */
export function zygosityOf(genotype: string, hemizygous = false): Zygosity {
  const alleles = genotype.split(/[/|]/)
  const called = alleles.filter((a) => a !== '.')
  const alt = called.filter((a) => a === '1').length
  if (called.length === 0) return 'no_call'
  if (alleles.length === 1) return alt ? 'hemi' : 'hom_ref'
  if (called.length < alleles.length) return alt ? 'het' : 'no_call'
  if (alt === 0) return 'hom_ref'
  if (alt === alleles.length) return hemizygous ? 'hemi' : 'hom_alt'
  return 'het'
}

const round4 = (x: number) => Math.round(x * 10000) / 10000

function num(values: SampleData[string] | InfoValue | undefined, i = 0): number | null {
  if (!Array.isArray(values)) return null
  const v = values[i]
  if (v === undefined || v === '') return null
  const n = Number(v)
  return Number.isFinite(n) ? n : null
}

function sampleCall(name: string, data: SampleData, k: number, altCount: number, hemizygous: boolean): SampleCall {
  const gtValue = data.GT?.[0]
  const sourceGenotype = gtValue === undefined ? null : String(gtValue)
  const genotype = sourceGenotype === null ? './.' : recodeGenotype(sourceGenotype, k)
  const ad = Array.isArray(data.AD) ? data.AD.map((x) => (x === undefined ? undefined : Number(x))) : undefined
  const adComplete = ad !== undefined && ad.length === altCount + 1 && ad.every((x) => x !== undefined)
  const adTotal = adComplete ? (ad as number[]).reduce((s, x) => s + x, 0) : null
  const af = data.AF
  let alleleFraction: number | null = null
  if (Array.isArray(af) && (af.length === altCount || af.length === 1)) alleleFraction = num(af, af.length === 1 ? 0 : k - 1)
  else if (adComplete && adTotal) alleleFraction = ad[k]! / adTotal
  return {
    sample: name,
    genotype,
    source_genotype: sourceGenotype,
    zygosity: zygosityOf(genotype, hemizygous),
    depth: num(data.DP) ?? adTotal,
    genotype_quality: num(data.GQ),
    allele_fraction: alleleFraction === null ? null : round4(alleleFraction),
    allele_depths: adComplete ? [ad[0]!, ad[k]!] : null,
  }
}

function infoString(info: Record<string, InfoValue>, key: string): string | null {
  const v = info[key]
  return Array.isArray(v) && v[0] !== undefined ? String(v[0]) : null
}

/** An INFO value of Number=A (one per ALT) or Number=1, for ALT k. */
function perAllele(info: Record<string, InfoValue>, key: string, k: number, altCount: number): number | null {
  const v = info[key]
  if (!Array.isArray(v)) return null
  return v.length === altCount ? num(v, k - 1) : num(v, 0)
}

const SV_TYPES = new Set(['DEL', 'DUP', 'INV', 'INS', 'CNV', 'BND'])

interface Shape {
  variant_type: VariantType
  end: number
  svtype: string | null
  svlen: number | null
  mate: { chrom: string; pos: number } | null
}

function shapeOf(record: VcfRecord, alt: string, k: number): Shape {
  const infoEnd = num(record.info.END)
  const infoSvtype = infoString(record.info, 'SVTYPE')?.toUpperCase() ?? null
  const infoSvlen = perAllele(record.info, 'SVLEN', k, record.alts.length)
  if (alt.startsWith('<')) {
    const symbol = /^<([^:>]+)/.exec(alt)![1]!.toUpperCase()
    const svtype = infoSvtype ?? (SV_TYPES.has(symbol) ? symbol : /^CN\d+$/.test(symbol) ? 'CNV' : symbol)
    const spans = svtype !== 'INS' && svtype !== 'BND'
    const end = infoEnd ?? (spans && infoSvlen !== null ? record.pos + Math.abs(infoSvlen) : record.pos + record.ref.length - 1)
    const svlen = infoSvlen ?? (!spans || end === record.pos ? null : svtype === 'DEL' ? -(end - record.pos) : end - record.pos)
    return { variant_type: 'structural', end, svtype, svlen, mate: null }
  }
  if (/[[\]]/.test(alt) || alt.startsWith('.') || alt.endsWith('.')) {
    const breakend = parseBreakend(alt)
    const [mateChrom, matePos] = breakend?.MatePosition ? splitMate(breakend.MatePosition) : [undefined, undefined]
    return {
      variant_type: 'breakend',
      end: infoEnd ?? record.pos,
      svtype: infoSvtype ?? 'BND',
      svlen: infoSvlen,
      mate: mateChrom !== undefined && matePos !== undefined ? { chrom: normalizeContig(mateChrom), pos: matePos } : null,
    }
  }
  const trimmed = trimAllele(record.pos, record.ref, alt)
  const variant_type: VariantType =
    trimmed.ref.length === 0
      ? 'insertion'
      : trimmed.alt.length === 0
        ? 'deletion'
        : trimmed.ref.length === trimmed.alt.length
          ? trimmed.ref.length === 1
            ? 'snv'
            : 'mnv'
          : 'delins'
  return {
    variant_type,
    end: record.pos + record.ref.length - 1,
    svtype: infoSvtype,
    svlen: infoSvtype ? (infoSvlen ?? alt.length - record.ref.length) : null,
    mate: null,
  }
}

function splitMate(position: string): [string, number] | [undefined, undefined] {
  const at = position.lastIndexOf(':')
  const pos = Number(position.slice(at + 1))
  return at > 0 && Number.isSafeInteger(pos) ? [position.slice(0, at), pos] : [undefined, undefined]
}

/** The platform id of an allele VRS cannot identify here (see the module comment). */
export function platformVariantId(assembly: Assembly | undefined | null, chrom: string, pos: number, ref: string, alt: string, end?: number): string {
  const build = assembly ?? 'unknown'
  const contig = normalizeContig(chrom)
  if (/^[A-Z*]+$/i.test(alt) && !alt.includes('*')) {
    const t = trimAllele(pos, ref, alt)
    return `platform:VA.${sha512t24u(`${build}|${contig}|${t.start}|${t.end}|${t.alt}`)}`
  }
  const normalizedAlt = alt.replace(/([[\]])([^[\]:]+):/, (_, bracket: string, mate: string) => `${bracket}${normalizeContig(mate)}:`).toUpperCase()
  return `platform:SV.${sha512t24u(`${build}|${contig}|${pos}|${end ?? pos}|${normalizedAlt}`)}`
}

/** The variants of one record: one per ALT that is a variant, in ALT order. */
export function recordToVariants(record: VcfRecord, ctx: RecordContext): VariantRecord[] {
  const alts = record.alts
  if (alts.length === 0) return []
  const chrom = normalizeContig(record.chrom)
  const assembly = ctx.build.assembly ?? null
  const accession = refgetAccessionFor(ctx.build, record.chrom)
  const entries = ctx.annotation ? parseAnnotations(record.info[ctx.annotation.source], ctx.annotation, ctx.annotationIndex) : []
  const byAllele = entries.length ? annotationsByAllele(entries, record.ref, alts) : undefined
  const hemizygousBySample = ctx.samples.map((name) => {
    if (chrom !== 'X' && chrom !== 'Y') return false
    return ctx.sexOf(name) === 'male' && !inPar(ctx.build.assembly, chrom, record.pos)
  })

  const variants: VariantRecord[] = []
  alts.forEach((alt, i) => {
    if (!isVariantAllele(alt)) return
    const k = i + 1
    const shape = shapeOf(record, alt, k)
    const sequence = shape.variant_type !== 'structural' && shape.variant_type !== 'breakend'
    const id =
      sequence && accession
        ? vcfAlleleId(accession, record.pos, record.ref, alt)
        : platformVariantId(assembly, chrom, record.pos, record.ref, alt, shape.end)
    const annotations = byAllele?.[i] ?? []
    const summary = summarizeAnnotations(annotations)
    variants.push({
      id,
      id_type: id.startsWith('ga4gh:') ? 'vrs' : 'platform',
      assembly,
      chrom,
      pos: record.pos,
      end: shape.end,
      ref: record.ref,
      alt: sequence ? alt.toUpperCase() : alt,
      qual: record.qual,
      filter: record.filters,
      vcf_ids: record.ids,
      variant_type: shape.variant_type,
      svtype: shape.svtype,
      svlen: shape.svlen,
      mate: shape.mate,
      genes: summary.genes,
      consequence: summary.consequence,
      impact: summary.impact,
      transcript: summary.transcript,
      hgvs_c: summary.hgvs_c,
      hgvs_p: summary.hgvs_p,
      annotations,
      samples: ctx.samples.map((name, s) => sampleCall(name, record.samples[s] ?? {}, k, alts.length, hemizygousBySample[s]!)),
      alt_index: k,
      alt_count: alts.length,
      source_line: record.line,
      genome_order: genomeOrderKey({ chrom, pos: record.pos, id }),
    })
  })
  return variants
}
