import { z } from '@hono/zod-openapi'
import { pathId } from '../../lib/openapi.js'
import { MAX_URL_LENGTH } from '../../domain/webhooks/addresses.js'
import { MAX_ATTEMPTS, MAX_KEPT_ATTEMPTS, MAX_WEBHOOKS_PER_PROJECT, SECRET_OVERLAP_MS } from '../../domain/webhooks/decide.js'
import { EVENT_FILTERS, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/events.js'
import { DELIVERY_STATUSES } from '../../domain/webhooks/model.js'

/** The schemas of /webhooks (docs/webhooks.md). */

const EventFilter = z.enum(EVENT_FILTERS as [string, ...string[]]).openapi('WebhookEventFilter', {
  description: `An event type (${WEBHOOK_EVENT_TYPES.join(', ')}), a group of them (run.*, ingestion.*, order.*, report.*), or * for every event, those added later included`,
})

const url = z.string().max(MAX_URL_LENGTH).openapi({
  description:
    'Where deliveries are POSTed: https:// and a host on the public internet (in the local suite, http:// and this machine too). Checked when registered and again on every delivery, on the addresses the host then resolves to; private, loopback, link-local and metadata addresses are refused',
  example: 'https://lims.example.org/hooks/platform',
})
const events = z.array(EventFilter).min(1).max(EVENT_FILTERS.length)
const description = z.string().max(500)

export const CreateWebhook = z
  .object({ url, events, description: description.default('') })
  .strict()
  .openapi('CreateWebhook', { description: `A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks` })

export const UpdateWebhook = z
  .object({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().openapi({
      description: 'false: no new deliveries; pending ones are kept as failed when their turn comes (redeliver them once enabled again)',
    }),
  })
  .strict()
  .openapi('UpdateWebhook')

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    enabled: z.boolean(),
    secret_generation: z.number().int().openapi({ description: '1, then one more per rotation' }),
    previous_secret_expires: z
      .string()
      .optional()
      .openapi({
        description: `After a rotation, deliveries are signed with the previous secret too until then (${SECRET_OVERLAP_MS / 3600_000} hours)`,
      }),
    created: z.string(),
    created_by: z.string(),
    updated: z.string(),
  })
  .openapi('Webhook')

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().openapi({
    description:
      'The signing secret (Standard Webhooks: whsec_ and base64): shown here only, at registration and rotation; the platform does not store it',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
}).openapi('WebhookWithSecret')

export const DeliveryStatusSchema = z.enum(DELIVERY_STATUSES).openapi('WebhookDeliveryStatus', {
  description: `pending: an attempt is due or scheduled; succeeded: the receiver answered 2xx; failed: ${MAX_ATTEMPTS} attempts failed (or the webhook was disabled or deleted first)`,
})

export const Attempt = z
  .object({
    at: z.string(),
    number: z.number().int().openapi({ description: 'The attempt of its round: 1 to 8' }),
    round: z.number().int().openapi({ description: '1, then one more per redelivery' }),
    duration_ms: z.number().int(),
    status_code: z.number().int().optional().openapi({ description: "The receiver's HTTP status" }),
    error: z.string().optional().openapi({ description: 'Why the attempt failed: no answer, a refused address, or a status other than 2xx' }),
    succeeded: z.boolean(),
  })
  .openapi('WebhookAttempt')

export const Delivery = z
  .object({
    id: z.string().openapi({ description: 'The message id, sent as webhook-id on every attempt: a receiver ignores an id it has seen' }),
    webhook_id: z.string(),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    status: DeliveryStatusSchema,
    created: z.string().openapi({ description: 'When the change happened' }),
    next_attempt_at: z.string().optional(),
    round: z.number().int(),
    attempt_count: z.number().int().openapi({ description: 'Attempts made in this round' }),
    failure: z.string().optional().openapi({ description: 'Why a delivery is failed without being tried' }),
    payload: z.record(z.string(), z.unknown()).openapi({ description: 'The body sent: {type, timestamp, data}' }),
    attempts: z.array(Attempt).openapi({ description: `Every attempt, oldest first (the newest ${MAX_KEPT_ATTEMPTS})` }),
  })
  .openapi('WebhookDelivery')

export const DeliveryListQuery = z.object({ status: DeliveryStatusSchema.optional() })

export const WebhookDeliveryParams = z.object({ id: pathId('id'), delivery_id: pathId('delivery_id', 'msg_2b1f0c7a52f34f4e8a510f6b6a9d2c11') })
