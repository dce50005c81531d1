/**
 * What a report needs of the variant cache: one variant of an order's current (ready) cache build
 * by its id, with every sample's call and the sample's role in the order. The variant cache owns
 * the records; the report keeps only its own overrides, keyed by the variant id, so they survive a
 * rebuild of the cache that finds the same variant again.
 */
export interface CachedCall {
  /** The sample's name: its external id in the order (what the laboratory and the samplesheet call it). */
  sample: string
  /** The order's sample it was matched to, and its role, when known. */
  sample_id?: string | null
  role?: string | null
  /** Null for an order sample the VCF has no column for: no call at all, not a reference call (see `fromOrderVariant`). */
  genotype: string | null
  zygosity: string | null
  depth?: number | null
  genotype_quality?: number | null
  allele_fraction?: number | null
}

export interface CachedVariant {
  id: string
  assembly: string | null
  chrom: string
  pos: number
  end?: number | null
  ref: string
  alt: string
  qual?: number | null
  filter?: string[]
  variant_type?: string | null
  svtype?: string | null
  genes: string[]
  consequence?: string | null
  transcript?: string | null
  hgvs_c?: string | null
  hgvs_p?: string | null
  samples: CachedCall[]
}

export interface VariantSource {
  /** The variant of the order's current cache with this id, or undefined (no such variant, no ready cache). */
  getVariant(projectId: string, orderId: string, variantId: string): Promise<CachedVariant | undefined>
}

/** The cache's values a report shows and a snapshot freezes: every field present, null where unknown, so its canonical JSON is stable. */
export interface FrozenVariant {
  id: string
  assembly: string | null
  chrom: string
  pos: number
  end: number | null
  ref: string
  alt: string
  qual: number | null
  filter: string[]
  variant_type: string | null
  svtype: string | null
  genes: string[]
  consequence: string | null
  transcript: string | null
  hgvs_c: string | null
  hgvs_p: string | null
  calls: Array<{
    sample: string
    sample_id: string | null
    role: string | null
    genotype: string | null
    zygosity: string | null
    depth: number | null
    genotype_quality: number | null
    allele_fraction: number | null
  }>
}

export function freezeVariant(v: CachedVariant): FrozenVariant {
  return {
    id: v.id,
    assembly: v.assembly ?? null,
    chrom: v.chrom,
    pos: v.pos,
    end: v.end ?? null,
    ref: v.ref,
    alt: v.alt,
    qual: v.qual ?? null,
    filter: v.filter ?? [],
    variant_type: v.variant_type ?? null,
    svtype: v.svtype ?? null,
    genes: v.genes,
    consequence: v.consequence ?? null,
    transcript: v.transcript ?? null,
    hgvs_c: v.hgvs_c ?? null,
    hgvs_p: v.hgvs_p ?? null,
    calls: v.samples.map((s) => ({
      sample: s.sample,
      sample_id: s.sample_id ?? null,
      role: s.role ?? null,
      genotype: s.genotype,
      zygosity: s.zygosity,
      depth: s.depth ?? null,
      genotype_quality: s.genotype_quality ?? null,
      allele_fraction: s.allele_fraction ?? null,
    })),
  }
}

/** Reads several variants of one order at once, in the order asked. */
export async function readVariants(source: VariantSource, projectId: string, orderId: string, ids: readonly string[]) {
  return new Map(await Promise.all(ids.map(async (id) => [id, await source.getVariant(projectId, orderId, id)] as const)))
}

/**
 * The fields a report reads of the variant cache's reader view of a variant (`OrderVariant` of the
 * variant cache, domain/variants/cache.ts), declared here by their shape only, so that the report
 * domain does not depend on the cache's module: a cache's `getVariant` result is assignable to it.
 */
export interface CacheOrderVariant {
  id: string
  assembly: string | null
  chrom: string
  pos: number
  end: number | null
  ref: string
  alt: string
  qual: number | null
  filter: readonly string[]
  variant_type: string | null
  svtype: string | null
  genes: readonly string[]
  consequence: string | null
  transcript: string | null
  hgvs_c: string | null
  hgvs_p: string | null
  /** Every sample of the order the cache was built for, in role order (proband first). */
  calls: ReadonlyArray<CacheOrderVariantCall>
}

/** One order sample's call as the cache's reader gives it: `in_vcf: false` (and nulls) for a sample the VCF had no column for. */
export interface CacheOrderVariantCall {
  /** The sample's external id in the order (the cache keeps the VCF column apart, as `vcf_sample`). */
  sample: string
  sample_id: string
  role: string
  genotype: string | null
  zygosity: string | null
  depth: number | null
  genotype_quality: number | null
  allele_fraction: number | null
  in_vcf: boolean
}

/**
 * A variant of the cache as a report holds it.
 *
 * A sample of the order that the VCF did not have (`in_vcf: false`) is kept, with a null genotype
 * and zygosity, not dropped: a reader of a trio report judges inheritance from the parents' calls,
 * and a parent missing from the list would read as a duo, or a "de novo" without the parent's data
 * as a confirmed one. The page says "not in the VCF" for it, and the snapshot freezes it so, which
 * is not the same as a reference call (`0/0`) or a no-call (`./.`) the VCF did write.
 */
export function fromOrderVariant(v: CacheOrderVariant): CachedVariant {
  return {
    id: v.id,
    assembly: v.assembly,
    chrom: v.chrom,
    pos: v.pos,
    end: v.end,
    ref: v.ref,
    alt: v.alt,
    qual: v.qual,
    filter: [...v.filter],
    variant_type: v.variant_type,
    svtype: v.svtype,
    genes: [...v.genes],
    consequence: v.consequence,
    transcript: v.transcript,
    hgvs_c: v.hgvs_c,
    hgvs_p: v.hgvs_p,
    samples: v.calls.map((c) => ({
      sample: c.sample,
      sample_id: c.sample_id,
      role: c.role,
      genotype: c.in_vcf ? c.genotype : null,
      zygosity: c.in_vcf ? c.zygosity : null,
      depth: c.in_vcf ? c.depth : null,
      genotype_quality: c.in_vcf ? c.genotype_quality : null,
      allele_fraction: c.in_vcf ? c.allele_fraction : null,
    })),
  }
}

/** A variant source over a reader of the cache's shape (the variant cache's store once both are merged). */
export function cacheVariantSource(reader: {
  getVariant(projectId: string, orderId: string, variantId: string): Promise<CacheOrderVariant | undefined>
}): VariantSource {
  return {
    async getVariant(projectId, orderId, variantId) {
      const v = await reader.getVariant(projectId, orderId, variantId)
      return v && fromOrderVariant(v)
    },
  }
}
