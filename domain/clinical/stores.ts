import type { KernelDeps } from '../../lib/kernel.js'
import { LabflowStore } from './labflows.js'
import { OrderStore } from './orders.js'
import { SampleStore } from './samples.js'
import { SubjectStore } from './subjects.js'

export interface ClinicalStores {
  subjects: SubjectStore
  samples: SampleStore
  orders: OrderStore
  labflows: LabflowStore
}

/** The clinical stores on one kernel: the clinical-data service uses them all, the compute service its orders. */
export function clinicalStores(kernel: Pick<KernelDeps, 'db' | 'audit' | 'clock'>): ClinicalStores {
  const labflows = new LabflowStore(kernel.db, kernel.audit, kernel.clock)
  return {
    subjects: new SubjectStore(kernel.db, kernel.audit, kernel.clock),
    samples: new SampleStore(kernel.db, kernel.audit, kernel.clock),
    orders: new OrderStore(kernel.db, kernel.audit, kernel.clock, labflows),
    labflows,
  }
}
