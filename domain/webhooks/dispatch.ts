import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { UrlPolicy } from './addresses.js'
import { ATTEMPT_TIMEOUT_MS, postWebhook } from './sender.js'
import { signedHeaders } from './signing.js'
import type { WebhookStore } from './store.js'

export interface DispatchDeps {
  webhooks: WebhookStore
  webhookUrlPolicy: UrlPolicy
  clock: Clock
  log: Logger
  /** How long a receiver has to answer (ATTEMPT_TIMEOUT_MS unless a test says shorter). */
  attemptTimeoutMs?: number
  /** Retries due within this long are made here (INLINE_RETRY_MS unless a test walking the schedule on its own clock says 0). */
  inlineRetryMs?: number
}

/**
 * A retry due this soon is made by the dispatcher that failed, after waiting for it: the schedule's
 * first retry (5 s) would otherwise wait for the reconciler's next sweep (minutes).
 */
export const INLINE_RETRY_MS = 10_000

/**
 * Sends a due delivery: claims it (a duplicate message, or one for a delivery already sent, does
 * nothing), signs it with the webhook's secrets, POSTs it, and records the attempt, which decides
 * whether it succeeded, waits for the schedule's next time, or is kept as failed.
 */
export async function deliver(deps: DispatchDeps, deliveryId: string): Promise<void> {
  const { webhooks, clock, log } = deps
  for (;;) {
    const claimed = await webhooks.claim(deliveryId)
    if (!claimed) return
    const { delivery, hook } = claimed
    if (!hook || !hook.enabled) {
      await webhooks.abandon(deliveryId, hook ? 'the webhook is disabled' : 'the webhook was deleted')
      log.info('webhook delivery abandoned', { delivery_id: deliveryId, webhook_id: delivery.webhook_id, reason: hook ? 'disabled' : 'deleted' })
      return
    }
    const started = clock.now().getTime()
    const headers = signedHeaders(webhooks.signingSecretsOf(hook), delivery.id, Math.floor(started / 1000), delivery.body)
    const result = await postWebhook(hook.url, headers, delivery.body, {
      policy: deps.webhookUrlPolicy,
      timeoutMs: deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
    })
    const ended = clock.now().getTime()
    const after = await webhooks.recordAttempt(deliveryId, { at: started, duration_ms: Math.max(0, ended - started), ...result })
    log.info('webhook delivery attempted', {
      delivery_id: deliveryId,
      webhook_id: hook.id,
      type: delivery.type,
      status_code: result.status_code,
      error: result.error,
      status: after?.status,
    })
    const wait = after?.status === 'pending' && after.next_attempt_at ? after.next_attempt_at.toMillis() - clock.now().getTime() : undefined
    if (wait === undefined || wait > (deps.inlineRetryMs ?? INLINE_RETRY_MS)) return
    await sleep(Math.max(0, wait))
  }
}
