import type { Logger } from '../../lib/log.js'
import type { WorkflowExecutions } from '../../lib/workflows.js'
import { runIngestion, type IngestionDeps } from './ingest.js'
import type { IngestionRecord, IngestionStore } from './ingestions.js'

/**
 * Who takes an ingestion's steps once ingestion.requested arrives: in the cloud, a Cloud Workflows
 * execution of infra/workflows/ingestion.yaml, which calls the ingestionStep function for each step
 * with retries and keeps a record of the execution; in the local suite (and tests), this process,
 * looping over the same steps with the same retries. Either answers at once: the steps run on.
 */
export interface IngestionRunner {
  /** `log`: the logger of the event that starts it (lib/kernel.ts `inScope`), for what is logged while starting. */
  start(ingestion: Pick<IngestionRecord, 'id' | 'project_id' | 'order_id'>, log?: Logger): Promise<void>
}

/** The local suite's runner: the steps in this process, one loop per ingestion at a time. */
export class LocalIngestionRunner implements IngestionRunner {
  private readonly running = new Map<string, Promise<void>>()
  constructor(private readonly deps: IngestionDeps) {}

  async start(ingestion: Pick<IngestionRecord, 'id'>): Promise<void> {
    if (this.running.has(ingestion.id)) return
    const run = runIngestion(this.deps, ingestion.id)
      .then((status) => this.deps.log.info('ingestion run ended', { ingestion_id: ingestion.id, status }))
      .catch((error: unknown) =>
        // It stays pending; the reconciler starts it again once its lease has run out.
        this.deps.log.error('ingestion run gave up; the reconciler will start it again', { ingestion_id: ingestion.id, error }),
      )
      .finally(() => this.running.delete(ingestion.id))
    this.running.set(ingestion.id, run)
  }

  /** Resolves when the runs in progress (or the one of `id`) have ended: for tests and a clean shutdown. */
  async settled(id?: string): Promise<void> {
    await Promise.all(id ? [this.running.get(id)] : [...this.running.values()])
  }
}

/** A Cloud Workflows execution is started at most once per this window for an ingestion (a duplicated message starts none). */
export const EXECUTION_FRESH_MS = 30 * 60_000

/** The cloud's runner: one Cloud Workflows execution per ingestion (its argument names it). */
export class WorkflowsIngestionRunner implements IngestionRunner {
  constructor(private readonly deps: { ingestions: IngestionStore; workflows: WorkflowExecutions; workflow: string; log: Logger }) {}

  async start(ingestion: Pick<IngestionRecord, 'id' | 'project_id' | 'order_id'>, log = this.deps.log): Promise<void> {
    const { ingestions, workflows, workflow } = this.deps
    if (!(await ingestions.claimRunner(ingestion.id, EXECUTION_FRESH_MS, () => 'starting'))) return
    let name: string
    try {
      ;({ name } = await workflows.start(
        workflow,
        { ingestion_id: ingestion.id, project_id: ingestion.project_id },
        { ingestion: ingestion.id, order: ingestion.order_id },
      ))
    } catch (error) {
      // Not started: the next delivery of the message (or the reconciler) may try again at once.
      await ingestions.releaseRunner(ingestion.id).catch(() => undefined)
      throw error
    }
    await ingestions.recordExecution(ingestion.id, name)
    log.info('ingestion: workflow execution started', { ingestion_id: ingestion.id, execution: name })
  }
}
