import { afterAll } from 'vitest'
import type { ComputeAdapters } from '../../../../functions/compute/deps.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../../domain/pipelines/model.js'
import { apiFor, makeWorld } from '../../../support/world.js'
import { localCompute } from '../../../support/compute.js'

/**
 * A tenant (from makeWorld) with the compute service on the same emulators: the platform catalogue
 * seeded, the run-requested topic created with a subscription to read what POST /runs publishes,
 * a local storage folder and the local Batch executor (real child processes) in a temp folder.
 */
export async function makeComputeWorld(adapters: Partial<ComputeAdapters> = {}) {
  const world = await makeWorld()
  const local = await localCompute(world, adapters)
  const { deps, pubsub, topic, storage, batch, root } = local
  const [subscription] = await topic.createSubscription(`compute-test-${Date.now()}`)
  const app = createComputeApp(deps)

  afterAll(async () => {
    await subscription.delete().catch(() => undefined)
    await local.close()
  })

  const platformId = (slug: string, version: string) => pipelineId(PLATFORM_SCOPE, slug, version)
  const api = apiFor(app, world)

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
