import type { BatchBackend } from '../lib/batch/port.js'
import type { Clock } from '../lib/clock.js'
import type { Config } from '../lib/config.js'
import type { KernelDeps } from '../lib/kernel.js'
import type { Logger } from '../lib/log.js'
import type { Queue } from '../lib/queue.js'
import type { PipelineStore } from '../domain/pipelines/store.js'
import { createRunStack } from '../domain/runs/stack.js'
import type { RunStore } from '../domain/runs/store.js'

export interface OrchestratorDeps {
  runs: RunStore
  /** Not read when dispatching: a run carries the execution spec it was submitted with. */
  pipelines: PipelineStore
  batch: BatchBackend
  queue: Queue
  log: Logger
  clock: Clock
  config: Config
  /** How long a queued or running run may go without news before the reconciler asks Batch (default 10 minutes). */
  staleAfterMs?: number
  /** How long a queued run without a job may go without news before the reconciler publishes it again (default 90 s). */
  dispatchAfterMs?: number
}

/** The orchestrator's dependencies; the queue and the Batch backend come from the configuration unless given. */
export function orchestratorDeps(
  kernel: KernelDeps,
  adapters: { queue?: Queue; batch?: BatchBackend; staleAfterMs?: number; dispatchAfterMs?: number } = {},
): OrchestratorDeps {
  return {
    ...createRunStack(kernel, adapters),
    log: kernel.log,
    clock: kernel.clock,
    config: kernel.config,
    staleAfterMs: adapters.staleAfterMs,
    dispatchAfterMs: adapters.dispatchAfterMs,
  }
}
