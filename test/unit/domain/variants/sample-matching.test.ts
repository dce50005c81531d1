import { describe, expect, it } from 'vitest'
import { describeSampleMismatch, matchSamples, type OrderSample } from '../../../../domain/variants/sample-matching.js'

const order: OrderSample[] = [
  { sample_id: 's-p', external_id: 'NA12878-blood', role: 'proband', subject_external_id: 'CASE-1' },
  { sample_id: 's-m', external_id: 'NA12892', role: 'mother', subject_external_id: 'CASE-1-M' },
  { sample_id: 's-f', external_id: 'NA12891', role: 'father', subject_external_id: 'CASE-1-F' },
]

describe('matching VCF samples to the order', () => {
  it('matches sample external ids case-insensitively, in VCF column order', () => {
    const m = matchSamples(['na12878-BLOOD', 'NA12892', 'NA12891'], order)
    expect(m.matched).toEqual([
      { vcf_sample: 'na12878-BLOOD', sample_id: 's-p', role: 'proband', matched_by: 'sample_external_id' },
      { vcf_sample: 'NA12892', sample_id: 's-m', role: 'mother', matched_by: 'sample_external_id' },
      { vcf_sample: 'NA12891', sample_id: 's-f', role: 'father', matched_by: 'sample_external_id' },
    ])
    expect([m.unmatched_vcf_samples, m.missing_order_samples, m.ambiguous]).toEqual([[], [], []])
    expect(describeSampleMismatch(m)).toBeUndefined()
  })

  it('falls back to the subject external id', () => {
    const m = matchSamples(['CASE-1', 'case-1-m', 'NA12891'], order)
    expect(m.matched.map((x) => [x.vcf_sample, x.role, x.matched_by])).toEqual([
      ['CASE-1', 'proband', 'subject_external_id'],
      ['case-1-m', 'mother', 'subject_external_id'],
      ['NA12891', 'father', 'sample_external_id'],
    ])
  })

  it('reports a VCF sample that matches nobody and an order sample missing from the VCF', () => {
    const m = matchSamples(['NA12878-blood', 'NA12891', 'HG002'], order)
    expect(m.unmatched_vcf_samples).toEqual(['HG002'])
    expect(m.missing_order_samples).toEqual([{ sample_id: 's-m', external_id: 'NA12892', role: 'mother' }])
    expect(describeSampleMismatch(m)).toBe('VCF samples matching no order sample: HG002; order samples missing from the VCF: NA12892 (mother)')
  })

  it('leaves ambiguous matches unmatched and says so, rather than guessing', () => {
    const m = matchSamples(['NA12891', 'na12891'], order)
    expect(m.matched).toEqual([])
    expect(m.ambiguous).toEqual([
      { vcf_sample: 'NA12891', sample_ids: ['s-f'] },
      { vcf_sample: 'na12891', sample_ids: ['s-f'] },
    ])
    const twins = matchSamples(
      ['X1'],
      [
        { sample_id: 'a', external_id: 'x1', role: 'proband' },
        { sample_id: 'b', external_id: 'X1 ', role: 'sibling' },
      ],
    )
    expect(twins.ambiguous).toEqual([{ vcf_sample: 'X1', sample_ids: ['a', 'b'] }])
    expect(twins.missing_order_samples.map((s) => s.sample_id)).toEqual(['a', 'b'])
    expect(describeSampleMismatch(twins)).toMatch(/more than one order sample: X1/)
  })

  it('handles a VCF without samples and an order without subjects', () => {
    const m = matchSamples([], [{ sample_id: 'a', external_id: 'T1', role: 'tumor', subject_external_id: null }])
    expect(m.missing_order_samples).toEqual([{ sample_id: 'a', external_id: 'T1', role: 'tumor' }])
  })
})
