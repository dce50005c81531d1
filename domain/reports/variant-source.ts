/**
 * What a report needs of the variant cache: one variant of an order's current (ready) cache build
 * by its id, with every sample's call and the sample's role in the order. The variant cache owns
 * the records; the report keeps only its own overrides, keyed by the variant id, so they survive a
 * rebuild of the cache that finds the same variant again.
 */
export interface CachedCall {
  /** The VCF sample column. */
  sample: string
  /** The order's sample it was matched to, and its role, when known. */
  sample_id?: string | null
  role?: string | null
  genotype: string
  zygosity: string
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
    genotype: string
    zygosity: string
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
