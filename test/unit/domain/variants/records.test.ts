import { describe, expect, it } from 'vitest'
import { CONTIGS } from '../../../../domain/variants/contigs.js'
import { inPar, platformVariantId, recodeGenotype, zygosityOf } from '../../../../domain/variants/records.js'
import { vcfAlleleId } from '../../../../domain/variants/vrs.js'
import { CSQ_HEADER, GRCH38_CONTIGS, META, readAll, rec, vcf } from '../../../support/vcf.js'

const male = (s: string) => (s === 'M1' ? 'female' : 'male')

describe('splitting multi-allelic records', () => {
  it('makes one variant per ALT, recoding genotypes per ALT (other ALTs become 0, phasing kept)', async () => {
    const { variants } = await readAll(
      vcf({ records: [rec('chr2', 200, 'rs9', 'C', 'T,CA', 80, 'PASS', 'DP=20', 'GT:AD:DP:GQ', '1/2:1,5,6:12:30', '0|2:4,0,4:8:20', './.:.:.:.')] }),
    )
    expect(variants).toHaveLength(2)
    const [t, ca] = variants
    expect([t!.alt, t!.alt_index, t!.alt_count, t!.variant_type, ca!.alt, ca!.alt_index, ca!.variant_type]).toEqual([
      'T',
      1,
      2,
      'snv',
      'CA',
      2,
      'insertion',
    ])
    expect(t!.samples.map((s) => [s.sample, s.genotype, s.source_genotype, s.zygosity])).toEqual([
      ['P1', '1/0', '1/2', 'het'],
      ['M1', '0|0', '0|2', 'hom_ref'],
      ['F1', './.', './.', 'no_call'],
    ])
    expect(ca!.samples.map((s) => [s.genotype, s.zygosity])).toEqual([
      ['0/1', 'het'],
      ['0|1', 'het'],
      ['./.', 'no_call'],
    ])
    // AD: this ALT's reads over all reads; depth from DP.
    expect(t!.samples[0]).toMatchObject({ depth: 12, genotype_quality: 30, allele_fraction: 0.4167, allele_depths: [1, 5] })
    expect(ca!.samples[0]).toMatchObject({ allele_fraction: 0.5, allele_depths: [1, 6] })
    expect(ca!.samples[2]).toMatchObject({ depth: null, genotype_quality: null, allele_fraction: null, allele_depths: null })
    // Both keep the record's own columns.
    for (const v of variants) expect(v).toMatchObject({ chrom: '2', pos: 200, ref: 'C', qual: 80, filter: ['PASS'], vcf_ids: ['rs9'] })
    expect(t!.id).not.toBe(ca!.id)
  })

  it('makes no variant of ALT ., gVCF <NON_REF> and <*>, or the spanning deletion *', async () => {
    const { variants, stats } = await readAll(
      vcf({
        records: [
          rec('chr1', 10, '.', 'A', '.', '.', '.', '.', 'GT', '0/0', '0/0', '0/0'),
          rec('chr1', 20, '.', 'A', '<NON_REF>', '.', '.', 'END=30', 'GT', '0/0', '0/0', '0/0'),
          rec('chr1', 40, '.', 'A', 'G,*', 9, 'PASS', '.', 'GT', '1/2', '2/2', '0/1'),
          rec('chr1', 50, '.', 'A', 'T,<*>', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
        ],
      }),
    )
    expect(variants.map((v) => [v.pos, v.alt, v.samples.map((s) => s.genotype).join(' ')])).toEqual([
      [40, 'G', '1/0 0/0 0/1'],
      [50, 'T', '0/1 0/0 0/0'],
    ])
    expect(stats).toMatchObject({ records: 4, variants: 2, records_without_variants: 2 })
  })
})

describe('genotypes and zygosity', () => {
  it.each([
    ['1/2', 1, '1/0'],
    ['1/2', 2, '0/1'],
    ['2|1', 2, '1|0'],
    ['./.', 1, './.'],
    ['3/.', 3, '1/.'],
    ['10/0', 10, '1/0'],
    ['1', 1, '1'],
    ['0/0/1', 1, '0/0/1'],
  ])('%s for ALT %i is %s', (gt, k, recoded) => {
    expect(recodeGenotype(gt, k)).toBe(recoded)
  })

  it.each([
    ['0/1', false, 'het'],
    ['1|0', false, 'het'],
    ['1/1', false, 'hom_alt'],
    ['1|1', true, 'hemi'],
    ['0/1', true, 'het'],
    ['0/0', false, 'hom_ref'],
    ['./.', false, 'no_call'],
    ['.', false, 'no_call'],
    ['1', false, 'hemi'],
    ['0', false, 'hom_ref'],
    ['1/.', false, 'het'],
    ['./0', false, 'no_call'],
    ['0/0/1', false, 'het'],
    ['1/1/1', false, 'hom_alt'],
  ])('%s (hemizygous site: %s) is %s', (gt, hemizygous, zygosity) => {
    expect(zygosityOf(gt, hemizygous)).toBe(zygosity)
  })

  it('calls a male all-ALT call on X or Y outside the pseudoautosomal regions hemi, not in them or for a female', async () => {
    const gt = (chrom: string, pos: number) => rec(chrom, pos, '.', 'G', 'A', 9, 'PASS', '.', 'GT', '1/1', '1/1', '1/1')
    const { variants } = await readAll(vcf({ records: [gt('chr1', 5e6), gt('chrX', 1e6), gt('chrX', 5e6), gt('chrY', 2e7), gt('chrM', 100)] }), {
      sexOf: male,
    })
    expect(variants.map((v) => `${v.chrom}:${v.samples.map((s) => s.zygosity).join(',')}`)).toEqual([
      '1:hom_alt,hom_alt,hom_alt',
      'X:hom_alt,hom_alt,hom_alt', // PAR1
      'X:hemi,hom_alt,hemi',
      'Y:hemi,hom_alt,hemi',
      'MT:hom_alt,hom_alt,hom_alt',
    ])
    // Without the samples' sex, only haploid calls are hemi.
    const { variants: unknown } = await readAll(vcf({ records: [gt('chrX', 5e6)] }))
    expect(unknown[0]!.samples.map((s) => s.zygosity)).toEqual(['hom_alt', 'hom_alt', 'hom_alt'])
  })

  it('knows both builds’ pseudoautosomal regions, and either when the build is unknown', () => {
    expect(inPar('GRCh38', 'X', 2_781_479)).toBe(true)
    expect(inPar('GRCh37', 'X', 2_781_479)).toBe(false)
    expect(inPar('GRCh37', 'Y', 59_034_050)).toBe(true)
    expect(inPar(undefined, 'X', 2_700_000)).toBe(true)
    expect(inPar('GRCh38', 'X', 5_000_000)).toBe(false)
  })

  it('takes allele fraction from FORMAT AF, else from AD, and depth from AD when DP is missing', async () => {
    const { variants } = await readAll(
      vcf({
        records: [
          rec('chr1', 10, '.', 'A', 'G,T', 9, 'PASS', '.', 'GT:AD:AF', '0/1:10,5,5:0.3,0.2', '1/2:0,4,4:.', '0/0:8,0,0:0,0'),
          rec('chr1', 11, '.', 'A', 'G', 9, 'PASS', '.', 'GT:AD', '0/1:0,0', '0/0:.', '0/0:3'),
        ],
      }),
    )
    expect(variants.map((v) => v.samples.map((s) => [s.depth, s.allele_fraction]))).toEqual([
      [
        [20, 0.3],
        [8, 0.5], // AF missing: from AD
        [8, 0],
      ],
      [
        [20, 0.2],
        [8, 0.5],
        [8, 0],
      ],
      [
        [0, null],
        [null, null],
        [null, null],
      ],
    ])
  })
})

describe('structural variants', () => {
  it('keeps svtype, end and svlen of symbolic alleles, computing what INFO lacks', async () => {
    const { variants } = await readAll(
      vcf({
        records: [
          rec('chr1', 1000, '.', 'N', '<DEL>', 60, 'PASS', 'SVTYPE=DEL;END=2000;SVLEN=-1000', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 3000, '.', 'N', '<DUP:TANDEM>', 60, 'PASS', 'SVLEN=500', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 4000, '.', 'N', '<INV>', 60, 'PASS', 'END=4100', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 5000, '.', 'N', '<INS>', 60, 'PASS', 'SVTYPE=INS;SVLEN=300', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 6000, '.', 'N', '<CN0>,<CN3>', 60, 'PASS', 'END=9000;SVTYPE=CNV', 'GT', '1/2', '0/0', '0/0'),
          rec('chr1', 7000, '.', 'N', '<DEL>', 60, 'PASS', 'END=7500', 'GT', '0/1', '0/0', '0/0'),
        ],
      }),
    )
    expect(variants.map((v) => [v.pos, v.alt, v.variant_type, v.svtype, v.end, v.svlen])).toEqual([
      [1000, '<DEL>', 'structural', 'DEL', 2000, -1000],
      [3000, '<DUP:TANDEM>', 'structural', 'DUP', 3500, 500],
      [4000, '<INV>', 'structural', 'INV', 4100, 100],
      [5000, '<INS>', 'structural', 'INS', 5000, 300],
      [6000, '<CN0>', 'structural', 'CNV', 9000, 3000],
      [6000, '<CN3>', 'structural', 'CNV', 9000, 3000],
      [7000, '<DEL>', 'structural', 'DEL', 7500, -500],
    ])
    // Ids from the record's own coordinates, never a VRS Allele id.
    for (const v of variants) expect(v.id).toMatch(/^platform:SV\.[\w-]{32}$/)
    expect(variants[0]!.id).toBe(platformVariantId('GRCh38', '1', 1000, 'N', '<DEL>', 2000))
    expect(new Set(variants.map((v) => v.id)).size).toBe(variants.length)
  })

  it('reads breakends: svtype BND, the mate, and an id that is the same with or without chr', async () => {
    const bnd = (chrom: string, alt: string) => rec(chrom, 321681, 'bnd_W', 'G', alt, 6, 'PASS', 'SVTYPE=BND', 'GT', '0/1', '0/0', '0/0')
    const { variants } = await readAll(
      vcf({ records: [bnd('chr2', 'G]chr17:198982]'), bnd('2', 'G]17:198982]'), bnd('chr2', 'G.'), bnd('chr2', '[chr13:5[G')] }),
    )
    expect(variants.map((v) => [v.variant_type, v.svtype, v.end, v.mate])).toEqual([
      ['breakend', 'BND', 321681, { chrom: '17', pos: 198982 }],
      ['breakend', 'BND', 321681, { chrom: '17', pos: 198982 }],
      ['breakend', 'BND', 321681, null],
      ['breakend', 'BND', 321681, { chrom: '13', pos: 5 }],
    ])
    expect(variants[0]!.alt).toBe('G]chr17:198982]')
    expect(variants[0]!.id).toBe(variants[1]!.id)
    expect(variants[0]!.id).not.toBe(variants[3]!.id)
  })

  it('gives sequence-resolved SVs their VRS id and their INFO svtype', async () => {
    const { variants } = await readAll(
      vcf({ records: [rec('chr1', 100, '.', 'A', 'ATTTTTTTTTT', 9, 'PASS', 'SVTYPE=INS', 'GT', '0/1', '0/0', '0/0')] }),
    )
    expect(variants[0]).toMatchObject({ variant_type: 'insertion', svtype: 'INS', svlen: 10, end: 100, id_type: 'vrs' })
  })
})

describe('variant ids', () => {
  const snv = rec('chr19', 44908822, 'rs7412', 'C', 'T', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0')

  it('identifies alleles by VRS on the declared build (rs7412 on GRCh38)', async () => {
    const { variants } = await readAll(vcf({ records: [snv] }))
    expect(variants[0]).toMatchObject({ id: 'ga4gh:VA.0AePZIWZUNsUlQTamyLrjm2HWUw2opLt', id_type: 'vrs', assembly: 'GRCh38', chrom: '19' })
    expect(variants[0]!.genome_order).toBe('19 19 0044908822 ga4gh:VA.0AePZIWZUNsUlQTamyLrjm2HWUw2opLt')
  })

  it('identifies the same record on GRCh37 with GRCh37’s contig', async () => {
    const { variants } = await readAll(
      vcf({ reference: '##reference=file:///refs/human_g1k_v37.fasta', meta: META, records: [snv.replace('chr19', '19')] }),
    )
    expect(variants[0]!.assembly).toBe('GRCh37')
    expect(variants[0]!.id).toBe(vcfAlleleId(CONTIGS.GRCh37['19'].refget_accession, 44908822, 'C', 'T'))
  })

  it('keeps a platform digest, never a guessed VRS id, when the build cannot be told', async () => {
    const { variants, header } = await readAll(vcf({ reference: null, meta: META, records: [snv] }))
    expect(header.build.assembly).toBeUndefined()
    expect(variants[0]).toMatchObject({ id_type: 'platform', assembly: null })
    expect(variants[0]!.id).toBe(platformVariantId(undefined, '19', 44908822, 'C', 'T'))
    expect(variants[0]!.id).toMatch(/^platform:VA\.[\w-]{32}$/)
  })

  it('keeps a platform digest when the build is in conflict, or the contig is not primary', async () => {
    const conflicting = await readAll(vcf({ reference: '##reference=hg19.fa', records: [snv] }))
    expect(conflicting.header.build.reason).toMatch(/conflicting/)
    expect(conflicting.variants[0]!.id_type).toBe('platform')
    const unplaced = await readAll(
      vcf({ meta: [...GRCH38_CONTIGS, ...META], records: [rec('chrUn_KI270302v1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0')] }),
    )
    expect(unplaced.variants[0]).toMatchObject({ id_type: 'platform', assembly: 'GRCh38', chrom: 'chrUn_KI270302v1' })
    expect(unplaced.variants[0]!.genome_order).toMatch(/^99 chrUn_KI270302v1 0000000005 platform:VA\./)
  })

  it('digests trimmed coordinates, so padding does not change a platform id', () => {
    expect(platformVariantId(undefined, 'chr1', 100, 'CAG', 'C')).toBe(platformVariantId(undefined, '1', 99, 'GCAG', 'GC'))
    expect(platformVariantId('GRCh37', '1', 100, 'CAG', 'C')).not.toBe(platformVariantId(undefined, '1', 100, 'CAG', 'C'))
  })

  it('normalizes chr prefixes and upper-cases bases', async () => {
    const { variants } = await readAll(
      vcf({
        records: [
          rec('chr7', 117559590, '.', 'atct', 'a', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
          rec('7', 117559590, '.', 'ATCT', 'A', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
        ],
      }),
    )
    expect(variants.map((v) => [v.chrom, v.ref, v.alt, v.end, v.variant_type])).toEqual([
      ['7', 'ATCT', 'A', 117559593, 'deletion'],
      ['7', 'ATCT', 'A', 117559593, 'deletion'],
    ])
    expect(variants[0]!.id).toBe(variants[1]!.id)
  })
})

describe('annotations on variants', () => {
  it('carries genes, the most severe consequence and HGVS of each ALT from CSQ', async () => {
    const csq = [
      'T|missense_variant|MODERATE|APOE|ENSG00000130203|Transcript|ENST00000252486.9|protein_coding|4/4||ENST00000252486.9:c.526C>T|ENSP00000252486.4:p.Arg176Cys|YES',
      'T|upstream_gene_variant|MODIFIER|TOMM40|ENSG00000130204|Transcript|ENST00000252487.1|protein_coding||||||',
      'CA|frameshift_variant|HIGH|APOE|ENSG00000130203|Transcript|ENST00000252486.9|protein_coding|4/4||ENST00000252486.9:c.527dup|ENSP00000252486.4:p.Leu177fs|YES',
    ].join(',')
    const { variants } = await readAll(
      vcf({
        meta: [...GRCH38_CONTIGS, ...META, CSQ_HEADER],
        records: [rec('chr19', 44908822, '.', 'C', 'T,CA', 9, 'PASS', `CSQ=${csq}`, 'GT', '1/2', '0/1', '0/2')],
      }),
    )
    expect(variants.map((v) => [v.alt, v.genes, v.consequence, v.impact, v.transcript, v.hgvs_c, v.hgvs_p, v.annotations.length])).toEqual([
      ['T', ['APOE', 'TOMM40'], 'missense_variant', 'MODERATE', 'ENST00000252486.9', 'c.526C>T', 'p.Arg176Cys', 2],
      ['CA', ['APOE'], 'frameshift_variant', 'HIGH', 'ENST00000252486.9', 'c.527dup', 'p.Leu177fs', 1],
    ])
  })

  it('leaves annotation fields empty without CSQ or ANN', async () => {
    const { variants } = await readAll(vcf({ records: [rec('chr1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0')] }))
    expect(variants[0]).toMatchObject({ genes: [], consequence: null, impact: null, transcript: null, hgvs_c: null, hgvs_p: null, annotations: [] })
  })
})
