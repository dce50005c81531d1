import type { CloudEvent } from '@google-cloud/functions-framework'
import { z } from 'zod'

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
