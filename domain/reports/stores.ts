import type { KernelDeps } from '../../lib/kernel.js'
import { clinicalStores } from '../clinical/stores.js'
import { SignoffStore } from './signoff.js'
import { ReportStore } from './store.js'
import type { VariantSource } from './variant-source.js'

export interface ReportStores {
  reports: ReportStore
  signoffs: SignoffStore
}

/** The report stores on one kernel, reading orders from the clinical records and variants from `variants`. */
export function reportStores(kernel: Pick<KernelDeps, 'db' | 'audit' | 'clock'>, variants: VariantSource): ReportStores {
  const reports = new ReportStore(kernel.db, kernel.audit, kernel.clock, clinicalStores(kernel).orders, variants)
  return { reports, signoffs: new SignoffStore(kernel.db, kernel.audit, kernel.clock, reports) }
}
