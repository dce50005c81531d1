import type { CloudEvent } from '@google-cloud/functions-framework'
import { z } from 'zod'
import type { LogScope } from '../lib/log.js'
import { isRequestId } from '../lib/request-log.js'
import { parseTraceparent, traceLogFields } from '../lib/trace.js'

/** The shape of a Pub/Sub message in a CloudEvent (google.cloud.pubsub.topic.v1.messagePublished). */
export const MessagePublishedData = z.object({
  message: z.object({
    data: z.string().optional(),
    attributes: z.record(z.string(), z.string()).optional(),
    messageId: z.string().optional(),
    publishTime: z.string().optional(),
  }),
  subscription: z.string().optional(),
})
export type MessagePublishedData = z.infer<typeof MessagePublishedData>

/** The message's data as JSON, or undefined when it is absent or not JSON. */
export function decodeJson(data: string | undefined): unknown {
  if (!data) return undefined
  try {
    return JSON.parse(Buffer.from(data, 'base64').toString('utf8'))
  } catch {
    return undefined
  }
}

/** When the message was published, else when the event says it happened, else `fallback`. */
export function eventTime(event: CloudEvent<unknown>, message: MessagePublishedData['message'], fallback: Date): Date {
  const t = new Date(message.publishTime ?? event.time ?? '')
  return Number.isNaN(t.getTime()) ? fallback : t
}

const ID_MAX = 128
const stringOr = (value: unknown) => (typeof value === 'string' ? value : undefined)

/**
 * The log scope of handling one event: its event and message ids, and the request id and trace of
 * what published the message when it carries them (our publisher adds `request_id` and
 * `traceparent`; Pub/Sub's OpenTelemetry support adds `googclient_traceparent`).
 */
export function eventLogScope(event: CloudEvent<unknown>, gcpProject: string): LogScope {
  const parsed = MessagePublishedData.safeParse(event.data)
  const message = parsed.success ? parsed.data.message : undefined
  const attributes = message?.attributes ?? {}
  const trace =
    parseTraceparent(stringOr(event.traceparent)) ?? parseTraceparent(attributes.traceparent) ?? parseTraceparent(attributes.googclient_traceparent)
  const requestId = isRequestId(attributes.request_id) ? attributes.request_id : undefined
  return {
    requestId,
    trace,
    fields: {
      event_id: stringOr(event.id)?.slice(0, ID_MAX),
      message_id: message?.messageId?.slice(0, ID_MAX),
      request_id: requestId,
      ...traceLogFields(trace, gcpProject),
    },
  }
}
