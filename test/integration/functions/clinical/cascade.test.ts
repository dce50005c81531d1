import { describe, expect, it } from 'vitest'
import { makeClinicalWorld } from '../../../support/clinical.js'

/**
 * The subject cascade under contention: whatever order concurrent requests commit in, a signed
 * order never names a deleted sample, no order names a deleted sample, and no sample outlives its
 * subject. Each pair races a few times; every outcome is one a serial order of the two could give.
 */
describe('clinical: the subject cascade under contention', async () => {
  const w = await makeClinicalWorld()
  const ROUNDS = Number(process.env.CASCADE_ROUNDS ?? 2)

  /** A trio order with a sibling (a subject nobody names as a parent, so it can be deleted). */
  async function trioWithSibling() {
    const t = await w.trio()
    const sibling = await w.subject({ sex: 'female', mother_id: t.subjects.mother.id, father_id: t.subjects.father.id })
    const sample = await w.sample(sibling.id)
    return { ...t, sibling, siblingSample: sample }
  }

  async function orderSamplesExist(orderId: string) {
    const order = (await w.api('GET', `/orders/${orderId}`)).body
    const samples = await Promise.all(order.samples.map((e: any) => w.api('GET', `/samples/${e.sample_id}`)))
    return { order, missing: order.samples.filter((_: unknown, i: number) => samples[i]!.status !== 200).map((e: any) => e.sample_id) }
  }

  it('never leaves a signed order pointing at a deleted sample when signing races the deletion of a subject', async () => {
    const outcomes = new Set<string>()
    for (let i = 0; i < ROUNDS; i++) {
      const t = await trioWithSibling()
      expect((await w.api('POST', `/orders/${t.order.id}/samples/${t.siblingSample.id}`, { body: { role: 'sibling' } })).status).toBe(201)
      const [sign, del] = await Promise.all([w.move(t.order.id, 'signed'), w.api('DELETE', `/subjects/${t.sibling.id}`)])
      outcomes.add(`sign ${sign.status}, delete ${del.status}`)
      expect([200, 409], JSON.stringify(sign.body)).toContain(sign.status)
      expect([204, 409], JSON.stringify(del.body)).toContain(del.status)
      const { order, missing } = await orderSamplesExist(t.order.id)
      expect(missing).toEqual([])
      const sibling = await w.api('GET', `/samples/${t.siblingSample.id}`)
      if (del.status === 204) {
        expect(sibling.status).toBe(404)
        expect((await w.api('GET', `/subjects/${t.sibling.id}`)).status).toBe(404)
      } else {
        // Refused: the sample was already held by the signed order, and both are intact.
        expect(order.status).toBe('signed')
        expect(del.body.detail).toContain(t.order.accession)
        expect(sibling.body.frozen).toBe(true)
      }
      if (order.status === 'signed') {
        for (const e of order.samples) expect((await w.api('GET', `/samples/${e.sample_id}`)).body.frozen).toBe(true)
      }
    }
    expect(outcomes.size).toBeGreaterThan(0)
  })

  it("never changes a signed order's subject after signing when a PATCH of it races the signature", async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = await w.trio()
      const [sign, patch] = await Promise.all([
        w.move(t.order.id, 'signed'),
        w.api('PATCH', `/subjects/${t.subjects.proband.id}`, { body: { affected_status: 'unaffected' } }),
      ])
      // Either may lose to the other's lock (a 409 asking to send it again); what committed must be a serial order of the two.
      expect([200, 409], JSON.stringify(sign.body)).toContain(sign.status)
      expect([200, 409], JSON.stringify(patch.body)).toContain(patch.status)
      const subject = (await w.api('GET', `/subjects/${t.subjects.proband.id}`)).body
      expect(subject.affected_status).toBe(patch.status === 200 ? 'unaffected' : 'affected')
      if (sign.status === 200 && patch.status === 200) {
        // Both committed: the change came first, and the order was signed with it.
        expect(Date.parse(subject.updated)).toBeLessThanOrEqual(Date.parse(sign.body.signed.at))
      }
    }
  })

  it('never leaves a draft order naming a deleted sample when adding the sample races the deletion of its subject', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const t = await trioWithSibling()
      const [add, del] = await Promise.all([
        w.api('POST', `/orders/${t.order.id}/samples/${t.siblingSample.id}`, { body: { role: 'sibling' } }),
        w.api('DELETE', `/subjects/${t.sibling.id}`),
      ])
      expect([201, 404, 409], JSON.stringify(add.body)).toContain(add.status)
      expect([204, 409], JSON.stringify(del.body)).toContain(del.status)
      const { missing } = await orderSamplesExist(t.order.id)
      expect(missing).toEqual([])
    }
  })

  it('never leaves a sample without its subject when creating a sample races the deletion of the subject', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const s = await w.subject()
      const external_id = `S-RACE-${i}-${Date.now()}`
      const [created, del] = await Promise.all([
        w.api('POST', '/samples', { body: { external_id, subject_id: s.id, type: 'blood' } }),
        w.api('DELETE', `/subjects/${s.id}`),
      ])
      expect([201, 400, 409], JSON.stringify(created.body)).toContain(created.status)
      expect([204, 409], JSON.stringify(del.body)).toContain(del.status)
      const listed = (await w.api('GET', `/samples?external_id=${external_id}`)).body as Array<{ subject_id: string }>
      for (const sample of listed) expect((await w.api('GET', `/subjects/${sample.subject_id}`)).status).toBe(200)
    }
  })
})
