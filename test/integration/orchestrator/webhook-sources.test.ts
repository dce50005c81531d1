import { afterAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { PubSubQueue } from '../../../lib/queue.js'
import { runIngestion } from '../../../domain/variants/ingest.js'
import type { DeliveryRecord } from '../../../domain/webhooks/model.js'
import { webhookStack } from '../../../domain/webhooks/stack.js'
import type { WebhookStore } from '../../../domain/webhooks/store.js'
import { orchestratorDeps } from '../../../orchestrator/deps.js'
import { makeReportsWorld, signThroughStore } from '../../support/reports.js'
import { makeVariantWorld } from '../../support/variants.js'

/**
 * The other sources of webhook events, each through the dependencies its process is built with in
 * the cloud: a report signed (the report service's stores), and an ingestion ready or failed (the
 * orchestrator's, which runs the ingestion steps). Each writes its delivery in its own transaction.
 */
async function hookFor(webhooks: WebhookStore, project: { id: string; org_id: string }, events: string[]) {
  const { hook } = await webhooks.register(SYSTEM_ACTOR, project, {
    // Nothing is sent here: the deliveries written are what these tests read.
    url: { url: 'http://127.0.0.1:9/hooks', addresses: ['127.0.0.1'] },
    events,
    description: '',
    policy: 'local',
    by: 'test',
  })
  return hook
}
const payloadsOf = async (webhooks: WebhookStore, hookId: string) =>
  (await webhooks.listDeliveries({ id: hookId }, {}, {})).items.map(
    (d: DeliveryRecord) => JSON.parse(d.body) as { type: string; data: Record<string, string> },
  )

describe('a signed report', async () => {
  const w = await makeReportsWorld({ WEBHOOK_URL_POLICY: 'local' })
  const { webhooks } = webhookStack(w.kernel, new PubSubQueue(w.kernel.config))
  const analyst = await w.caller(['analyst'])
  const reviewer = await w.caller(['reviewer'])

  it('is delivered as report.signed, with its report and order', async () => {
    const hook = await hookFor(webhooks, w.project, ['report.*'])
    const d = await w.draft({ token: analyst.token, body: { conclusion: 'Positive.' } })
    for (const v of d.variants) {
      const res = await w.api('POST', `/reports/${d.report.id}/variants`, {
        token: analyst.token,
        body: { variant_id: v.id, acmg_classification: 'pathogenic', acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'] },
      })
      expect(res.status).toBe(201)
    }
    expect((await w.api('POST', `/reports/${d.report.id}/transition`, { token: analyst.token, body: { to: 'in_review' } })).status).toBe(200)
    expect(await payloadsOf(webhooks, hook.id)).toEqual([])
    await signThroughStore(w, d.report.id, reviewer)
    expect(await payloadsOf(webhooks, hook.id)).toEqual([
      {
        type: 'report.signed',
        timestamp: expect.any(String),
        data: { project_id: w.project.id, audit_event_id: expect.any(String), report_id: d.report.id, order_id: d.order.id, status: 'signed' },
      },
    ])
  })
})

describe('an ingestion', async () => {
  const w = await makeVariantWorld()
  afterAll(() => w.close())
  // The orchestrator's dependencies, as its process builds them: its ingestion steps write the outbox.
  const orchestrator = orchestratorDeps(w.kernel, { queue: w.queue, storage: w.storage })
  const run = (id: string) => runIngestion({ ...orchestrator.ingestion, tuning: w.ingestionDeps().tuning }, id)

  it('is delivered as ingestion.ready once its cache is ready, and as ingestion.failed when it fails', async () => {
    const hook = await hookFor(orchestrator.webhooks, w.project, ['ingestion.*'])
    const t = await w.signedTrio()
    const ready = await w.request(t.order.id, await w.putTrio(t.names, { records: 5, seed: 3 }))
    expect(await run(ready.id)).toBe('ready')
    const broken = await w.request(t.order.id, await w.putVcf('not a VCF\n'))
    expect(await run(broken.id)).toBe('failed')
    const payloads = await payloadsOf(orchestrator.webhooks, hook.id)
    expect(payloads.map((p) => [p.type, p.data.ingestion_id, p.data.order_id, p.data.status]).sort()).toEqual(
      [
        ['ingestion.ready', ready.id, t.order.id, 'ready'],
        ['ingestion.failed', broken.id, t.order.id, 'failed'],
      ].sort(),
    )
    expect(payloads.find((p) => p.type === 'ingestion.failed')!.data.detail).toBeTruthy()
  })
})
