import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { PubSubQueue } from '../../lib/queue.js'
import { reportStores, type ReportStores } from '../../domain/reports/stores.js'
import { cacheVariantSource, type VariantSource } from '../../domain/reports/variant-source.js'
import { VariantCacheStore } from '../../domain/variants/cache.js'
import { webhookStack } from '../../domain/webhooks/stack.js'

export interface ReportsDeps extends KernelDeps, ReportStores {
  /** The orders' variant caches, read only. */
  variants: VariantSource
}

export type ReportsEnv = AppEnv<ReportsDeps>

/** A report reads its variants from the order's active variant cache (the variant-cache service's store), unless given another source. */
/** A report signed is a webhook event: the stores write the webhook outbox with their audit events. */
export function reportsDeps(base: KernelDeps, variants: VariantSource = cacheVariantSource(new VariantCacheStore(base.db))): ReportsDeps {
  const { kernel } = webhookStack(base, new PubSubQueue(base.config))
  return { ...kernel, ...reportStores(kernel, variants), variants }
}
