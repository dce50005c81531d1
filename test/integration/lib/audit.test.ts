import { describe, expect, it } from 'vitest'
import { AUDIT_SHARDS, auditChainKey, verifyAuditChain, type AuditEvent, type AuditHead, type AuditInput } from '../../../lib/audit.js'
import { newId } from '../../../lib/ids.js'
import { testKernel } from '../../support/env.js'

const ctx = { actor: { type: 'user' as const, id: 'u1', email: 'a@example.org', auth_method: 'personal_token' } }

describe('audit chains', () => {
  const kernel = testKernel('audit-test')
  const project_id = newId()

  async function record(input: Omit<AuditInput, 'project_id'>) {
    return kernel.audit.record(ctx, { project_id, ...input })
  }
  const keys = kernel.audit.keys
  async function chainOf(chain: string): Promise<AuditEvent[]> {
    const q = await kernel.db.col('audit_events').where('chain', '==', chain).get()
    return q.docs.map((d) => d.data() as AuditEvent)
  }
  const headOf = async (chain: string) => (await kernel.db.col('audit_heads').doc(chain).get()).data() as AuditHead

  it("keeps one entity's history in one chain, in order", async () => {
    const entity = { type: 'run', id: newId() }
    for (const action of ['run.submitted', 'run.job_created', 'run.running', 'run.succeeded']) await record({ action, entity })
    const key = auditChainKey({ project_id, entity })
    expect(key).toMatch(new RegExp(`^project_${project_id}~hmac~\\d+$`))
    const events = (await chainOf(key)).filter((e) => e.entity.id === entity.id).sort((a, b) => a.seq - b.seq)
    expect(events.map((e) => e.action)).toEqual(['run.submitted', 'run.job_created', 'run.running', 'run.succeeded'])
    expect(verifyAuditChain(await chainOf(key), keys, await headOf(key))).toEqual([])
  })

  it("keys every event and signs its chain's head with the active key", async () => {
    const entity = { type: 'run', id: newId() }
    const event = await record({ action: 'run.submitted', entity })
    expect(event.key_id).toBe(keys.activeId)
    expect(event.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(await headOf(event.chain)).toMatchObject({
      seq: event.seq,
      hash: event.hash,
      key_id: keys.activeId,
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
  })

  it('spreads entities over the shards of their scope', () => {
    const shards = new Set(Array.from({ length: 500 }, () => auditChainKey({ project_id, entity: { type: 'run', id: newId() } })))
    expect(shards.size).toBeGreaterThan(AUDIT_SHARDS / 2)
    expect(auditChainKey({ entity: { type: 'user', id: 'x' } })).toMatch(/^platform~hmac~\d+$/)
    expect(auditChainKey({ org_id: 'o', entity: { type: 'user', id: 'x' } })).toMatch(/^org_o~hmac~\d+$/)
  })

  it('shows an altered event and a removed one', async () => {
    const entity = { type: 'order', id: newId() }
    for (const action of ['order.created', 'order.transitioned', 'order.transitioned']) await record({ action, entity, change: { to: 'signed' } })
    const events = await chainOf(auditChainKey({ project_id, entity }))
    expect(verifyAuditChain(events, keys)).toEqual([])

    const altered = events.map((e) => (e.seq === 2 ? { ...e, change: { to: 'completed' } } : e))
    expect(verifyAuditChain(altered, keys).join('\n')).toMatch(/\(seq 2\): its content does not match its hash: it was altered/)

    const removed = events.filter((e) => e.seq !== 2)
    expect(verifyAuditChain(removed, keys).join('\n')).toMatch(/seq 2 is missing/)
  })

  it('shows the newest events removed and the head moved back (truncation) without the key, and records the break in the next event', async () => {
    const entity = { type: 'report', id: newId() }
    const written = []
    for (const action of ['report.created', 'report.transitioned', 'report.signed']) written.push(await record({ action, entity }))
    const [, second, third] = written as [AuditEvent, AuditEvent, AuditEvent]
    const chain = second.chain
    const signedHead = await headOf(chain)
    // The operator removes the signature event and moves the head back onto the one before it; the head's old signature no longer fits.
    await kernel.db.col('audit_events').doc(third.id).delete()
    await kernel.db.col('audit_heads').doc(chain).update({ seq: second.seq, hash: second.hash })
    expect(verifyAuditChain(await chainOf(chain), keys, await headOf(chain))).toEqual([
      "the chain's head does not match its signature: it was changed outside the platform",
    ])

    // Written after, the next event does not make the moved head sound: it carries the break, under the key.
    const next = await record({ action: 'report.transitioned', entity })
    expect(next).toMatchObject({
      seq: third.seq,
      prev_hash: second.hash,
      chain_break: "the chain's head does not match its signature: it was changed outside the platform",
    })
    expect(await headOf(chain)).not.toEqual(signedHead)
    expect(verifyAuditChain(await chainOf(chain), keys, await headOf(chain)).join('\n')).toMatch(
      new RegExp(
        `event ${next.id} \\(seq ${next.seq}\\): it records a break in its chain: when it was written, the chain's head does not match its signature`,
      ),
    )
  })

  it('records changes to different entities concurrently without losing or mis-chaining any', async () => {
    // A project of its own: the tests above break chain heads on purpose, and one of these 30 entities could share their shard.
    const own = newId()
    const entities = Array.from({ length: 30 }, () => ({ type: 'run', id: newId() }))
    await Promise.all(entities.map((entity) => kernel.audit.record(ctx, { project_id: own, action: 'run.submitted', entity })))
    const chains = new Set(entities.map((entity) => auditChainKey({ project_id: own, entity })))
    let found = 0
    for (const chain of chains) {
      const events = await chainOf(chain)
      expect(verifyAuditChain(events, keys)).toEqual([])
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
