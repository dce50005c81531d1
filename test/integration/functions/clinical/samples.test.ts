import { describe, expect, it } from 'vitest'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

describe('clinical: samples', async () => {
  const w = await makeClinicalWorld()
  const bucket = w.project.bucket_name

  it('creates a sample of a subject with its data files, and counts it on the subject', async () => {
    const s = await w.subject()
    const res = await w.api('POST', '/samples', {
      body: {
        external_id: 'TUBE-0001',
        subject_id: s.id,
        type: 'blood',
        collected_at: '2026-11-20T09:30:00+01:00',
        fastq: w.fq('TUBE-0001'),
        cram: `gs://${bucket}/cram/TUBE-0001.cram`,
        vcf: `gs://${bucket}/vcf/TUBE-0001.vcf.gz`,
      },
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      external_id: 'TUBE-0001',
      subject_id: s.id,
      type: 'blood',
      collected_at: '2026-11-20T08:30:00.000Z',
      fastq: w.fq('TUBE-0001'),
      cram: `gs://${bucket}/cram/TUBE-0001.cram`,
      orders: [],
      frozen: false,
    })
    expect((await w.api('GET', `/samples/${res.body.id}`)).body).toEqual(res.body)
    expect((await w.api('GET', `/subjects/${s.id}`)).body.sample_count).toBe(1)
    const dup = await w.api('POST', '/samples', { body: { external_id: 'TUBE-0001', subject_id: s.id, type: 'dna' } })
    expect(dup.status).toBe(409)
    expect(dup.body.detail).toContain("'TUBE-0001'")
  })

  it('refuses data URIs outside the project bucket or of the wrong kind, naming the field', async () => {
    const s = await w.subject()
    const res = await w.api('POST', '/samples', {
      body: {
        external_id: `S-${rand()}`,
        subject_id: s.id,
        type: 'blood',
        fastq: [`gs://another-bucket/x_R1.fastq.gz`, `gs://${bucket}/x_R2.fastq`],
        bam: `https://example.org/x.bam`,
      },
    })
    expect(res.status).toBe(400)
    expect(res.body.detail).toContain(`fastq.0: must be a gs:// object in the project bucket (gs://${bucket}/…)`)
    expect(res.body.detail).toContain('fastq.1: must end in .fastq.gz or .fq.gz')
    expect(res.body.detail).toContain('bam: must be a gs:// object')
    const noSubject = await w.api('POST', '/samples', {
      body: { external_id: `S-${rand()}`, subject_id: '00000000-0000-4000-8000-000000000000', type: 'blood' },
    })
    expect(noSubject.status).toBe(400)
    expect(noSubject.body.detail).toMatch(/^subject_id:/)
  })

  it('lists newest first and filters by subject_id, type and external_id', async () => {
    const s = await w.subject()
    const a = await w.sample(s.id)
    const b = await w.sample(s.id, { type: 'saliva' })
    expect((await w.api('GET', `/samples?subject_id=${s.id}`)).body.map((x: any) => x.id)).toEqual([b.id, a.id])
    expect((await w.api('GET', `/samples?subject_id=${s.id}&type=saliva`)).body.map((x: any) => x.id)).toEqual([b.id])
    expect((await w.api('GET', `/samples?external_id=${a.external_id}`)).body.map((x: any) => x.id)).toEqual([a.id])
  })

  it('PATCH changes only the fields sent, clears with null, and moves a sample to another subject', async () => {
    const s = await w.subject()
    const other = await w.subject()
    const x = await w.sample(s.id, { vcf: `gs://${bucket}/v/x.vcf.gz` })
    const res = await w.api('PATCH', `/samples/${x.id}`, { body: { vcf: null, received_at: '2026-11-21T08:00:00Z', subject_id: other.id } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ received_at: '2026-11-21T08:00:00.000Z', subject_id: other.id, fastq: w.fq(x.external_id) })
    expect(res.body.vcf).toBeUndefined()
    expect((await w.api('GET', `/subjects/${s.id}`)).body.sample_count).toBe(0)
    expect((await w.api('GET', `/subjects/${other.id}`)).body.sample_count).toBe(1)
    expect((await w.api('PATCH', `/samples/${x.id}`, { body: { type: null } })).status).toBe(400)
    const cleared = await w.api('PATCH', `/samples/${x.id}`, { body: { fastq: null } })
    expect(cleared.body.fastq).toEqual([])
  })

  it('freezes a sample in a signed order: PATCH and DELETE answer 409 naming the order, until it is entered in error', async () => {
    const t = await w.trio()
    expect((await w.move(t.order.id, 'signed')).status).toBe(200)
    const got = await w.api('GET', `/samples/${t.samples.proband.id}`)
    expect(got.body.frozen).toBe(true)
    expect(got.body.orders).toEqual([{ id: t.order.id, accession: t.order.accession, frozen: true }])
    const patch = await w.api('PATCH', `/samples/${t.samples.proband.id}`, { body: { type: 'saliva' } })
    expect(patch.status).toBe(409)
    expect(patch.body.detail).toContain(t.order.accession)
    const del = await w.api('DELETE', `/samples/${t.samples.proband.id}`)
    expect(del.status).toBe(409)
    expect(del.body.detail).toContain(t.order.accession)
    expect((await w.move(t.order.id, 'entered_in_error', 'wrong patient on the requisition')).status).toBe(200)
    expect((await w.api('PATCH', `/samples/${t.samples.proband.id}`, { body: { type: 'saliva' } })).status).toBe(200)
  })

  it('deletes a sample: it leaves draft orders and its subject count drops', async () => {
    const t = await w.trio()
    expect((await w.api('DELETE', `/samples/${t.samples.father.id}`)).status).toBe(204)
    const order = await w.api('GET', `/orders/${t.order.id}`)
    expect(order.body.samples.map((s: any) => s.role)).toEqual(['proband', 'mother'])
    expect((await w.api('GET', `/subjects/${t.subjects.father.id}`)).body.sample_count).toBe(0)
  })

  describe('sampleinfo', () => {
    it('is the flat pipeline-ready JSON: samplesheet keys of the first pair, parents by their first sample, case id the family', async () => {
      const t = await w.trio()
      const res = await w.api('GET', `/samples/${t.samples.proband.id}/sampleinfo`)
      expect(res.status).toBe(200)
      const [r1, r2] = w.fq(t.samples.proband.external_id)
      expect(res.body).toEqual({
        sample: t.samples.proband.external_id,
        lane: 1,
        fastq_1: r1,
        fastq_2: r2,
        sex: 1,
        phenotype: 2,
        paternal_id: t.samples.father.external_id,
        maternal_id: t.samples.mother.external_id,
        case_id: t.family,
        subject: { id: t.subjects.proband.id, external_id: t.subjects.proband.external_id, sex: 'male', affected_status: 'affected' },
        hpo_terms: ['HP:0001250'],
        fastq: [r1, r2],
        bam: null,
        cram: null,
        vcf: null,
      })
    })

    it('uses 0 for absent parents, the subject external_id as case id, and null FASTQ keys for a sample without FASTQ', async () => {
      const s = await w.subject({ sex: 'other', affected_status: 'unknown' })
      const x = await w.sample(s.id, { fastq: [], bam: `gs://${bucket}/b/x.bam` })
      const res = await w.api('GET', `/samples/${x.id}/sampleinfo`)
      expect(res.body).toMatchObject({
        sex: 'other',
        phenotype: 0,
        paternal_id: '0',
        maternal_id: '0',
        case_id: s.external_id,
        lane: null,
        fastq_1: null,
        fastq_2: null,
        bam: `gs://${bucket}/b/x.bam`,
      })
      expect((await w.api('GET', '/samples/00000000-0000-4000-8000-000000000000/sampleinfo')).status).toBe(404)
    })
  })
})
