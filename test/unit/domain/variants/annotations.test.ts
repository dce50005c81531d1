import { describe, expect, it } from 'vitest'
import {
  annotationFormat,
  annotationsByAllele,
  CONSEQUENCE_ORDER,
  consequenceRank,
  parseAnnotations,
  parseFormatDescription,
  splitHgvs,
  summarizeAnnotations,
  type AnnotationFormat,
} from '../../../../domain/variants/annotations.js'
import { openVcf } from '../../../../domain/variants/vcf.js'
import { ANN_HEADER, CSQ_HEADER, GRCH38_CONTIGS, META, readAll, rec, streamOf, vcf } from '../../../support/vcf.js'

const CSQ: AnnotationFormat = {
  source: 'CSQ',
  fields: 'Allele|Consequence|IMPACT|SYMBOL|Gene|Feature_type|Feature|BIOTYPE|HGVSc|HGVSp|CANONICAL'.split('|'),
}
const entry = (allele: string, consequence = 'missense_variant', extra = '') =>
  `${allele}|${consequence}|MODERATE|GENE1|ENSG1|Transcript|ENST1.1|protein_coding|ENST1.1:c.1A>G|ENSP1.1:p.Met1?|${extra}`
const alleles = (values: string[], ref: string, alts: string[], format = CSQ) =>
  annotationsByAllele(parseAnnotations(values, format), ref, alts).map((list) => list.map((e) => e.allele))

describe('the consequence order', () => {
  it('is VEP’s, most severe first', () => {
    const vep = CONSEQUENCE_ORDER.filter((t) => consequenceRank(t) >= 0)
    expect(vep.slice(0, 8)).toEqual([
      'chromosome_number_variation',
      'transcript_ablation',
      'feature_ablation',
      'exon_loss_variant',
      'gene_fusion',
      'bidirectional_gene_fusion',
      'splice_acceptor_variant',
      'splice_donor_variant',
    ])
    const order = (terms: string[]) => [...terms].sort((a, b) => consequenceRank(a) - consequenceRank(b))
    expect(
      order([
        'intron_variant',
        'synonymous_variant',
        'stop_gained',
        'missense_variant',
        'splice_region_variant',
        'frameshift_variant',
        'intergenic_variant',
      ]),
    ).toEqual([
      'stop_gained',
      'frameshift_variant',
      'missense_variant',
      'splice_region_variant',
      'synonymous_variant',
      'intron_variant',
      'intergenic_variant',
    ])
  })

  it('places snpEff’s own terms beside the VEP term of their kind', () => {
    expect(consequenceRank('disruptive_inframe_deletion')).toBeGreaterThan(consequenceRank('inframe_deletion'))
    expect(consequenceRank('disruptive_inframe_deletion')).toBeLessThan(consequenceRank('missense_variant'))
    expect(consequenceRank('intergenic_region')).toBeGreaterThan(consequenceRank('intergenic_variant'))
    expect(consequenceRank('MISSENSE_VARIANT')).toBe(consequenceRank('missense_variant'))
  })

  it('puts terms it does not know after every known one', () => {
    expect(consequenceRank('novel_term')).toBe(CONSEQUENCE_ORDER.length)
  })
})

describe('annotation formats from the header', () => {
  it('reads VEP’s Format: and snpEff’s quoted list', () => {
    expect(parseFormatDescription('Consequence annotations from Ensembl VEP. Format: Allele|Consequence|IMPACT')).toEqual([
      'Allele',
      'Consequence',
      'IMPACT',
    ])
    expect(parseFormatDescription("Functional annotations: 'Allele | Annotation | Annotation_Impact | Gene_Name' ")).toEqual([
      'Allele',
      'Annotation',
      'Annotation_Impact',
      'Gene_Name',
    ])
    expect(parseFormatDescription('Total depth')).toBeUndefined()
  })

  it('prefers CSQ, then ANN, from a parsed header', async () => {
    const both = await openVcf(streamOf(vcf({ meta: [...META, ANN_HEADER, CSQ_HEADER], records: [] })))
    expect(annotationFormat(both.header.info)?.source).toBe('CSQ')
    const ann = await openVcf(streamOf(vcf({ meta: [...META, ANN_HEADER], records: [] })))
    expect(annotationFormat(ann.header.info)).toMatchObject({ source: 'ANN', fields: expect.arrayContaining(['HGVS.c', 'ERRORS / WARNINGS / INFO']) })
    const none = await openVcf(streamOf(vcf({ meta: META, records: [] })))
    expect(annotationFormat(none.header.info)).toBeUndefined()
  })
})

describe('annotation entries', () => {
  it('reads fields by the header’s order and strips the transcript from HGVS', () => {
    const [e] = parseAnnotations([entry('G', 'missense_variant&splice_region_variant', 'YES')], CSQ)
    expect(e).toEqual({
      allele: 'G',
      consequences: ['missense_variant', 'splice_region_variant'],
      impact: 'MODERATE',
      gene: 'GENE1',
      gene_id: 'ENSG1',
      feature_type: 'Transcript',
      transcript: 'ENST1.1',
      biotype: 'protein_coding',
      hgvs_c: 'c.1A>G',
      hgvs_p: 'p.Met1?',
      canonical: true,
      allele_num: null,
    })
    expect(splitHgvs('NM_000059.4:c.68_69del')).toEqual({ reference: 'NM_000059.4', expression: 'c.68_69del' })
    expect(splitHgvs('c.68_69del')).toEqual({ reference: null, expression: 'c.68_69del' })
    expect(splitHgvs('ENSP0001.1:p.Leu10=')).toEqual({ reference: 'ENSP0001.1', expression: 'p.Leu10=' })
  })

  it('takes the transcript from the HGVS when the entry has no Feature', () => {
    const [e] = parseAnnotations(['G|missense_variant|||||||NM_000059.4:c.1A>G||'], CSQ)
    expect(e!.transcript).toBe('NM_000059.4')
  })

  it('attributes entries to the ALT they name: SNVs, VEP’s trimmed indels, multi-allelic sites', () => {
    // A deletion and an insertion sharing the first base: VEP writes "-" and the inserted bases.
    expect(alleles([entry('-'), entry('T')], 'AT', ['A', 'ATT'])).toEqual([['-'], ['T']])
    expect(alleles([entry('-'), entry('C')], 'ACG', ['A', 'AC'])).toEqual([['-'], ['C']])
    // One ALT takes every entry.
    expect(alleles([entry('-'), entry('TT')], 'A', ['AT'])).toEqual([['-', 'TT']])
    expect(alleles([entry('G'), entry('T')], 'C', ['G', 'T'])).toEqual([['G'], ['T']])
    // No shared first base: VEP keeps the alleles whole; with --minimal it trims each on both sides.
    expect(alleles([entry('AT'), entry('T')], 'A', ['AT', 'T'])).toEqual([['AT'], ['T']])
    expect(alleles([entry('A'), entry('ATT'), entry('CT')], 'AT', ['A', 'ATT', 'CT'])).toEqual([['A'], ['ATT'], ['CT']])
    expect(alleles([entry('-'), entry('T'), entry('C')], 'AT', ['A', 'ATT', 'CT'])).toEqual([['-'], ['T'], ['C']])
  })

  it('uses ALLELE_NUM when the VCF was annotated with it', () => {
    const format: AnnotationFormat = { source: 'CSQ', fields: ['Allele', 'Consequence', 'ALLELE_NUM'] }
    expect(alleles(['-|deletion|2', '-|frameshift_variant|1'], 'ACG', ['A', 'AC'], format)).toEqual([['-'], ['-']])
    const byNum = annotationsByAllele(parseAnnotations(['-|a|2', '-|b|1'], format), 'ACG', ['A', 'AC'])
    expect(byNum.map((l) => l.map((e) => e.consequences[0]))).toEqual([['b'], ['a']])
  })

  it('matches symbolic alleles by their SO term, and drops entries naming no ALT or several', () => {
    expect(alleles([entry('deletion'), entry('duplication'), entry('X'), entry('-')], 'N', ['<DEL>', '<DUP>'])).toEqual([
      ['deletion'],
      ['duplication'],
    ])
    expect(alleles([entry('deletion')], 'N', ['<DEL>', '<DEL:ME:ALU>'])).toEqual([[], []])
  })

  it('reads snpEff ANN entries, whose Allele is the ALT as written', async () => {
    const ann =
      'ANN=A|stop_gained|HIGH|BRCA1|ENSG00000012048|transcript|ENST00000357654.9|protein_coding|10/23|c.3607C>T|p.Arg1203*|3720/7088|3607/5592|1203/1863||,' +
      'A|downstream_gene_variant|MODIFIER|NBR2|ENSG00000198496|transcript|ENST00000591534.1|protein_coding||c.*4174G>A|||||4174|,' +
      'A|intergenic_region|MODIFIER|BRCA1-NBR2|ENSG00000012048-ENSG00000198496|intergenic_region|ENSG00000012048-ENSG00000198496|||n.43093464C>T||||||'
    const { variants } = await readAll(
      vcf({
        meta: [...GRCH38_CONTIGS, ...META, ANN_HEADER],
        records: [rec('chr17', 43093464, '.', 'G', 'A', 9, 'PASS', ann, 'GT', '0/1', '0/0', '0/0')],
      }),
    )
    expect(variants[0]).toMatchObject({
      genes: ['BRCA1', 'NBR2'],
      consequence: 'stop_gained',
      impact: 'HIGH',
      transcript: 'ENST00000357654.9',
      hgvs_c: 'c.3607C>T',
      hgvs_p: 'p.Arg1203*',
    })
  })

  it('decodes VEP’s percent-encoded HGVS (VCF 4.3)', async () => {
    const csq = 'CSQ=T|synonymous_variant|LOW|APOE|ENSG1|Transcript|ENST1.1|protein_coding|4/4||ENST1.1:c.528C>T|ENSP1.1:p.Arg176%3D|YES'
    const { variants } = await readAll(
      vcf({ meta: [...GRCH38_CONTIGS, ...META, CSQ_HEADER], records: [rec('chr19', 100, '.', 'C', 'T', 9, 'PASS', csq, 'GT', '0/1', '0/0', '0/0')] }),
    )
    expect(variants[0]!.hgvs_p).toBe('p.Arg176=')
  })
})

describe('summing up an allele’s annotations', () => {
  it('takes the most severe consequence, preferring the canonical transcript among equally severe ones', () => {
    const entries = parseAnnotations(
      [
        'G|intron_variant|MODIFIER|B|ENSGB|Transcript|ENST3.1|protein_coding|ENST3.1:c.100+5A>G||',
        'G|missense_variant|MODERATE|A|ENSGA|Transcript|ENST1.1|protein_coding|ENST1.1:c.1A>G|ENSP1.1:p.Met1Val|',
        'G|missense_variant&splice_region_variant|MODERATE|A|ENSGA|Transcript|ENST2.1|protein_coding|ENST2.1:c.4A>G|ENSP2.1:p.Met2Val|YES',
        'G|intergenic_variant|MODIFIER||||||||',
      ],
      CSQ,
    )
    expect(summarizeAnnotations(entries)).toEqual({
      genes: ['A', 'B'],
      consequence: 'missense_variant',
      impact: 'MODERATE',
      transcript: 'ENST2.1',
      hgvs_c: 'c.4A>G',
      hgvs_p: 'p.Met2Val',
    })
  })

  it('uses gene ids when there is no symbol, and nothing for intergenic entries', () => {
    const entries = parseAnnotations(
      ['G|upstream_gene_variant|MODIFIER||ENSG9|Transcript|ENST9.1|lncRNA|||', 'G|intergenic_variant|MODIFIER||||||||'],
      CSQ,
    )
    expect(summarizeAnnotations(entries)).toMatchObject({ genes: ['ENSG9'], consequence: 'upstream_gene_variant', hgvs_c: null })
    expect(summarizeAnnotations([])).toEqual({ genes: [], consequence: null, impact: null, transcript: null, hgvs_c: null, hgvs_p: null })
  })
})
