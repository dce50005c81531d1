import type { BatchBackend } from '../../lib/batch/port.js'
import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import type { Queue } from '../../lib/queue.js'
import { createObjectStorage, type ObjectStorage } from '../../lib/storage.js'
import type { PipelineStore } from '../../domain/pipelines/store.js'
import { createRunStack } from '../../domain/runs/stack.js'
import type { RunStore } from '../../domain/runs/store.js'

export interface ComputeDeps extends KernelDeps {
  runs: RunStore
  pipelines: PipelineStore
  queue: Queue
  /** Only deletion is used here: cancelling a run deletes its job. The orchestrator creates jobs. */
  batch: Pick<BatchBackend, 'deleteJob'>
  storage: ObjectStorage
}

export type ComputeEnv = AppEnv<ComputeDeps>
export type ComputeAdapters = Pick<ComputeDeps, 'queue' | 'batch' | 'storage'>

/** The adapters come from the configuration (Pub/Sub, Cloud Batch or the local executor, GCS or a local folder) unless given. */
export function computeDeps(kernel: KernelDeps, adapters: Partial<ComputeAdapters> = {}): ComputeDeps {
  const stack = createRunStack(kernel, { queue: adapters.queue, batch: adapters.batch as BatchBackend | undefined })
  return { ...kernel, ...stack, batch: adapters.batch ?? stack.batch, storage: adapters.storage ?? createObjectStorage(kernel.config) }
}
