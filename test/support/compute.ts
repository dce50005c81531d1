import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PubSub } from '@google-cloud/pubsub'
import { computeDeps, type ComputeAdapters } from '../../functions/compute/deps.js'
import { seedPipelines } from '../../domain/pipelines/catalogue.js'
import { LocalBatchExecutor } from '../../lib/batch/local.js'
import { LocalLogReader } from '../../lib/batch/local-logs.js'
import { LocalObjectStorage } from '../../lib/storage.js'
import type { makeWorld } from './world.js'

/**
 * The compute service's dependencies for a test tenant, on the shared emulators: the platform
 * catalogue seeded, the run-requested topic created, local storage and the local Batch executor
 * (real child processes) in a temp folder. `close()` removes what it made.
 */
export async function localCompute(world: Awaited<ReturnType<typeof makeWorld>>, adapters: Partial<ComputeAdapters> = {}) {
  const root = await mkdtemp(join(tmpdir(), 'compute-test-'))
  const config = world.deps.config
  const pubsub = new PubSub({ projectId: config.gcpProject, apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true })
  const [topic] = await pubsub.topic(config.topics.runRequested).get({ autoCreate: true })
  const storage = new LocalObjectStorage(join(root, 'buckets'))
  const batch = new LocalBatchExecutor(
    {
      workRoot: join(root, 'work'),
      bucketDir: (bucket) => join(root, 'buckets', bucket),
      region: 'local',
      hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    },
    { pubsub, log: world.deps.log, clock: world.deps.clock },
  )
  const deps = computeDeps(world.deps, { batch, logs: new LocalLogReader(join(root, 'work')), storage, ...adapters })
  await seedPipelines(deps.pipelines)
  return {
    deps,
    pubsub,
    topic,
    storage,
    batch,
    root,
    async close() {
      await pubsub.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}
