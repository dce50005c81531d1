import { createBatchBackend, type BatchBackend } from '../lib/batch/index.js'
import type { KernelDeps } from '../lib/http.js'
import { PipelineStore } from '../lib/pipelines.js'
import { PubSubQueue, type Queue } from '../lib/queue.js'
import { RunStore } from '../lib/runs.js'
import type { OrchestratorDeps } from './orchestrator.js'

/** The orchestrator's dependencies; the queue and the Batch backend come from the configuration unless given. */
export function orchestratorDeps(kernel: KernelDeps, adapters: { queue?: Queue; batch?: BatchBackend; staleAfterMs?: number } = {}): OrchestratorDeps {
  const queue = adapters.queue ?? new PubSubQueue(kernel.config)
  return {
    runs: new RunStore(kernel.db, kernel.audit, kernel.clock),
    pipelines: new PipelineStore(kernel.db, kernel.audit, kernel.clock),
    queue,
    batch:
      adapters.batch ??
      createBatchBackend(kernel.config, { log: kernel.log, clock: kernel.clock, pubsub: queue instanceof PubSubQueue ? queue.pubsub : undefined }),
    log: kernel.log,
    clock: kernel.clock,
    config: kernel.config,
    staleAfterMs: adapters.staleAfterMs,
  }
}
