import { PubSub, type Topic } from '@google-cloud/pubsub'
import { z } from 'zod'
import type { Config } from './config.js'

/** The catalogue of messages the platform publishes itself, each with its schema. */
export const MESSAGES = {
  'run.requested': z.object({ run_id: z.string().uuid(), project_id: z.string().uuid() }),
} as const
export type MessageKind = keyof typeof MESSAGES
export type MessageOf<K extends MessageKind> = z.infer<(typeof MESSAGES)[K]>

export interface Queue {
  publish<K extends MessageKind>(kind: K, data: MessageOf<K>, attributes?: Record<string, string>): Promise<string>
}

/** Pub/Sub publisher; the emulator is used when PUBSUB_EMULATOR_HOST is set, as the client library does. */
export class PubSubQueue implements Queue {
  readonly pubsub: PubSub
  private readonly topics: Record<MessageKind, Topic>

  constructor(config: Config, pubsub?: PubSub) {
    this.pubsub =
      pubsub ??
      new PubSub({
        projectId: config.gcpProject,
        ...(config.pubsubEmulatorHost ? { apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true } : {}),
      })
    this.topics = { 'run.requested': this.pubsub.topic(config.topics.runRequested) }
  }

  async publish<K extends MessageKind>(kind: K, data: MessageOf<K>, attributes: Record<string, string> = {}) {
    const body = MESSAGES[kind].parse(data)
    return this.topics[kind].publishMessage({ json: body, attributes: { kind, ...attributes } })
  }
}
