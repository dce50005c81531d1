import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { reportStores, type ReportStores } from '../../domain/reports/stores.js'
import type { VariantSource } from '../../domain/reports/variant-source.js'

export interface ReportsDeps extends KernelDeps, ReportStores {
  /** The orders' variant caches, read only. */
  variants: VariantSource
}

export type ReportsEnv = AppEnv<ReportsDeps>

/** Until an order's variant cache exists, it has no variants to add to a report. */
const NO_CACHE: VariantSource = { getVariant: async () => undefined }

export function reportsDeps(kernel: KernelDeps, variants: VariantSource = NO_CACHE): ReportsDeps {
  return { ...kernel, ...reportStores(kernel, variants), variants }
}
