import { readFileSync } from 'node:fs'
import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { rfc8785Json } from '../../../../lib/canonical.js'
import { sha256 } from '../../../../lib/ids.js'
import type { CommentRecord, ReportRecord, ReportVariantRecord } from '../../../../domain/reports/model.js'
import {
  canonicalizationOf,
  sealContent,
  snapshotContent,
  verifySnapshotText,
  type Canonicalization,
  type OrderContext,
} from '../../../../domain/reports/snapshot.js'
import { freezeVariant, type CachedVariant } from '../../../../domain/reports/variant-source.js'

const at = (s: number) => Timestamp.fromMillis(1_790_000_000_000 + s * 1000)
const report = (fields: Partial<ReportRecord> = {}): ReportRecord => ({
  id: 'r1',
  project_id: 'p1',
  org_id: 'o1',
  order_id: 'ord1',
  order_accession: 'ORD-2026-000001',
  status: 'draft',
  template_type: 'germline_diagnostic',
  conclusion: 'Positive.',
  author: { id: 'u1', name: 'Ann' },
  revision: 1,
  signatures: [],
  status_history: [],
  variant_count: 2,
  unclassified_count: 0,
  comment_count: 1,
  open_review_comments: 0,
  snapshot_count: 0,
  created: at(0),
  updated: at(1),
  ...fields,
})
const order: OrderContext = { id: 'ord1', accession: 'ORD-2026-000001', test_code: 'WGS-trio', indication: null, requester: null, samples: [] }
const cached = (id: string, chrom: string, pos: number): CachedVariant => ({
  id,
  assembly: 'GRCh38',
  chrom,
  pos,
  ref: 'A',
  alt: 'G',
  genes: ['G1'],
  samples: [{ sample: 'S1', role: 'proband', genotype: '0/1', zygosity: 'het' }],
})
const record = (variant_id: string, fields: Partial<ReportVariantRecord> = {}): ReportVariantRecord => ({
  report_id: 'r1',
  project_id: 'p1',
  order_id: 'ord1',
  variant_id,
  acmg_criteria: [],
  include_in_report: true,
  added_by: 'u1',
  added_at: at(2),
  updated: at(2),
  ...fields,
})
const comment: CommentRecord = {
  id: 'c1',
  report_id: 'r1',
  project_id: 'p1',
  type: 'review',
  comment: 'ok',
  author: { id: 'u2' },
  created: at(3),
  updated: at(3),
}

describe('a snapshot of a report', () => {
  const variants = [
    { record: record('ga4gh:VA.x', { acmg_classification: 'pathogenic' }), cached: freezeVariant(cached('ga4gh:VA.x', 'X', 5)) },
    { record: record('ga4gh:VA.gone'), cached: undefined },
    { record: record('ga4gh:VA.y'), cached: freezeVariant(cached('ga4gh:VA.y', '2', 900)) },
  ]

  it('puts the variants in genome order (those the cache no longer has last) and freezes the cache values, with null for what is unknown', () => {
    const content = snapshotContent({ report: report(), order, variants, comments: [comment] })
    expect(content.variants.map((v) => v.variant_id)).toEqual(['ga4gh:VA.y', 'ga4gh:VA.x', 'ga4gh:VA.gone'])
    expect(content.variants[0]!.variant).toMatchObject({ chrom: '2', end: null, qual: null, filter: [], calls: [{ depth: null, role: 'proband' }] })
    expect(content.variants[2]).toMatchObject({ in_cache: false, variant: null })
    expect(content.comments).toEqual([
      {
        id: 'c1',
        type: 'review',
        author: { id: 'u2', name: null, email: null },
        comment: 'ok',
        created: at(3).toDate().toISOString(),
        resolved: null,
      },
    ])
  })

  it('hashes its canonical JSON, whatever the key order, and only content: not the status or the counters', () => {
    const a = sealContent(snapshotContent({ report: report(), order, variants, comments: [comment] }))
    const b = sealContent(
      snapshotContent({
        report: report({ status: 'in_review', updated: at(99), snapshot_count: 4 }),
        order,
        variants: [...variants].reverse(),
        comments: [comment],
      }),
    )
    expect(b.sha256).toBe(a.sha256)
    expect(a.sha256).toBe(sha256(a.json))
    expect(rfc8785Json(JSON.parse(a.json))).toBe(a.json)
    const changed = sealContent(snapshotContent({ report: report({ conclusion: 'Negative.' }), order, variants, comments: [comment] }))
    expect(changed.sha256).not.toBe(a.sha256)
  })

  it('re-derives a stored hash from its text, and fails for altered or non-canonical text', () => {
    const { json, sha256: hash } = sealContent(snapshotContent({ report: report(), order, variants, comments: [] }))
    expect(verifySnapshotText(json, hash, 'rfc8785')).toBe(true)
    expect(verifySnapshotText(json.replace('Positive.', 'Negative.'), hash, 'rfc8785')).toBe(false)
    expect(verifySnapshotText(JSON.stringify(JSON.parse(json), null, 2), hash, 'rfc8785')).toBe(false)
    expect(verifySnapshotText('{', hash, 'rfc8785')).toBe(false)
  })
})

describe('a snapshot taken before snapshots recorded their canonicalization', () => {
  // Stored text and hash as the platform wrote them then (test/fixtures/reports/legacy-snapshot.json says how).
  const legacy = JSON.parse(readFileSync(new URL('../../../fixtures/reports/legacy-snapshot.json', import.meta.url), 'utf8')) as {
    content: string
    sha256: string
  }
  const altered = legacy.content.replace('Positive', 'Negative')

  it('counts as legacy: its record has no canonicalization', () => {
    expect(canonicalizationOf({})).toBe('legacy')
    expect(canonicalizationOf({ canonicalization: 'rfc8785' })).toBe('rfc8785')
  })

  it.each<[string, string, Canonicalization, boolean]>([
    ['verifies with the scheme it was made with', legacy.content, 'legacy', true],
    ['verifies as RFC 8785 too: for well-formed text the two schemes write the same', legacy.content, 'rfc8785', true],
    ['does not verify once altered', altered, 'legacy', false],
    ['does not verify re-indented', JSON.stringify(JSON.parse(legacy.content), null, 1), 'legacy', false],
  ])('%s', (_, text, canonicalization, verifies) => {
    expect(verifySnapshotText(text, legacy.sha256, canonicalization)).toBe(verifies)
  })
})
