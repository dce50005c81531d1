import { describe, expect, it } from 'vitest'
import { absent, conflictWith, invalid } from '../../../../lib/decision.js'
import {
  decideCreateSample,
  decideDeleteSample,
  decideUpdateSample,
  type SampleInput,
  type SamplePatch,
  type UpdateSampleState,
} from '../../../../domain/clinical/decide-sample.js'
import type { SubjectRecord } from '../../../../domain/clinical/model.js'
import { PROJECT } from './clinical-model.js'
import { ACCESSION, NOW, orderRecord, orderRef, sampleRecord, subjectRecord } from './records.js'

const other = subjectRecord({ id: 'sub-2', external_id: 'P-2', sample_count: 0 })
const update = (patch: SamplePatch, over: Partial<UpdateSampleState> = {}) =>
  decideUpdateSample({ current: sampleRecord(), newKeyTaken: false, ...over }, { project: PROJECT, id: 'sam-1', patch, now: NOW })
const counts = (writes: Array<{ kind: string; doc: unknown }>) =>
  writes.filter((w) => w.kind === 'subject').map((w) => [(w.doc as SubjectRecord).id, (w.doc as SubjectRecord).sample_count])

describe('sample PATCH while a signed order holds it', () => {
  const frozen = { current: sampleRecord({ orders: [orderRef(true)] }) }

  it.each([
    ['external_id', { external_id: 'S-2' }],
    ['type', { type: 'saliva' }],
    ['fastq', { fastq: ['gs://lab/fastq/other_R1.fastq.gz', 'gs://lab/fastq/other_R2.fastq.gz'] }],
    ['fastq emptied', { fastq: [] }],
    ['cram', { cram: 'gs://lab/cram/S-1.cram' }],
    ['collected_at', { collected_at: new Date('2026-11-20T08:00:00Z') }],
    ['subject_id', { subject_id: 'sub-2' }],
  ] satisfies Array<[string, SamplePatch]>)('refuses a change of %s with 409 naming the order', (_, patch) => {
    expect(update(patch, { ...frozen, to: other, from: subjectRecord() })).toEqual({
      ok: false,
      refusal: conflictWith(`sample S-1 is in signed order ${ACCESSION} and cannot be changed`),
    })
  })

  it('accepts the sample sent back unchanged, writing nothing', () => {
    const { external_id, type, fastq } = frozen.current
    expect(update({ external_id, type, fastq, bam: null }, frozen)).toEqual({ ok: true, changes: { result: frozen.current, writes: [] }, events: [] })
  })

  it('allows every change once the order is entered in error (its flag is cleared)', () => {
    expect(update({ type: 'saliva' }, { current: sampleRecord({ orders: [orderRef(false)] }) }).ok).toBe(true)
  })
})

describe('sample PATCH', () => {
  it('moves a sample in no order to another subject, moving the sample count with it', () => {
    const decision = update({ subject_id: 'sub-2' }, { from: subjectRecord(), to: other })
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(counts(decision.changes.writes)).toEqual([
      ['sub-1', 0],
      ['sub-2', 1],
    ])
    expect(decision.events[0]).toMatchObject({ action: 'sample.updated', entity: { parent: 'sub-2' }, change: { fields: ['subject_id'] } })
  })

  it.each([
    [
      'a move while an unsigned order holds it: 409',
      { subject_id: 'sub-2' },
      { current: sampleRecord({ orders: [orderRef(false)] }), to: other },
      conflictWith(`sample S-1 is in order ${ACCESSION}; remove it from the order before moving it to another subject`),
    ],
    ['a move to a subject of no project of ours: 400', { subject_id: 'sub-x' }, {}, invalid('subject_id: no such subject in this project')],
    [
      'a data file outside the project bucket: 400 naming it',
      { vcf: 'gs://elsewhere/x.vcf.gz' },
      {},
      invalid('vcf: must be a gs:// object in the project bucket (gs://lab/…)'),
    ],
    [
      'an external_id another sample holds: 409',
      { external_id: 'S-2' },
      { newKeyTaken: true },
      conflictWith("a sample with external_id 'S-2' already exists in this project"),
    ],
    ['an unknown sample: 404', { type: 'dna' }, { current: undefined }, absent('sample')],
  ] satisfies Array<[string, SamplePatch, Partial<UpdateSampleState>, unknown]>)('refuses %s', (_, patch, over, refusal) => {
    expect(update(patch, over)).toEqual({ ok: false, refusal })
  })
})

describe('sample creation', () => {
  const input: SampleInput = { external_id: 'S-9', subject_id: 'sub-1', type: 'dna', fastq: [], collected_at: new Date('2026-11-20T08:00:00Z') }
  const create = (over: Partial<SampleInput> = {}, state: { keyTaken?: boolean; subject?: SubjectRecord } = { subject: subjectRecord() }) =>
    decideCreateSample({ keyTaken: false, ...state }, { project: PROJECT, id: 'sam-9', input: { ...input, ...over }, by: 'u-lab', now: NOW })

  it('creates the sample and its key, counts it on its subject, and records sample.created', () => {
    const decision = create()
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.result).toMatchObject({ id: 'sam-9', subject_id: 'sub-1', orders: [], created: NOW })
    expect(decision.changes.result.collected_at?.toDate().toISOString()).toBe('2026-11-20T08:00:00.000Z')
    expect(decision.changes.writes.map((w) => `${w.op} ${w.kind}`)).toEqual(['create sample', 'create key', 'put subject'])
    expect(counts(decision.changes.writes)).toEqual([['sub-1', 2]])
    expect(decision.events[0]).toMatchObject({ action: 'sample.created', entity: { type: 'sample', id: 'sam-9', parent: 'sub-1' } })
  })

  it.each([
    [
      'an external_id the project holds: 409',
      {},
      { keyTaken: true, subject: subjectRecord() },
      conflictWith("a sample with external_id 'S-9' already exists in this project"),
    ],
    ['an unknown subject: 400 naming the field', {}, {}, invalid('subject_id: no such subject in this project')],
    [
      'a FASTQ of the wrong kind: 400 naming the entry',
      { fastq: ['gs://lab/x.bam'] },
      { subject: subjectRecord() },
      invalid('fastq.0: must end in .fastq.gz or .fq.gz'),
    ],
  ])('refuses %s', (_, over, state, refusal) => {
    expect(create(over, state)).toEqual({ ok: false, refusal })
  })
})

describe('sample deletion', () => {
  const del = (over: Partial<Parameters<typeof decideDeleteSample>[0]> = {}) =>
    decideDeleteSample(
      { sample: sampleRecord({ orders: [orderRef(false)] }), subject: subjectRecord(), orders: [orderRecord()], ...over },
      { project: PROJECT, now: NOW },
    )

  it('deletes the sample and its key, takes it out of the draft order, and lowers its subject count', () => {
    const decision = del()
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.writes.map((w) => `${w.op} ${w.kind}`)).toEqual(['put order', 'delete sample', 'delete key', 'put subject'])
    expect(counts(decision.changes.writes)).toEqual([['sub-1', 0]])
    expect(decision.events.map((e) => [e.action, e.change?.reason])).toEqual([
      ['order.sample_removed', 'sample S-1 deleted'],
      ['sample.deleted', undefined],
    ])
  })

  it('refuses a sample in a signed order with 409 naming the order', () => {
    expect(del({ sample: sampleRecord({ orders: [orderRef(true)] }) })).toEqual({
      ok: false,
      refusal: conflictWith(`sample S-1 is in signed order ${ACCESSION} and cannot be deleted`),
    })
  })
})
