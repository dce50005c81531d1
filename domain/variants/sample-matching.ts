/**
 * Which VCF sample column is which sample of the order (and so which role). A VCF names its samples
 * as the pipeline was told: usually the sample's external id (the tube barcode), sometimes the
 * subject's (the case or MRN identifier). Both are matched case-insensitively, sample ids first;
 * every VCF sample that matches no order sample, and every order sample absent from the VCF, is
 * reported, never dropped in silence.
 */

export interface OrderSample {
  sample_id: string
  /** The sample's external id (barcode). */
  external_id: string
  role: string
  /** The external id of the sample's subject, the fallback a VCF may use. */
  subject_external_id?: string | null
}

export interface MatchedSample {
  /** The VCF's column name, as written. */
  vcf_sample: string
  sample_id: string
  role: string
  matched_by: 'sample_external_id' | 'subject_external_id'
}

export interface SampleMatching {
  matched: MatchedSample[]
  /** VCF samples that match no order sample (their calls are not attributed to anyone). */
  unmatched_vcf_samples: string[]
  /** Order samples with no column in the VCF. */
  missing_order_samples: { sample_id: string; external_id: string; role: string }[]
  /** VCF samples that match more than one order sample, or order samples more than one VCF sample names: left unmatched. */
  ambiguous: { vcf_sample: string; sample_ids: string[] }[]
}

const fold = (s: string) => s.trim().toLowerCase()

/** Matches VCF sample names to the order's samples; the result is in VCF column order. */
export function matchSamples(vcfSamples: readonly string[], orderSamples: readonly OrderSample[]): SampleMatching {
  const byKey = (key: (s: OrderSample) => string | null | undefined) => {
    const index = new Map<string, OrderSample[]>()
    for (const sample of orderSamples) {
      const value = key(sample)
      if (!value || !fold(value)) continue
      const list = index.get(fold(value)) ?? []
      list.push(sample)
      index.set(fold(value), list)
    }
    return index
  }
  const bySample = byKey((s) => s.external_id)
  const bySubject = byKey((s) => s.subject_external_id)

  const candidates = vcfSamples.map((vcf_sample) => {
    const sampleHits = bySample.get(fold(vcf_sample)) ?? []
    if (sampleHits.length > 0) return { vcf_sample, hits: sampleHits, matched_by: 'sample_external_id' as const }
    return { vcf_sample, hits: bySubject.get(fold(vcf_sample)) ?? [], matched_by: 'subject_external_id' as const }
  })
  // An order sample claimed by two VCF columns (e.g. `S1` and `s1`) is ambiguous for both.
  const claims = new Map<string, number>()
  for (const c of candidates) if (c.hits.length === 1) claims.set(c.hits[0]!.sample_id, (claims.get(c.hits[0]!.sample_id) ?? 0) + 1)

  const result: SampleMatching = { matched: [], unmatched_vcf_samples: [], missing_order_samples: [], ambiguous: [] }
  for (const c of candidates) {
    if (c.hits.length === 0) result.unmatched_vcf_samples.push(c.vcf_sample)
    else if (c.hits.length > 1 || claims.get(c.hits[0]!.sample_id)! > 1) {
      result.ambiguous.push({ vcf_sample: c.vcf_sample, sample_ids: c.hits.map((h) => h.sample_id) })
    } else {
      const hit = c.hits[0]!
      result.matched.push({ vcf_sample: c.vcf_sample, sample_id: hit.sample_id, role: hit.role, matched_by: c.matched_by })
    }
  }
  const found = new Set(result.matched.map((m) => m.sample_id))
  for (const s of orderSamples) {
    if (!found.has(s.sample_id)) result.missing_order_samples.push({ sample_id: s.sample_id, external_id: s.external_id, role: s.role })
  }
  return result
}

/** One line for the ingestion status, or undefined when every sample on both sides matched. */
export function describeSampleMismatch(matching: SampleMatching): string | undefined {
  const parts: string[] = []
  if (matching.unmatched_vcf_samples.length) parts.push(`VCF samples matching no order sample: ${matching.unmatched_vcf_samples.join(', ')}`)
  if (matching.missing_order_samples.length) {
    parts.push(`order samples missing from the VCF: ${matching.missing_order_samples.map((s) => `${s.external_id} (${s.role})`).join(', ')}`)
  }
  if (matching.ambiguous.length)
    parts.push(`VCF samples matching more than one order sample: ${matching.ambiguous.map((a) => a.vcf_sample).join(', ')}`)
  return parts.length ? parts.join('; ') : undefined
}
