import { createBatchBackend, createLogReader, type BatchBackend, type JobLogReader } from '../../lib/batch/index.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { PipelineStore } from '../pipelines/store.js'
import { PubSubQueue, type Queue } from '../../lib/queue.js'
import { RunStore } from './store.js'

export interface RunStack {
  runs: RunStore
  pipelines: PipelineStore
  queue: Queue
  batch: BatchBackend
  /** The jobs' logs (stdout and stderr of their tasks). */
  logs: JobLogReader
}

/**
 * What both the compute service and the orchestrator work with: the run and pipeline stores, the
 * queue and the Batch backend, the adapters chosen by configuration unless given. The local
 * executor publishes its job-state events through the same Pub/Sub client as the queue.
 */
export function createRunStack(kernel: KernelDeps, adapters: { queue?: Queue; batch?: BatchBackend; logs?: JobLogReader } = {}): RunStack {
  const queue = adapters.queue ?? new PubSubQueue(kernel.config)
  return {
    runs: new RunStore(kernel.db, kernel.audit, kernel.clock),
    pipelines: new PipelineStore(kernel.db, kernel.audit, kernel.clock),
    queue,
    batch:
      adapters.batch ??
      createBatchBackend(kernel.config, { log: kernel.log, clock: kernel.clock, pubsub: queue instanceof PubSubQueue ? queue.pubsub : undefined }),
    logs: adapters.logs ?? createLogReader(kernel.config),
  }
}
