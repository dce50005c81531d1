import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import { createGzip } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { trioVcfStream } from '../../../../domain/variants/synthetic.js'
import { VCF_LIMITS } from '../../../../domain/variants/limits.js'
import { openVcf, readLines, VcfFormatError, type VcfRecord } from '../../../../domain/variants/vcf.js'
import { bgzf, gzip, META, rec, streamOf, vcf } from '../../../support/vcf.js'

const FORMAT = 'GT:AD:DP:GQ'

async function records(input: string | Buffer | Readable): Promise<VcfRecord[]> {
  const reader = await openVcf(typeof input === 'string' || Buffer.isBuffer(input) ? streamOf(input) : input)
  const out: VcfRecord[] = []
  for await (const r of reader.records) out.push(r)
  return out
}

async function failure(input: string | Buffer): Promise<VcfFormatError> {
  try {
    await records(input)
  } catch (error) {
    if (error instanceof VcfFormatError) return error
    throw error
  }
  throw new Error('the VCF was read without an error')
}

const TWO = [
  rec('chr1', 100, 'rs1', 'A', 'G', 50, 'PASS', 'DP=30', FORMAT, '0/1:10,8:18:99', '0/0:20,0:20:60', '0/0:15,0:15:45'),
  rec('chr2', 200, '.', 'C', 'T,CA', '.', 'LowQual;LowDP', '.', FORMAT, '1/2:0,5,6:11:30', '0|1:4,4,0:8:20', './.:.:.:.'),
]

describe('reading a VCF', () => {
  it('reads the header: samples, build, definitions', async () => {
    const reader = await openVcf(streamOf(vcf({ records: TWO })))
    expect(reader.header.fileformat).toBe('VCFv4.2')
    expect(reader.header.samples).toEqual(['P1', 'M1', 'F1'])
    expect(reader.header.build.assembly).toBe('GRCh38')
    expect(reader.header.reference).toBe('file:///ref/GRCh38_full_analysis_set.fa')
    expect(reader.header.contigs[0]).toEqual({ id: 'chr1', length: 248956422 })
    expect(reader.header.info.DP).toMatchObject({ Number: 1, Type: 'Integer' })
    expect(reader.header.format.AD).toMatchObject({ Number: 'R' })
    expect(reader.header.lines).toBe(2 + META.length + 8 + 1)
  })

  it('yields each record with its columns, line number and sample data', async () => {
    const [a, b] = await records(vcf({ records: TWO }))
    expect(a).toMatchObject({
      chrom: 'chr1',
      pos: 100,
      ids: ['rs1'],
      ref: 'A',
      alts: ['G'],
      qual: 50,
      filters: ['PASS'],
      format: ['GT', 'AD', 'DP', 'GQ'],
    })
    expect(a!.info).toEqual({ DP: [30] })
    expect(a!.samples[0]).toEqual({ GT: ['0/1'], AD: [10, 8], DP: [18], GQ: [99] })
    expect(a!.line).toBe(2 + META.length + 8 + 2)
    // A multi-allelic record, QUAL ., two filters, empty INFO, a phased and a missing genotype.
    expect(b).toMatchObject({ ids: [], alts: ['T', 'CA'], qual: null, filters: ['LowQual', 'LowDP'], info: {} })
    expect(b!.samples.map((s) => s.GT?.[0])).toEqual(['1/2', '0|1', './.'])
    expect(b!.samples[2]).toEqual({ GT: ['./.'], AD: undefined, DP: undefined, GQ: undefined })
    expect(b!.line).toBe(a!.line + 1)
  })

  it('keeps symbolic alleles and breakends', async () => {
    const rs = await records(
      vcf({
        records: [
          rec('chr1', 1000, '.', 'N', '<DEL>', 60, 'PASS', 'SVTYPE=DEL;END=2000;SVLEN=-1000', FORMAT, '0/1:.:30:50', '0/0:.:30:50', '0/0:.:30:50'),
          rec('chr2', 321681, 'bnd_W', 'G', 'G]chr17:198982]', 6, 'PASS', 'SVTYPE=BND', FORMAT, '0/1:.:.:.', '0/0:.:.:.', '0/0:.:.:.'),
          rec('chr2', 321682, 'bnd_V', 'T', ']chr13:123456]T', 6, 'PASS', 'SVTYPE=BND', FORMAT, '0/1:.:.:.', '0/0:.:.:.', '0/0:.:.:.'),
          rec('chr7', 5000, '.', 'C', 'C[chr2:321681[', 6, 'PASS', 'SVTYPE=BND', FORMAT, '0/1:.:.:.', '0/0:.:.:.', '0/0:.:.:.'),
          rec('chr7', 6000, '.', 'A', '.A', 6, 'PASS', 'SVTYPE=BND', FORMAT, '0/1:.:.:.', '0/0:.:.:.', '0/0:.:.:.'),
          rec('chr7', 7000, '.', 'T', '<DUP:TANDEM>,<INS>', 6, 'PASS', 'END=7100', FORMAT, '1/2:.:.:.', '0/0:.:.:.', '0/0:.:.:.'),
        ],
      }),
    )
    expect(rs.map((r) => r.alts)).toEqual([
      ['<DEL>'],
      ['G]chr17:198982]'],
      [']chr13:123456]T'],
      ['C[chr2:321681['],
      ['.A'],
      ['<DUP:TANDEM>', '<INS>'],
    ])
  })

  it('reads genotypes that are missing, phased, haploid or partly called', async () => {
    const [r] = await records(
      vcf({
        samples: ['a', 'b', 'c', 'd', 'e', 'f'],
        records: [rec('chrX', 5e6, '.', 'G', 'A', 9, 'PASS', '.', 'GT', '.', '1', '0|1', './.', '1/.', '.|.')],
      }),
    )
    expect(r!.samples.map((s) => s.GT?.[0])).toEqual([undefined, '1', '0|1', './.', '1/.', '.|.'])
  })

  it('keeps chr-prefixed and bare contig names as written', async () => {
    const rs = await records(
      vcf({
        records: [
          rec('chr19', 44908822, '.', 'C', 'T', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
          rec('19', 44908822, '.', 'C', 'T', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
          rec('chrM', 73, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '1', '1', '1'),
        ],
      }),
    )
    expect(rs.map((r) => r.chrom)).toEqual(['chr19', '19', 'chrM'])
  })

  it('reads an INFO field ending in ;, and empty INFO fields', async () => {
    const [a, b, c] = await records(
      vcf({
        records: [
          rec('chr1', 1, '.', 'A', 'G', 9, 'PASS', 'DP=10;', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 2, '.', 'A', 'G', 9, 'PASS', 'DP=10;;DB;', 'GT', '0/1', '0/0', '0/0'),
          rec('chr1', 3, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
        ],
      }),
    )
    expect(a!.info).toEqual({ DP: [10] })
    expect(b!.info).toEqual({ DP: [10], DB: true })
    expect(c!.info).toEqual({})
  })

  it('reads a last record with no final newline, and CRLF line ends', async () => {
    const text = vcf({ records: TWO })
    expect(await records(text.slice(0, -1))).toHaveLength(2)
    const crlf = text.replaceAll('\n', '\r\n')
    const rs = await records(crlf.slice(0, -2))
    expect(rs).toHaveLength(2)
    expect(rs[1]!.samples[2]!.GQ).toBeUndefined()
    expect(rs[0]!.samples[2]).toEqual({ GT: ['0/0'], AD: [15, 0], DP: [15], GQ: [45] })
  })

  it('skips blank lines, including trailing ones', async () => {
    expect(await records(`${vcf({ records: TWO })}\n\n`)).toHaveLength(2)
  })

  it('reads a sites-only VCF (no FORMAT, no samples)', async () => {
    const rs = await records(vcf({ samples: [], records: [rec('chr1', 5, '.', 'A', 'T', 9, 'PASS', 'DP=3')] }))
    expect(rs[0]).toMatchObject({ format: [], samples: [], info: { DP: [3] } })
  })

  it('splits lines correctly across any chunk boundary, multi-byte characters included', async () => {
    const text = vcf({ meta: ['##INFO=<ID=NOTE,Number=1,Type=String,Description="Température, déjà vu ✓">'], records: TWO })
    for (const size of [1, 2, 3, 5, 64]) {
      const reader = await openVcf(streamOf(text, size))
      expect(reader.header.info.NOTE?.Description).toBe('Température, déjà vu ✓')
      const rs: VcfRecord[] = []
      for await (const r of reader.records) rs.push(r)
      expect(rs.map((r) => r.pos)).toEqual([100, 200])
    }
  })
})

describe('compressed VCFs', () => {
  const text = vcf({ records: TWO })

  it('reads gzip', async () => {
    expect((await records(gzip(text))).map((r) => r.pos)).toEqual([100, 200])
  })

  it('reads BGZF: many gzip members, blocks ending mid-line, and the empty end-of-file block', async () => {
    const bytes = bgzf(text, 97)
    expect(bytes.subarray(-28).toString('hex')).toBe('1f8b08040000000000ff0600424302001b0003000000000000000000')
    expect((await records(streamOf(bytes, 50))).map((r) => r.pos)).toEqual([100, 200])
  })

  it('reads a file written by htslib bgzip (a synthetic trio of 600 records, several BGZF blocks)', async () => {
    const bytes = readFileSync(resolve(import.meta.dirname, 'fixtures/trio-b37.vcf.gz'))
    let members = 0
    for (let at = 0; at < bytes.length; at += bytes.readUInt16LE(at + 16) + 1) members++
    expect(members).toBeGreaterThan(3)
    const reader = await openVcf(Readable.from([bytes]))
    expect(reader.header.samples).toEqual(['HG002', 'HG004', 'HG003'])
    expect(reader.header.build.assembly).toBe('GRCh37')
    const rs: VcfRecord[] = []
    for await (const r of reader.records) rs.push(r)
    expect(rs).toHaveLength(600)
    expect(rs.at(-1)!.chrom).toBe('MT')
  })

  it('reports a truncated gzip stream as a malformed file', async () => {
    const bytes = gzip(vcf({ records: [...TWO, ...TWO, ...TWO] }))
    const error = await failure(bytes.subarray(0, bytes.length - 30))
    expect(error.reason).toMatch(/compressed stream is corrupt or truncated/)
  })
})

describe('malformed VCFs', () => {
  const first = 2 + META.length + 8 + 2
  const ok = rec('chr1', 100, '.', 'A', 'G', 50, 'PASS', 'DP=3', FORMAT, '0/1:10,8:18:99', '0/0:20,0:20:60', '0/0:15,0:15:45')
  const withLine = (line: string) => vcf({ records: [ok, line, ok] })

  it.each([
    ['a record without INFO', rec('chr1', 5, '.', 'A', 'G', 9, 'PASS'), 'expected at least 8 tab-separated columns, found 7'],
    [
      'spaces instead of tabs',
      'chr1 5 . A G 9 PASS . GT 0/1 0/0 0/0',
      'expected at least 8 tab-separated columns, found 1 (spaces instead of tabs?)',
    ],
    [
      'a sample column missing',
      rec('chr1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0'),
      'expected 12 columns (8, FORMAT and 3 samples), found 11',
    ],
    ['a non-numeric POS', rec('chr1', '5x', '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'), 'POS is not a position: "5x"'],
    ['an empty CHROM', rec('', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'), 'CHROM is empty or has spaces: ""'],
    ['a REF that is not bases', rec('chr1', 5, '.', 'A1', 'G', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'), 'REF is not a sequence of bases: "A1"'],
    [
      'an empty ALT allele',
      rec('chr1', 5, '.', 'A', 'G,,T', 9, 'PASS', '.', 'GT', '0/1', '0/0', '0/0'),
      'ALT allele is not bases, *, a <symbolic> allele or a breakend: ""',
    ],
    ['a QUAL that is not a number', rec('chr1', 5, '.', 'A', 'G', 'high', 'PASS', '.', 'GT', '0/1', '0/0', '0/0'), 'QUAL is not a number: "high"'],
    [
      'a genotype naming a missing ALT',
      rec('chr1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/2', '0/0', '0/0'),
      'sample P1: GT 0/2 names allele 2 but the record has 1 ALT allele',
    ],
    [
      'a genotype that is not one',
      rec('chr1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT', '0/1', 'het', '0/0'),
      'sample M1: GT is not a genotype: "het"',
    ],
    [
      'a depth that is not an integer',
      rec('chr1', 5, '.', 'A', 'G', 9, 'PASS', '.', 'GT:DP', '0/1:ten', '0/0:3', '0/0:3'),
      'sample P1: DP is not an integer: "ten"',
    ],
    [
      'an END that is not an integer',
      rec('chr1', 5, '.', 'A', '<DEL>', 9, 'PASS', 'END=far', 'GT', '0/1', '0/0', '0/0'),
      'INFO END is not an integer: "far"',
    ],
    ['a header line among the records', '##INFO=<ID=X,Number=1,Type=String,Description="late">', 'a header line after the records began'],
  ])('fails on %s, naming the line and the reason', async (_, line, reason) => {
    const error = await failure(withLine(line))
    expect(error.line).toBe(first + 1)
    expect(error.reason).toBe(reason)
    expect(error.message).toBe(`line ${first + 1}: ${reason}`)
  })

  it('fails on what is not a VCF, or not one with a header', async () => {
    expect((await failure('hello\nworld\n')).message).toBe('line 1: not a VCF: the first line must be ##fileformat=VCFv4.x')
    expect((await failure(bgzf('BCF\u0002\u0002binary'))).message).toBe('line 1: a BCF file, not a VCF')
    expect((await failure('##fileformat=VCFv4.2\n##source=x\n')).message).toBe('line 3: no #CHROM header line')
    expect((await failure('##fileformat=VCFv4.2\nchr1\t1\t.\tA\tG\t.\t.\t.\n')).message).toBe('line 2: a record before the #CHROM header line')
    expect((await failure('##fileformat=VCFv4.2\n##broken\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n')).message).toBe(
      'line 2: a header line must be ##key=value: ##broken',
    )
    expect((await failure('##fileformat=VCFv4.2\n#CHROM POS ID REF ALT QUAL FILTER INFO\n')).message).toMatch(
      /^line 2: bad header: VCF header missing columns/,
    )
    expect((await failure(vcf({ samples: ['A', 'A'], records: [] }))).message).toMatch(/^line \d+: sample A appears twice in the #CHROM line$/)
    expect(await failure('')).toMatchObject({ line: 1, reason: 'no #CHROM header line' })
  })
})

describe('oversized records (domain/variants/limits.ts)', () => {
  const first = 2 + META.length + 8 + 2
  const ok = rec('chr1', 100, '.', 'A', 'G', 50, 'PASS', 'DP=3', FORMAT, '0/1:10,8:18:99', '0/0:20,0:20:60', '0/0:15,0:15:45')
  const withLine = (line: string) => vcf({ records: [ok, line, ok] })
  const samples = ['0/1', '0/0', '0/0']
  const site = (columns: Partial<Record<'chrom' | 'pos' | 'id' | 'ref' | 'alt' | 'filter' | 'info' | 'gt', string>>) =>
    rec(
      columns.chrom ?? 'chr1',
      columns.pos ?? 5,
      columns.id ?? '.',
      columns.ref ?? 'A',
      columns.alt ?? 'G',
      9,
      columns.filter ?? 'PASS',
      columns.info ?? '.',
      'GT',
      columns.gt ?? samples[0]!,
      samples[1]!,
      samples[2]!,
    )
  const csq = (n: number) => `CSQ=${Array.from({ length: n }, (_, i) => `G|missense_variant|MODERATE|GENE${i}`).join(',')}`

  it.each([
    [
      'a 1.2 MB ALT allele',
      site({ alt: `G,${'T'.repeat(1_200_000)}` }),
      'ALT allele 2 is 1,200,000 bytes long; at most 50,000 are accepted (write a longer allele as a symbolic one, such as <INS> or <DUP> with SVLEN or END)',
    ],
    [
      'a REF over 50,000 bases',
      site({ ref: 'A'.repeat(50_001) }),
      'REF is 50,001 bytes long; at most 50,000 are accepted (write a longer deletion as a symbolic allele, <DEL> with END)',
    ],
    ['a CHROM over 255 bytes', site({ chrom: `chr${'é'.repeat(127)}` }), 'CHROM is 257 bytes long; at most 255 are accepted'],
    [
      'an ID column over 4 KiB',
      site({ id: Array.from({ length: 800 }, (_, i) => `rs${i}`).join(';') }),
      'ID is 4,689 bytes long; at most 4,096 are accepted',
    ],
    [
      'a FILTER column over 1 KiB',
      site({ filter: Array.from({ length: 300 }, (_, i) => `f${i}`).join(';') }),
      'FILTER is 1,389 bytes long; at most 1,024 are accepted',
    ],
    ['an INFO column over 128 KiB', site({ info: `NOTE=${'x'.repeat(128 * 1024)}` }), 'INFO is 131,077 bytes long; at most 131,072 are accepted'],
    ['an INFO field of more than 1,000 values', site({ info: csq(1_001) }), 'INFO CSQ has 1,001 values; at most 1,000 are accepted'],
    ['a POS past the VCF integer', site({ pos: '2147483648' }), 'POS 2147483648 is past 2,147,483,647, the largest position accepted'],
    [
      'a genotype of more than 64 characters',
      site({ gt: Array.from({ length: 33 }, () => '0').join('/') }),
      'sample P1: GT is 65 characters long; at most 64 are accepted',
    ],
  ])('refuses %s, naming the line, the field and the limit', async (_, line, reason) => {
    const error = await failure(withLine(line))
    expect(error).toMatchObject({ line: first + 1, reason })
  })

  it('accepts a record with each field at its limit', async () => {
    const line = site({
      chrom: `chr${'U'.repeat(252)}`,
      pos: '2147483647',
      id: `rs${'1'.repeat(4_094)}`,
      ref: 'A'.repeat(50_000),
      alt: `${'C'.repeat(50_000)},<DEL>`,
      filter: 'q'.repeat(1_024),
      info: csq(1_000).padEnd(128 * 1024, ';'),
      gt: `${Array.from({ length: 32 }, () => '0').join('/')}/`.slice(0, 63),
    })
    const [, read] = await records(withLine(line))
    expect(read).toMatchObject({ pos: 2_147_483_647, ref: 'A'.repeat(50_000), alts: ['C'.repeat(50_000), '<DEL>'] })
  })

  it('refuses a header of more than 1,000 samples, or a sample name over 256 bytes, naming the #CHROM line', async () => {
    const many = Array.from({ length: 1_001 }, (_, i) => `S${i}`)
    expect((await failure(vcf({ samples: many, records: [] }))).reason).toBe(
      "the #CHROM line names 1,001 samples; at most 1,000 are accepted: keep the order's samples (bcftools view -s)",
    )
    const long = 'N'.repeat(257)
    const error = await failure(vcf({ samples: ['P1', long], records: [] }))
    expect(error).toMatchObject({ line: 2 + META.length + 8 + 1, reason: `sample name ${'N'.repeat(80)}… is 257 bytes; at most 256 are accepted` })
  })

  it('reads within limits of its own when given them', async () => {
    const limits = { ...VCF_LIMITS, alleleBytes: 2_000_000 }
    const reader = await openVcf(streamOf(withLine(site({ alt: 'T'.repeat(1_200_000) })), 65_536), { limits })
    const read: VcfRecord[] = []
    for await (const r of reader.records) read.push(r)
    expect(read[1]!.alts[0]).toHaveLength(1_200_000)
  })
})

describe('streaming', () => {
  it('reads the source only as fast as records are consumed (backpressure)', async () => {
    let produced = 0
    const source = trioVcfStream({ samples: { proband: 'P', mother: 'M', father: 'F' }, records: 20_000, seed: 3 })
    source.on('data', (chunk: string) => (produced += chunk.length))
    source.pause()
    const compressed = source.pipe(createGzip())
    const reader = await openVcf(compressed)
    const first = await reader.records.next()
    expect(first.done).toBe(false)
    // Some buffers' worth (streams' high-water marks), not the ~5 MB the whole file is.
    expect(produced).toBeLessThan(1_500_000)
    await reader.records.return(undefined)
  })

  it('releases the source when the consumer stops early or a line is malformed', async () => {
    const text = vcf({ records: [...TWO, 'chr1\tbad', ...TWO] })
    for (const bytes of [Buffer.from(text), gzip(text)]) {
      const stopped = streamOf(bytes, 16)
      const reader = await openVcf(stopped)
      for await (const _ of reader.records) break
      expect(stopped.destroyed).toBe(true)

      const failing = streamOf(bytes, 16)
      const records = (await openVcf(failing)).records
      await expect(async () => {
        for await (const _ of records);
      }).rejects.toThrow(VcfFormatError)
      expect(failing.destroyed).toBe(true)
    }
  })

  it('yields lines one at a time from any async iterable of strings', async () => {
    const lines: string[] = []
    for await (const line of readLines(Readable.from(['a\r\nb', '\nc'], { objectMode: true }))) lines.push(line)
    expect(lines).toEqual(['a', 'b', 'c'])
  })
})
