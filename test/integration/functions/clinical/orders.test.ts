import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

describe('clinical: orders', async () => {
  const w = await makeClinicalWorld()
  const year = new Date().getUTCFullYear()
  const lab = await w.caller(['lab'])
  const analyst = await w.caller(['analyst'])
  const reviewer = await w.caller(['reviewer'])
  const viewer = await w.caller(['viewer'])
  const actions = async (entityId: string) =>
    (await w.deps.db.col('audit_events').where('entity.id', '==', entityId).get()).docs.map((d) => d.get('action') as string).sort()

  it('creates a draft with an accession ORD-<year>-<6 digits>, numbered on, never reused after a deletion', async () => {
    const a = await w.api('POST', '/orders', {
      body: { test_code: 'WES-single', priority: 'urgent', indication: 'Ataxia', requester: { name: 'Dr. A' } },
    })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({
      status: 'draft',
      priority: 'urgent',
      test_code: 'WES-single',
      outcome: 'pending',
      samples: [],
      status_history: [],
    })
    expect(a.body.accession).toMatch(new RegExp(`^ORD-${year}-\\d{6}$`))
    expect(a.body.available_transitions).toEqual(['cancelled', 'entered_in_error']) // no sample yet: signing is not offered
    const n = Number(a.body.accession.slice(-6))
    expect((await w.api('DELETE', `/orders/${a.body.id}`)).status).toBe(204)
    const b = await w.api('POST', '/orders', { body: { test_code: 'WES-single' } })
    expect(b.body.accession).toBe(`ORD-${year}-${String(n + 1).padStart(6, '0')}`)
    expect(await actions(a.body.id)).toEqual(['order.created', 'order.deleted'])
  })

  it('gives concurrent creations distinct accessions', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => w.api('POST', '/orders', { body: { test_code: 'PANEL-1' } })))
    const ok = results.filter((r) => r.status === 201).map((r) => r.body.accession as string)
    expect(new Set(ok).size).toBe(ok.length)
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true)
  })

  it('reads an order by id or by accession; another project answers 404', async () => {
    const t = await w.trio()
    expect((await w.api('GET', `/orders/${t.order.accession}`)).body.id).toBe(t.order.id)
    const { project } = await w.otherProject()
    expect((await w.api('GET', `/orders/${t.order.id}`, { project: project.id })).status).toBe(404)
    expect((await w.api('GET', `/orders/${t.order.accession}`, { project: project.id })).status).toBe(404)
  })

  it('lists newest first and filters by status, priority and assignee', async () => {
    const code = `T-${rand()}`
    const a = await w.api('POST', '/orders', { body: { test_code: code, priority: 'stat', assignee: lab.user.id } })
    const b = await w.api('POST', '/orders', { body: { test_code: code, priority: 'stat' } })
    const stat = await w.api('GET', '/orders?priority=stat&page_size=1000')
    const ids = stat.body.map((o: any) => o.id)
    expect(ids.indexOf(b.body.id)).toBeLessThan(ids.indexOf(a.body.id))
    expect((await w.api('GET', `/orders?assignee=${lab.user.id}&status=draft`)).body.map((o: any) => o.id)).toEqual([a.body.id])
    expect((await w.api('GET', '/orders?status=shipped')).status).toBe(400)
    const bad = await w.api('POST', '/orders', { body: { test_code: code, assignee: '00000000-0000-4000-8000-000000000000' } })
    expect(bad.status).toBe(400)
    expect(bad.body.detail).toMatch(/^assignee:/)
  })

  it('moves along the edges of the lifecycle, recording who, when and why, each with order.transitioned', async () => {
    const t = await w.trio()
    const signed = await w.move(t.order.id, 'signed', undefined, lab.token)
    expect(signed.status).toBe(200)
    expect(signed.body).toMatchObject({ status: 'signed', signed: { by: lab.user.id }, labflow: { version: 1 }, labflow_stage: 'accessioning' })
    expect(signed.body.available_transitions).toEqual(['on_hold']) // a lab member may only put it on hold now
    const held = await w.move(t.order.id, 'on_hold', 'waiting for consent', lab.token)
    expect(held.body).toMatchObject({ status: 'on_hold', held_from: 'signed' })
    const wrongResume = await w.move(t.order.id, 'in_progress', undefined, lab.token)
    expect(wrongResume.status).toBe(409)
    expect(wrongResume.body.detail).toBe(`cannot move order ${t.order.accession} from on_hold to in_progress; allowed: signed`)
    expect((await w.move(t.order.id, 'signed', undefined, lab.token)).body.held_from).toBeUndefined()
    expect((await w.move(t.order.id, 'in_progress', undefined, analyst.token)).status).toBe(200)
    expect((await w.move(t.order.id, 'in_review', undefined, analyst.token)).status).toBe(200)
    const done = await w.move(t.order.id, 'completed', undefined, reviewer.token)
    expect(done.status).toBe(200)
    expect(done.body.status_history.map((h: any) => `${h.from}>${h.to}`)).toEqual([
      'draft>signed',
      'signed>on_hold',
      'on_hold>signed',
      'signed>in_progress',
      'in_progress>in_review',
      'in_review>completed',
    ])
    expect(done.body.status_history[1]).toMatchObject({ reason: 'waiting for consent', by: lab.user.id })
    const events = await w.deps.db.col('audit_events').where('entity.id', '==', t.order.id).where('action', '==', 'order.transitioned').get()
    expect(events.docs.map((d) => d.get('change')).find((c) => c.to === 'on_hold')).toEqual({
      from: 'signed',
      to: 'on_hold',
      reason: 'waiting for consent',
    })
    expect(events.size).toBe(6)
  })

  it('keeps who signed and the labflow stage when an order resumes from hold to signed', async () => {
    const t = await w.trio()
    const signed = (await w.move(t.order.id, 'signed')).body
    expect((await w.api('POST', `/orders/${t.order.id}/labflow/transitions`, { body: { transition: 'advance-accessioning' } })).status).toBe(200)
    expect((await w.move(t.order.id, 'on_hold', 'sample haemolysed', lab.token)).status).toBe(200)
    const resumed = await w.move(t.order.id, 'signed', undefined, lab.token)
    expect(resumed.status).toBe(200)
    expect(resumed.body.signed).toEqual(signed.signed)
    expect(resumed.body.labflow_stage).toBe('extraction')
  })

  it('answers 409 naming the allowed targets for a move off the edges, 403 for an edge beyond the role, 400 without a needed reason', async () => {
    const t = await w.trio()
    const skip = await w.move(t.order.id, 'completed')
    expect(skip.status).toBe(409)
    expect(skip.body.detail).toBe(`cannot move order ${t.order.accession} from draft to completed; allowed: signed, cancelled, entered_in_error`)
    const labCancel = await w.move(t.order.id, 'cancelled', 'duplicate', lab.token)
    expect(labCancel.status).toBe(403)
    expect(labCancel.body.detail).toContain('order.cancel')
    const denied = await w.deps.db.col('audit_events').where('action', '==', 'access.denied').where('entity.id', '==', t.order.id).get()
    expect(denied.docs.map((d) => d.get('change.reason'))).toEqual(['missing permission order.cancel'])
    const noReason = await w.move(t.order.id, 'cancelled')
    expect(noReason.status).toBe(400)
    expect(noReason.body.detail).toMatch(/^reason:/)
    expect((await w.move(t.order.id, 'signed', undefined, viewer.token)).status).toBe(403)
    expect((await w.move(t.order.id, 'cancelled', 'duplicate requisition')).status).toBe(200)
    const after = await w.move(t.order.id, 'signed')
    expect(after.body.detail).toBe(`cannot move order ${t.order.accession} from cancelled to signed; allowed: entered_in_error`)
  })

  it('lets exactly one of two concurrent moves of one order succeed', async () => {
    // The same move twice (a double-click), and two moves that exclude each other (completed and cancelled from in_review).
    // Each race costs the emulator's lock wait (seconds): ORDER_RACE_ROUNDS=10 for a longer soak.
    for (let i = 0; i < Number(process.env.ORDER_RACE_ROUNDS ?? 1); i++) {
      const t = await w.trio()
      const [a, b] = await Promise.all([w.move(t.order.id, 'signed'), w.move(t.order.id, 'signed')])
      expect([a.status, b.status].sort()).toEqual([200, 409])
      expect((await w.api('GET', `/orders/${t.order.id}`)).body.status_history).toHaveLength(1)
      await w.move(t.order.id, 'in_progress')
      await w.move(t.order.id, 'in_review')
      const [c, d] = await Promise.all([w.move(t.order.id, 'completed'), w.move(t.order.id, 'cancelled', 'withdrawn by the clinician')])
      expect([c.status, d.status].sort()).toEqual([200, 409])
      const final = (await w.api('GET', `/orders/${t.order.id}`)).body
      expect(final.status).toBe(c.status === 200 ? 'completed' : 'cancelled')
      expect(final.status_history).toHaveLength(4)
    }
  })

  describe('signing guards', () => {
    it('needs at least one sample', async () => {
      const o = await w.api('POST', '/orders', { body: { test_code: 'WGS' } })
      const res = await w.move(o.body.id, 'signed')
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain('allowed: cancelled, entered_in_error')
    })

    it('needs exactly one proband, at most one mother and father, of matching sex, matching the pedigree', async () => {
      const t = await w.trio()
      const add = (sample: string, role: string) => w.api('POST', `/orders/${t.order.id}/samples/${sample}`, { body: { role } })
      expect((await add(t.samples.father.id, 'mother')).status).toBe(200) // a role change
      let res = await w.move(t.order.id, 'signed')
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain('at most one mother')
      expect(res.body.detail).toContain(`sample ${t.samples.father.external_id} is the mother but its subject is male`)
      await add(t.samples.father.id, 'proband')
      res = await w.move(t.order.id, 'signed')
      expect(res.body.detail).toContain('exactly one proband (found 2)')
      await add(t.samples.father.id, 'father')
      const stranger = await w.subject({ sex: 'female' })
      const strangerSample = await w.sample(stranger.id)
      await w.api('DELETE', `/orders/${t.order.id}/samples/${t.samples.mother.id}`)
      await add(strangerSample.id, 'mother')
      res = await w.move(t.order.id, 'signed')
      expect(res.body.detail).toContain(`the proband's recorded mother is subject ${t.subjects.mother.id}`)
      await w.api('DELETE', `/orders/${t.order.id}/samples/${strangerSample.id}`)
      expect((await w.move(t.order.id, 'signed')).status).toBe(200)
    })
  })

  describe('PUT', () => {
    it('changes any field of a draft; null clears an optional one', async () => {
      const o = await w.api('POST', '/orders', { body: { test_code: 'WGS', indication: 'x', notes: 'n' } })
      const res = await w.api('PUT', `/orders/${o.body.id}`, {
        body: { test_code: 'WGS-trio', priority: 'asap', notes: null, due_date: '2026-12-01' },
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ test_code: 'WGS-trio', priority: 'asap', indication: 'x', due_date: '2026-12-01' })
      expect(res.body.notes).toBeUndefined()
      expect((await w.api('PUT', `/orders/${o.body.id}`, { body: { test_code: null } })).status).toBe(400)
      expect((await w.api('PUT', `/orders/${o.body.id}`, { body: { due_date: '2026-02-30' } })).status).toBe(400)
    })

    it('once signed changes only assignee and due date (fields sent unchanged are fine); the outcome in review by a reviewer', async () => {
      const t = await w.trio()
      const signed = (await w.move(t.order.id, 'signed')).body
      const refused = await w.api('PUT', `/orders/${t.order.id}`, { body: { test_code: 'WES', priority: signed.priority } })
      expect(refused.status).toBe(409)
      expect(refused.body.detail).toContain('(sent: test_code)')
      const ok = await w.api('PUT', `/orders/${t.order.id}`, {
        body: { test_code: signed.test_code, priority: signed.priority, assignee: analyst.user.id, due_date: '2027-01-15' },
        token: lab.token,
      })
      expect(ok.status).toBe(200)
      expect(ok.body).toMatchObject({ assignee: analyst.user.id, due_date: '2027-01-15' })
      expect((await w.api('PUT', `/orders/${t.order.id}`, { body: { outcome: 'positive' } })).status).toBe(409)
      await w.move(t.order.id, 'in_progress')
      await w.move(t.order.id, 'in_review')
      expect((await w.api('PUT', `/orders/${t.order.id}`, { body: { outcome: 'positive' }, token: analyst.token })).status).toBe(403)
      const outcome = await w.api('PUT', `/orders/${t.order.id}`, { body: { outcome: 'positive' }, token: reviewer.token })
      expect(outcome.body).toMatchObject({ outcome: 'positive', status: 'in_review' })
    })
  })

  it('deletes only an order that was never signed (409 otherwise, even once cancelled)', async () => {
    const t = await w.trio()
    await w.move(t.order.id, 'signed')
    await w.move(t.order.id, 'cancelled', 'duplicate')
    const res = await w.api('DELETE', `/orders/${t.order.id}`)
    expect(res.status).toBe(409)
    expect(res.body.detail).toContain(t.order.accession)
    const draft = await w.trio()
    expect((await w.api('DELETE', `/orders/${draft.order.id}`)).status).toBe(204)
    expect((await w.api('GET', `/samples/${draft.samples.proband.id}`)).body.orders).toEqual([])
  })

  describe('samples of an order', () => {
    it('lists the samples with their roles; adds and removes them only while a draft', async () => {
      const t = await w.trio()
      const list = await w.api('GET', `/orders/${t.order.id}/samples`)
      expect(list.body.map((s: any) => [s.external_id, s.role])).toEqual([
        [t.samples.proband.external_id, 'proband'],
        [t.samples.mother.external_id, 'mother'],
        [t.samples.father.external_id, 'father'],
      ])
      const sib = await w.subject({ sex: 'female', mother_id: t.subjects.mother.id })
      const sibSample = await w.sample(sib.id)
      const added = await w.api('POST', `/orders/${t.order.id}/samples/${sibSample.id}`, { body: { role: 'sibling' }, token: lab.token })
      expect(added.status).toBe(201)
      expect(added.body).toMatchObject({
        id: sibSample.id,
        role: 'sibling',
        orders: [{ id: t.order.id, accession: t.order.accession, frozen: false }],
      })
      expect((await w.api('POST', `/orders/${t.order.id}/samples/${sibSample.id}`, { body: { role: 'sibling' } })).status).toBe(200)
      expect((await w.api('POST', `/orders/${t.order.id}/samples/${sibSample.id}`, { body: { role: 'cousin' } })).status).toBe(400)
      expect((await w.api('DELETE', `/orders/${t.order.id}/samples/${sibSample.id}`)).status).toBe(204)
      expect((await w.api('DELETE', `/orders/${t.order.id}/samples/${sibSample.id}`)).status).toBe(404)
      await w.move(t.order.id, 'signed')
      const late = await w.api('POST', `/orders/${t.order.id}/samples/${sibSample.id}`, { body: { role: 'sibling' } })
      expect(late.status).toBe(409)
      expect((await w.api('DELETE', `/orders/${t.order.id}/samples/${t.samples.father.id}`)).status).toBe(409)
      expect(await actions(t.order.id)).toEqual(expect.arrayContaining(['order.sample_added', 'order.sample_removed']))
    })
  })

  describe('samplesheet', () => {
    it('is text/csv in the nf-core/raredisease format: one row per FASTQ pair, PED codes, parents by sample name, case id the accession', async () => {
      const t = await w.trio()
      const bucket = w.project.bucket_name
      const lanes = [`gs://${bucket}/l1_R1.fastq.gz`, `gs://${bucket}/l1_R2.fastq.gz`, `gs://${bucket}/l2_R1.fq.gz`, `gs://${bucket}/l2_R2.fq.gz`]
      expect((await w.api('PATCH', `/samples/${t.samples.proband.id}`, { body: { fastq: lanes } })).status).toBe(200)
      const res = await w.api('GET', `/orders/${t.order.accession}/samplesheet`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/)
      expect(res.headers.get('content-disposition')).toContain(`${t.order.accession}.csv`)
      const text = res.body as string
      expect(text.split('\n')[0]).toBe('sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id')
      const rows = parse(text, { columns: true }) as Array<Record<string, string>>
      const P = t.samples.proband.external_id
      const M = t.samples.mother.external_id
      const F = t.samples.father.external_id
      expect(rows).toEqual([
        {
          sample: P,
          lane: '1',
          fastq_1: lanes[0],
          fastq_2: lanes[1],
          sex: '1',
          phenotype: '2',
          paternal_id: F,
          maternal_id: M,
          case_id: t.order.accession,
        },
        {
          sample: P,
          lane: '2',
          fastq_1: lanes[2],
          fastq_2: lanes[3],
          sex: '1',
          phenotype: '2',
          paternal_id: F,
          maternal_id: M,
          case_id: t.order.accession,
        },
        {
          sample: M,
          lane: '1',
          fastq_1: w.fq(M)[0],
          fastq_2: w.fq(M)[1],
          sex: '2',
          phenotype: '1',
          paternal_id: '0',
          maternal_id: '0',
          case_id: t.order.accession,
        },
        {
          sample: F,
          lane: '1',
          fastq_1: w.fq(F)[0],
          fastq_2: w.fq(F)[1],
          sex: '1',
          phenotype: '1',
          paternal_id: '0',
          maternal_id: '0',
          case_id: t.order.accession,
        },
      ])
    })

    it('quotes a sample name with a comma or a quote, as the CSV library does', async () => {
      const s = await w.subject()
      const name = `S,"${rand()}"`
      const x = await w.sample(s.id, { external_id: name, fastq: w.fq('q') })
      const o = await w.api('POST', '/orders', { body: { test_code: 'WGS', samples: [{ sample_id: x.id, role: 'proband' }] } })
      const res = await w.api('GET', `/orders/${o.body.id}/samplesheet`)
      expect((res.body as string).split('\n')[1]!.startsWith(`"${name.replace(/"/g, '""')}",1,`)).toBe(true)
      expect((parse(res.body as string, { columns: true }) as Array<Record<string, string>>)[0]!.sample).toBe(name)
    })

    it('answers 409 naming a sample without FASTQ files', async () => {
      const t = await w.trio()
      await w.api('PATCH', `/samples/${t.samples.mother.id}`, { body: { fastq: [] } })
      const res = await w.api('GET', `/orders/${t.order.id}/samplesheet`)
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain(t.samples.mother.external_id)
    })
  })
})
