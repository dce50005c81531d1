import type { BatchBackend } from '../lib/batch/index.js'
import type { KernelDeps } from '../lib/http.js'
import type { Queue } from '../lib/queue.js'
import { createRunStack } from '../lib/run-stack.js'
import type { OrchestratorDeps } from './orchestrator.js'

/** The orchestrator's dependencies; the queue and the Batch backend come from the configuration unless given. */
export function orchestratorDeps(
  kernel: KernelDeps,
  adapters: { queue?: Queue; batch?: BatchBackend; staleAfterMs?: number } = {},
): OrchestratorDeps {
  return {
    ...createRunStack(kernel, adapters),
    log: kernel.log,
    clock: kernel.clock,
    config: kernel.config,
    staleAfterMs: adapters.staleAfterMs,
  }
}
