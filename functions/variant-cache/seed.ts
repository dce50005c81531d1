import type { SeedContext } from '../../lib/service.js'
import { createProjectStorage } from '../../lib/storage.js'
import { samplesheetCsv } from '../../domain/clinical/samplesheet.js'
import { clinicalStores } from '../../domain/clinical/stores.js'

/** Where the local suite puts the demo order's samplesheet, for the trio-local pipeline (docs/second-terminal.md, the trio demo). */
export const DEMO_SAMPLESHEET_PATH = 'samplesheets/demo-trio.csv'
const DEMO_PROBAND_SAMPLE = 'S-DEMO-PROBAND'

/**
 * The demo order's samplesheet (what GET /orders/{id}/samplesheet answers) in the demo bucket, so
 * that the trio-local demo needs no upload: written once, like the file service's FASTQ files.
 */
export async function seedDemoSamplesheet({ config, kernel, project }: SeedContext) {
  const account = project.credentials?.service_account_email
  if (!account) return
  const storage = await createProjectStorage(config).objects(account)
  if (await storage.stat(project.bucket_name, DEMO_SAMPLESHEET_PATH)) return
  const stores = clinicalStores(kernel)
  const proband = (await stores.samples.list(project.id, { external_id: DEMO_PROBAND_SAMPLE }, {})).items[0]
  const order = proband?.orders[0] ? await stores.orders.resolve(project.id, proband.orders[0].order_id) : undefined
  if (!order) return
  await storage.write(project.bucket_name, DEMO_SAMPLESHEET_PATH, samplesheetCsv(await stores.orders.samplesheet(order)), 'text/csv')
}
