import { describe, expect, it } from 'vitest'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { makeOrder } from '../../../support/clinical.js'
import { apiFor } from '../../../support/world.js'
import { makeComputeWorld } from './support.js'

/** What a request must be answered within past the capacity of the service (docs/operating.md). */
const ANSWER_WITHIN_MS = 2_000

/** POST /runs past the capacity of the service, and submissions that race for the same records. */
describe('compute: overload is answered, not left hanging', async () => {
  const w = await makeComputeWorld()
  const hello = w.platformId('hello-local', '1.0.0')
  const analyst = await w.caller(['analyst'])

  it('answers every POST /runs of a flood past its limit within 2 s, accepted or 503 with Retry-After, and records and publishes each accepted run', async () => {
    // An instance that handles 3 requests at a time and lets 3 more wait 300 ms, flooded with 40 at once.
    const app = createComputeApp({ ...w.deps, config: { ...w.deps.config, admission: { maxConcurrent: 3, maxQueued: 3, maxWaitMs: 300 } } })
    const api = apiFor(app, w)
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const t0 = performance.now()
        const res = await api('POST', '/runs', { token: analyst.token, body: { pipeline_id: hello, params: {}, tags: [`flood-${i}`] } })
        return { ...res, ms: performance.now() - t0 }
      }),
    )
    for (const a of answers) {
      expect(a.ms).toBeLessThan(ANSWER_WITHIN_MS)
      expect([201, 503]).toContain(a.status)
      if (a.status === 503) {
        expect(a.headers.get('retry-after')).toBe('1')
        expect(a.body.detail).toMatch(/at capacity/)
      }
    }
    const accepted = answers.filter((a) => a.status === 201).map((a) => a.body.id as string)
    expect(accepted.length).toBeGreaterThanOrEqual(3)
    expect(accepted.length).toBeLessThan(40)
    // Each accepted run is there, published once (the orchestrator makes its job from that message); a refused one left nothing.
    const messages = await w.receive(accepted.length)
    expect(messages.map((m) => (m.data as { run_id: string }).run_id).sort()).toEqual([...accepted].sort())
    for (const id of accepted) expect((await w.deps.runs.getById(id))?.dispatch.published).toBe(true)
    const made = await w.deps.db.col('runs').where('project_id', '==', w.project.id).get()
    expect(made.docs.filter((d) => String(d.get('tags')).startsWith('flood-')).length).toBe(accepted.length)
  })

  it('answers repeats of one submission sent together with the one run they make: none answered 409, none waiting on another', async () => {
    const key = `repeat-${Date.now()}`
    const t0 = performance.now()
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        w.api('POST', '/runs', {
          token: analyst.token,
          headers: { 'idempotency-key': key },
          body: { pipeline_id: hello, params: {}, tags: ['repeat'] },
        }),
      ),
    )
    expect(performance.now() - t0).toBeLessThan(ANSWER_WITHIN_MS)
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 12 }, () => 201))
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(11)
    const made = await w.deps.db.col('runs').where('project_id', '==', w.project.id).where('idempotency_key', '==', key).get()
    expect(made.size).toBe(1)
  })

  it('accepts the runs submitted together for one signed order, each one, none answered 409, and starts the order once', async () => {
    const order = await makeOrder(w.deps, w.project)
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => w.api('POST', '/runs', { token: analyst.token, body: { pipeline_id: hello, params: {}, order_id: order.id } })),
    )
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => 201))
    expect((await w.deps.db.col('runs').where('order_id', '==', order.id).get()).size).toBe(8)
    const started = await w.deps.db.col('audit_events').where('entity.id', '==', order.id).where('action', '==', 'order.transitioned').get()
    expect(started.docs.filter((d) => d.get('change.to') === 'in_progress')).toHaveLength(1)
  })
})
