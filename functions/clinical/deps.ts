import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { clinicalStores, type ClinicalStores } from '../../domain/clinical/stores.js'
import { RunStore } from '../../domain/runs/store.js'

export interface ClinicalDeps extends KernelDeps, ClinicalStores {
  /** Read only: an order's runs. */
  runs: Pick<RunStore, 'listForOrder'>
}

export type ClinicalEnv = AppEnv<ClinicalDeps>

export function clinicalDeps(kernel: KernelDeps): ClinicalDeps {
  return { ...kernel, ...clinicalStores(kernel), runs: new RunStore(kernel.db, kernel.audit, kernel.clock) }
}
