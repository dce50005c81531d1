import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { PubSubQueue } from '../../lib/queue.js'
import { clinicalStores, type ClinicalStores } from '../../domain/clinical/stores.js'
import { RunStore } from '../../domain/runs/store.js'
import { variantStores, type VariantStores } from '../../domain/variants/stores.js'
import { webhookStack } from '../../domain/webhooks/stack.js'

export interface ClinicalDeps extends KernelDeps, ClinicalStores {
  /** Read only: an order's runs. */
  runs: Pick<RunStore, 'listForOrder'>
  /** Read only: the project's variant catalogue and the orders' ready caches (GET /variants, GET /samples/{id}/variants). */
  variants: Pick<VariantStores, 'catalogue' | 'cache'>
}

export type ClinicalEnv = AppEnv<ClinicalDeps>

/** Order transitions are webhook events: the stores write the webhook outbox with their audit events. */
export function clinicalDeps(base: KernelDeps): ClinicalDeps {
  const { kernel } = webhookStack(base, new PubSubQueue(base.config))
  return { ...kernel, ...clinicalStores(kernel), runs: new RunStore(kernel.db, kernel.audit, kernel.clock), variants: variantStores(kernel) }
}
