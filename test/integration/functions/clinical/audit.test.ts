import { describe, expect, it } from 'vitest'
import { verifyAuditChain, type AuditEvent } from '../../../../lib/audit.js'
import { fetchDoc, operationsOf } from '../openapi-doc.js'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

/**
 * Every change leaves an audit event in the same transaction: each mutating operation of the
 * service's OpenAPI document is performed once, and its event is found on the entity it changed.
 */
describe('clinical: every mutating operation is audited', async () => {
  const w = await makeClinicalWorld()
  const ops = operationsOf(await fetchDoc(w.app)).filter((o) => ['post', 'put', 'patch', 'delete'].includes(o.method))
  const stages = [
    { key: 'a', name: 'A', order: 1 },
    { key: 'b', name: 'B', order: 2 },
  ]

  interface Case {
    /** Performs the operation (expecting success) and says which entity's event to look for. */
    perform(): Promise<{ entity: string; action: string; change?: Record<string, unknown> }>
  }
  const ok = (res: { status: number; body: any }) => {
    if (res.status >= 300) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  const CASES: Record<string, Case> = {
    createSubject: { perform: async () => ({ entity: (await w.subject()).id, action: 'subject.created' }) },
    updateSubject: {
      perform: async () => {
        const s = await w.subject()
        ok(await w.api('PATCH', `/subjects/${s.id}`, { body: { display_name: 'New' } }))
        return { entity: s.id, action: 'subject.updated', change: { fields: ['display_name'] } }
      },
    },
    deleteSubject: {
      perform: async () => {
        const s = await w.subject()
        ok(await w.api('DELETE', `/subjects/${s.id}`))
        return { entity: s.id, action: 'subject.deleted' }
      },
    },
    createSample: { perform: async () => ({ entity: (await w.sample((await w.subject()).id)).id, action: 'sample.created' }) },
    updateSample: {
      perform: async () => {
        const x = await w.sample((await w.subject()).id)
        ok(await w.api('PATCH', `/samples/${x.id}`, { body: { type: 'dna' } }))
        return { entity: x.id, action: 'sample.updated', change: { fields: ['type'] } }
      },
    },
    deleteSample: {
      perform: async () => {
        const x = await w.sample((await w.subject()).id)
        ok(await w.api('DELETE', `/samples/${x.id}`))
        return { entity: x.id, action: 'sample.deleted' }
      },
    },
    createOrder: { perform: async () => ({ entity: ok(await w.api('POST', '/orders', { body: { test_code: 'X' } })).id, action: 'order.created' }) },
    updateOrder: {
      perform: async () => {
        const o = ok(await w.api('POST', '/orders', { body: { test_code: 'X' } }))
        ok(await w.api('PUT', `/orders/${o.id}`, { body: { priority: 'stat' } }))
        return { entity: o.id, action: 'order.updated', change: { fields: ['priority'] } }
      },
    },
    deleteOrder: {
      perform: async () => {
        const o = ok(await w.api('POST', '/orders', { body: { test_code: 'X' } }))
        ok(await w.api('DELETE', `/orders/${o.id}`))
        return { entity: o.id, action: 'order.deleted' }
      },
    },
    transitionOrder: {
      perform: async () => {
        const t = await w.trio()
        ok(await w.move(t.order.id, 'signed'))
        ok(await w.move(t.order.id, 'on_hold', 'consent'))
        return { entity: t.order.id, action: 'order.transitioned', change: { from: 'signed', to: 'on_hold', reason: 'consent' } }
      },
    },
    addOrderSample: {
      perform: async () => {
        const o = ok(await w.api('POST', '/orders', { body: { test_code: 'X' } }))
        const x = await w.sample((await w.subject()).id)
        ok(await w.api('POST', `/orders/${o.id}/samples/${x.id}`, { body: { role: 'proband' } }))
        return { entity: o.id, action: 'order.sample_added', change: { to: 'proband' } }
      },
    },
    removeOrderSample: {
      perform: async () => {
        const t = await w.trio()
        ok(await w.api('DELETE', `/orders/${t.order.id}/samples/${t.samples.father.id}`))
        return { entity: t.order.id, action: 'order.sample_removed' }
      },
    },
    moveOrderLabflow: {
      perform: async () => {
        const t = await w.trio()
        ok(await w.move(t.order.id, 'signed'))
        ok(await w.api('POST', `/orders/${t.order.id}/labflow/transitions`, { body: { transition: 'advance-accessioning' } }))
        return { entity: t.order.id, action: 'order.labflow_moved', change: { from: 'accessioning', to: 'extraction' } }
      },
    },
    createLabflow: {
      perform: async () => ({
        entity: ok(await w.api('POST', '/labflows', { body: { key: `k_${rand()}`, name: 'K', stages, transitions: [] } })).id,
        action: 'labflow.created',
      }),
    },
    createLabflowVersion: {
      perform: async () => {
        const l = ok(await w.api('POST', '/labflows', { body: { key: `k_${rand()}`, name: 'K', stages, transitions: [] } }))
        ok(await w.api('POST', `/labflows/${l.id}/versions`, { body: { stages: stages.slice(0, 1), transitions: [] } }))
        return { entity: l.id, action: 'labflow.version_created', change: { from: '1', to: '2' } }
      },
    },
  }

  it('has a case for every mutating operation of the OpenAPI document', () => {
    expect(Object.keys(CASES).sort()).toEqual(ops.map((o) => o.op.operationId).sort())
  })

  it.each(Object.keys(CASES))('%s leaves its audit event, with the caller as actor', async (op) => {
    const { entity, action, change } = await CASES[op]!.perform()
    const events = (await w.deps.db.col('audit_events').where('entity.id', '==', entity).get()).docs.map((d) => d.data() as AuditEvent)
    const found = events.filter((e) => e.action === action)
    expect(found.length, `${action} on ${entity}: found ${events.map((e) => e.action).join(', ')}`).toBeGreaterThan(0)
    const event = found.sort((a, b) => a.seq - b.seq).at(-1)!
    expect(event).toMatchObject({ service: 'clinical', outcome: 'success', project_id: w.project.id, actor: { id: w.owner.user.id, type: 'user' } })
    if (change) expect(event.change).toMatchObject(change)
  })

  it("keeps every chain of the project's events intact (cascades write several entities' events in one transaction)", async () => {
    const t = await w.trio()
    await w.api('PATCH', `/subjects/${t.subjects.proband.id}`, { body: { mother_id: null, father_id: null } })
    for (const s of Object.values(t.subjects)) expect((await w.api('DELETE', `/subjects/${s.id}`)).status).toBe(204)
    const events = (await w.deps.db.col('audit_events').where('project_id', '==', w.project.id).get()).docs.map((d) => d.data() as AuditEvent)
    const chains = new Map<string, AuditEvent[]>()
    for (const e of events) chains.set(e.chain, [...(chains.get(e.chain) ?? []), e])
    const problems = [...chains.entries()].flatMap(([chain, list]) => verifyAuditChain(list, w.deps.audit.keys).map((p) => `${chain}: ${p}`))
    expect(problems).toEqual([])
  })
})
