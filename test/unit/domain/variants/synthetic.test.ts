import { Readable } from 'node:stream'
import { createGzip } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { readVariants } from '../../../../domain/variants/reader.js'
import { deNovoSite, trioVcf, trioVcfStream } from '../../../../domain/variants/synthetic.js'
import { readAll } from '../../../support/vcf.js'

const samples = { proband: 'P-001', mother: 'M-001', father: 'F-001' }
const sexOf = (s: string) => (s === 'M-001' ? ('female' as const) : ('male' as const))

describe('the synthetic trio VCF', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(trioVcf({ samples, records: 50, seed: 5 })).toBe(trioVcf({ samples, records: 50, seed: 5 }))
    expect(trioVcf({ samples, records: 50, seed: 5 })).not.toBe(trioVcf({ samples, records: 50, seed: 6 }))
  })

  it('streams the same text it returns', async () => {
    let streamed = ''
    for await (const chunk of trioVcfStream({ samples, records: 400, seed: 2 })) streamed += String(chunk)
    expect(streamed).toBe(trioVcf({ samples, records: 400, seed: 2 }))
  })

  for (const assembly of ['GRCh38', 'GRCh37'] as const) {
    it(`is a valid, annotated, realistic trio on ${assembly}`, async () => {
      const { header, variants, stats } = await readAll(trioVcf({ samples, records: 300, seed: 1, assembly }), { sexOf })
      expect(header.samples).toEqual(['P-001', 'M-001', 'F-001'])
      expect(header.build.assembly).toBe(assembly)
      expect(stats.records).toBe(300)
      // Every primary contig, in genome order.
      expect(new Set(variants.map((v) => v.chrom)).size).toBe(25)
      const keys = variants.map((v) => v.genome_order)
      expect(keys.map((k) => k.slice(0, 2) + k.slice(k.indexOf(' ', 3), k.lastIndexOf(' ')))).toEqual(
        [...keys].sort().map((k) => k.slice(0, 2) + k.slice(k.indexOf(' ', 3), k.lastIndexOf(' '))),
      )
      // Multi-allelic sites, indels, a structural variant, annotations.
      expect(variants.some((v) => v.alt_count > 1)).toBe(true)
      expect(new Set(variants.map((v) => v.variant_type))).toEqual(new Set(['snv', 'deletion', 'insertion', 'structural']))
      expect(variants.filter((v) => v.consequence).length).toBe(variants.length)
      expect(variants.some((v) => v.hgvs_p?.endsWith('='))).toBe(true)
      expect(variants.filter((v) => v.id_type === 'vrs').length).toBe(variants.filter((v) => v.variant_type !== 'structural').length)
      // Hemizygous X calls for the male proband, haploid MT calls.
      expect(variants.some((v) => v.chrom === 'X' && v.samples[0]!.zygosity === 'hemi')).toBe(true)
      expect(variants.filter((v) => v.chrom === 'MT').every((v) => v.samples.every((s) => s.genotype.length === 1))).toBe(true)
      expect(variants.filter((v) => v.chrom === 'Y').every((v) => v.samples[1]!.zygosity === 'no_call')).toBe(true)
    })
  }

  it('has one de novo candidate: a PASS missense in SCN2A, het in the proband, both parents hom_ref', async () => {
    const { variants } = await readAll(trioVcf({ samples, records: 300, seed: 9 }), { sexOf })
    const deNovo = variants.filter(
      (v) =>
        v.filter[0] === 'PASS' &&
        v.samples[0]!.zygosity === 'het' &&
        v.samples.slice(1).every((s) => s.zygosity === 'hom_ref' && (s.depth ?? 0) >= 20) &&
        v.genes.includes('SCN2A') &&
        v.consequence === 'missense_variant',
    )
    const site = deNovoSite()
    expect(deNovo.map((v) => [v.chrom, v.pos, v.ref, v.alt, v.hgvs_p])).toEqual([['2', site.pos, site.ref, site.alt, 'p.Glu548Lys']])
  })

  it('follows Mendel on the autosomes (no other de novo calls)', async () => {
    const { variants } = await readAll(trioVcf({ samples, records: 1000, seed: 4 }), { sexOf })
    const autosomal = variants.filter((v) => /^\d+$/.test(v.chrom) && v.samples.every((s) => s.zygosity !== 'no_call'))
    const alleles = (gt: string) => gt.split(/[/|]/)
    const violations = autosomal.filter((v) => {
      const [p, m, f] = v.samples.map((s) => alleles(s.genotype))
      return !p!.some((a, i) => m!.includes(a) && f!.includes(p![1 - i]!))
    })
    expect(violations.map((v) => `${v.chrom}:${v.pos}`)).toEqual([`2:${deNovoSite().pos}`])
  })
})

describe('streaming 100,000 records', () => {
  it('reads a gzip stream of 100,000 generated records without holding them (bounded heap)', { timeout: 120_000 }, async () => {
    const started = Date.now()
    const source = trioVcfStream({ samples, records: 100_000, seed: 12 }).pipe(createGzip())
    const reader = await readVariants(source as Readable, { sexOf })
    const baseline = process.memoryUsage().heapUsed
    let peak = 0
    let count = 0
    let last = ''
    let unordered = 0
    for await (const variant of reader.variants) {
      count++
      if (count % 1000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - baseline)
      // In genome order up to the id (the ALTs of one record come in ALT order).
      const position = variant.genome_order.slice(0, variant.genome_order.lastIndexOf(' '))
      if (position < last) unordered++
      last = position
    }
    expect(unordered).toBe(0)
    expect(reader.stats.records).toBe(100_000)
    expect(count).toBeGreaterThan(100_000)
    // Everything read is garbage once yielded: the heap grows by buffers' worth, not by 100,000 variants (~300 MB held).
    expect(peak).toBeLessThan(50 * 1024 * 1024)
    console.log(`100,000 records, ${count} variants in ${Date.now() - started} ms, heap growth at most ${(peak / 1048576).toFixed(1)} MiB`)
  })
})
