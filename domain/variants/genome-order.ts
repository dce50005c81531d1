import { normalizeContig, PRIMARY_CONTIGS } from './assembly.js'

/**
 * Genome order (chromosome 1–22, X, Y, MT, then other contigs by name; position; id) as one
 * string whose byte order is that order, so the variant cache pages with a Firestore keyset
 * cursor on one field: `RR NAME PPPPPPPPPP ID`, with the chromosome's rank (01–25, 99 for the
 * others), its normalized name, the position zero-padded to 10 digits and the variant id,
 * separated by spaces. A space sorts below every character a VCF contig name may contain, so a
 * name sorts before the longer names it begins (`GL1` before `GL1_x`).
 */

const RANK = new Map<string, number>(PRIMARY_CONTIGS.map((name, i) => [name, i + 1]))
const OTHER_RANK = 99
const POS_DIGITS = 10

export interface GenomePosition {
  chrom: string
  pos: number
  id: string
}

function rankOf(chrom: string): number {
  return RANK.get(chrom) ?? OTHER_RANK
}

function prefix(chrom: string, pos: number): string {
  if (!Number.isSafeInteger(pos) || pos < 0 || pos >= 10 ** POS_DIGITS) throw new RangeError(`position out of range: ${pos}`)
  const name = normalizeContig(chrom)
  if (!name || /\s/.test(name)) throw new RangeError(`not a contig name: ${JSON.stringify(chrom)}`)
  return `${String(rankOf(name)).padStart(2, '0')} ${name} ${String(pos).padStart(POS_DIGITS, '0')} `
}

/** The sort key of a variant, e.g. `07 7 0117559590 ga4gh:VA.…`. */
export function genomeOrderKey(variant: GenomePosition): string {
  return prefix(variant.chrom, variant.pos) + variant.id
}

/** A key back to its chromosome, position and id. */
export function parseGenomeOrderKey(key: string): GenomePosition {
  const match = /^(\d{2}) (\S+) (\d{10}) (.*)$/s.exec(key)
  if (!match) throw new RangeError(`not a genome order key: ${JSON.stringify(key)}`)
  return { chrom: match[2]!, pos: Number(match[3]), id: match[4]! }
}

/** Genome order as a comparison, for sorting in memory; the same order as the keys'. */
export function compareGenomeOrder(a: GenomePosition, b: GenomePosition): number {
  const ca = normalizeContig(a.chrom)
  const cb = normalizeContig(b.chrom)
  return rankOf(ca) - rankOf(cb) || compareStrings(ca, cb) || a.pos - b.pos || compareStrings(a.id, b.id)
}

/** Code-unit order, which is Firestore's (UTF-8 byte) order for the ASCII of contig names and ids. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The keys of the variants starting in a region, 1-based and inclusive like `chr17:43044295-43125483`:
 * `key >= start && key < end`. A variant is in the region when its position is.
 */
export function regionKeyRange(chrom: string, start: number, end: number): { start: string; end: string } {
  if (end < start) throw new RangeError(`region ends (${end}) before it starts (${start})`)
  return { start: prefix(chrom, start), end: prefix(chrom, end + 1) }
}

/** Parses a region `chr17:43044295-43125483` (or `17:43044295-43125483`, `17`, commas allowed in numbers). */
export function parseRegion(text: string): { chrom: string; start: number; end: number } | undefined {
  const match = /^([^\s:]+)(?::([\d,]+)(?:-([\d,]+))?)?$/.exec(text.trim())
  if (!match) return undefined
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s.replaceAll(',', '')))
  const start = num(match[2]) ?? 1
  const end = num(match[3]) ?? (match[2] === undefined ? 10 ** POS_DIGITS - 2 : start)
  if (start < 1 || end < start) return undefined
  return { chrom: normalizeContig(match[1]!), start, end }
}
