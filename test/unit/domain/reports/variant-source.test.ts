import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import type { ReportRecord } from '../../../../domain/reports/model.js'
import { snapshotContent } from '../../../../domain/reports/snapshot.js'
import {
  cacheVariantSource,
  freezeVariant,
  fromOrderVariant,
  type CacheOrderVariant,
  type CacheOrderVariantCall,
} from '../../../../domain/reports/variant-source.js'
import { documentHtml } from '../../../../functions/reports/pages/render.js'

/** A variant as the variant cache's reader gives it (its OrderVariant, with the fields a report does not read). */
const call = (fields: Partial<CacheOrderVariantCall> & Pick<CacheOrderVariantCall, 'sample' | 'role'> & { source_genotype?: string | null }) => ({
  sample_id: `id-${fields.sample}`,
  vcf_sample: fields.sample,
  in_vcf: true,
  genotype: '0/0',
  source_genotype: '0/0',
  zygosity: 'hom_ref',
  depth: 30,
  genotype_quality: 99,
  allele_fraction: 0,
  allele_depths: [30, 0],
  ...fields,
})
const missing = (sample: string, role: string) => ({
  sample_id: `id-${sample}`,
  sample,
  role,
  vcf_sample: null,
  in_vcf: false,
  genotype: null,
  source_genotype: null,
  zygosity: null,
  depth: null,
  genotype_quality: null,
  allele_fraction: null,
  allele_depths: null,
})
const orderVariant = {
  id: 'ga4gh:VA.scn2a',
  order_id: 'ord1',
  build_id: 'b1',
  id_type: 'vrs',
  assembly: 'GRCh38',
  chrom: '2',
  pos: 165_310_406,
  end: 165_310_406,
  ref: 'G',
  alt: 'A',
  variant_type: 'snv',
  qual: 812.5,
  filter: ['PASS'],
  vcf_ids: [],
  svtype: null,
  svlen: null,
  mate: null,
  genes: ['SCN2A'],
  consequence: 'missense_variant',
  impact: 'MODERATE',
  transcript: 'NM_021007.3',
  hgvs_c: 'c.2558G>A',
  hgvs_p: 'p.Arg853Gln',
  annotations: [{ transcript: 'NM_021007.3' }],
  calls: [
    call({ sample: 'S-PROBAND', role: 'proband', genotype: '0/1', source_genotype: '0/1', zygosity: 'het', depth: 41, allele_fraction: 0.4878 }),
    missing('S-MOTHER', 'mother'),
    call({
      sample: 'S-FATHER',
      role: 'father',
      genotype: './.',
      source_genotype: './.',
      zygosity: 'no_call',
      depth: null,
      genotype_quality: null,
      allele_fraction: null,
    }),
  ],
  roles: [],
  alt_index: 0,
  alt_count: 1,
  source_line: 12,
}
// The cache's reader view is a CacheOrderVariant as it is, with more fields than a report reads.
const read: CacheOrderVariant = orderVariant

describe("a variant of the order's cache as a report holds it", () => {
  it("takes the variant's own fields and every sample's call, in the cache's order, by the sample's name in the order", () => {
    const v = fromOrderVariant(read)
    expect(v).toMatchObject({
      id: 'ga4gh:VA.scn2a',
      assembly: 'GRCh38',
      chrom: '2',
      pos: 165_310_406,
      end: 165_310_406,
      ref: 'G',
      alt: 'A',
      qual: 812.5,
      filter: ['PASS'],
      variant_type: 'snv',
      svtype: null,
      genes: ['SCN2A'],
      consequence: 'missense_variant',
      transcript: 'NM_021007.3',
      hgvs_c: 'c.2558G>A',
      hgvs_p: 'p.Arg853Gln',
    })
    expect(v.samples.map((s) => [s.sample, s.sample_id, s.role])).toEqual([
      ['S-PROBAND', 'id-S-PROBAND', 'proband'],
      ['S-MOTHER', 'id-S-MOTHER', 'mother'],
      ['S-FATHER', 'id-S-FATHER', 'father'],
    ])
    expect(v.samples[0]).toEqual({
      sample: 'S-PROBAND',
      sample_id: 'id-S-PROBAND',
      role: 'proband',
      genotype: '0/1',
      zygosity: 'het',
      depth: 41,
      genotype_quality: 99,
      allele_fraction: 0.4878,
    })
    // Only the fields a report reads: nothing of the cache's storage (build, VCF line, annotations) is frozen into a snapshot.
    expect(Object.keys(freezeVariant(v)).sort()).toEqual(
      [
        'alt',
        'assembly',
        'calls',
        'chrom',
        'consequence',
        'end',
        'filter',
        'genes',
        'hgvs_c',
        'hgvs_p',
        'id',
        'pos',
        'qual',
        'ref',
        'svtype',
        'transcript',
        'variant_type',
      ].sort(),
    )
  })

  it('keeps a sample the VCF did not have with no call at all, apart from a no-call the VCF wrote, and the report says so', () => {
    const frozen = freezeVariant(fromOrderVariant(read))
    expect(frozen.calls[1]).toEqual({
      sample: 'S-MOTHER',
      sample_id: 'id-S-MOTHER',
      role: 'mother',
      genotype: null,
      zygosity: null,
      depth: null,
      genotype_quality: null,
      allele_fraction: null,
    })
    expect(frozen.calls[2]).toMatchObject({ role: 'father', genotype: './.', zygosity: 'no_call' })

    const at = Timestamp.fromMillis(1_790_000_000_000)
    const report = {
      id: 'r1',
      project_id: 'p1',
      order_id: 'ord1',
      order_accession: 'ORD-2026-000001',
      status: 'draft',
      template_type: 'germline_diagnostic',
      author: { id: 'u1' },
      revision: 1,
      signatures: [],
      created: at,
      updated: at,
    } as unknown as ReportRecord
    const record = { report_id: 'r1', project_id: 'p1', order_id: 'ord1', variant_id: orderVariant.id, acmg_criteria: [], include_in_report: true }
    const content = snapshotContent({
      report,
      order: { id: 'ord1', accession: 'ORD-2026-000001', test_code: 'WGS-trio', indication: null, requester: null, samples: [] },
      variants: [{ record: record as never, cached: frozen }],
      comments: [],
    })
    const text = documentHtml(content).value.replace(/\s+/g, ' ')
    expect(text).toMatch(/proband: het <span class="muted">\(0\/1\)<\/span>/)
    expect(text).toContain('mother: <span class="muted">not in the VCF</span>')
    expect(text).toMatch(/father: no call <span class="muted">\(\.\/\.\)<\/span>/)
  })

  it("answers the cache reader's variant as a report's, and undefined when the cache has none", async () => {
    const source = cacheVariantSource({ getVariant: async (_p, _o, id) => (id === orderVariant.id ? read : undefined) })
    expect(await source.getVariant('p1', 'ord1', orderVariant.id)).toEqual(fromOrderVariant(read))
    expect(await source.getVariant('p1', 'ord1', 'ga4gh:VA.other')).toBeUndefined()
  })
})
