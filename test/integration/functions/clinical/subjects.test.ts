import { describe, expect, it } from 'vitest'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

describe('clinical: subjects', async () => {
  const w = await makeClinicalWorld()
  const actions = async (entityId: string) =>
    (await w.deps.db.col('audit_events').where('entity.id', '==', entityId).get()).docs.map((d) => d.get('action') as string).sort()

  it('creates a subject with its fields, reads it back, and records subject.created', async () => {
    const res = await w.api('POST', '/subjects', {
      body: {
        external_id: 'MRN-0001',
        display_name: 'Doe, Jane',
        sex: 'female',
        birth_date: '1988-02-29',
        affected_status: 'unaffected',
        phenotypes: ['HP:0000118'],
      },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      external_id: 'MRN-0001',
      display_name: 'Doe, Jane',
      sex: 'female',
      birth_date: '1988-02-29',
      affected_status: 'unaffected',
      phenotypes: ['HP:0000118'],
      sample_count: 0,
      project_id: w.project.id,
      created_by: w.owner.user.id,
    })
    const got = await w.api('GET', `/subjects/${res.body.id}`)
    expect(got.body).toEqual(res.body)
    expect(await actions(res.body.id)).toEqual(['subject.created'])
  })

  it('answers 409 naming the external_id when it exists in the project, and 400 for whitespace in it', async () => {
    const s = await w.subject()
    const again = await w.api('POST', '/subjects', { body: { external_id: s.external_id } })
    expect(again.status).toBe(409)
    expect(again.body.detail).toContain(`'${s.external_id}'`)
    const spaced = await w.api('POST', '/subjects', { body: { external_id: 'MRN 7' } })
    expect(spaced.status).toBe(400)
    expect(spaced.body.detail).toMatch(/^external_id:/)
  })

  it('makes exactly one subject of ten concurrent creations with one external_id; the others are 409s naming it', async () => {
    const external_id = `RACE-${rand()}`
    const results = await Promise.all(Array.from({ length: 10 }, () => w.api('POST', '/subjects', { body: { external_id } })))
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)])
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.detail).toContain(external_id)
    const listed = await w.api('GET', `/subjects?external_id=${external_id}`)
    expect(listed.body).toHaveLength(1)
  })

  it('checks HPO terms for form (HP: and 7 digits), naming the entry', async () => {
    const res = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, phenotypes: ['HP:0001250', 'HP:123', 'seizures'] } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toContain('phenotypes.1')
    expect(res.body.detail).toContain('phenotypes.2')
  })

  it('filters subjects by a part of their name, whatever its case, with the other filters', async () => {
    const tag = rand()
    const family = `FAM-${tag}`
    await w.subject({ display_name: `Lovelace-${tag}, Ada`, family_id: family, affected_status: 'affected' })
    await w.subject({ display_name: `LOVELACE-${tag}, Byron`, affected_status: 'unaffected' })
    await w.subject({ display_name: `Babbage-${tag}, Charles` })
    const names = async (query: string) =>
      ((await w.api('GET', `/subjects?${query}`)).body as Array<{ display_name: string }>).map((s) => s.display_name).sort()
    expect(await names(`name=lovelace-${tag}`)).toEqual([`LOVELACE-${tag}, Byron`, `Lovelace-${tag}, Ada`])
    expect(await names(`name=lovelace-${tag}&affected_status=affected`)).toEqual([`Lovelace-${tag}, Ada`])
    expect(await names(`name=${tag}&family_id=${family}`)).toEqual([`Lovelace-${tag}, Ada`])
    // A page token is bound to the name it was made with.
    const page = await w.api('GET', `/subjects?name=${tag}&page_size=1`)
    expect(page.body).toHaveLength(1)
    const next = await w.api('GET', `/subjects?name=Babbage&page_size=1&page_token=${page.headers.get('x-next-page-token')}`)
    expect(next.status).toBe(400)
  })

  it('lists newest first, pages, and filters by external_id, family_id and affected_status', async () => {
    const family = `FAM-${rand()}`
    const a = await w.subject({ family_id: family, affected_status: 'affected' })
    const b = await w.subject({ family_id: family, affected_status: 'unaffected' })
    const c = await w.subject({ family_id: family, affected_status: 'affected' })
    const all = await w.api('GET', `/subjects?family_id=${family}`)
    expect(all.body.map((s: any) => s.id)).toEqual([c.id, b.id, a.id])
    const page1 = await w.api('GET', `/subjects?family_id=${family}&page_size=2`)
    expect(page1.body.map((s: any) => s.id)).toEqual([c.id, b.id])
    const next = page1.headers.get('x-next-page-token')
    expect(page1.headers.get('link')).toContain('rel="next"')
    const page2 = await w.api('GET', `/subjects?family_id=${family}&page_size=2&page_token=${next}`)
    expect(page2.body.map((s: any) => s.id)).toEqual([a.id])
    const affected = await w.api('GET', `/subjects?family_id=${family}&affected_status=affected`)
    expect(affected.body.map((s: any) => s.id)).toEqual([c.id, a.id])
    const byExternal = await w.api('GET', `/subjects?external_id=${b.external_id}`)
    expect(byExternal.body.map((s: any) => s.id)).toEqual([b.id])
    expect((await w.api('GET', '/subjects?affected_status=maybe')).status).toBe(400)
  })

  it('PATCH changes only the fields sent; null clears optional ones and is refused for required ones', async () => {
    const s = await w.subject({ display_name: 'Before', birth_date: '2001-01-01', phenotypes: ['HP:0000001'], family_id: 'FAM-X' })
    const res = await w.api('PATCH', `/subjects/${s.id}`, {
      body: { display_name: null, birth_date: null, phenotypes: null, affected_status: 'affected' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ affected_status: 'affected', phenotypes: [], family_id: 'FAM-X', sex: 'female' })
    expect(res.body.display_name).toBeUndefined()
    expect(res.body.birth_date).toBeUndefined()
    expect((await w.api('GET', `/subjects/${s.id}`)).body).toEqual(res.body)
    for (const field of ['sex', 'affected_status', 'external_id']) {
      const refused = await w.api('PATCH', `/subjects/${s.id}`, { body: { [field]: null } })
      expect(refused.status).toBe(400)
      expect(refused.body.detail).toMatch(new RegExp(`^${field}:`))
    }
    const unknown = await w.api('PATCH', `/subjects/${s.id}`, { body: { mother: 'x' } })
    expect(unknown.status).toBe(400)
    expect(await actions(s.id)).toEqual(['subject.created', 'subject.updated'])
  })

  it('moves the external_id key on PATCH: the old id is free again, the new one is taken', async () => {
    const s = await w.subject()
    const other = await w.subject()
    const clash = await w.api('PATCH', `/subjects/${s.id}`, { body: { external_id: other.external_id } })
    expect(clash.status).toBe(409)
    expect(clash.body.detail).toContain(other.external_id)
    const renamed = `REN-${rand()}`
    expect((await w.api('PATCH', `/subjects/${s.id}`, { body: { external_id: renamed } })).status).toBe(200)
    expect((await w.api('POST', '/subjects', { body: { external_id: s.external_id } })).status).toBe(201)
    expect((await w.api('POST', '/subjects', { body: { external_id: renamed } })).status).toBe(409)
  })

  describe('pedigree', () => {
    it('refuses a parent that is not a subject of the project, of the wrong sex, the subject itself or its descendant', async () => {
      const father = await w.subject({ sex: 'male' })
      const mother = await w.subject({ sex: 'female' })
      const missing = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, mother_id: '00000000-0000-4000-8000-000000000000' } })
      expect(missing.status).toBe(400)
      expect(missing.body.detail).toMatch(/^mother_id: no such subject/)
      const maleMother = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, mother_id: father.id } })
      expect(maleMother.status).toBe(400)
      expect(maleMother.body.detail).toContain('cannot be a mother')
      const femaleFather = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, father_id: mother.id } })
      expect(femaleFather.status).toBe(400)
      expect(femaleFather.body.detail).toContain('cannot be a father')

      const child = await w.subject({ sex: 'male', mother_id: mother.id, father_id: father.id })
      const grandchild = await w.subject({ father_id: child.id, sex: 'female' })
      const self = await w.api('PATCH', `/subjects/${child.id}`, { body: { father_id: child.id } })
      expect(self.status).toBe(400)
      expect(self.body.detail).toContain('its own father')
      const loop = await w.api('PATCH', `/subjects/${father.id}`, { body: { father_id: child.id } })
      expect(loop.status).toBe(400)
      expect(loop.body.detail).toContain('descends from this subject')
      const deepLoop = await w.api('PATCH', `/subjects/${mother.id}`, { body: { mother_id: grandchild.id } })
      expect(deepLoop.status).toBe(400)
      expect(deepLoop.body.detail).toContain('descends from this subject')
    })

    it("refuses another project's subject as a parent, as if it did not exist", async () => {
      const { project } = await w.otherProject()
      const foreign = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, sex: 'female' }, project: project.id })
      expect(foreign.status).toBe(201)
      const res = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}`, mother_id: foreign.body.id } })
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(/^mother_id: no such subject/)
    })

    it("refuses a sex change that contradicts a child's record, and clears a parent link with null", async () => {
      const mother = await w.subject({ sex: 'female' })
      const child = await w.subject({ mother_id: mother.id })
      const refused = await w.api('PATCH', `/subjects/${mother.id}`, { body: { sex: 'male' } })
      expect(refused.status).toBe(400)
      expect(refused.body.detail).toContain(`mother of ${child.external_id}`)
      expect((await w.api('PATCH', `/subjects/${mother.id}`, { body: { sex: 'unknown' } })).status).toBe(200)
      const cleared = await w.api('PATCH', `/subjects/${child.id}`, { body: { mother_id: null } })
      expect(cleared.body.mother_id).toBeUndefined()
    })
  })

  describe('frozen by a signed order', () => {
    const sheet = async (orderId: string) => {
      const res = await w.api('GET', `/orders/${orderId}/samplesheet`)
      expect(res.status).toBe(200)
      return res.body as string
    }

    it.each([
      ['sex', 'proband', { sex: 'female' }],
      ['affected_status', 'proband', { affected_status: 'unaffected' }],
      ['mother_id', 'proband', { mother_id: null }],
      ['father_id', 'proband', { father_id: null }],
      ['family_id', 'father', { family_id: 'FAM-OTHER' }],
      ['external_id', 'mother', { external_id: 'MRN-RENAMED' }],
      ['sex', 'mother', { sex: 'unknown' }],
    ] as const)("refuses a change of %s (%s) with 409 naming the order, and the order's samplesheet stays as signed", async (field, who, body) => {
      const t = await w.trio()
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      const before = await sheet(t.order.id)
      const subject = t.subjects[who]
      const stored = (await w.api('GET', `/subjects/${subject.id}`)).body
      const res = await w.api('PATCH', `/subjects/${subject.id}`, { body })
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain(t.order.accession)
      expect(res.body.detail).toContain(field)
      expect((await w.api('GET', `/subjects/${subject.id}`)).body).toEqual(stored)
      expect(await sheet(t.order.id)).toBe(before)
      expect(await actions(subject.id)).toEqual(['subject.created'])
    })

    it('refuses the change while any one of its samples is in a signed order, even through a sample outside the order', async () => {
      const t = await w.trio()
      // A second sample of the proband, in no order: the subject is still frozen by the first.
      await w.sample(t.subjects.proband.id)
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      expect((await w.api('PATCH', `/subjects/${t.subjects.proband.id}`, { body: { affected_status: 'unknown' } })).status).toBe(409)
    })

    it('keeps the fields that feed neither samplesheet nor pedigree editable, and accepts frozen fields sent unchanged', async () => {
      const t = await w.trio()
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      const before = await sheet(t.order.id)
      const res = await w.api('PATCH', `/subjects/${t.subjects.proband.id}`, {
        body: { display_name: 'Proband, Demo', birth_date: '2020-01-31', phenotypes: ['HP:0001250', 'HP:0001263'], sex: 'male' },
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ display_name: 'Proband, Demo', birth_date: '2020-01-31', phenotypes: ['HP:0001250', 'HP:0001263'] })
      expect(await sheet(t.order.id)).toBe(before)
    })

    it("lets another subject name a frozen subject as a parent without changing the signed order's samplesheet", async () => {
      const t = await w.trio()
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      const before = await sheet(t.order.id)
      const sibling = await w.subject({ sex: 'female', mother_id: t.subjects.mother.id, father_id: t.subjects.father.id })
      expect((await w.api('PATCH', `/subjects/${sibling.id}`, { body: { affected_status: 'affected' } })).status).toBe(200)
      expect(await sheet(t.order.id)).toBe(before)
    })

    it('unfreezes the subject when the order is entered in error', async () => {
      const t = await w.trio()
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      expect((await w.move(t.order.id, 'entered_in_error', 'wrong patient on the requisition')).status).toBe(200)
      const res = await w.api('PATCH', `/subjects/${t.subjects.proband.id}`, { body: { affected_status: 'unknown', father_id: null } })
      expect(res.status).toBe(200)
      expect(res.body.affected_status).toBe('unknown')
    })

    it('stays frozen by a signed order that was cancelled or put on hold', async () => {
      const held = await w.trio()
      await w.move(held.order.id, 'signed')
      expect((await w.move(held.order.id, 'on_hold', 'waiting for consent')).status).toBe(200)
      expect((await w.api('PATCH', `/subjects/${held.subjects.proband.id}`, { body: { sex: 'unknown' } })).status).toBe(409)
      const cancelled = await w.trio()
      await w.move(cancelled.order.id, 'signed')
      expect((await w.move(cancelled.order.id, 'cancelled', 'withdrawn')).status).toBe(200)
      expect((await w.api('PATCH', `/subjects/${cancelled.subjects.proband.id}`, { body: { sex: 'unknown' } })).status).toBe(409)
    })
  })

  describe('delete', () => {
    it('deletes the subject with its samples in one step, with an audit event for each', async () => {
      const s = await w.subject()
      const a = await w.sample(s.id)
      const b = await w.sample(s.id)
      expect((await w.api('GET', `/subjects/${s.id}`)).body.sample_count).toBe(2)
      const res = await w.api('DELETE', `/subjects/${s.id}`)
      expect(res.status).toBe(204)
      expect((await w.api('GET', `/subjects/${s.id}`)).status).toBe(404)
      expect((await w.api('GET', `/samples/${a.id}`)).status).toBe(404)
      expect((await w.api('GET', `/samples/${b.id}`)).status).toBe(404)
      expect(await actions(s.id)).toEqual(['subject.created', 'subject.deleted'])
      expect(await actions(a.id)).toEqual(['sample.created', 'sample.deleted'])
      expect(await actions(b.id)).toEqual(['sample.created', 'sample.deleted'])
      // Their external ids are free again.
      expect((await w.api('POST', '/subjects', { body: { external_id: s.external_id } })).status).toBe(201)
    })

    it('takes deleted samples out of a draft order, and refuses (409 naming the order) while a signed order holds one', async () => {
      const t = await w.trio()
      expect((await w.api('DELETE', `/subjects/${t.subjects.mother.id}`)).status).toBe(409) // the proband names her as mother
      expect((await w.api('PATCH', `/subjects/${t.subjects.proband.id}`, { body: { mother_id: null } })).status).toBe(200)
      expect((await w.api('DELETE', `/subjects/${t.subjects.mother.id}`)).status).toBe(204)
      const order = await w.api('GET', `/orders/${t.order.id}`)
      expect(order.body.samples.map((s: any) => s.sample_id)).toEqual([t.samples.proband.id, t.samples.father.id])
      expect(await actions(t.order.id)).toContain('order.sample_removed')

      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
      const refused = await w.api('DELETE', `/subjects/${t.subjects.father.id}`)
      expect(refused.status).toBe(409)
      expect(refused.body.detail).toContain(t.order.accession)
      expect((await w.api('GET', `/samples/${t.samples.father.id}`)).status).toBe(200)
    })

    it('answers 404 for an unknown subject and for one of another project', async () => {
      const { project } = await w.otherProject()
      const foreign = await w.api('POST', '/subjects', { body: { external_id: `P-${rand()}` }, project: project.id })
      expect((await w.api('DELETE', `/subjects/${foreign.body.id}`)).status).toBe(404)
      expect((await w.api('GET', `/subjects/${foreign.body.id}`)).status).toBe(404)
      expect((await w.api('GET', '/subjects/00000000-0000-4000-8000-000000000000')).status).toBe(404)
    })
  })
})
