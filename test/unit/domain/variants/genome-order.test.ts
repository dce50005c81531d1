import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareGenomeOrder, genomeOrderKey, parseGenomeOrderKey, parseRegion, regionKeyRange } from '../../../../domain/variants/genome-order.js'

const v = (chrom: string, pos: number, id = 'ga4gh:VA.x') => ({ chrom, pos, id })

describe('genome order', () => {
  it('is 1–22, X, Y, MT, then other contigs by name; then position; then id', () => {
    const shuffled = [
      v('GL000192.1', 5),
      v('MT', 1),
      v('chr10', 5),
      v('2', 1),
      v('X', 3),
      v('chrY', 2),
      v('1', 200, 'b'),
      v('1', 200, 'a'),
      v('1', 30),
      v('chrUn_gl000220', 1),
      v('GL000192.1_x', 1),
      v('chr22', 9),
    ]
    const sorted = [...shuffled].sort(compareGenomeOrder).map((x) => `${x.chrom}:${x.pos}:${x.id}`)
    expect(sorted).toEqual([
      '1:30:ga4gh:VA.x',
      '1:200:a',
      '1:200:b',
      '2:1:ga4gh:VA.x',
      'chr10:5:ga4gh:VA.x',
      'chr22:9:ga4gh:VA.x',
      'X:3:ga4gh:VA.x',
      'chrY:2:ga4gh:VA.x',
      'MT:1:ga4gh:VA.x',
      'GL000192.1:5:ga4gh:VA.x',
      'GL000192.1_x:1:ga4gh:VA.x',
      'chrUn_gl000220:1:ga4gh:VA.x',
    ])
  })

  it('writes keys with the rank, the normalized name and a zero-padded position', () => {
    expect(genomeOrderKey(v('chr7', 117559590, 'ga4gh:VA.abc'))).toBe('07 7 0117559590 ga4gh:VA.abc')
    expect(genomeOrderKey(v('chrM', 73, 'id'))).toBe('25 MT 0000000073 id')
    expect(genomeOrderKey(v('GL000192.1', 1, 'id'))).toBe('99 GL000192.1 0000000001 id')
  })

  it('sorts keys as strings exactly as it compares variants (keyset pagination on one Firestore field)', () => {
    const contig = fc.constantFrom(
      '1',
      '2',
      '9',
      '10',
      '19',
      '22',
      'X',
      'chrY',
      'MT',
      'chrM',
      'GL000192.1',
      'GL000192.1_x',
      'KI270706.1',
      'chr3',
      'HLA-A*01:01',
    )
    const variant = fc.record({ chrom: contig, pos: fc.integer({ min: 0, max: 3_000_000_000 }), id: fc.stringMatching(/^[A-Za-z0-9:._-]{0,12}$/) })
    fc.assert(
      fc.property(variant, variant, (a, b) => {
        const byKey = Math.sign(genomeOrderKey(a) < genomeOrderKey(b) ? -1 : genomeOrderKey(a) > genomeOrderKey(b) ? 1 : 0)
        expect(byKey).toBe(Math.sign(compareGenomeOrder(a, b)))
      }),
      { numRuns: 2000 },
    )
  })

  it('reads a key back', () => {
    expect(parseGenomeOrderKey('07 7 0117559590 ga4gh:VA.abc')).toEqual({ chrom: '7', pos: 117559590, id: 'ga4gh:VA.abc' })
    expect(parseGenomeOrderKey(genomeOrderKey(v('GL000192.1', 12, 'platform:VA.z')))).toEqual(v('GL000192.1', 12, 'platform:VA.z'))
    expect(() => parseGenomeOrderKey('7:12')).toThrow(/not a genome order key/)
  })

  it('refuses positions it cannot pad and names with spaces', () => {
    expect(() => genomeOrderKey(v('1', -1))).toThrow(RangeError)
    expect(() => genomeOrderKey(v('1', 1e10))).toThrow(RangeError)
    expect(() => genomeOrderKey(v('chr 1', 1))).toThrow(RangeError)
  })
})

describe('regions', () => {
  it('parses chr17:43044295-43125483, a single position and a whole contig', () => {
    expect(parseRegion('chr17:43044295-43125483')).toEqual({ chrom: '17', start: 43044295, end: 43125483 })
    expect(parseRegion('17:43,044,295-43,125,483')).toEqual({ chrom: '17', start: 43044295, end: 43125483 })
    expect(parseRegion('X:100')).toEqual({ chrom: 'X', start: 100, end: 100 })
    expect(parseRegion('chrM')).toEqual({ chrom: 'MT', start: 1, end: 9_999_999_998 })
    expect(parseRegion('17:200-100')).toBeUndefined()
    expect(parseRegion('17:0-5')).toBeUndefined()
    expect(parseRegion('17 5')).toBeUndefined()
  })

  it('gives the key range of the variants starting in a region, bounds included', () => {
    const range = regionKeyRange('chr17', 100, 200)
    const inside = (pos: number, id = 'ga4gh:VA.q') => {
      const key = genomeOrderKey(v('17', pos, id))
      return key >= range.start && key < range.end
    }
    expect([inside(99), inside(100), inside(150), inside(200, '~~~'), inside(201)]).toEqual([false, true, true, true, false])
    expect(genomeOrderKey(v('18', 150)) < range.end).toBe(false)
    expect(() => regionKeyRange('1', 5, 4)).toThrow(RangeError)
  })
})
