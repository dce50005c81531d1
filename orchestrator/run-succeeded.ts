import { requestRunIngestion } from '../domain/variants/dispatch.js'
import type { RunRecord } from '../domain/runs/store.js'
import type { OrchestratorDeps } from './deps.js'

/**
 * A run linked to an order has succeeded: its outputs are looked at for a VCF, whose ingestion is
 * requested, then the run's outbox flag is cleared. A failure leaves the flag set and the
 * reconciler tries again, so a crash between the run's success and its ingestion loses nothing.
 */
export async function afterRunSucceeded(deps: OrchestratorDeps, run: RunRecord): Promise<void> {
  try {
    const ingestion = await requestRunIngestion(deps, run)
    await deps.runs.clearIngestionPending(run.id, ingestion?.id)
    if (ingestion)
      deps.log.info('run succeeded with a VCF: ingestion requested', { run_id: run.id, ingestion_id: ingestion.id, source: ingestion.source_uri })
  } catch (error) {
    deps.log.warn('could not request the ingestion of a run; the reconciler will', { run_id: run.id, error })
  }
}
