import { describe, expect, it } from 'vitest'
import { AUDIT_SHARDS, auditChainKey, verifyAuditChain, type AuditEvent, type AuditInput } from '../../../lib/audit.js'
import { newId } from '../../../lib/ids.js'
import { testKernel } from '../../support/env.js'

const ctx = { actor: { type: 'user' as const, id: 'u1', email: 'a@example.org', auth_method: 'personal_token' } }

describe('audit chains', () => {
  const kernel = testKernel('audit-test')
  const project_id = newId()

  async function record(input: Omit<AuditInput, 'project_id'>) {
    return kernel.audit.record(ctx, { project_id, ...input })
  }
  async function chainOf(chain: string): Promise<AuditEvent[]> {
    const q = await kernel.db.col('audit_events').where('chain', '==', chain).get()
    return q.docs.map((d) => d.data() as AuditEvent)
  }

  it("keeps one entity's history in one chain, in order", async () => {
    const entity = { type: 'run', id: newId() }
    for (const action of ['run.submitted', 'run.job_created', 'run.running', 'run.succeeded']) await record({ action, entity })
    const key = auditChainKey({ project_id, entity })
    expect(key).toMatch(new RegExp(`^project_${project_id}~\\d+$`))
    const events = (await chainOf(key)).filter((e) => e.entity.id === entity.id).sort((a, b) => a.seq - b.seq)
    expect(events.map((e) => e.action)).toEqual(['run.submitted', 'run.job_created', 'run.running', 'run.succeeded'])
    expect(verifyAuditChain(await chainOf(key))).toEqual([])
  })

  it('spreads entities over the shards of their scope', () => {
    const shards = new Set(Array.from({ length: 500 }, () => auditChainKey({ project_id, entity: { type: 'run', id: newId() } })))
    expect(shards.size).toBeGreaterThan(AUDIT_SHARDS / 2)
    expect(auditChainKey({ entity: { type: 'user', id: 'x' } })).toMatch(/^platform~\d+$/)
    expect(auditChainKey({ org_id: 'o', entity: { type: 'user', id: 'x' } })).toMatch(/^org_o~\d+$/)
  })

  it('shows an altered event and a removed one', async () => {
    const entity = { type: 'order', id: newId() }
    for (const action of ['order.created', 'order.transitioned', 'order.transitioned']) await record({ action, entity, change: { to: 'signed' } })
    const events = await chainOf(auditChainKey({ project_id, entity }))
    expect(verifyAuditChain(events)).toEqual([])

    const altered = events.map((e) => (e.seq === 2 ? { ...e, change: { to: 'completed' } } : e))
    expect(verifyAuditChain(altered).join('\n')).toMatch(/seq 2\) was altered/)

    const removed = events.filter((e) => e.seq !== 2)
    expect(verifyAuditChain(removed).join('\n')).toMatch(/seq 2 is missing/)
  })

  it('records changes to different entities concurrently without losing or mis-chaining any', async () => {
    const entities = Array.from({ length: 30 }, () => ({ type: 'run', id: newId() }))
    await Promise.all(entities.map((entity) => record({ action: 'run.submitted', entity })))
    const chains = new Set(entities.map((entity) => auditChainKey({ project_id, entity })))
    let found = 0
    for (const chain of chains) {
      const events = await chainOf(chain)
      expect(verifyAuditChain(events)).toEqual([])
      found += events.filter((e) => entities.some((x) => x.id === e.entity.id)).length
    }
    expect(found).toBe(entities.length)
  })

  it('refuses an event for another entity than the one its chain was prepared for', async () => {
    const prepared = { type: 'run', id: newId() }
    let other = { type: 'run', id: newId() }
    while (auditChainKey({ project_id, entity: other }) === auditChainKey({ project_id, entity: prepared })) other = { type: 'run', id: newId() }
    await expect(
      kernel.db.firestore.runTransaction(async (tx) => {
        const chain = await kernel.audit.prepare(tx, { project_id, entity: prepared })
        chain.write(ctx, { project_id, action: 'run.submitted', entity: other })
      }),
    ).rejects.toThrow(/outside the prepared chain/)
  })
})
