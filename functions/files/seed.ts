import type { SeedContext } from '../../lib/service.js'
import { createProjectStorage } from '../../lib/storage.js'
import { DEMO_SAMPLES, demoFastqGz, demoFastqPaths } from '../../domain/files/demo-fastq.js'

/** The demo family's FASTQ files in the demo bucket, written once (a file already there is left as it is). */
export async function seedDemoFastq({ config, project }: SeedContext) {
  const account = project.credentials?.service_account_email
  if (!account) return
  const storage = await createProjectStorage(config).objects(account)
  for (const sample of DEMO_SAMPLES) {
    for (const [i, path] of demoFastqPaths(sample).entries()) {
      if (await storage.stat(project.bucket_name, path)) continue
      await storage.write(project.bucket_name, path, demoFastqGz(sample, (i + 1) as 1 | 2), 'application/gzip')
    }
  }
}
