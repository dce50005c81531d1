import type { BatchBackend } from '../../lib/batch/index.js'
import { API_PREFIX, createServiceApp, type KernelDeps } from '../../lib/http.js'
import type { PipelineStore } from '../../lib/pipelines.js'
import type { Queue } from '../../lib/queue.js'
import { createRunStack } from '../../lib/run-stack.js'
import type { RunStore } from '../../lib/runs.js'
import { createObjectStorage, type ObjectStorage } from '../../lib/storage.js'
import { pipelineRoutes } from './routes/pipelines.js'
import { runRoutes } from './routes/runs.js'

export interface ComputeDeps extends KernelDeps {
  runs: RunStore
  pipelines: PipelineStore
  queue: Queue
  /** Only deletion is used here: cancelling a run deletes its job. The orchestrator creates jobs. */
  batch: Pick<BatchBackend, 'deleteJob'>
  storage: ObjectStorage
}

export type ComputeAdapters = Pick<ComputeDeps, 'queue' | 'batch' | 'storage'>

/** The adapters come from the configuration (Pub/Sub, Cloud Batch or the local executor, GCS or a local folder) unless given. */
export function computeDeps(kernel: KernelDeps, adapters: Partial<ComputeAdapters> = {}): ComputeDeps {
  const stack = createRunStack(kernel, { queue: adapters.queue, batch: adapters.batch as BatchBackend | undefined })
  return { ...kernel, ...stack, batch: adapters.batch ?? stack.batch, storage: adapters.storage ?? createObjectStorage(kernel.config) }
}

export function createComputeApp(deps: ComputeDeps) {
  const app = createServiceApp({
    name: 'compute',
    title: 'Compute service',
    description:
      "The pipeline catalogue (platform-wide pipelines and the project's own, versioned per slug) and pipeline runs: submit, list, watch, outputs, cancel. Every request needs X-Project-ID.",
    deps,
    projectScoped: true,
  })
  app.route(API_PREFIX, pipelineRoutes(deps))
  app.route(API_PREFIX, runRoutes(deps))
  return app
}
