import { createHash } from 'node:crypto'

/**
 * GA4GH VRS 2.0 computed identifiers for Alleles, without a reference sequence at hand
 * (`../shared/fixtures/vrs/README.md`): sha512t24u digests of canonical JSON, a SequenceLocation
 * digest (`ga4gh:SL.…`) and an Allele identifier (`ga4gh:VA.…`) for a VCF allele trimmed of the
 * bases REF and ALT share.
 */

/** The unpadded base64url of the first 24 bytes of SHA-512 of `data` (VRS's `sha512t24u`). */
export function sha512t24u(data: string | Uint8Array): string {
  return createHash('sha512').update(data).digest().subarray(0, 24).toString('base64url')
}

/**
 * VRS's digest serialization: object keys sorted by code point, no whitespace, integers only
 * (VRS has no other numbers), strings as JSON. Callers pass only the fields VRS digests.
 */
export function vrsJson(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`VRS serializes integers only, not ${value}`)
    return String(value)
  }
  if (Array.isArray(value)) return `[${value.map(vrsJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${vrsJson((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  throw new TypeError(`VRS does not serialize ${String(value)}`)
}

export interface SequenceLocation {
  type: 'SequenceLocation'
  sequenceReference: { type: 'SequenceReference'; refgetAccession: string }
  /** 0-based interbase coordinates. */
  start: number
  end: number
}

/** A literal sequence, or (for deletions, as VRS 2.0 writes them) a length of the reference. */
export type SequenceExpression =
  { type: 'LiteralSequenceExpression'; sequence: string } | { type: 'ReferenceLengthExpression'; length: number; repeatSubunitLength: number }

export function sequenceLocation(refgetAccession: string, start: number, end: number): SequenceLocation {
  return { type: 'SequenceLocation', sequenceReference: { type: 'SequenceReference', refgetAccession }, start, end }
}

export function serializeSequenceLocation(location: SequenceLocation): string {
  const { type, sequenceReference, start, end } = location
  return vrsJson({ type, sequenceReference: { type: sequenceReference.type, refgetAccession: sequenceReference.refgetAccession }, start, end })
}

/** serializeSequenceLocation, written out for the one shape a VCF allele has (it runs twice per variant). */
function serializeLocationFast(refgetAccession: string, start: number, end: number): string {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) throw new TypeError(`VRS serializes integers only, not ${start}, ${end}`)
  return `{"end":${end},"sequenceReference":{"refgetAccession":${JSON.stringify(refgetAccession)},"type":"SequenceReference"},"start":${start},"type":"SequenceLocation"}`
}

export function sequenceLocationDigest(location: SequenceLocation): string {
  return sha512t24u(serializeSequenceLocation(location))
}

/** `ga4gh:SL.<digest>`. */
export function sequenceLocationId(location: SequenceLocation): string {
  return `ga4gh:SL.${sequenceLocationDigest(location)}`
}

function expressionFields(state: SequenceExpression): Record<string, unknown> {
  return state.type === 'LiteralSequenceExpression'
    ? { type: state.type, sequence: state.sequence }
    : { type: state.type, length: state.length, repeatSubunitLength: state.repeatSubunitLength }
}

/** The Allele as VRS digests it: its location replaced by the location's digest. */
export function serializeAllele(location: SequenceLocation, state: SequenceExpression): string {
  return vrsJson({ type: 'Allele', location: sequenceLocationDigest(location), state: expressionFields(state) })
}

/** `ga4gh:VA.<digest>`. */
export function alleleId(location: SequenceLocation, state: SequenceExpression): string {
  return `ga4gh:VA.${sha512t24u(serializeAllele(location, state))}`
}

export interface TrimmedAllele {
  /** 0-based interbase start and end on the contig, after trimming. */
  start: number
  end: number
  /** The reference and alternate sequences left after trimming (either may be empty). */
  ref: string
  alt: string
}

/**
 * Trims the bases a VCF REF and ALT share: first the shared leading bases (each moves `start`
 * right), then, of what is left, the shared trailing bases (each moves `end` left), as VRS's
 * normalization (bioutils) does. `pos` is the VCF's 1-based POS.
 */
export function trimAllele(pos: number, ref: string, alt: string): TrimmedAllele {
  const r = ref.toUpperCase()
  const a = alt.toUpperCase()
  let lead = 0
  while (lead < r.length && lead < a.length && r[lead] === a[lead]) lead++
  let trail = 0
  while (trail < r.length - lead && trail < a.length - lead && r[r.length - 1 - trail] === a[a.length - 1 - trail]) trail++
  const start = pos - 1 + lead
  const end = pos - 1 + r.length - trail
  return { start, end, ref: r.slice(lead, r.length - trail), alt: a.slice(lead, a.length - trail) }
}

/**
 * The VRS state of a trimmed allele. A deletion (nothing left of ALT) is, as VRS 2.0 writes every
 * deletion, a ReferenceLengthExpression of length 0 repeating the deleted length; anything else is
 * the literal ALT left after trimming. Without the reference sequence no allele is expanded over
 * a repeat, so indels inside repeats differ from fully-justified VRS (the fixture README's caveat).
 */
export function alleleState(trimmed: TrimmedAllele): SequenceExpression {
  if (trimmed.alt === '' && trimmed.ref !== '') {
    return { type: 'ReferenceLengthExpression', length: 0, repeatSubunitLength: trimmed.ref.length }
  }
  return { type: 'LiteralSequenceExpression', sequence: trimmed.alt }
}

/** The VRS Allele identifier of a VCF allele (POS REF ALT) on the contig with this refget accession. */
export function vcfAlleleId(refgetAccession: string, pos: number, ref: string, alt: string): string {
  const trimmed = trimAllele(pos, ref, alt)
  const location = sha512t24u(serializeLocationFast(refgetAccession, trimmed.start, trimmed.end))
  const state = alleleState(trimmed)
  const stateJson =
    state.type === 'LiteralSequenceExpression'
      ? `{"sequence":${JSON.stringify(state.sequence)},"type":"LiteralSequenceExpression"}`
      : `{"length":${state.length},"repeatSubunitLength":${state.repeatSubunitLength},"type":"ReferenceLengthExpression"}`
  return `ga4gh:VA.${sha512t24u(`{"location":"${location}","state":${stateJson},"type":"Allele"}`)}`
}
