import type { KernelDeps } from '../../lib/kernel.js'
import { createWorkflowExecutions, type WorkflowExecutions } from '../../lib/workflows.js'
import type { ObjectStorage } from '../../lib/storage.js'
import type { Queue } from '../../lib/queue.js'
import { clinicalStores } from '../clinical/stores.js'
import { VariantCacheStore } from './cache.js'
import { VariantCatalogueStore } from './catalogue.js'
import type { IngestionDeps, IngestionFaults, IngestionTuning } from './ingest.js'
import { IngestionStore } from './ingestions.js'
import { LocalIngestionRunner, WorkflowsIngestionRunner, type IngestionRunner } from './runner.js'

/** The variants domain's records: an order's cache (read), the project catalogue (read) and the ingestions. */
export interface VariantStores {
  cache: VariantCacheStore
  catalogue: VariantCatalogueStore
  ingestions: IngestionStore
}

export function variantStores(kernel: Pick<KernelDeps, 'db' | 'audit' | 'clock'>): VariantStores {
  return {
    cache: new VariantCacheStore(kernel.db),
    catalogue: new VariantCatalogueStore(kernel.db),
    ingestions: new IngestionStore(kernel.db, kernel.audit, kernel.clock),
  }
}

/** What runs ingestions: the steps' dependencies and the runner the configuration names (Cloud Workflows, or this process). */
export function ingestionStack(
  kernel: KernelDeps,
  adapters: { storage: ObjectStorage; queue: Queue; workflows?: WorkflowExecutions; faults?: IngestionFaults; tuning?: Partial<IngestionTuning> },
): { ingestion: IngestionDeps; runner: IngestionRunner; ingestions: IngestionStore } {
  const ingestions = new IngestionStore(kernel.db, kernel.audit, kernel.clock)
  const ingestion: IngestionDeps = {
    db: kernel.db,
    audit: kernel.audit,
    clock: kernel.clock,
    log: kernel.log,
    storage: adapters.storage,
    queue: adapters.queue,
    orders: clinicalStores(kernel).orders,
    faults: adapters.faults,
    tuning: adapters.tuning,
  }
  const runner =
    kernel.config.ingestion.runner === 'local'
      ? new LocalIngestionRunner(ingestion)
      : new WorkflowsIngestionRunner({
          ingestions,
          workflows: adapters.workflows ?? createWorkflowExecutions(),
          workflow: kernel.config.ingestion.workflow,
          log: kernel.log,
        })
  return { ingestion, runner, ingestions }
}
