import { consolePages, redirectToDefaultProject } from '../../../lib/console/index.js'
import type { ClinicalDeps } from '../deps.js'
import { orderPages } from './orders.js'
import { samplePages } from './samples.js'
import { subjectPages } from './subjects.js'

/** The clinical-data service's console (`/console/...`): subjects, samples, families and orders. */
export const clinicalConsole = consolePages<ClinicalDeps>()
clinicalConsole.get('/', (c) => redirectToDefaultProject(c, 'orders'))
subjectPages(clinicalConsole)
samplePages(clinicalConsole)
orderPages(clinicalConsole)
