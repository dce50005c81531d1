import { Readable } from 'node:stream'
import { deflateRawSync, gzipSync } from 'node:zlib'
import { readVariants, type ReadVariantsOptions } from '../../domain/variants/reader.js'
import type { VariantRecord } from '../../domain/variants/records.js'

/** Helpers for the variant tests: small VCFs, their compressed forms, and reading them whole. */

export const GRCH38_CONTIGS = [
  '##contig=<ID=chr1,length=248956422>',
  '##contig=<ID=chr2,length=242193529>',
  '##contig=<ID=chr7,length=159345973>',
  '##contig=<ID=chr17,length=83257441>',
  '##contig=<ID=chr19,length=58617616>',
  '##contig=<ID=chrX,length=156040895>',
  '##contig=<ID=chrY,length=57227415>',
  '##contig=<ID=chrM,length=16569>',
]

export const META = [
  '##INFO=<ID=DP,Number=1,Type=Integer,Description="Total depth">',
  '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">',
  '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Type of structural variant">',
  '##INFO=<ID=END,Number=1,Type=Integer,Description="End position">',
  '##INFO=<ID=SVLEN,Number=.,Type=Integer,Description="Length of the SV">',
  '##INFO=<ID=DB,Number=0,Type=Flag,Description="dbSNP">',
  '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
  '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths">',
  '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
  '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">',
  '##FORMAT=<ID=AF,Number=A,Type=Float,Description="Allele fraction">',
]

export const CSQ_HEADER =
  '##INFO=<ID=CSQ,Number=.,Type=String,Description="Consequence annotations from Ensembl VEP. Format: Allele|Consequence|IMPACT|SYMBOL|Gene|Feature_type|Feature|BIOTYPE|EXON|INTRON|HGVSc|HGVSp|CANONICAL">'

export const ANN_HEADER =
  '##INFO=<ID=ANN,Number=.,Type=String,Description="Functional annotations: \'Allele | Annotation | Annotation_Impact | Gene_Name | Gene_ID | Feature_Type | Feature_ID | Transcript_BioType | Rank | HGVS.c | HGVS.p | cDNA.pos / cDNA.length | CDS.pos / CDS.length | AA.pos / AA.length | Distance | ERRORS / WARNINGS / INFO\' ">'

/** A VCF's text: fileformat, the given meta lines, the #CHROM line with these samples, the records, each ended by `\n`. */
export function vcf(options: { meta?: string[]; samples?: string[]; records: string[]; reference?: string | null }): string {
  const reference = options.reference === undefined ? '##reference=file:///ref/GRCh38_full_analysis_set.fa' : options.reference
  const samples = options.samples ?? ['P1', 'M1', 'F1']
  const columns = ['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', ...(samples.length ? ['FORMAT', ...samples] : [])]
  const lines = ['##fileformat=VCFv4.2', ...(reference ? [reference] : []), ...(options.meta ?? [...GRCH38_CONTIGS, ...META]), columns.join('\t')]
  return [...lines, ...options.records].map((l) => `${l}\n`).join('')
}

/** A record line from its columns (tabs between them). */
export const rec = (...columns: (string | number)[]) => columns.join('\t')

/** A stream of the text (or bytes) in chunks of `size`, to cross chunk boundaries anywhere. */
export function streamOf(data: string | Buffer, size = 7): Readable {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
  return Readable.from(chunks, { objectMode: false })
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** One BGZF block (SAM/BAM specification §4.1): a gzip member with the `BC` extra field giving its size. */
function bgzfBlock(data: Uint8Array): Buffer {
  const cdata = deflateRawSync(data)
  const header = Buffer.from([0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43, 2, 0, 0, 0])
  const trailer = Buffer.alloc(8)
  trailer.writeUInt32LE(crc32(data), 0)
  trailer.writeUInt32LE(data.length, 4)
  header.writeUInt16LE(header.length + cdata.length + trailer.length - 1, 16)
  return Buffer.concat([header, cdata, trailer])
}

/** BGZF as bgzip writes it: blocks of at most 65,280 bytes of input, then the empty end-of-file block. */
export function bgzf(text: string | Buffer, blockSize = 65280): Buffer {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text
  const blocks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += blockSize) blocks.push(bgzfBlock(bytes.subarray(i, i + blockSize)))
  blocks.push(bgzfBlock(new Uint8Array(0)))
  return Buffer.concat(blocks)
}

export const gzip = (text: string) => gzipSync(Buffer.from(text))

/** Reads every variant of a VCF (for small test files). */
export async function readAll(input: string | Buffer | Readable, options: ReadVariantsOptions = {}) {
  const reader = await readVariants(typeof input === 'string' || Buffer.isBuffer(input) ? streamOf(input, 4096) : input, options)
  const variants: VariantRecord[] = []
  for await (const v of reader.variants) variants.push(v)
  return { ...reader, variants }
}
