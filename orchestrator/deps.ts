import type { JobLogReader } from '../lib/batch/logs.js'
import type { BatchBackend } from '../lib/batch/port.js'
import type { Clock } from '../lib/clock.js'
import type { Config } from '../lib/config.js'
import type { KernelDeps } from '../lib/kernel.js'
import type { Logger } from '../lib/log.js'
import { PubSubQueue, type Queue } from '../lib/queue.js'
import { createObjectStorage, type ObjectStorage } from '../lib/storage.js'
import type { WorkflowExecutions } from '../lib/workflows.js'
import type { PipelineStore } from '../domain/pipelines/store.js'
import { createRunStack } from '../domain/runs/stack.js'
import type { RunStore } from '../domain/runs/store.js'
import type { IngestionDeps, IngestionFaults, IngestionTuning } from '../domain/variants/ingest.js'
import type { IngestionStore } from '../domain/variants/ingestions.js'
import type { IngestionRunner } from '../domain/variants/runner.js'
import { ingestionStack } from '../domain/variants/stores.js'
import type { UrlPolicy } from '../domain/webhooks/addresses.js'
import { webhookStack } from '../domain/webhooks/stack.js'
import type { WebhookStore } from '../domain/webhooks/store.js'

export interface OrchestratorDeps {
  runs: RunStore
  /** Not read when dispatching: a run carries the execution spec it was submitted with. */
  pipelines: PipelineStore
  batch: BatchBackend
  /** Jobs' logs: a failed run's error message ends with its task's last stderr lines. */
  logs: JobLogReader
  queue: Queue
  log: Logger
  clock: Clock
  config: Config
  /** Run outputs (a succeeded run's VCF) and the VCFs ingested, as the platform's own identity. */
  storage: ObjectStorage
  ingestions: IngestionStore
  /** The steps of a variant ingestion, and who runs them (Cloud Workflows, or this process). */
  ingestion: IngestionDeps
  runner: IngestionRunner
  /** Webhook deliveries: sent by webhookDelivery, swept by the reconciler; every store here writes their outbox with its audit events. */
  webhooks: WebhookStore
  webhookUrlPolicy: UrlPolicy
  /** How long a receiver has to answer (ATTEMPT_TIMEOUT_MS unless a test says shorter). */
  attemptTimeoutMs?: number
  /** How long a queued or running run may go without news before the reconciler asks Batch (default 10 minutes). */
  staleAfterMs?: number
  /** How long a queued run without a job may go without news before the reconciler publishes it again (default 90 s). */
  dispatchAfterMs?: number
}

export interface OrchestratorAdapters {
  queue?: Queue
  batch?: BatchBackend
  logs?: JobLogReader
  storage?: ObjectStorage
  workflows?: WorkflowExecutions
  staleAfterMs?: number
  dispatchAfterMs?: number
  faults?: IngestionFaults
  tuning?: Partial<IngestionTuning>
  attemptTimeoutMs?: number
}

/** The orchestrator's dependencies; the queue, Batch, storage and the ingestion runner come from the configuration unless given. */
export function orchestratorDeps(base: KernelDeps, adapters: OrchestratorAdapters = {}): OrchestratorDeps {
  const queue = adapters.queue ?? new PubSubQueue(base.config)
  const { kernel, webhooks } = webhookStack(base, queue)
  const stack = createRunStack(kernel, { ...adapters, queue })
  const storage = adapters.storage ?? createObjectStorage(kernel.config)
  const { ingestion, runner, ingestions } = ingestionStack(kernel, {
    storage,
    queue: stack.queue,
    workflows: adapters.workflows,
    faults: adapters.faults,
    tuning: adapters.tuning,
  })
  return {
    ...stack,
    log: kernel.log,
    clock: kernel.clock,
    config: kernel.config,
    storage,
    ingestions,
    ingestion,
    runner,
    webhooks,
    webhookUrlPolicy: kernel.config.webhookUrlPolicy,
    attemptTimeoutMs: adapters.attemptTimeoutMs,
    staleAfterMs: adapters.staleAfterMs,
    dispatchAfterMs: adapters.dispatchAfterMs,
  }
}
