import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { reportStores, type ReportStores } from '../../domain/reports/stores.js'
import { cacheVariantSource, type VariantSource } from '../../domain/reports/variant-source.js'
import { VariantCacheStore } from '../../domain/variants/cache.js'

export interface ReportsDeps extends KernelDeps, ReportStores {
  /** The orders' variant caches, read only. */
  variants: VariantSource
}

export type ReportsEnv = AppEnv<ReportsDeps>

/** A report reads its variants from the order's active variant cache (the variant-cache service's store), unless given another source. */
export function reportsDeps(kernel: KernelDeps, variants: VariantSource = cacheVariantSource(new VariantCacheStore(kernel.db))): ReportsDeps {
  return { ...kernel, ...reportStores(kernel, variants), variants }
}
