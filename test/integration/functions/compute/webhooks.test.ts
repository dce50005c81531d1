import type { CloudEvent } from '@google-cloud/functions-framework'
import { afterAll, describe, expect, it } from 'vitest'
import { clinicalDeps } from '../../../../functions/clinical/deps.js'
import { computeDeps } from '../../../../functions/compute/deps.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import type { Clock } from '../../../../lib/clock.js'
import { PubSubQueue } from '../../../../lib/queue.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../../domain/pipelines/model.js'
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '../../../../domain/webhooks/decide.js'
import { deliver } from '../../../../domain/webhooks/dispatch.js'
import type { DeliveryRecord } from '../../../../domain/webhooks/model.js'
import { webhookStack } from '../../../../domain/webhooks/stack.js'
import { orchestratorDeps } from '../../../../orchestrator/deps.js'
import { reconcile } from '../../../../orchestrator/reconcile.js'
import { onWebhookDelivery } from '../../../../orchestrator/webhook-delivery.js'
import { listen, type Received as Published } from '../../orchestrator/support.js'
import { makeOrder } from '../../../support/clinical.js'
import { localCompute } from '../../../support/compute.js'
import { startReceiver } from '../../../support/webhooks.js'
import { apiFor, makeWorld } from '../../../support/world.js'

/**
 * Webhooks end to end on the emulators: registered through the compute service, written to the
 * outbox in the transaction of the change they report, published as due once it commits, sent by
 * the orchestrator's webhookDelivery function (handed each published message, as the push
 * subscription would), and verified by a receiver with the standardwebhooks package.
 */
describe('webhooks', async () => {
  // The local suite's policy: the receiver listens on 127.0.0.1.
  const world = await makeWorld({ WEBHOOK_URL_POLICY: 'local' })
  const local = await localCompute(world)
  const config = world.deps.config
  const app = createComputeApp(local.deps)
  const api = apiFor(app, world)
  const published = await listen(local.pubsub, config.topics.webhookDelivery)
  const orchestrator = orchestratorDeps(world.deps, { queue: new PubSubQueue(config, local.pubsub), batch: local.batch, storage: local.storage })
  const receiver = await startReceiver()
  afterAll(async () => {
    await receiver.close()
    await published.close()
    await local.close()
  })

  const hello = pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0')
  async function submit(): Promise<string> {
    const res = await api('POST', '/runs', { body: { pipeline_id: hello, params: {} } })
    expect(res.status).toBe(201)
    return res.body.id as string
  }
  async function register(body: Record<string, unknown> = {}) {
    const res = await api('POST', '/webhooks', { body: { url: receiver.url, events: ['run.*'], description: 'LIMS', ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body as { id: string; secret: string }
  }
  const deliveriesOf = async (hookId: string, query = ''): Promise<any[]> => {
    const res = await api('GET', `/webhooks/${hookId}/deliveries${query}`)
    expect(res.status).toBe(200)
    return res.body
  }
  const idOf = (m: Published) => (JSON.parse(m.data) as { delivery_id: string }).delivery_id
  /** Waits for the messages that say these deliveries are due, and hands each to webhookDelivery as its push subscription does. */
  async function push(ids: string[]) {
    const messages = await published.waitFor((all) => ids.every((id) => all.some((m) => idOf(m) === id)))
    for (const id of ids) {
      const m = messages.find((x) => idOf(x) === id)!
      const event = { id: `ev-${id}`, data: { message: { data: Buffer.from(m.data).toString('base64'), attributes: m.attributes, messageId: id } } }
      await onWebhookDelivery(orchestrator, event as unknown as CloudEvent<unknown>)
    }
  }

  it('registers a webhook and shows its signing secret once, never again', async () => {
    const hook = await register()
    expect(hook).toMatchObject({ url: receiver.url, events: ['run.*'], description: 'LIMS', enabled: true, secret_generation: 1 })
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const got = await api('GET', `/webhooks/${hook.id}`)
    expect(got.status).toBe(200)
    expect(JSON.stringify(got.body)).not.toContain(hook.secret)
    expect(got.body.secret).toBeUndefined()
    expect((await api('GET', '/webhooks')).body.map((h: { id: string }) => h.id)).toContain(hook.id)
    // The secret is not in the database either: it is derived from the key ring when needed.
    const stored = JSON.stringify((await world.deps.db.col('webhooks').doc(hook.id).get()).data())
    expect(stored).not.toContain(hook.secret.slice('whsec_'.length))
    const event = (await world.deps.db.col('audit_events').where('entity.id', '==', hook.id).get()).docs[0]!.data()
    expect(event).toMatchObject({ action: 'webhook.created', project_id: world.project.id })
    expect(JSON.stringify(event)).not.toContain(receiver.url)
  })

  it("delivers a run's status changes, signed, verified by the standardwebhooks library, each once however often its message comes", async () => {
    const hook = await register()
    receiver.verifyWith(hook.secret)
    receiver.answer(204)
    const runId = await submit()
    await orchestrator.runs.applyJobState(runId, { status: 'running', at: new Date(), source: 'test' })
    await orchestrator.runs.applyJobState(runId, { status: 'succeeded', at: new Date(), source: 'test' })
    const written: any[] = await deliveriesOf(hook.id)
    expect(written.map((d) => d.type).sort()).toEqual(['run.queued', 'run.running', 'run.succeeded'])
    expect(written.every((d) => d.status === 'pending' && d.attempt_count === 0)).toBe(true)

    const before = receiver.received.length
    await push(written.map((d) => d.id))
    const got = receiver.received.slice(before)
    expect(got).toHaveLength(3)
    expect(got.every((r) => r.verified[0])).toBe(true)
    expect(got.map((r) => r.id).sort()).toEqual(written.map((d) => d.id).sort())
    const succeeded = got.find((r) => r.payload.type === 'run.succeeded')!
    expect(succeeded.payload.data).toMatchObject({ project_id: world.project.id, run_id: runId, status: 'succeeded', previous_status: 'running' })

    const after: any[] = await deliveriesOf(hook.id)
    expect(after.every((d) => d.status === 'succeeded' && d.attempts.length === 1 && d.attempts[0].status_code === 204)).toBe(true)
    // A duplicate message, or a late one, for a delivery already made sends nothing.
    await push([written[0].id])
    expect(receiver.received.length).toBe(before + 3)
  })

  it('writes no delivery for a change that does not commit, nor for an event the webhook did not ask for', async () => {
    const runs = await register({ events: ['run.cancelled'] })
    const reports = await register({ events: ['report.signed'] })
    const runId = await submit()
    await orchestrator.runs.applyJobState(runId, { status: 'succeeded', at: new Date(), source: 'test' })
    // Cancelling a run that has ended is refused (409): no run.cancelled was recorded, none is delivered.
    expect((await api('DELETE', `/runs/${runId}`)).status).toBe(409)
    expect(await deliveriesOf(runs.id)).toEqual([])
    expect(await deliveriesOf(reports.id)).toEqual([])
    const cancelled = await submit()
    expect((await api('DELETE', `/runs/${cancelled}`)).status).toBe(200)
    expect((await deliveriesOf(runs.id)).map((d) => d.payload.data.run_id)).toEqual([cancelled])
  })

  it("delivers an order's transitions from the clinical service's stores", async () => {
    const hook = await register({ events: ['order.*'] })
    const order = await makeOrder(clinicalDeps(world.deps), world.project, 'in_progress')
    const moves = (await deliveriesOf(hook.id)).map((d) => d.payload).filter((p) => p.data.order_id === order.id)
    expect(moves.map((p) => [p.type, p.data.from, p.data.to]).sort()).toEqual([
      ['order.transitioned', 'draft', 'signed'],
      ['order.transitioned', 'signed', 'in_progress'],
    ])
    expect(moves[0].data.accession).toBe(order.accession)
  })

  describe('retries', () => {
    /** A clock the test moves; the store and dispatcher read it, the receiver and Pub/Sub keep real time. */
    let now = Date.now()
    const clock: Clock = { now: () => new Date(now) }
    const { webhooks: onClock } = webhookStack({ ...world.deps, clock }, new PubSubQueue(config, local.pubsub))
    const dispatch = { webhooks: onClock, webhookUrlPolicy: 'local' as const, clock, log: world.deps.log, inlineRetryMs: 0 }
    const sweeper = orchestratorDeps(
      { ...world.deps, clock },
      { queue: new PubSubQueue(config, local.pubsub), batch: local.batch, storage: local.storage },
    )
    const stored = async (id: string) => (await world.deps.db.col('webhook_deliveries').doc(id).get()).data() as DeliveryRecord

    let failedId = ''
    let failedHook = ''
    it('retries a failing receiver on the Standard Webhooks schedule, and keeps the delivery failed after the eighth attempt', async () => {
      const hook = await register({ events: ['run.queued'] })
      failedHook = hook.id
      receiver.answer(500)
      await submit()
      const [delivery] = await deliveriesOf(hook.id)
      failedId = delivery.id
      now = Date.now()
      const times: number[] = []
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        times.push(now)
        await deliver(dispatch, failedId)
        const d = await stored(failedId)
        expect(d.round_attempts).toBe(attempt)
        if (attempt === MAX_ATTEMPTS) break
        expect(d.status).toBe('pending')
        const next = d.next_attempt_at!.toMillis()
        expect(next - now).toBe(RETRY_SCHEDULE_MS[attempt])
        // Not due a moment before its time: a message then sends nothing, and the sweep does not publish it.
        now = next - 1
        await deliver(dispatch, failedId)
        expect((await stored(failedId)).round_attempts).toBe(attempt)
        expect((await onClock.listDue(clock.now(), 1000)).map((x) => x.id)).not.toContain(failedId)
        now = next
        if (attempt === 2) expect((await reconcile(sweeper)).deliveries_published).toContain(failedId)
      }
      const failed = await api('GET', `/webhooks/${hook.id}/deliveries/${failedId}`)
      expect(failed.body).toMatchObject({ status: 'failed', attempt_count: MAX_ATTEMPTS, round: 1 })
      expect(failed.body.next_attempt_at).toBeUndefined()
      expect(failed.body.attempts.map((a: any) => [a.number, a.status_code, a.error, a.succeeded])).toEqual(
        times.map((_, i) => [i + 1, 500, 'the receiver answered 500', false]),
      )
      expect(failed.body.attempts.map((a: any) => Date.parse(a.at))).toEqual(times)
      expect((times.at(-1)! - times[0]!) / 3600_000).toBeCloseTo(27.6, 1)
      expect((await deliveriesOf(hook.id, '?status=failed')).map((d) => d.id)).toEqual([failedId])
      expect(await deliveriesOf(hook.id, '?status=pending')).toEqual([])
    })

    it('redelivers a failed delivery on request, as a new round, with the same webhook-id and body', async () => {
      receiver.answer(204)
      const res = await api('POST', `/webhooks/${failedHook}/deliveries/${failedId}/redeliver`)
      expect(res.status).toBe(202)
      expect(res.body).toMatchObject({ id: failedId, status: 'pending', round: 2, attempt_count: 0 })
      const before = receiver.received.length
      await push([failedId])
      const got = receiver.received.slice(before)
      expect(got.map((r) => r.id)).toEqual([failedId])
      expect(got[0]!.payload.type).toBe('run.queued')
      const after = (await api('GET', `/webhooks/${failedHook}/deliveries/${failedId}`)).body
      expect(after).toMatchObject({ status: 'succeeded', round: 2, attempt_count: 1 })
      expect(after.attempts.at(-1)).toMatchObject({ round: 2, number: 1, status_code: 204, succeeded: true })
      expect(after.attempts).toHaveLength(MAX_ATTEMPTS + 1)
      const audit = await world.deps.db.col('audit_events').where('entity.id', '==', failedHook).where('action', '==', 'webhook.redelivered').get()
      expect(audit.size).toBe(1)
    })
  })

  it("makes the schedule's first retry itself, 5 seconds after a failure", async () => {
    const hook = await register({ events: ['run.queued'] })
    receiver.verifyWith(hook.secret)
    receiver.answer(503, 204)
    await submit()
    const [delivery] = await deliveriesOf(hook.id)
    const started = Date.now()
    await push([delivery.id])
    expect(Date.now() - started).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[1] - 100)
    const after = (await api('GET', `/webhooks/${hook.id}/deliveries/${delivery.id}`)).body
    expect(after).toMatchObject({ status: 'succeeded', attempt_count: 2 })
    expect(after.attempts.map((a: any) => a.status_code)).toEqual([503, 204])
  })

  it('signs with the new secret after a rotation, and with the previous one too for a day', async () => {
    const hook = await register({ events: ['run.queued'] })
    const rotated = await api('POST', `/webhooks/${hook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(hook.secret)
    expect(rotated.body).toMatchObject({ secret_generation: 2, previous_secret_expires: expect.any(String) })
    receiver.verifyWith(rotated.body.secret, hook.secret)
    receiver.answer(204)
    const before = receiver.received.length
    await submit()
    const [delivery] = await deliveriesOf(hook.id)
    await push([delivery.id])
    expect(receiver.received.slice(before).map((r) => r.verified)).toEqual([[true, true]])
    expect(receiver.received.at(-1)!.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/)
  })

  it("keeps a disabled or deleted webhook's pending deliveries failed, saying why, and gives a disabled one no new deliveries", async () => {
    const hook = await register({ events: ['run.queued'] })
    await submit()
    const [pending] = await deliveriesOf(hook.id)
    expect((await api('PATCH', `/webhooks/${hook.id}`, { body: { enabled: false } })).body.enabled).toBe(false)
    await submit()
    expect(await deliveriesOf(hook.id)).toHaveLength(1)
    const before = receiver.received.length
    await push([pending.id])
    expect(receiver.received.length).toBe(before)
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: 'failed', failure: 'the webhook is disabled', attempts: [] })

    const gone = await register({ events: ['run.queued'] })
    await submit()
    const [orphan] = await deliveriesOf(gone.id)
    expect((await api('DELETE', `/webhooks/${gone.id}`)).status).toBe(204)
    expect((await api('GET', `/webhooks/${gone.id}`)).status).toBe(404)
    await push([orphan.id])
    expect((await world.deps.db.col('webhook_deliveries').doc(orphan.id).get()).data()).toMatchObject({
      status: 'failed',
      failure: 'the webhook was deleted',
    })
  })

  describe('the URL policy of the cloud', () => {
    const cloud = computeDeps({ ...world.deps, config: { ...config, webhookUrlPolicy: 'public' } }, { batch: local.batch, storage: local.storage })
    const cloudApi = apiFor(createComputeApp(cloud), world)

    it.each([
      ['plain http', 'http://hooks.example.org/x', 'url: must be https://'],
      ['a loopback address', 'https://127.0.0.1/x', 'url: 127.0.0.1 is not a public address'],
      ['a private address', 'https://10.1.2.3/x', 'url: 10.1.2.3 is not a public address'],
      ['the metadata server by address', 'https://169.254.169.254/computeMetadata/v1/', 'url: 169.254.169.254 is not a public address'],
      ['the metadata server by name', 'https://metadata.google.internal/computeMetadata/v1/', 'url: metadata.google.internal is the metadata server'],
      ['an IPv6 loopback', 'https://[::1]/x', 'url: ::1 is not a public address'],
      ['an IPv4-mapped private address', 'https://[::ffff:192.168.0.1]/x', 'url: ::ffff:c0a8:1 is not a public address'],
      ['a single-label name', 'https://localhost/x', 'url: localhost is not a public host name'],
      ['credentials in the URL', 'https://user:pw@hooks.example.org/x', 'url: must not carry a user name or password'],
    ])('refuses %s at registration (400)', async (_, url, detail) => {
      const res = await cloudApi('POST', '/webhooks', { body: { url, events: ['*'] } })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ detail })
    })

    it('refuses an unknown event filter (400)', async () => {
      const bad = await cloudApi('POST', '/webhooks', { body: { url: 'https://93.184.215.14/x', events: ['run.exploded'] } })
      expect(bad.status).toBe(400)
      expect(bad.body.detail).toMatch(/^events\.0: Invalid option/)
    })

    it('checks the address again at delivery: a webhook whose address is not public is refused then, and nothing is sent', async () => {
      // Registered where such an address was allowed; the cloud's dispatcher refuses it.
      const hook = await register({ url: `https://127.0.0.1:${receiver.port}/hooks`, events: ['run.queued'] })
      await submit()
      const [delivery] = await deliveriesOf(hook.id)
      const before = receiver.received.length
      await deliver(
        { webhooks: cloud.webhooks, webhookUrlPolicy: 'public', clock: world.deps.clock, log: world.deps.log, inlineRetryMs: 0 },
        delivery.id,
      )
      expect(receiver.received.length).toBe(before)
      const after = (await api('GET', `/webhooks/${hook.id}/deliveries/${delivery.id}`)).body
      expect(after).toMatchObject({ status: 'pending', attempt_count: 1 })
      expect(after.attempts[0]).toMatchObject({ error: 'refused: 127.0.0.1 is not a public address', succeeded: false })
    })
  })

  it('is for project administrators: an analyst is refused (403), another project sees no webhook (404)', async () => {
    const hook = await register()
    const analyst = await world.caller(['analyst'])
    expect((await api('POST', '/webhooks', { token: analyst.token, body: { url: receiver.url, events: ['*'] } })).status).toBe(403)
    expect((await api('GET', '/webhooks', { token: analyst.token })).status).toBe(403)
    const other = await world.otherProject()
    const stranger = await world.caller(['owner'], other.project)
    expect((await api('GET', `/webhooks/${hook.id}`, { token: stranger.token, project: other.project.id })).status).toBe(404)
    expect((await api('GET', `/webhooks/${hook.id}/deliveries`, { token: stranger.token, project: other.project.id })).status).toBe(404)
  })
})
