import { z } from 'zod'
import type { Logger } from '../../lib/log.js'
import { messageType, type Queue } from '../../lib/queue.js'

/** A webhook delivery is due: published after the transaction that wrote it commits, and by the reconciler's sweep for a retry that has come due. */
export const WEBHOOK_DELIVERY_DUE = messageType(
  'webhook.delivery_due',
  z.object({ delivery_id: z.string().regex(/^msg_[0-9a-f]{32}$/), project_id: z.string().uuid() }),
  (config) => config.topics.webhookDelivery,
)

/** Says the deliveries are due (to the webhookDelivery function). Never throws: a delivery not published stays due, and the reconciler's sweep publishes it. */
export async function publishDue(deps: { queue: Queue; log: Logger }, projectId: string, ids: readonly string[]): Promise<void> {
  await Promise.all(
    ids.map((delivery_id) =>
      deps.queue.publish(WEBHOOK_DELIVERY_DUE, { delivery_id, project_id: projectId }).catch((err: unknown) => {
        deps.log.warn('webhook delivery not published: the reconciler will', { delivery_id, error: err })
      }),
    ),
  )
}
