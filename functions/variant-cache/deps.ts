import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { PubSubQueue, type Queue } from '../../lib/queue.js'
import { createObjectStorage, type ObjectStorage } from '../../lib/storage.js'
import type { OrderStore } from '../../domain/clinical/orders.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { RunStore } from '../../domain/runs/store.js'
import { variantStores, type VariantStores } from '../../domain/variants/stores.js'

export interface VariantCacheDeps extends KernelDeps, VariantStores {
  /** Orders by id or accession (read only). */
  orders: Pick<OrderStore, 'resolve'>
  /** A run whose VCF is to be ingested (read only). */
  runs: Pick<RunStore, 'get'>
  /** Publishes ingestion.requested. */
  queue: Queue
  /** Run outputs and the project bucket, as the platform's own identity: a source is looked at before it is accepted. */
  storage: ObjectStorage
}

export type VariantCacheEnv = AppEnv<VariantCacheDeps>

export function variantCacheDeps(kernel: KernelDeps, adapters: Partial<Pick<VariantCacheDeps, 'queue' | 'storage'>> = {}): VariantCacheDeps {
  return {
    ...kernel,
    ...variantStores(kernel),
    orders: clinicalStores(kernel).orders,
    runs: new RunStore(kernel.db, kernel.audit, kernel.clock),
    queue: adapters.queue ?? new PubSubQueue(kernel.config),
    storage: adapters.storage ?? createObjectStorage(kernel.config),
  }
}
