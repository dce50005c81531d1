import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { getTestServer } from '@google-cloud/functions-framework/testing'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import type { BatchBackend } from '../../../lib/batch/port.js'
import type { LocalBatchExecutor } from '../../../lib/batch/local.js'
import type { Clock } from '../../../lib/clock.js'
import { createKernel } from '../../../lib/kernel.js'
import type { PipelineExecution } from '../../../domain/pipelines/model.js'
import { PubSubQueue } from '../../../lib/queue.js'
import type { RunRecord } from '../../../domain/runs/store.js'
import { orchestratorDeps } from '../../../orchestrator/deps.js'
import { makeWorld } from '../../support/world.js'
import { localEnv, pubsubFor } from './support.js'

export const shellPipeline = (script: string): PipelineExecution => ({
  type: 'container_entrypoint',
  container: 'docker.io/library/busybox:1.36',
  entrypoint: '/bin/sh',
  commands: ['-c', script],
  resources: { cpu_milli: 250, memory_mib: 128 },
})

/**
 * A project (from makeWorld) with the orchestrator on the same emulators, the local executor and
 * local bucket folders, and the two topics. `clock` shifts the orchestrator's time (reconciler
 * tests); `batch` replaces the local executor; `env` adds settings (INGESTION_RUNNER=local, say).
 */
export async function makeStage(opts: { clock?: Clock; batch?: BatchBackend; env?: Record<string, string> } = {}) {
  const world = await makeWorld({ ...(await localEnv()), ...opts.env })
  const config = world.deps.config
  const kernel = createKernel(config, 'orchestrator', { firestore: world.deps.db.firestore, clock: opts.clock })
  const pubsub = pubsubFor(config)
  const queue = new PubSubQueue(config, pubsub)
  for (const topic of [config.topics.runRequested, config.topics.jobStatus]) await pubsub.topic(topic).get({ autoCreate: true })
  const deps = orchestratorDeps(kernel, { queue, batch: opts.batch })
  const servers: Server[] = []

  /** Records a queued run the way POST /runs does (without publishing it). */
  async function submit(execution: PipelineExecution, params: Record<string, unknown> = {}, slug = 'shell-test'): Promise<RunRecord> {
    const { run } = await deps.runs.submit(SYSTEM_ACTOR, {
      project: {
        id: world.project.id,
        org_id: world.project.org_id,
        bucket_name: world.project.bucket_name,
        service_account_email: world.project.credentials!.service_account_email,
      },
      pipeline: { id: randomUUID(), slug, version: '1.0.0', ...execution },
      params,
      tags: [],
      created_by: world.owner.user.id,
    })
    return run
  }

  /** Serves a registered function on 127.0.0.1 as the functions framework would, and returns its address. */
  async function serve(name: string): Promise<string> {
    const server = getTestServer(name)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** POSTs a Pub/Sub push request, exactly as a push subscription delivers a message. */
  async function push(base: string, topic: string, message: { json?: unknown; text?: string; attributes?: Record<string, string> }) {
    const data = Buffer.from(message.json !== undefined ? JSON.stringify(message.json) : (message.text ?? '')).toString('base64')
    const res = await fetch(`${base}/projects/${config.gcpProject}/topics/${topic}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: { data, attributes: message.attributes ?? {}, messageId: randomUUID(), publishTime: new Date().toISOString() },
        subscription: `projects/${config.gcpProject}/subscriptions/${topic}-push`,
      }),
    })
    await res.arrayBuffer()
    return res.status
  }

  async function close() {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
    await (deps.batch as Partial<LocalBatchExecutor>).shutdown?.()
    await pubsub.close()
  }

  return { world, config, kernel, deps, pubsub, queue, submit, serve, push, close, executor: deps.batch as LocalBatchExecutor }
}
export type Stage = Awaited<ReturnType<typeof makeStage>>
