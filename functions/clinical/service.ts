import { defineService, serviceApp } from '../../lib/service.js'
import { seedDemoFamily } from '../../domain/clinical/seed.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { clinicalConsole } from './console/index.js'
import { clinicalDeps, type ClinicalDeps } from './deps.js'
import { labflows } from './routes/labflows.js'
import { orders } from './routes/orders.js'
import { samples } from './routes/samples.js'
import { subjects } from './routes/subjects.js'
import { variants } from './routes/variants.js'

/** The clinical-data service: subjects, samples, orders with their lifecycle and samplesheets, and labflows. */
export const clinical = defineService<ClinicalDeps>({
  name: 'clinical',
  title: 'Clinical-data service',
  description:
    "Subjects (with their pedigree and HPO phenotypes), samples and their data files, clinical orders (accession, status lifecycle, samples with roles, the nf-core/raredisease samplesheet), labflows, and the variants (read-only): the project catalogue with observation counts, and each sample's calls. Every request needs X-Project-ID.",
  port: 8103,
  projectScoped: true,
  collections: ['subjects', 'samples', 'orders', 'clinical_keys', 'clinical_counters', 'labflows', 'labflow_versions'],
  tags: [
    { name: 'subjects', description: 'The persons tested and the pedigree around them (FHIR Patient): sex, affected status, HPO terms, parents' },
    {
      name: 'samples',
      description: 'Material from a subject (FHIR Specimen) and its data: FASTQ pairs, BAM or CRAM, VCF; the pipeline-ready sampleinfo',
    },
    {
      name: 'orders',
      description: 'What was asked for a family (FHIR ServiceRequest): accession, status moves, samples with their roles, samplesheet, labflow state',
    },
    { name: 'labflows', description: 'Versioned lab workflow definitions: stages and the named transitions between them' },
    {
      name: 'variants',
      description:
        "The project's variant catalogue (every distinct variant ingested, with local observation counts) and a sample's variants: read-only, ingestion is their only writer",
    },
  ],
  deps: (kernel) => clinicalDeps(kernel),
  routes: [subjects, samples, orders, labflows, variants],
  pages: [clinicalConsole],
  seed: async ({ kernel, project, user }) => {
    const stores = clinicalStores(kernel)
    await stores.labflows.seedPlatform()
    await seedDemoFamily(stores, project, user.id)
  },
})

export const createClinicalApp = (deps: ClinicalDeps) => serviceApp(clinical.definition, deps)
