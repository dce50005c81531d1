import { describe, expect, it } from 'vitest'
import { buildsNamedBy, detectAssembly, normalizeContig, refgetAccessionFor, type HeaderContig } from '../../../../domain/variants/assembly.js'
import { CONTIGS } from '../../../../domain/variants/contigs.js'

const lengths = (assembly: 'GRCh37' | 'GRCh38', prefix = '', names = ['1', '2', 'X', 'MT']): HeaderContig[] =>
  names.map((n) => ({ id: `${prefix}${prefix && n === 'MT' ? 'M' : n}`, length: CONTIGS[assembly][n as '1'].length }))

describe('contig names', () => {
  it.each([
    ['7', '7'],
    ['chr7', '7'],
    ['CHR7', '7'],
    ['chrX', 'X'],
    ['x', 'X'],
    ['chrY', 'Y'],
    ['M', 'MT'],
    ['chrM', 'MT'],
    ['chrMT', 'MT'],
    ['MT', 'MT'],
    ['22', '22'],
    ['chr23', 'chr23'],
    ['GL000192.1', 'GL000192.1'],
    ['chrUn_gl000220', 'chrUn_gl000220'],
    ['chr1_KI270706v1_random', 'chr1_KI270706v1_random'],
    ['07', '07'],
  ])('%s is %s', (name, normalized) => {
    expect(normalizeContig(name)).toBe(normalized)
  })
})

describe('build names', () => {
  it.each([
    ['GRCh37', ['GRCh37']],
    ['file:///data/hg19.fa', ['GRCh37']],
    ['file:///data/ucsc.hg19.fasta', ['GRCh37']],
    ['/refs/human_g1k_v37.fasta', ['GRCh37']],
    ['/refs/hs37d5.fa.gz', ['GRCh37']],
    ['/refs/Homo_sapiens_assembly19.fasta', ['GRCh37']],
    ['b37', ['GRCh37']],
    ['Homo_sapiens.GRCh37.75.dna.primary_assembly.fa', ['GRCh37']],
    ['GCF_000001405.25', ['GRCh37']],
    ['GRCh38', ['GRCh38']],
    ['file:///refs/GRCh38_full_analysis_set_plus_decoy_hla.fa', ['GRCh38']],
    ['/refs/Homo_sapiens_assembly38.fasta', ['GRCh38']],
    ['hg38.fa', ['GRCh38']],
    ['/refs/hs38DH.fa', ['GRCh38']],
    ['GCA_000001405.15_GRCh38_no_alt_analysis_set.fna', ['GRCh38']],
    ['GCF_000001405.40', ['GRCh38']],
    ['hg18.fa', []],
    ['chm13v2.0.fa', []],
    ['/refs/ahg190.fa', []],
    ['genome.fa', []],
  ])('%s names %j', (text, builds) => {
    expect(buildsNamedBy(text)).toEqual(builds)
  })
})

describe('build detection', () => {
  it('tells GRCh38 from contig lengths alone (chr-prefixed)', () => {
    const build = detectAssembly({ contigs: lengths('GRCh38', 'chr') })
    expect(build.assembly).toBe('GRCh38')
    expect(build.reason).toBe('GRCh38 from contig_length')
  })

  it('tells GRCh37 from contig lengths alone', () => {
    expect(detectAssembly({ contigs: lengths('GRCh37') }).assembly).toBe('GRCh37')
  })

  it('tells the build from ##reference alone', () => {
    expect(detectAssembly({ reference: 'file:///refs/Homo_sapiens_assembly38.fasta', contigs: [] }).assembly).toBe('GRCh38')
    expect(detectAssembly({ reference: 'file:///refs/human_g1k_v37.fasta', contigs: [] }).assembly).toBe('GRCh37')
  })

  it('tells the build from a contig line assembly= attribute', () => {
    expect(detectAssembly({ contigs: [{ id: '1', assembly: 'b37' }] }).assembly).toBe('GRCh37')
  })

  it('agrees when reference and lengths agree', () => {
    const build = detectAssembly({ reference: 'hg38.fa', contigs: lengths('GRCh38', 'chr') })
    expect(build.assembly).toBe('GRCh38')
    expect(build.evidence.map((e) => e.source)).toEqual(['reference', 'contig_length', 'contig_length', 'contig_length'])
  })

  it('lets lengths decide nothing on MT alone: the same in both builds', () => {
    const build = detectAssembly({ contigs: [{ id: 'MT', length: 16569 }] })
    expect(build.assembly).toBeUndefined()
    expect(build.reason).toMatch(/cannot be told/)
  })

  it('is unknown when the reference names one build and the lengths are the other', () => {
    const build = detectAssembly({ reference: 'file:///refs/hg19.fa', contigs: lengths('GRCh38', 'chr') })
    expect(build.assembly).toBeUndefined()
    expect(build.reason).toMatch(/conflicting evidence, GRCh37 \(##reference=file:\/\/\/refs\/hg19\.fa\) and GRCh38 \(##contig chr1 length=248956422/)
  })

  it('is unknown when the contig lengths are of both builds', () => {
    const build = detectAssembly({ contigs: [...lengths('GRCh37', '', ['1']), ...lengths('GRCh38', '', ['2'])] })
    expect(build.assembly).toBeUndefined()
    expect(build.reason).toMatch(/conflicting/)
  })

  it('is unknown without any evidence, and says so', () => {
    expect(detectAssembly({ contigs: [] }).reason).toBe('the build cannot be told: no ##reference and no ##contig length of GRCh37 or GRCh38')
    expect(detectAssembly({ reference: 'genome.fa', contigs: [{ id: '1', length: 1000 }] }).reason).toMatch(/names neither GRCh37 nor GRCh38/)
  })

  it('ignores the lengths of contigs that are not primary', () => {
    expect(detectAssembly({ contigs: [{ id: 'GL000192.1', length: 547496 }, ...lengths('GRCh37', '', ['1'])] }).assembly).toBe('GRCh37')
  })
})

describe('refget accessions of records', () => {
  const grch38 = detectAssembly({ reference: 'hg38.fa', contigs: lengths('GRCh38', 'chr', ['1', '2', 'X']) })

  it('names the accession of a primary contig, with or without chr', () => {
    expect(refgetAccessionFor(grch38, 'chr7')).toBe(CONTIGS.GRCh38['7'].refget_accession)
    expect(refgetAccessionFor(grch38, '7')).toBe(CONTIGS.GRCh38['7'].refget_accession)
    expect(refgetAccessionFor(grch38, 'chrM')).toBe(CONTIGS.GRCh38.MT.refget_accession)
  })

  it('has none for an unknown build, unplaced contigs, or a contig declared with another length', () => {
    expect(refgetAccessionFor(detectAssembly({ contigs: [] }), '7')).toBeUndefined()
    expect(refgetAccessionFor(grch38, 'chrUn_KI270302v1')).toBeUndefined()
    const odd = detectAssembly({ reference: 'hg38.fa', contigs: [{ id: 'chr3', length: 12345 }] })
    expect(odd.assembly).toBe('GRCh38')
    expect(refgetAccessionFor(odd, 'chr3')).toBeUndefined()
    expect(refgetAccessionFor(odd, 'chr4')).toBe(CONTIGS.GRCh38['4'].refget_accession)
  })

  it('has none for UCSC hg19 chrM (NC_001807, not the rCRS) unless the header declares the rCRS length', () => {
    const hg19 = detectAssembly({ reference: 'file:///refs/ucsc.hg19.fasta', contigs: [] })
    expect(refgetAccessionFor(hg19, 'chr1')).toBe(CONTIGS.GRCh37['1'].refget_accession)
    expect(refgetAccessionFor(hg19, 'chrM')).toBeUndefined()
    expect(refgetAccessionFor(detectAssembly({ reference: 'hg19.fa', contigs: [{ id: 'chrM', length: 16571 }] }), 'chrM')).toBeUndefined()
    expect(refgetAccessionFor(detectAssembly({ reference: 'hg19.fa', contigs: [{ id: 'chrM', length: 16569 }] }), 'chrM')).toBe(
      CONTIGS.GRCh37.MT.refget_accession,
    )
    expect(refgetAccessionFor(detectAssembly({ reference: 'human_g1k_v37.fasta', contigs: [] }), 'MT')).toBe(CONTIGS.GRCh37.MT.refget_accession)
  })
})
