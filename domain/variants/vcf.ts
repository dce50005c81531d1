import { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import VCF, { type InfoValue, type SampleData } from '@gmod/vcf'
import { detectAssembly, type BuildDetection, type HeaderContig } from './assembly.js'
import { bytesOver, thousands, VCF_LIMITS, type VcfLimits } from './limits.js'

/**
 * A streaming VCF reader: plain text, gzip or BGZF (concatenated gzip members) in, one record out
 * at a time. The header and each line are parsed by `@gmod/vcf`; this module splits the stream
 * into lines, checks what that parser does not (column counts, POS, REF, ALT, QUAL, genotypes and
 * the numbers we read, and the sizes of domain/variants/limits.ts), and names the line and the
 * reason of the first malformed or oversized one. Nothing but
 * the current chunk and line is held, and the source is read only as fast as records are consumed
 * (async iteration is the backpressure).
 */

export class VcfFormatError extends Error {
  constructor(
    /** 1-based line of the (decompressed) file. */
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`)
    this.name = 'VcfFormatError'
  }
}

export interface HeaderField {
  Number?: number | string | null
  Type?: string | null
  Description?: string | null
}

export interface VcfHeader {
  /** `VCFv4.2`, … from `##fileformat`. */
  fileformat: string
  /** The sample columns, in order. */
  samples: string[]
  /** `##reference`, when present. */
  reference: string | undefined
  contigs: HeaderContig[]
  /** The build the header declares, and why (or why not). */
  build: BuildDetection
  /** `##INFO` and `##FORMAT` definitions (with the VCF specification's reserved ones). */
  info: Record<string, HeaderField>
  format: Record<string, HeaderField>
  /** How many lines the header has (records start on the next one). */
  lines: number
}

export interface VcfRecord {
  /** The record's line in the file, for messages. */
  line: number
  /** CHROM as written (see `normalizeContig`). */
  chrom: string
  pos: number
  /** The ID column's identifiers (`rs…`), empty for `.`. */
  ids: string[]
  ref: string
  /** ALT alleles; empty for `.` (a site with no alternate allele). */
  alts: string[]
  qual: number | null
  /** `['PASS']`, the failed filters, or empty for `.` (filters not applied). */
  filters: string[]
  info: Record<string, InfoValue>
  /** FORMAT keys, in order. */
  format: string[]
  /** Per sample column (header order): FORMAT key → values (`GT` as its string). */
  samples: SampleData[]
}

export interface VcfReader {
  header: VcfHeader
  /** The records, in file order; single use. Throws VcfFormatError at the first malformed line. */
  records: AsyncGenerator<VcfRecord, void, undefined>
}

export interface ReadOptions {
  /** The longest line accepted (a guard against a binary file with no newline); default 64 MiB. */
  maxLineLength?: number
  /** What a record may hold; default VCF_LIMITS. */
  limits?: VcfLimits
}

const GZIP_MAGIC = [0x1f, 0x8b]

/** Opens a VCF: reads and checks the header, and returns it with the records still unread. */
export async function openVcf(input: Readable | AsyncIterable<Uint8Array | string>, options: ReadOptions = {}): Promise<VcfReader> {
  const lines = readLineBatches(input, options.maxLineLength ?? 64 * 1024 * 1024)
  let lineNo = 0
  // Lines come in batches (one per decompressed chunk), so most lines cost no await.
  let batch: string[] = []
  let at = 0
  const next = async (): Promise<string | undefined> => {
    while (at === batch.length) {
      const r = await lines.next()
      if (r.done) return undefined
      batch = r.value
      at = 0
    }
    lineNo++
    return batch[at++]
  }

  const meta: string[] = []
  let columns: string | undefined
  for (let line = await next(); line !== undefined; line = await next()) {
    if (lineNo === 1 && !line.startsWith('##fileformat=VCF')) {
      await lines.return(undefined)
      throw new VcfFormatError(1, line.startsWith('BCF') ? 'a BCF file, not a VCF' : 'not a VCF: the first line must be ##fileformat=VCFv4.x')
    }
    if (line.startsWith('##')) {
      if (!/^##[^=\s]+=/.test(line)) throw await fail(lines, lineNo, `a header line must be ##key=value: ${clip(line)}`)
      meta.push(line)
    } else if (line.startsWith('#')) {
      columns = line
      break
    } else if (line.trim() === '') {
      continue
    } else {
      throw await fail(lines, lineNo, 'a record before the #CHROM header line')
    }
  }
  if (columns === undefined) throw new VcfFormatError(lineNo + 1, 'no #CHROM header line')

  let parser: VCF
  try {
    parser = new VCF({ header: [...meta, columns].join('\n') })
  } catch (error) {
    throw await fail(lines, lineNo, `bad header: ${(error as Error).message.split('\n')[0]}`)
  }
  const limits = options.limits ?? VCF_LIMITS
  if (parser.samples.length > limits.samples) {
    throw await fail(
      lines,
      lineNo,
      `the #CHROM line names ${thousands(parser.samples.length)} samples; at most ${thousands(limits.samples)} are accepted: keep the order's samples (bcftools view -s)`,
    )
  }
  const seen = new Set<string>()
  for (const sample of parser.samples) {
    if (!sample) throw await fail(lines, lineNo, 'an empty sample name in the #CHROM line')
    if (seen.has(sample)) throw await fail(lines, lineNo, `sample ${sample} appears twice in the #CHROM line`)
    const over = bytesOver(sample, limits.sampleNameBytes)
    if (over !== undefined) {
      throw await fail(
        lines,
        lineNo,
        `sample name ${clip(sample)} is ${thousands(over)} bytes; at most ${thousands(limits.sampleNameBytes)} are accepted`,
      )
    }
    seen.add(sample)
  }

  const header = headerOf(parser, meta[0]!.slice('##fileformat='.length), lineNo)
  async function* records(): AsyncGenerator<VcfRecord, void, undefined> {
    const check = new RecordChecker(header, limits)
    try {
      for (let line = await next(); line !== undefined; line = await next()) {
        if (line.trim() === '') continue
        if (line.startsWith('#')) throw new VcfFormatError(lineNo, 'a header line after the records began')
        yield check.record(parser, line, lineNo)
      }
    } finally {
      // Stopped early (a malformed line, or the consumer's break): release the source.
      await lines.return(undefined)
    }
  }
  return { header, records: records() }
}

async function fail(lines: AsyncGenerator<unknown>, line: number, reason: string): Promise<VcfFormatError> {
  await lines.return(undefined)
  return new VcfFormatError(line, reason)
}

const clip = (s: string, n = 80) => (s.length > n ? `${s.slice(0, n)}…` : s)

function headerOf(parser: VCF, fileformat: string, lines: number): VcfHeader {
  const section = (name: string) => {
    const value = parser.getMetadata(name)
    return value && typeof value === 'object' ? (value as Record<string, Record<string, unknown>>) : {}
  }
  const reference = parser.getMetadata('reference')
  const contigs = Object.entries(section('contig')).map(([id, fields]): HeaderContig => {
    const length = Number(fields.length)
    return {
      id,
      ...(Number.isSafeInteger(length) && length > 0 ? { length } : {}),
      ...(typeof fields.assembly === 'string' && fields.assembly ? { assembly: fields.assembly } : {}),
    }
  })
  const referenceText = typeof reference === 'string' ? reference : undefined
  return {
    fileformat,
    samples: [...parser.samples],
    reference: referenceText,
    contigs,
    build: detectAssembly({ reference: referenceText, contigs }),
    info: section('INFO') as Record<string, HeaderField>,
    format: section('FORMAT') as Record<string, HeaderField>,
    lines,
  }
}

const REF_RE = /^[ACGTNRYSWKMBDHV]+$/i
const BASES_RE = /^[ACGTNRYSWKMBDHV]+$/i
const SYMBOLIC_RE = /^<[^<>\s,]+>$/
const BREAKEND_RE = /^(?:[A-Za-z*]+[[\]][^[\]\s]+:\d+[[\]]|[[\]][^[\]\s]+:\d+[[\]][A-Za-z*]+|\.[A-Za-z]+|[A-Za-z]+\.)$/
const GT_RE = /^(?:\.|\d+)(?:[/|](?:\.|\d+))*$/

/** The fixed columns before the samples', by index. */
const COLUMN_NAMES = ['CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO'] as const
const CHROM = 0
const ID = 2
const REF = 3
const ALT = 4
const FILTER = 6
const INFO = 7

/** The checks `@gmod/vcf` leaves to its callers, on one data line. */
class RecordChecker {
  private readonly sampleCount: number
  /** Where the line's first eight tabs are (set by columnsProblem): the fixed columns' ends. */
  private readonly tabs = new Int32Array(COLUMN_NAMES.length)

  constructor(
    private readonly header: VcfHeader,
    private readonly limits: VcfLimits,
  ) {
    this.sampleCount = header.samples.length
  }

  record(parser: VCF, line: string, lineNo: number): VcfRecord {
    const reason = this.columnsProblem(line) ?? this.sizeProblem(line)
    if (reason) throw new VcfFormatError(lineNo, reason)
    let v
    try {
      v = parser.parseLine(line)
    } catch (error) {
      throw new VcfFormatError(lineNo, (error as Error).message)
    }
    const chrom = v.CHROM ?? ''
    const ref = (v.REF ?? '').toUpperCase()
    const alts = v.ALT ?? []
    const info = v.INFO
    // `A=1;` and `A=1;;B` leave an empty key behind: nothing was there.
    delete info['']
    const fieldsReason =
      fieldsProblem(line, chrom, ref, alts, v.QUAL, info, this.limits) ??
      infoValuesProblem(info, this.tabs[INFO]! - this.tabs[INFO - 1]! - 1, this.limits)
    if (fieldsReason) throw new VcfFormatError(lineNo, fieldsReason)

    const format = v.FORMAT && v.FORMAT !== '.' ? v.FORMAT.split(':') : []
    const samples: SampleData[] = []
    if (this.sampleCount > 0 && format.length > 0) {
      const byName = v.SAMPLES()
      for (let i = 0; i < this.sampleCount; i++) {
        const name = this.header.samples[i]!
        const data = byName[name] ?? {}
        const sampleReason = sampleProblem(data, alts.length, this.limits)
        if (sampleReason) throw new VcfFormatError(lineNo, `sample ${name}: ${sampleReason(rawSample(line, i, format))}`)
        samples.push(data)
      }
    } else {
      for (let i = 0; i < this.sampleCount; i++) samples.push({})
    }

    return {
      line: lineNo,
      chrom,
      pos: v.POS,
      ids: v.ID ?? [],
      ref,
      alts,
      qual: v.QUAL ?? null,
      filters: v.FILTER === undefined ? [] : typeof v.FILTER === 'string' ? [v.FILTER] : v.FILTER,
      info,
      format,
      samples,
    }
  }

  private columnsProblem(line: string): string | undefined {
    let tabs = 0
    for (let i = line.indexOf('\t'); i !== -1; i = line.indexOf('\t', i + 1)) {
      if (tabs < this.tabs.length) this.tabs[tabs] = i
      tabs++
    }
    // A sites-only line's INFO runs to its end.
    if (tabs === INFO) this.tabs[INFO] = line.length
    const columns = tabs + 1
    if (columns < 8) {
      return `expected at least 8 tab-separated columns, found ${columns}${line.includes(' ') && columns < 3 ? ' (spaces instead of tabs?)' : ''}`
    }
    if (this.sampleCount > 0 && columns !== 9 + this.sampleCount) {
      return `expected ${9 + this.sampleCount} columns (8, FORMAT and ${this.sampleCount} samples), found ${columns}`
    }
    if (this.sampleCount === 0 && columns > 9) return `found ${columns} columns but the header names no samples`
    return undefined
  }

  /** The first fixed column over its limit, from the raw line (before anything is parsed out of it). */
  private sizeProblem(line: string): string | undefined {
    const { limits, tabs } = this
    const start = (column: number) => (column === 0 ? 0 : tabs[column - 1]! + 1)
    const over = (column: number, limit: number) => bytesOver(line, limit, start(column), tabs[column])
    const columns: Array<[number, number]> = [
      [CHROM, limits.chromBytes],
      [ID, limits.idBytes],
      [REF, limits.alleleBytes],
      [FILTER, limits.filterBytes],
      [INFO, limits.infoBytes],
    ]
    for (const [column, limit] of columns) {
      const bytes = over(column, limit)
      if (bytes !== undefined)
        return `${COLUMN_NAMES[column]} is ${thousands(bytes)} bytes long; at most ${thousands(limit)} are accepted${LONG_ALLELE_HINT[column] ?? ''}`
    }
    if (over(ALT, limits.alleleBytes) !== undefined) {
      const alts = line.slice(start(ALT), tabs[ALT]).split(',')
      for (const [i, alt] of alts.entries()) {
        const bytes = bytesOver(alt, limits.alleleBytes)
        if (bytes !== undefined) {
          return `ALT allele ${i + 1} is ${thousands(bytes)} bytes long; at most ${thousands(limits.alleleBytes)} are accepted${LONG_ALLELE_HINT[ALT]}`
        }
      }
    }
    return undefined
  }
}

/** What to do about an allele over the limit. */
const LONG_ALLELE_HINT: Record<number, string> = {
  [REF]: ' (write a longer deletion as a symbolic allele, <DEL> with END)',
  [ALT]: ' (write a longer allele as a symbolic one, such as <INS> or <DUP> with SVLEN or END)',
}

function fieldsProblem(
  line: string,
  chrom: string,
  ref: string,
  alts: string[],
  qual: number | undefined,
  info: Record<string, InfoValue>,
  limits: VcfLimits,
): string | undefined {
  if (!chrom || /\s/.test(chrom)) return `CHROM is empty or has spaces: ${JSON.stringify(chrom)}`
  const posText = line.split('\t', 2)[1] ?? ''
  if (!/^\d+$/.test(posText)) return `POS is not a position: ${JSON.stringify(posText)}`
  if (Number(posText) > limits.position) return `POS ${clip(posText, 20)} is past ${thousands(limits.position)}, the largest position accepted`
  if (!REF_RE.test(ref)) return `REF is not a sequence of bases: ${JSON.stringify(line.split('\t', 4)[3])}`
  for (const alt of alts) {
    if (!(alt === '*' || BASES_RE.test(alt) || SYMBOLIC_RE.test(alt) || BREAKEND_RE.test(alt))) {
      return `ALT allele is not bases, *, a <symbolic> allele or a breakend: ${JSON.stringify(alt)}`
    }
  }
  if (qual !== undefined && !Number.isFinite(qual)) return `QUAL is not a number: ${JSON.stringify(line.split('\t', 6)[5])}`
  for (const key of INTEGER_INFO) {
    const value = info[key]
    if (Array.isArray(value) && value.some(notInteger)) return `INFO ${key} is not an integer: ${JSON.stringify(rawInfo(line, key))}`
  }
  return undefined
}

/** An INFO field with more values than the limit (a field of n values has n − 1 commas: a shorter INFO column has none). */
function infoValuesProblem(info: Record<string, InfoValue>, infoLength: number, limits: VcfLimits): string | undefined {
  if (infoLength <= limits.infoValues) return undefined
  for (const [key, value] of Object.entries(info)) {
    if (Array.isArray(value) && value.length > limits.infoValues) {
      return `INFO ${clip(key, 40)} has ${thousands(value.length)} values; at most ${thousands(limits.infoValues)} are accepted`
    }
  }
  return undefined
}

/** INFO fields the variants read as integers. */
const INTEGER_INFO = ['END', 'SVLEN']
/** FORMAT fields the variants read as integers. */
const INTEGER_FORMAT = ['DP', 'GQ', 'AD']

const notInteger = (x: string | number | undefined) => x !== undefined && !Number.isSafeInteger(Number(x))
const notNumber = (x: string | number | undefined) => x !== undefined && !Number.isFinite(Number(x))

/** What is wrong with a sample's data, as a message given its raw FORMAT values. */
function sampleProblem(data: SampleData, altCount: number, limits: VcfLimits): ((raw: (key: string) => string) => string) | undefined {
  const gt = data.GT?.[0]
  if (gt !== undefined) {
    const text = String(gt)
    if (text.length > limits.genotypeLength) {
      return () => `GT is ${thousands(text.length)} characters long; at most ${thousands(limits.genotypeLength)} are accepted`
    }
    if (!GT_RE.test(text)) return () => `GT is not a genotype: ${JSON.stringify(text)}`
    for (const allele of text.split(/[/|]/)) {
      if (allele !== '.' && Number(allele) > altCount) {
        return () => `GT ${text} names allele ${allele} but the record has ${altCount} ALT allele${altCount === 1 ? '' : 's'}`
      }
    }
  }
  for (const key of INTEGER_FORMAT) {
    if (data[key]?.some(notInteger)) return (raw) => `${key} is not an integer: ${JSON.stringify(raw(key))}`
  }
  if (data.AF?.some(notNumber)) return (raw) => `AF is not a number: ${JSON.stringify(raw('AF'))}`
  return undefined
}

/** A value of the INFO column as written (for messages). */
function rawInfo(line: string, key: string): string {
  const info = line.split('\t', 8)[7] ?? ''
  const pair = info.split(';').find((p) => p === key || p.startsWith(`${key}=`))
  return pair?.slice(key.length + 1) ?? ''
}

/** A sample's FORMAT values as written (for messages). */
function rawSample(line: string, sample: number, format: string[]): (key: string) => string {
  const values = (line.split('\t')[9 + sample] ?? '').split(':')
  return (key) => values[format.indexOf(key)] ?? ''
}

/**
 * The lines of a stream, decompressed when it starts with the gzip magic (gzip, or BGZF, whose
 * blocks are gzip members that zlib reads one after another), without their `\n` or `\r\n`; a last
 * line without a newline is still a line.
 */
export async function* readLines(input: Readable | AsyncIterable<Uint8Array | string>, maxLineLength?: number): AsyncGenerator<string> {
  for await (const batch of readLineBatches(input, maxLineLength)) yield* batch
}

/** `readLines`, a batch of lines per chunk read. */
export async function* readLineBatches(
  input: Readable | AsyncIterable<Uint8Array | string>,
  maxLineLength = 64 * 1024 * 1024,
): AsyncGenerator<string[]> {
  const source = input[Symbol.asyncIterator]() as AsyncIterator<Uint8Array | string>
  const first = await source.next()
  if (first.done) return
  const head = typeof first.value === 'string' ? Buffer.from(first.value) : first.value
  const rest: AsyncIterable<Uint8Array | string> = {
    [Symbol.asyncIterator]: () => {
      let sentHead = false
      return {
        next: async () => (sentHead ? source.next() : ((sentHead = true), { done: false, value: head })),
        return: async () => {
          await source.return?.()
          return { done: true, value: undefined }
        },
      }
    },
  }
  let chunks: AsyncIterable<Uint8Array | string> = rest
  let gunzip: ReturnType<typeof createGunzip> | undefined
  let compressed: Readable | undefined
  if (head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) {
    compressed = Readable.from(rest, { objectMode: false })
    gunzip = createGunzip({ chunkSize: 64 * 1024 })
    compressed.on('error', (error) => gunzip?.destroy(error))
    compressed.pipe(gunzip)
    chunks = gunzip
  }

  const decoder = new TextDecoder('utf-8')
  let pending = ''
  let lineNo = 0
  try {
    for await (const chunk of chunks) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
      const batch: string[] = []
      let start = 0
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const line = pending + text.slice(start, nl)
        pending = ''
        start = nl + 1
        batch.push(line.endsWith('\r') ? line.slice(0, -1) : line)
      }
      pending += text.slice(start)
      lineNo += batch.length
      if (batch.length) yield batch
      if (pending.length > maxLineLength) throw new VcfFormatError(lineNo + 1, `a line longer than ${maxLineLength} characters (not a text VCF?)`)
    }
  } catch (error) {
    if (error instanceof VcfFormatError) throw error
    if (gunzip) throw new VcfFormatError(lineNo + 1, `the compressed stream is corrupt or truncated: ${(error as Error).message}`)
    throw error
  } finally {
    gunzip?.destroy()
    compressed?.destroy()
  }
  pending += decoder.decode()
  if (pending !== '') yield [pending.endsWith('\r') ? pending.slice(0, -1) : pending]
}
