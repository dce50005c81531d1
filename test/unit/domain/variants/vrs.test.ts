import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONTIGS } from '../../../../domain/variants/contigs.js'
import {
  alleleId,
  alleleState,
  sequenceLocation,
  sequenceLocationDigest,
  sequenceLocationId,
  serializeAllele,
  serializeSequenceLocation,
  sha512t24u,
  trimAllele,
  vcfAlleleId,
  vrsJson,
} from '../../../../domain/variants/vrs.js'

/** The GA4GH VRS cases of ../shared/fixtures/vrs (CI has ../shared beside the clone). */
const FIXTURES = resolve(import.meta.dirname, '../../../../../shared/fixtures/vrs')

interface Vector {
  name: string
  vcf?: { chrom: string; pos: number; ref: string; alt: string }
  sequence_location: {
    type: 'SequenceLocation'
    sequenceReference: { type: 'SequenceReference'; refgetAccession: string }
    start: number
    end: number
  }
  location_digest?: string
  location_id?: string
  serialized_allele?: string
  allele_id?: string
}
const vectors = JSON.parse(readFileSync(resolve(FIXTURES, 'vrs-vectors.json'), 'utf8')) as { cases: Vector[] }

describe('the VRS vectors of the fixtures', () => {
  it('has cases to reproduce', () => {
    expect(vectors.cases.length).toBeGreaterThan(0)
  })

  for (const c of vectors.cases) {
    describe(c.name, () => {
      const { refgetAccession } = c.sequence_location.sequenceReference
      const location = sequenceLocation(refgetAccession, c.sequence_location.start, c.sequence_location.end)

      it('builds the same SequenceLocation', () => {
        expect(location).toEqual(c.sequence_location)
      })
      if (c.location_digest) {
        it('digests the SequenceLocation', () => {
          expect(sequenceLocationDigest(location)).toBe(c.location_digest)
        })
      }
      if (c.location_id) {
        it('identifies the SequenceLocation', () => {
          expect(sequenceLocationId(location)).toBe(c.location_id)
        })
      }
      if (c.vcf) {
        const vcf = c.vcf
        it('places the VCF record on the same location (start = POS-1, end = POS-1+len(REF))', () => {
          const t = trimAllele(vcf.pos, vcf.ref, vcf.alt)
          expect([t.start, t.end]).toEqual([c.sequence_location.start, c.sequence_location.end])
        })
        it('finds the refget accession of the contig in the build', () => {
          const onBuild = Object.values(CONTIGS).some(
            (build) => (build as Record<string, { refget_accession: string }>)[vcf.chrom]?.refget_accession === refgetAccession,
          )
          expect(onBuild).toBe(true)
        })
        if (c.serialized_allele) {
          it('serializes the Allele exactly', () => {
            const t = trimAllele(vcf.pos, vcf.ref, vcf.alt)
            expect(serializeAllele(location, alleleState(t))).toBe(c.serialized_allele)
          })
        }
        if (c.allele_id) {
          it('gives the VCF record its Allele identifier', () => {
            expect(vcfAlleleId(refgetAccession, vcf.pos, vcf.ref, vcf.alt)).toBe(c.allele_id)
          })
        }
      }
    })
  }
})

describe('sha512t24u', () => {
  it('is the unpadded base64url of the first 24 bytes of SHA-512 (the refget example)', () => {
    expect(sha512t24u('ACGT')).toBe('aKF498dAxcJAqme6QYQ7EZ07-fiw8Kw2')
    expect(sha512t24u('')).toHaveLength(32)
    expect(sha512t24u(new TextEncoder().encode('ACGT'))).toBe('aKF498dAxcJAqme6QYQ7EZ07-fiw8Kw2')
  })
})

describe('VRS serialization', () => {
  it('sorts keys and writes no whitespace', () => {
    expect(vrsJson({ type: 'X', b: [2, 1], a: { z: 'é', y: 'a"b' } })).toBe('{"a":{"y":"a\\"b","z":"é"},"b":[2,1],"type":"X"}')
  })

  it('refuses what VRS does not serialize (fractions, null)', () => {
    expect(() => vrsJson({ a: 1.5 })).toThrow(/integers/)
    expect(() => vrsJson({ a: null })).toThrow()
  })

  it('writes a SequenceLocation with only its digested fields', () => {
    const location = { ...sequenceLocation('SQ.IIB53T8CNeJJdUqzn9V_JnRtQadwWCbl', 1, 2), id: 'ga4gh:SL.x', extra: true } as never
    expect(serializeSequenceLocation(location)).toBe(
      '{"end":2,"sequenceReference":{"refgetAccession":"SQ.IIB53T8CNeJJdUqzn9V_JnRtQadwWCbl","type":"SequenceReference"},"start":1,"type":"SequenceLocation"}',
    )
  })
})

describe('trimming REF and ALT', () => {
  it.each([
    // pos, ref, alt → start, end, ref, alt
    ['an SNV', 100, 'C', 'T', 99, 100, 'C', 'T'],
    ['an MNV', 100, 'CA', 'TG', 99, 101, 'CA', 'TG'],
    ['a deletion with its anchor base', 100, 'CAG', 'C', 100, 102, 'AG', ''],
    ['an insertion with its anchor base', 100, 'C', 'CTT', 100, 100, '', 'TT'],
    ['a shared trailing base', 100, 'CAT', 'GT', 99, 101, 'CA', 'G'],
    ['shared bases at both ends', 100, 'ACGTA', 'ATTA', 100, 102, 'CG', 'T'],
    ['a split multi-allelic deletion (ATT > AT)', 100, 'ATT', 'AT', 101, 102, 'T', ''],
    ['lower case', 100, 'cag', 'c', 100, 102, 'AG', ''],
  ])('%s', (_, pos, ref, alt, start, end, r, a) => {
    expect(trimAllele(pos, ref, alt)).toEqual({ start, end, ref: r, alt: a })
  })

  it('trims leading bases first, then trailing ones of what is left (bioutils order)', () => {
    // Inserting an A after an A: left first places it after the anchor, not before.
    expect(trimAllele(10, 'A', 'AA')).toEqual({ start: 10, end: 10, ref: '', alt: 'A' })
  })
})

describe('Allele states', () => {
  const accession = CONTIGS.GRCh38['19'].refget_accession

  it('writes substitutions and insertions as literal sequences', () => {
    expect(alleleState(trimAllele(100, 'C', 'CTT'))).toEqual({ type: 'LiteralSequenceExpression', sequence: 'TT' })
    expect(alleleState(trimAllele(100, 'CA', 'TG'))).toEqual({ type: 'LiteralSequenceExpression', sequence: 'TG' })
  })

  it('writes a deletion as VRS 2.0 does: a ReferenceLengthExpression of length 0 repeating the deleted length', () => {
    const t = trimAllele(100, 'CAG', 'C')
    expect(alleleState(t)).toEqual({ type: 'ReferenceLengthExpression', length: 0, repeatSubunitLength: 2 })
    expect(serializeAllele(sequenceLocation(accession, t.start, t.end), alleleState(t))).toBe(
      `{"location":"${sequenceLocationDigest(sequenceLocation(accession, 100, 102))}","state":{"length":0,"repeatSubunitLength":2,"type":"ReferenceLengthExpression"},"type":"Allele"}`,
    )
  })

  it('gives one allele one id however the VCF pads it', () => {
    const padded = vcfAlleleId(accession, 99, 'GCAG', 'GC')
    expect(vcfAlleleId(accession, 100, 'CAG', 'C')).toBe(padded)
    expect(vcfAlleleId(accession, 100, 'CAGT', 'CT')).toBe(padded)
    expect(vcfAlleleId(accession, 100, 'CAG', 'CAT')).not.toBe(padded)
  })

  it('depends on the contig: the same coordinates on another build are another allele', () => {
    const on37 = vcfAlleleId(CONTIGS.GRCh37['19'].refget_accession, 44908822, 'C', 'T')
    expect(on37).not.toBe(vcfAlleleId(accession, 44908822, 'C', 'T'))
    expect(alleleId(sequenceLocation(accession, 44908821, 44908822), { type: 'LiteralSequenceExpression', sequence: 'T' })).toMatch(
      /^ga4gh:VA\.[\w-]{32}$/,
    )
  })
})
