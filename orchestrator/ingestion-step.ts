import { z } from 'zod'
import { runIngestionStep } from '../domain/variants/ingest.js'
import { INGESTION_STEPS } from '../domain/variants/ingestions.js'
import type { OrchestratorDeps } from './deps.js'

/**
 * One step of an ingestion, for the Cloud Workflows execution of infra/workflows/ingestion.yaml:
 * the workflow posts `{ingestion_id, project_id, step, holder}` (holder: its execution id) and
 * calls again while the answer says `more` (a slice of a long step ended within the function's
 * time), waiting `wait_seconds` first when given; `stop` ends the execution (the ingestion is
 * failed, superseded, or another run holds it). A failure that another attempt may pass is a 500,
 * which the workflow retries; one that none could (domain/variants/failures.ts) has already ended
 * the ingestion as failed, and the answer is `stop`.
 */
export const StepRequest = z.object({
  ingestion_id: z.string().uuid(),
  project_id: z.string().uuid(),
  step: z.enum(INGESTION_STEPS),
  holder: z.string().min(1).max(300),
})

export interface StepAnswer {
  ingestion_id: string
  step: string
  outcome: 'done' | 'more' | 'stop'
  status: string
  more: boolean
  stop: boolean
  wait_seconds: number
}

/** Work done per call: the function's timeout (540 s) less a margin for the last batch and the answer. */
export const STEP_BUDGET_MS = 420_000

export async function ingestionStep(
  deps: OrchestratorDeps,
  input: unknown,
): Promise<{ status: 200 | 400 | 404; body: StepAnswer | { detail: string } }> {
  const parsed = StepRequest.safeParse(input)
  if (!parsed.success) return { status: 400, body: { detail: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') } }
  const { ingestion_id, project_id, step, holder } = parsed.data
  const ingestion = await deps.ingestions.get(ingestion_id)
  if (!ingestion || ingestion.project_id !== project_id) return { status: 404, body: { detail: 'ingestion not found' } }
  const result = await runIngestionStep(deps.ingestion, ingestion_id, step, holder, { budgetMs: STEP_BUDGET_MS })
  if (result.outcome === 'stop' && (result.status === 'queued' || result.status === 'building')) {
    // This execution ends without finishing (it waits behind another ingestion of the order): a later request may start another.
    await deps.ingestions.releaseRunner(ingestion_id)
  }
  return {
    status: 200,
    body: {
      ingestion_id,
      step,
      outcome: result.outcome,
      status: result.status,
      more: result.outcome === 'more',
      stop: result.outcome === 'stop',
      wait_seconds: Math.ceil((result.waitMs ?? 0) / 1000),
    },
  }
}
