import type { KernelDeps } from '../../lib/kernel.js'
import type { Queue } from '../../lib/queue.js'
import { WebhookOutbox } from './outbox.js'
import { WebhookStore } from './store.js'

/**
 * A kernel whose audit writer also writes the webhook outbox (outbox.ts), for the services and the
 * orchestrator that make the changes webhooks report (runs, orders, reports, ingestions), and the
 * webhook store on it. `queue` publishes that deliveries are due.
 */
export function webhookStack<K extends KernelDeps>(kernel: K, queue: Queue): { kernel: K; webhooks: WebhookStore } {
  const deps = { queue, log: kernel.log }
  const audit = kernel.audit.followedBy(new WebhookOutbox(kernel.db, deps))
  return { kernel: { ...kernel, audit }, webhooks: new WebhookStore(kernel.db, audit, kernel.clock, kernel.audit.keys, deps) }
}
