import type { CloudEvent } from '@google-cloud/functions-framework'
import { INGESTION_REQUESTED } from '../domain/variants/messages.js'
import type { OrchestratorDeps } from './deps.js'
import { decodeJson, MessagePublishedData } from './pubsub-event.js'

/** ingestion.requested → the ingestion's steps start (or resume) with its runner: a Cloud Workflows execution, or this process. */
export async function onIngestionRequested(deps: OrchestratorDeps, event: CloudEvent<unknown>): Promise<void> {
  const { ingestions, runner, log } = deps
  const envelope = MessagePublishedData.safeParse(event.data)
  const body = envelope.success ? INGESTION_REQUESTED.schema.safeParse(decodeJson(envelope.data.message.data)) : undefined
  if (!envelope.success || !body?.success) {
    log.warn('ingestion.requested: malformed message acknowledged', {
      event_id: event.id,
      problem: envelope.success ? body?.error?.message : envelope.error.message,
    })
    return
  }
  const { ingestion_id, project_id } = body.data
  const ingestion = await ingestions.get(ingestion_id)
  if (!ingestion || ingestion.project_id !== project_id) {
    log.warn('ingestion.requested: no such ingestion', { ingestion_id, project_id })
    return
  }
  if (!ingestion.pending) return
  // Answers at once: the steps run on (a push delivery must be acknowledged within its deadline).
  await runner.start(ingestion, log)
  log.info('ingestion.requested: started', { ingestion_id, order_id: ingestion.order_id, status: ingestion.status })
}
