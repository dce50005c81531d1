import type { Readable } from 'node:stream'
import { recordContext, recordToVariants, type RecordContext, type VariantRecord } from './records.js'
import { openVcf, type ReadOptions, type VcfHeader } from './vcf.js'

/**
 * A VCF's variants, streamed: what an ingestion reads. The header comes first (samples to match
 * against the order, the build and why); then `variants` yields one variant at a time, so memory
 * stays the same however long the file; `stats` counts as they go.
 */

export interface VariantStats {
  /** Data lines read. */
  records: number
  /** Variants yielded (a multi-allelic record yields one per ALT). */
  variants: number
  /** Variants identified by GA4GH VRS, and by platform digest. */
  vrs_ids: number
  platform_ids: number
  /** Records with no variant ALT (ALT `.`, gVCF reference blocks, only `*`). */
  records_without_variants: number
}

export interface VariantReader {
  header: VcfHeader
  context: RecordContext
  /** Single use; throws VcfFormatError (line and reason) at the first malformed line. */
  variants: AsyncGenerator<VariantRecord, void, undefined>
  stats: VariantStats
}

export interface ReadVariantsOptions extends ReadOptions {
  sexOf?: RecordContext['sexOf']
}

export async function readVariants(input: Readable | AsyncIterable<Uint8Array | string>, options: ReadVariantsOptions = {}): Promise<VariantReader> {
  const vcf = await openVcf(input, options)
  const context = recordContext(vcf.header, options.sexOf)
  const stats: VariantStats = { records: 0, variants: 0, vrs_ids: 0, platform_ids: 0, records_without_variants: 0 }
  async function* variants(): AsyncGenerator<VariantRecord, void, undefined> {
    for await (const record of vcf.records) {
      stats.records++
      const split = recordToVariants(record, context)
      if (split.length === 0) stats.records_without_variants++
      for (const variant of split) {
        stats.variants++
        if (variant.id_type === 'vrs') stats.vrs_ids++
        else stats.platform_ids++
        yield variant
      }
    }
  }
  return { header: vcf.header, context, variants: variants(), stats }
}
