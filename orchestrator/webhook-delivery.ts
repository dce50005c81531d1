import type { CloudEvent } from '@google-cloud/functions-framework'
import { deliver } from '../domain/webhooks/dispatch.js'
import { WEBHOOK_DELIVERY_DUE } from '../domain/webhooks/messages.js'
import type { OrchestratorDeps } from './deps.js'
import { decodeJson, MessagePublishedData } from './pubsub-event.js'

/** webhook.delivery_due → one delivery sent (domain/webhooks/dispatch.ts); a duplicate or late message does nothing. */
export async function onWebhookDelivery(deps: OrchestratorDeps, event: CloudEvent<unknown>): Promise<void> {
  const envelope = MessagePublishedData.safeParse(event.data)
  const body = envelope.success ? WEBHOOK_DELIVERY_DUE.schema.safeParse(decodeJson(envelope.data.message.data)) : undefined
  if (!envelope.success || !body?.success) {
    deps.log.warn('webhook.delivery_due: malformed message acknowledged', {
      event_id: event.id,
      problem: envelope.success ? body?.error?.message : envelope.error.message,
    })
    return
  }
  await deliver(deps, body.data.delivery_id)
}
