import { defineService, serviceApp } from '../../lib/service.js'
import { createObjectStorage } from '../../lib/storage.js'
import { seedDemoFamily } from '../../domain/clinical/seed.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { clinicalDeps, type ClinicalDeps } from './deps.js'
import { labflows } from './routes/labflows.js'
import { orders } from './routes/orders.js'
import { samples } from './routes/samples.js'
import { subjects } from './routes/subjects.js'

/** The clinical-data service: subjects, samples, orders with their lifecycle and samplesheets, and labflows. */
export const clinical = defineService<ClinicalDeps>({
  name: 'clinical',
  title: 'Clinical-data service',
  description:
    'Subjects (with their pedigree and HPO phenotypes), samples and their data files, clinical orders (accession, status lifecycle, samples with roles, the nf-core/raredisease samplesheet) and labflows. Every request needs X-Project-ID.',
  port: 8103,
  projectScoped: true,
  collections: ['subjects', 'samples', 'orders', 'clinical_keys', 'clinical_counters', 'labflows', 'labflow_versions'],
  deps: (kernel) => clinicalDeps(kernel),
  routes: [subjects, samples, orders, labflows],
  seed: async ({ kernel, config, project, user }) => {
    const stores = clinicalStores(kernel)
    await stores.labflows.seedPlatform()
    await seedDemoFamily(stores, project, user.id, createObjectStorage(config))
  },
})

export const createClinicalApp = (deps: ClinicalDeps) => serviceApp(clinical.definition, deps)
