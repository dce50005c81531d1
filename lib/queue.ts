import { PubSub, type Topic } from '@google-cloud/pubsub'
import type { z } from 'zod'
import type { Config } from './config.js'
import type { LogScope } from './log.js'
import { toTraceparent } from './trace.js'

/**
 * One kind of message the platform publishes itself: its name, its schema and the topic it goes
 * to. The domain declares its messages (domain/runs/messages.ts); publishers and consumers share
 * the declaration, so a message is typed where it is sent and parsed where it is received.
 */
export interface MessageType<T> {
  kind: string
  schema: z.ZodType<T>
  topic(config: Pick<Config, 'topics'>): string
}

export const messageType = <T>(kind: string, schema: z.ZodType<T>, topic: (config: Pick<Config, 'topics'>) => string): MessageType<T> => ({
  kind,
  schema,
  topic,
})

/**
 * The request (or event) a message is published from, so that the consumer's log lines carry the
 * same request id and trace: `request_id` and a W3C `traceparent`.
 */
export function correlationAttributes(scope: Pick<LogScope, 'requestId' | 'trace'>): Record<string, string> {
  return {
    ...(scope.requestId ? { request_id: scope.requestId } : {}),
    ...(scope.trace ? { traceparent: toTraceparent(scope.trace) } : {}),
  }
}

export interface Queue {
  publish<T>(type: MessageType<T>, data: T, attributes?: Record<string, string>): Promise<string>
}

/** The queue as one request or event publishes to it: each message carries its request id and trace (the caller's attributes win). */
export function correlatedQueue(queue: Queue, scope: Pick<LogScope, 'requestId' | 'trace'>): Queue {
  return {
    publish(type, data, attributes = {}) {
      return queue.publish(type, data, { ...correlationAttributes(scope), ...attributes })
    },
  }
}

/** Pub/Sub publisher; the emulator is used when PUBSUB_EMULATOR_HOST is set, as the client library does. */
export class PubSubQueue implements Queue {
  readonly pubsub: PubSub
  private readonly topics = new Map<string, Topic>()

  constructor(
    private readonly config: Config,
    pubsub?: PubSub,
  ) {
    this.pubsub =
      pubsub ??
      new PubSub({
        projectId: config.gcpProject,
        ...(config.pubsubEmulatorHost ? { apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true } : {}),
      })
  }

  private topic(name: string): Topic {
    let topic = this.topics.get(name)
    if (!topic) this.topics.set(name, (topic = this.pubsub.topic(name)))
    return topic
  }

  async publish<T>(type: MessageType<T>, data: T, attributes: Record<string, string> = {}) {
    const body = type.schema.parse(data)
    return this.topic(type.topic(this.config)).publishMessage({
      json: body,
      attributes: { kind: type.kind, ...attributes },
    })
  }
}
