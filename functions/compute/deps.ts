import type { JobLogReader } from '../../lib/batch/logs.js'
import type { BatchBackend } from '../../lib/batch/port.js'
import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { PubSubQueue, type Queue } from '../../lib/queue.js'
import { createObjectStorage, createProjectStorage, type ObjectStorage, type ProjectStorage } from '../../lib/storage.js'
import type { OrderStore } from '../../domain/clinical/orders.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import type { PipelineStore } from '../../domain/pipelines/store.js'
import { createRunStack } from '../../domain/runs/stack.js'
import type { RunStore } from '../../domain/runs/store.js'
import { webhookStack } from '../../domain/webhooks/stack.js'
import type { WebhookStore } from '../../domain/webhooks/store.js'

export interface ComputeDeps extends KernelDeps {
  runs: RunStore
  pipelines: PipelineStore
  /** Clinical orders, read (and moved to in_progress) when a run is submitted for one. */
  orders: OrderStore
  queue: Queue
  /** Only deletion is used here: cancelling a run deletes its job. The orchestrator creates jobs. */
  batch: Pick<BatchBackend, 'deleteJob'>
  /** Runs' logs (GET /runs/{id}/logs, the console's run page). */
  logs: JobLogReader
  storage: ObjectStorage
  /**
   * The console's download links to run outputs: V4 addresses signed as the project's service
   * account, as the file service signs them (every function runs as the one runtime account that
   * may sign as project accounts: infra/README.md).
   */
  projectStorage: ProjectStorage
  /** The project's webhooks (/webhooks); every store here writes the webhook outbox with its audit events. */
  webhooks: WebhookStore
}

export type ComputeEnv = AppEnv<ComputeDeps>
export type ComputeAdapters = Pick<ComputeDeps, 'queue' | 'batch' | 'logs' | 'storage' | 'projectStorage'>

/** The adapters come from the configuration (Pub/Sub, Cloud Batch or the local executor and their logs, GCS or a local folder, the signer) unless given. */
export function computeDeps(base: KernelDeps, adapters: Partial<ComputeAdapters> = {}): ComputeDeps {
  const queue = adapters.queue ?? new PubSubQueue(base.config)
  const { kernel, webhooks } = webhookStack(base, queue)
  const stack = createRunStack(kernel, { queue, batch: adapters.batch as BatchBackend | undefined, logs: adapters.logs })
  return {
    ...kernel,
    ...stack,
    webhooks,
    orders: clinicalStores(kernel).orders,
    batch: adapters.batch ?? stack.batch,
    storage: adapters.storage ?? createObjectStorage(kernel.config),
    projectStorage: adapters.projectStorage ?? createProjectStorage(kernel.config),
  }
}
