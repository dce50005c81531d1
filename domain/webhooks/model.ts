import { randomUUID } from 'node:crypto'
import type { Timestamp } from '@google-cloud/firestore'
import type { SecretRef } from './signing.js'
import type { WebhookEventType } from './events.js'

/** A project's webhook endpoint (Firestore `webhooks/{id}`). */
export interface WebhookRecord {
  id: string
  project_id: string
  org_id: string
  url: string
  /** Event filters: types (`run.failed`), groups (`run.*`) or `*` (events.ts). */
  events: string[]
  description: string
  /** A disabled webhook gets no new deliveries; those already pending are kept as failed (and may be redelivered once it is enabled). */
  enabled: boolean
  /** The secrets deliveries are signed with: the current one first, then a rotated one until it `expires`. */
  secrets: Array<SecretRef & { created: Timestamp; expires?: Timestamp }>
  created: Timestamp
  created_by: string
  updated: Timestamp
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** One try at sending a delivery. */
export interface AttemptRecord {
  at: Timestamp
  /** 1 for the first attempt of a round (a redelivery starts a round). */
  number: number
  round: number
  duration_ms: number
  /** The receiver's HTTP status, when it answered. */
  status_code?: number
  /** Why it failed without an answer (refused address, timeout, connection error), or what the answer's status means. */
  error?: string
  succeeded: boolean
}

/**
 * One event for one webhook (Firestore `webhook_deliveries/{id}`), written in the transaction of
 * the change it reports: the outbox the dispatcher sends from. Its id is the Standard Webhooks
 * message id (`webhook-id`), the same on every attempt. The body is kept as the exact text first
 * signed, so every attempt sends the same bytes.
 */
export interface DeliveryRecord {
  id: string
  webhook_id: string
  project_id: string
  type: WebhookEventType
  body: string
  audit_event_id: string
  /** When the change happened. */
  created: Timestamp
  status: DeliveryStatus
  /** The round of attempts: 1, then one more per redelivery. */
  round: number
  /** Attempts made in this round. */
  round_attempts: number
  /** When the next attempt is due, while pending. */
  next_attempt_at?: Timestamp
  /** A dispatcher is sending it until then: another one leaves it alone. */
  lease_until?: Timestamp
  /** Why a delivery is kept failed without being tried (its webhook was deleted or disabled before it was sent). */
  failure?: string
  /** Every attempt, oldest first (at most MAX_KEPT_ATTEMPTS, the newest). */
  attempts: AttemptRecord[]
  updated: Timestamp
}

/** A delivery's id, its Standard Webhooks message id: `msg_` and 32 hex digits. */
export const newDeliveryId = () => `msg_${randomUUID().replaceAll('-', '')}`
