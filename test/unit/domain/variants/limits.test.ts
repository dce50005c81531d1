import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { MAX_ORDER_SAMPLES } from '../../../../domain/clinical/model.js'
import { toCacheDoc, type BuildSample } from '../../../../domain/variants/cache.js'
import { catalogueWrite } from '../../../../domain/variants/catalogue.js'
import { VCF_LIMITS } from '../../../../domain/variants/limits.js'
import { GRCH38_CONTIGS, readAll, rec, vcf } from '../../../support/vcf.js'

/**
 * The size Firestore counts for a document (its storage size: a string is its UTF-8 bytes plus 1, a
 * number or timestamp 8, a boolean or null 1, an array the sum of its values, a map the sum of its
 * keys and values; a document its name, its fields and 32 bytes), which its 1 MiB limit applies to.
 */
function storedSize(value: unknown): number {
  if (value === undefined) return 0
  if (value === null || typeof value === 'boolean') return 1
  if (typeof value === 'string') return Buffer.byteLength(value) + 1
  if (typeof value === 'number' || value instanceof Timestamp) return 8
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + storedSize(v), 0)
  return Object.entries(value as object).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + 1 + storedSize(v), 0)
}
const documentSize = (collection: string, id: string, fields: object) =>
  collection.length + 1 + Buffer.byteLength(id) + 1 + 16 + storedSize(fields) + 32

const MIB = 1024 * 1024
const CSQ_FIELDS = 'Allele|Consequence|IMPACT|SYMBOL|Gene|Feature_type|Feature|BIOTYPE|HGVSc|HGVSp|CANONICAL|ALLELE_NUM'

describe('the documents of a record at every limit of domain/variants/limits.ts at once', async () => {
  const L = VCF_LIMITS
  const columns = Array.from({ length: MAX_ORDER_SAMPLES }, (_, i) => `S${i}-`.padEnd(L.sampleNameBytes, 'x'))
  // The CSQ entries that leave the most behind: every field one we store, a distinct gene in each (kept twice: the entry and `genes`).
  const entry = (i: number, width: number) => {
    const rest = `C|missense_variant|MODERATE||ENSG1|Transcript|ENST1|protein_coding|ENST1:c.1A>C|ENSP1:p.M1T|YES|1`
    return rest.replace('MODERATE||', `MODERATE|${`G${i}-`.padEnd(width - rest.length, 'g')}|`)
  }
  const width = Math.floor((L.infoBytes - 'CSQ='.length + 1) / L.infoValues) - 1
  const info = `CSQ=${Array.from({ length: L.infoValues }, (_, i) => entry(i, width)).join(',')}`
  const gt = Array.from({ length: 32 }, (_, i) => String(i % 2)).join('/')
  const line = rec(
    `chrUn_${'u'.repeat(L.chromBytes - 6)}`,
    L.position,
    Array.from({ length: L.idBytes }, (_, i) => (i % 2 ? ';' : 'r'))
      .join('')
      .slice(0, L.idBytes - 1),
    'A'.repeat(L.alleleBytes),
    'C'.repeat(L.alleleBytes),
    99,
    Array.from({ length: L.filterBytes }, (_, i) => (i % 2 ? ';' : 'q'))
      .join('')
      .slice(0, L.filterBytes - 1),
    info,
    'GT:AD:DP:GQ',
    ...columns.map(() => `${gt}:1000000,1000000:2000000:99`),
  )
  const meta = [...GRCH38_CONTIGS, `##INFO=<ID=CSQ,Number=.,Type=String,Description="VEP. Format: ${CSQ_FIELDS}">`]
  const { variants } = await readAll(vcf({ meta, samples: columns, records: [line] }))
  const variant = variants[0]!
  // The order's samples, each matched to a column, with external ids of 100 three-byte characters.
  const samples: BuildSample[] = columns.map((vcf_sample, i) => ({
    sample_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    sample: '€'.repeat(100),
    role: 'relative',
    vcf_sample,
  }))
  const ids = {
    project_id: '00000000-0000-4000-8000-00000000000a',
    order_id: '00000000-0000-4000-8000-00000000000b',
    build_id: '00000000-0000-4000-8000-00000000000c',
  }
  const doc = toCacheDoc(variant, ids, samples)

  it('reads it whole: every field at its limit is accepted', () => {
    expect(variant.annotations).toHaveLength(L.infoValues)
    expect(info.length).toBeLessThanOrEqual(L.infoBytes)
    expect(doc.calls).toHaveLength(MAX_ORDER_SAMPLES)
    expect(doc.calls[0]!.source_genotype).toHaveLength(63)
  })

  it('makes a cache document under half of Firestore’s 1 MiB', () => {
    const size = documentSize('cache_variants', `${ids.build_id}~${variant.id}`, doc)
    expect(size).toBeLessThan(MIB / 2)
  })

  it('makes a catalogue summary that leaves room for thousands of orders’ observations', () => {
    const write = catalogueWrite(doc, { id: ids.order_id, accession: 'ORD-2026-000001' }, Timestamp.now())
    const size = documentSize('variant_catalogue', `${ids.project_id}~${variant.id}`, write)
    expect(size).toBeLessThan(MIB / 4)
  })

  it('keeps the genome order key, an indexed field the cache pages on, far under the 1,500 bytes an index entry keeps', () => {
    expect(Buffer.byteLength(doc.genome_order)).toBeLessThan(500)
  })

  it('keeps an ingestion’s list of the VCF’s sample names under a quarter of 1 MiB', () => {
    const names = Array.from({ length: L.samples }, (_, i) => `U${i}-`.padEnd(L.sampleNameBytes, 'x'))
    expect(storedSize({ unmatched_vcf_samples: names })).toBeLessThan(MIB / 4)
  })
})
