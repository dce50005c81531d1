import { cloudEvent, http, type CloudEvent } from '@google-cloud/functions-framework'
import { z } from 'zod'
import { inScope } from '../lib/kernel.js'
import type { LogScope } from '../lib/log.js'
import { requestScope } from '../lib/request-log.js'
import type { OrchestratorDeps } from './deps.js'
import { onIngestionRequested } from './ingestion-requested.js'
import { ingestionStep } from './ingestion-step.js'
import { onJobStateChanged } from './job-state-changed.js'
import { eventLogScope } from './pubsub-event.js'
import { reconcile } from './reconcile.js'
import { onRunRequested } from './run-requested.js'
import { onWebhookDelivery } from './webhook-delivery.js'

export { ORCHESTRATOR_FUNCTIONS } from './function-list.js'

/**
 * What a reconcile call may ask (a JSON body, optional): `abandoned_before` makes every run
 * untouched since then count as abandoned (the local suite sends its start time after a restart).
 */
export const ReconcileRequest = z.object({ abandoned_before: z.iso.datetime({ offset: true }).optional() }).strict()

/** The orchestrator's dependencies in the scope of one event or HTTP call, the ingestion steps' included (lib/kernel.ts `inScope`). */
const scoped = (deps: OrchestratorDeps, scope: LogScope): OrchestratorDeps => ({ ...inScope(deps, scope), ingestion: inScope(deps.ingestion, scope) })

/** Every line logged while handling an event or an HTTP call carries its ids (and trace), as a service's lines carry the request's. */
export function registerOrchestrator(base: OrchestratorDeps) {
  const project = base.config.gcpProject
  const forEvent = (event: CloudEvent<unknown>) => scoped(base, eventLogScope(event, project))
  cloudEvent('runRequested', (event: CloudEvent<unknown>) => onRunRequested(forEvent(event), event))
  cloudEvent('jobStateChanged', (event: CloudEvent<unknown>) => onJobStateChanged(forEvent(event), event))
  cloudEvent('ingestionRequested', (event: CloudEvent<unknown>) => onIngestionRequested(forEvent(event), event))
  cloudEvent('webhookDelivery', (event: CloudEvent<unknown>) => onWebhookDelivery(forEvent(event), event))
  http('reconcile', async (req, res) => {
    const scope = requestScope(req, project)
    const deps = scoped(base, scope)
    res.setHeader('X-Request-ID', scope.requestId)
    const body = ReconcileRequest.safeParse(req.body && typeof req.body === 'object' ? req.body : {})
    if (!body.success) {
      const issue = body.error.issues[0]
      res.status(400).json({ detail: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` })
      return
    }
    const abandonedBefore = body.data.abandoned_before ? new Date(body.data.abandoned_before) : undefined
    try {
      res.status(200).json(await reconcile(deps, { abandonedBefore }))
    } catch (err) {
      deps.log.error('reconcile failed', { error: err })
      res.status(500).json({ detail: 'internal error' })
    }
  })
  http('ingestionStep', async (req, res) => {
    const scope = requestScope(req, project)
    const deps = scoped(base, scope)
    res.setHeader('X-Request-ID', scope.requestId)
    if (req.method !== 'POST') {
      res.status(405).json({ detail: 'POST an ingestion step' })
      return
    }
    try {
      const answer = await ingestionStep(deps, req.body)
      res.status(answer.status).json(answer.body)
    } catch (err) {
      // The workflow retries the step (it is idempotent).
      deps.log.error('ingestion step failed', { error: err })
      res.status(500).json({ detail: 'internal error' })
    }
  })
}
