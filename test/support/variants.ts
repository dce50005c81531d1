import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PubSub } from '@google-cloud/pubsub'
import { createKernel } from '../../lib/kernel.js'
import { PubSubQueue } from '../../lib/queue.js'
import { LocalObjectStorage } from '../../lib/storage.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { runIngestion, type IngestionDeps, type IngestionFaults, type IngestionTuning } from '../../domain/variants/ingest.js'
import { trioVcf, type TrioVcfOptions } from '../../domain/variants/synthetic.js'
import { variantCacheDeps } from '../../functions/variant-cache/deps.js'
import { createVariantCacheApp } from '../../functions/variant-cache/service.js'
import { makeClinicalWorld } from './clinical.js'
import { call, rand } from './world.js'

/**
 * A tenant with a signed trio order (makeClinicalWorld), the variant-cache service on the same
 * emulators with local bucket folders and the ingestion-requested topic, and the ingestion steps
 * run in this process (as the local suite runs them) on a clock the test can move: a crashed run's
 * lock expires when the test moves the clock past its lease.
 */
export async function makeVariantWorld(opts: { tuning?: Partial<IngestionTuning> } = {}) {
  const w = await makeClinicalWorld()
  const root = await mkdtemp(join(tmpdir(), 'variants-test-'))
  const storage = new LocalObjectStorage(join(root, 'buckets'))
  let skewMs = 0
  const clock = { now: () => new Date(Date.now() + skewMs) }
  const kernel = createKernel(w.deps.config, 'variant_cache', { firestore: w.deps.db.firestore, clock })
  const pubsub = new PubSub({ projectId: kernel.config.gcpProject, apiEndpoint: kernel.config.pubsubEmulatorHost, emulatorMode: true })
  await pubsub.topic(kernel.config.topics.ingestionRequested).get({ autoCreate: true })
  const queue = new PubSubQueue(kernel.config)
  const deps = variantCacheDeps(kernel, { queue, storage })
  const app = createVariantCacheApp(deps)
  const tuning: Partial<IngestionTuning> = { leaseMs: 60_000, cleanupGraceMs: 0, ...opts.tuning }
  const ingestionDeps = (faults?: IngestionFaults): IngestionDeps => ({
    db: kernel.db,
    audit: kernel.audit,
    clock,
    log: kernel.log,
    storage,
    queue,
    orders: clinicalStores(kernel).orders,
    faults,
    tuning,
  })

  const vc = (method: string, path: string, o: { token?: string; body?: unknown; project?: string } = {}) =>
    call(app, method, `/api/v1${path}`, { token: o.token ?? w.owner.token, body: o.body, project: o.project ?? w.project.id })

  /** A signed trio order, and the VCF column names of its samples (their external ids). */
  async function signedTrio() {
    const t = await w.trio()
    const signed = await w.move(t.order.id, 'signed')
    if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${JSON.stringify(signed.body)}`)
    const names = { proband: t.samples.proband.external_id, mother: t.samples.mother.external_id, father: t.samples.father.external_id }
    return { ...t, names }
  }

  /** Writes a VCF into the project bucket; answers its gs:// URI. */
  async function putVcf(text: string | Uint8Array, path = `vcf/${rand()}.vcf`) {
    await storage.write(w.project.bucket_name, path, text)
    return `gs://${w.project.bucket_name}/${path}`
  }

  /** A synthetic trio VCF of the order's samples, in the bucket. */
  const putTrio = (names: TrioVcfOptions['samples'], o: Omit<TrioVcfOptions, 'samples'> = {}) => putVcf(trioVcf({ samples: names, ...o }))

  /** POST /orders/{id}/ingestions {source_uri} (202 expected): the queued ingestion. */
  async function request(orderId: string, source_uri: string, token?: string) {
    const res = await vc('POST', `/orders/${orderId}/ingestions`, { body: { source_uri }, token })
    if (res.status !== 202) throw new Error(`ingestion: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body as { id: string; status: string }
  }

  return {
    ...w,
    kernel,
    deps,
    app,
    clinicalApp: w.app,
    vc,
    storage,
    queue,
    clock,
    /** Moves the ingestion's clock ahead (a crashed run's lock lease runs out). */
    advance: (ms: number) => (skewMs += ms),
    ingestionDeps,
    run: (id: string, faults?: IngestionFaults, holder?: string) => runIngestion(ingestionDeps(faults), id, holder),
    signedTrio,
    putVcf,
    putTrio,
    request,
    async close() {
      await pubsub.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}

/** An injected crash: the in-process runner stops there without another attempt, as a dead process would (domain/variants/failures.ts). */
export function crash(where: string): Error {
  return Object.assign(new Error(`injected crash: ${where}`), { crash: true })
}
