import { loadConfig } from '../lib/config.js'
import { createKernel } from '../lib/kernel.js'
import { PubSubQueue } from '../lib/queue.js'
import { LocalObjectStorage } from '../lib/storage.js'
import { clinicalStores } from '../domain/clinical/stores.js'
import { runIngestion } from '../domain/variants/ingest.js'

/**
 * One ingestion in a process of its own, so that the benchmark (bench/variants.ts) reads this
 * process's peak memory: runs every step of INGESTION_ID in process, as the local suite does, and
 * prints {status, peak_rss_mib} as JSON. Settings come from the environment (the benchmark's).
 */
async function main() {
  const config = loadConfig(process.env)
  const kernel = createKernel(config, 'bench-ingest')
  const status = await runIngestion(
    {
      db: kernel.db,
      audit: kernel.audit,
      clock: kernel.clock,
      log: kernel.log,
      storage: new LocalObjectStorage(config.storage.localRoot!),
      queue: new PubSubQueue(config),
      orders: clinicalStores(kernel).orders,
      // A fresh order's first build replaces nothing: no reader needs the grace period.
      tuning: { cleanupGraceMs: 0 },
    },
    process.env.INGESTION_ID!,
  )
  process.stdout.write(`${JSON.stringify({ status, peak_rss_mib: process.resourceUsage().maxRSS / 1024 })}\n`)
  await kernel.db.firestore.terminate()
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`ingestion failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
