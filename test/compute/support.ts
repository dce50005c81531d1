import { PubSub } from '@google-cloud/pubsub'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { computeDeps, createComputeApp, type ComputeAdapters } from '../../functions/compute/app.js'
import { seedPipelines } from '../../functions/compute/seed.js'
import { LocalBatchExecutor } from '../../lib/batch/local.js'
import { pipelineId, PLATFORM_SCOPE } from '../../lib/pipelines.js'
import { LocalObjectStorage } from '../../lib/storage.js'
import { call, makeWorld } from '../support/world.js'

/**
 * A tenant (from makeWorld) with the compute service on the same emulators: the platform catalogue
 * seeded, the run-requested topic created with a subscription to read what POST /runs publishes,
 * a local storage folder and the local Batch executor (real child processes) in a temp folder.
 */
export async function makeComputeWorld(adapters: Partial<ComputeAdapters> = {}) {
  const world = await makeWorld()
  const root = await mkdtemp(join(tmpdir(), 'compute-test-'))
  const config = world.deps.config
  const pubsub = new PubSub({ projectId: config.gcpProject, apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true })
  const [topic] = await pubsub.topic(config.topics.runRequested).get({ autoCreate: true })
  const [subscription] = await topic.createSubscription(`compute-test-${Date.now()}`)
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
  const deps = computeDeps(world.deps, { batch, storage, ...adapters })
  await seedPipelines(deps.pipelines)
  const app = createComputeApp(deps)

  afterAll(async () => {
    await subscription.delete().catch(() => undefined)
    await pubsub.close()
    await rm(root, { recursive: true, force: true })
  })

  const platformId = (slug: string, version: string) => pipelineId(PLATFORM_SCOPE, slug, version)
  const api = (
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; project?: string | null; headers?: Record<string, string> } = {},
  ) =>
    call(app, method, `/api/v1${path}`, {
      token: opts.token ?? world.owner.token,
      body: opts.body,
      project: opts.project === null ? undefined : (opts.project ?? world.project.id),
      headers: opts.headers,
    })

  /** Waits for `count` run.requested messages on the test subscription. */
  function receive(count: number, timeoutMs = 10_000): Promise<Array<{ data: unknown; attributes: Record<string, string> }>> {
    return new Promise((resolve, reject) => {
      const got: Array<{ data: unknown; attributes: Record<string, string> }> = []
      const timer = setTimeout(() => {
        subscription.removeAllListeners('message')
        reject(new Error(`received ${got.length} of ${count} messages`))
      }, timeoutMs)
      subscription.on('message', (m) => {
        m.ack()
        got.push({ data: JSON.parse(m.data.toString('utf8')), attributes: m.attributes })
        if (got.length === count) {
          clearTimeout(timer)
          subscription.removeAllListeners('message')
          void subscription.close().then(() => resolve(got))
        }
      })
    })
  }

  return { ...world, admin: world.deps, deps, app, api, platformId, receive, storage, batch, root, pubsub, subscription }
}
