/**
 * What one VCF record may hold, so that every document an ingestion writes from it stays well under
 * Firestore's limits (1 MiB a document, 40,000 index entries a document, and index values cut at
 * 1,500 bytes). A record over a limit is refused when the file is read, naming its line, the field
 * and the limit (domain/variants/vcf.ts), before anything is written: retrying could never store it.
 *
 * The budget of the largest document, a variant of an order's cache (domain/variants/cache.ts
 * `toCacheDoc`), with every field at its limit: REF and one ALT, 100,000 bytes; the ALT's annotations,
 * at most the INFO column's 128 KiB of values plus about 130 bytes of field names for each of at
 * most 1,000 entries; the calls of the order's 50 samples (domain/clinical/model.ts
 * MAX_ORDER_SAMPLES), under 1 KiB each with a 256-byte column name and a 64-character genotype twice;
 * the ID and FILTER columns: about 420 KB in all, under half of 1 MiB. The catalogue's summary of the
 * variant (domain/variants/catalogue.ts) holds REF, ALT and the genes again, about 140 KB, beside the
 * orders' observations (about 150 bytes each). The ingestion's own document lists the VCF's sample
 * names (at most 1,000 of 256 bytes). The contig name and the variant id make the genome order key
 * (domain/variants/genome-order.ts), an indexed field the cache pages on: at 255 bytes of contig it
 * stays far under the 1,500 bytes an index keeps.
 * test/unit/domain/variants/limits.test.ts measures the documents of a record at every limit.
 */
export interface VcfLimits {
  /** Sample columns of the #CHROM line. */
  samples: number
  /** Bytes of a sample column's name. */
  sampleNameBytes: number
  /** Bytes of CHROM. */
  chromBytes: number
  /** The largest POS: the VCF's Integer is 32-bit. */
  position: number
  /** Bytes of the ID column. */
  idBytes: number
  /** Bytes of REF, and of each ALT allele. */
  alleleBytes: number
  /** Bytes of the FILTER column. */
  filterBytes: number
  /** Bytes of the INFO column. */
  infoBytes: number
  /** Values of one INFO field: each CSQ or ANN value (one transcript) becomes a stored annotation. */
  infoValues: number
  /** Characters of a sample's GT. */
  genotypeLength: number
}

export const VCF_LIMITS: VcfLimits = Object.freeze({
  samples: 1_000,
  sampleNameBytes: 256,
  chromBytes: 255,
  position: 2_147_483_647,
  idBytes: 4_096,
  alleleBytes: 50_000,
  filterBytes: 1_024,
  infoBytes: 128 * 1024,
  infoValues: 1_000,
  genotypeLength: 64,
})

/**
 * The UTF-8 size of `text[start, end)` when it is over `limit` bytes, else undefined. A UTF-16 code
 * unit is 1 to 3 bytes of UTF-8 (a surrogate pair, two units, is 4), so most values are judged by
 * their length alone and only those that may be over are encoded.
 */
export function bytesOver(text: string, limit: number, start = 0, end = text.length): number | undefined {
  const units = end - start
  if (units * 3 <= limit) return undefined
  const bytes = Buffer.byteLength(text.slice(start, end))
  return bytes > limit ? bytes : undefined
}

/** A number as the messages write it: `1,200,000`. */
export const thousands = (n: number) => n.toLocaleString('en-US')
