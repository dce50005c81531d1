import { describe, expect, it } from 'vitest'
import { clinicalDeps } from '../../../../functions/clinical/deps.js'
import { createClinicalApp } from '../../../../functions/clinical/service.js'
import type { OrderStatus } from '../../../../domain/clinical/order-status.js'
import { call } from '../../../support/world.js'
import { makeOrder } from '../../../support/clinical.js'
import { makeComputeWorld } from './support.js'

/** POST /runs with an order_id: the order must be a signed order of the project; a signed order starts with its first run. */
describe('compute: runs for clinical orders', async () => {
  const w = await makeComputeWorld()
  const hello = w.platformId('hello-local', '1.0.0')
  const analyst = await w.caller(['analyst'])
  const submit = (order_id: string, token = analyst.token) => w.api('POST', '/runs', { body: { pipeline_id: hello, params: {}, order_id }, token })
  const clinical = createClinicalApp(clinicalDeps(w.deps))
  const getOrder = (id: string) => call(clinical, 'GET', `/api/v1/orders/${id}`, { token: w.owner.token, project: w.project.id })

  it('moves a signed order to in_progress with its first run, in the same transaction, audited as the submitter', async () => {
    const order = await makeOrder(w.deps, w.project)
    const res = await submit(order.id)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ order_id: order.id, order_accession: order.accession })
    const after = await getOrder(order.id)
    expect(after.body.status).toBe('in_progress')
    expect(after.body.status_history.at(-1)).toMatchObject({
      from: 'signed',
      to: 'in_progress',
      by: analyst.user.id,
      reason: `run ${res.body.name} submitted`,
    })
    const events = await w.deps.db.col('audit_events').where('entity.id', '==', order.id).where('action', '==', 'order.transitioned').get()
    const started = events.docs.map((d) => d.data()).find((e) => e.change.to === 'in_progress')
    expect(started).toMatchObject({
      service: 'admin',
      actor: { id: analyst.user.id },
      change: { from: 'signed', reason: `run ${res.body.name} submitted` },
    })

    const second = await submit(order.accession)
    expect(second.status).toBe(201)
    expect(second.body.order_id).toBe(order.id)
    const shown = await getOrder(order.accession)
    expect(shown.body.status).toBe('in_progress')
    expect(shown.body.runs).toEqual([
      { id: second.body.id, name: second.body.name, status: 'queued' },
      { id: res.body.id, name: res.body.name, status: 'queued' },
    ])
    expect((await w.api('GET', `/runs/by-order/${order.accession}`)).body.map((r: any) => r.id)).toEqual([second.body.id, res.body.id])
  })

  it('accepts an order in review (a re-analysis) and leaves its status alone', async () => {
    const order = await makeOrder(w.deps, w.project, 'in_review')
    expect((await submit(order.id)).status).toBe(201)
    expect((await getOrder(order.id)).body.status).toBe('in_review')
  })

  it.each<OrderStatus>(['draft', 'on_hold', 'completed', 'cancelled', 'entered_in_error'])(
    'answers 409 naming an order that is %s, and makes no run',
    async (status) => {
      const order = await makeOrder(w.deps, w.project, status)
      const res = await submit(order.accession)
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain(`order ${order.accession} is ${status}`)
      expect((await w.api('GET', `/runs?order_id=${order.id}`)).body).toEqual([])
      expect((await getOrder(order.id)).body.status).toBe(status)
    },
  )

  it("answers 404 naming an unknown order, and another project's order, as if it did not exist", async () => {
    const unknown = await submit('ORD-1999-000001')
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toBe("order 'ORD-1999-000001' not found")
    expect((await submit('not-an-order')).status).toBe(404)
    const { project } = await w.otherProject()
    const foreign = await makeOrder(w.deps, project)
    const res = await submit(foreign.id)
    expect(res.status).toBe(404)
    expect(res.body.detail).toContain(foreign.id)
  })
})
