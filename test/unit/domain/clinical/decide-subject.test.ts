import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { absent, conflictWith, invalid } from '../../../../lib/decision.js'
import {
  decideCreateSubject,
  decideDeleteSubject,
  decideUpdateSubject,
  FROZEN_SUBJECT_FIELDS,
  type SubjectInput,
  type SubjectPatch,
  type UpdateSubjectState,
} from '../../../../domain/clinical/decide-subject.js'
import { applyPatch, sameValue } from '../../../../domain/clinical/decide.js'
import type { SubjectRecord } from '../../../../domain/clinical/model.js'
import { PROJECT } from './clinical-model.js'
import { ACCESSION, NOW, orderRecord, orderRef, sampleRecord, subjectRecord } from './records.js'

const mum = subjectRecord({ id: 'sub-mum', external_id: 'M-1', sex: 'female', mother_id: undefined, father_id: undefined })
const dad = subjectRecord({ id: 'sub-dad', external_id: 'F-1', sex: 'male', mother_id: undefined, father_id: undefined })
const aunt = subjectRecord({ id: 'sub-aunt', external_id: 'A-1', sex: 'female', mother_id: undefined, father_id: undefined })
const pedigree = new Map([mum, dad, aunt].map((s) => [s.id, s]))

const state = (over: Partial<UpdateSubjectState> = {}): UpdateSubjectState => ({
  current: subjectRecord(),
  samples: [sampleRecord()],
  newKeyTaken: false,
  pedigree,
  children: { mother: [], father: [] },
  ...over,
})
const update = (patch: SubjectPatch, over: Partial<UpdateSubjectState> = {}) =>
  decideUpdateSubject(state(over), { project: PROJECT, id: 'sub-1', patch, now: NOW })
/** The proband with its sample in the signed order ORD-2026-000001. */
const frozen = { samples: [sampleRecord({ orders: [orderRef(true)] })] }

describe('subject PATCH while a signed order holds one of its samples', () => {
  const CHANGES: Array<[(typeof FROZEN_SUBJECT_FIELDS)[number], SubjectPatch]> = [
    ['external_id', { external_id: 'P-2' }],
    ['sex', { sex: 'unknown' }],
    ['affected_status', { affected_status: 'unaffected' }],
    ['family_id', { family_id: 'FAM-2' }],
    ['family_id', { family_id: null }],
    ['mother_id', { mother_id: 'sub-aunt' }],
    ['mother_id', { mother_id: null }],
    ['father_id', { father_id: null }],
  ]

  it('freezes exactly the fields the samplesheet and the pedigree are made of', () => {
    expect([...FROZEN_SUBJECT_FIELDS].sort()).toEqual(['affected_status', 'external_id', 'family_id', 'father_id', 'mother_id', 'sex'])
    expect(new Set(CHANGES.map(([field]) => field))).toEqual(new Set(FROZEN_SUBJECT_FIELDS))
  })

  it.each(CHANGES)('refuses a change of %s with 409 naming the order and the field', (field, patch) => {
    const decision = update(patch, frozen)
    expect(decision.ok).toBe(false)
    if (decision.ok) return
    expect(decision.refusal.kind).toBe('conflict')
    expect(decision.refusal).toMatchObject({ detail: expect.stringContaining(ACCESSION) })
    expect(decision.refusal).toMatchObject({ detail: expect.stringContaining(`its ${field} cannot change`) })
  })

  it.each([
    ['display_name', { display_name: 'Doe, John' }],
    ['display_name cleared', { display_name: null }],
    ['birth_date', { birth_date: '2019-04-02' }],
    ['phenotypes', { phenotypes: ['HP:0001250', 'HP:0001263'] }],
  ] satisfies Array<[string, SubjectPatch]>)('allows a change of %s, which feeds neither', (_, patch) => {
    const decision = update(patch, frozen)
    expect(decision.ok).toBe(true)
  })

  it('accepts frozen fields sent with their stored values, so a client may send the subject back whole', () => {
    const { id: _, project_id: __, org_id: ___, sample_count: ____, created: _c, updated: _u, created_by: _b, ...whole } = subjectRecord()
    const decision = update({ ...whole, display_name: 'Renamed' }, frozen)
    expect(decision.ok && decision.changes.result.display_name).toBe('Renamed')
    expect(decision.ok && decision.events.map((e) => e.change?.fields)).toEqual([['display_name']])
  })

  it('names every signed order holding one of its samples, whichever sample', () => {
    const other = sampleRecord({ id: 'sam-2', orders: [{ order_id: 'ord-2', accession: 'ORD-2026-000002', frozen: true }] })
    const decision = update({ sex: 'female' }, { samples: [...frozen.samples, other] })
    expect(!decision.ok && decision.refusal).toMatchObject({ detail: expect.stringContaining(`${ACCESSION}, ORD-2026-000002`) })
  })

  it.each([
    ['a draft order', [orderRef(false)]],
    ['an order entered in error (its flag is cleared)', [orderRef(false)]],
    ['no order', []],
  ])('allows every field while its samples are only in %s', (_, orders) => {
    expect(update({ sex: 'female', affected_status: 'unknown', mother_id: null }, { samples: [sampleRecord({ orders })] }).ok).toBe(true)
  })
})

describe('subject PATCH', () => {
  it('writes the subject with the changed fields and records subject.updated naming them', () => {
    const decision = update({ affected_status: 'unknown', display_name: null, phenotypes: [] })
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    const next = decision.changes.result
    expect(next).toMatchObject({ affected_status: 'unknown', phenotypes: [], updated: NOW })
    expect('display_name' in next).toBe(false)
    expect(decision.changes.writes).toEqual([{ kind: 'subject', op: 'put', doc: next }])
    expect(decision.events).toEqual([
      {
        action: 'subject.updated',
        project_id: PROJECT.id,
        org_id: PROJECT.org_id,
        entity: { type: 'subject', id: 'sub-1', parent: 'FAM-1' },
        change: { fields: ['affected_status', 'display_name', 'phenotypes'] },
      },
    ])
  })

  it('writes nothing and records nothing when nothing changes', () => {
    expect(update({ sex: 'male', birth_date: null })).toEqual({ ok: true, changes: { result: subjectRecord(), writes: [] }, events: [] })
  })

  it('moves the external_id key: the old one is deleted, the new one created', () => {
    const decision = update({ external_id: 'P-9' })
    expect(decision.ok && decision.changes.writes.map((w) => `${w.op} ${w.kind} ${'external_id' in w.doc ? w.doc.external_id : ''}`)).toEqual([
      'put subject P-9',
      'delete key P-1',
      'create key P-9',
    ])
  })

  it.each([
    ['an unknown subject: 404', {}, { current: undefined }, absent('subject')],
    [
      'a malformed HPO term: 400 naming the entry',
      { phenotypes: ['HP:1'] },
      {},
      invalid("phenotypes.0: 'HP:1' is not an HPO term id (HP: and 7 digits)"),
    ],
    [
      'an external_id another subject holds: 409',
      { external_id: 'P-2' },
      { newKeyTaken: true },
      conflictWith("a subject with external_id 'P-2' already exists in this project"),
    ],
    ['a male mother: 400', { mother_id: 'sub-dad' }, {}, invalid('mother_id: subject sub-dad is male and cannot be a mother')],
    ['a parent of another project (not read): 400', { father_id: 'sub-x' }, {}, invalid('father_id: no such subject in this project')],
    [
      "a sex change against a child's record: 400",
      { sex: 'female' },
      { children: { mother: [], father: [subjectRecord({ external_id: 'K-1' })] } },
      invalid('sex: the subject is the father of K-1 and cannot be female'),
    ],
  ] satisfies Array<[string, SubjectPatch, Partial<UpdateSubjectState>, unknown]>)('refuses %s', (_, patch, over, refusal) => {
    expect(update(patch, over)).toEqual({ ok: false, refusal })
  })
})

describe('subject creation', () => {
  const input: SubjectInput = { external_id: 'P-5', sex: 'female', affected_status: 'affected', phenotypes: [], mother_id: 'sub-mum' }
  const create = (over: Partial<SubjectInput> = {}, keyTaken = false) =>
    decideCreateSubject({ keyTaken, pedigree }, { project: PROJECT, id: 'sub-5', input: { ...input, ...over }, by: 'u-lab', now: NOW })

  it('creates the subject and its external_id key, and records subject.created with the fields sent', () => {
    const decision = create()
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.writes.map((w) => `${w.op} ${w.kind}`)).toEqual(['create subject', 'create key'])
    expect(decision.changes.result).toMatchObject({ id: 'sub-5', sample_count: 0, created: NOW, created_by: 'u-lab', project_id: PROJECT.id })
    expect(decision.events[0]).toMatchObject({ action: 'subject.created', change: { fields: Object.keys(input).sort() } })
  })

  it.each([
    ['an external_id the project holds: 409', {}, true, conflictWith("a subject with external_id 'P-5' already exists in this project")],
    ['a female father: 400', { father_id: 'sub-aunt' }, false, invalid('father_id: subject sub-aunt is female and cannot be a father')],
    ['a malformed HPO term: 400', { phenotypes: ['seizures'] }, false, invalid("phenotypes.0: 'seizures' is not an HPO term id (HP: and 7 digits)")],
  ] satisfies Array<[string, Partial<SubjectInput>, boolean, unknown]>)('refuses %s', (_, over, keyTaken, refusal) => {
    expect(create(over, keyTaken)).toEqual({ ok: false, refusal })
  })
})

describe('subject deletion', () => {
  const del = (over: Partial<Parameters<typeof decideDeleteSubject>[0]> = {}) =>
    decideDeleteSubject(
      { subject: subjectRecord(), samples: [sampleRecord({ orders: [orderRef(false)] })], children: [], orders: [orderRecord()], ...over },
      { project: PROJECT, id: 'sub-1', by: 'u-lab', now: NOW },
    )

  it('deletes the subject, its samples and their keys, and takes the samples out of draft orders, with an event for each', () => {
    const decision = del()
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.writes.map((w) => `${w.op} ${w.kind}`)).toEqual([
      'put order',
      'delete sample',
      'delete key',
      'delete subject',
      'delete key',
    ])
    const order = decision.changes.writes[0]!.doc as { sample_ids: string[] }
    expect(order.sample_ids).toEqual([])
    expect(decision.events.map((e) => e.action)).toEqual(['order.sample_removed', 'sample.deleted', 'subject.deleted'])
  })

  it.each([
    [
      'a sample in a signed order: 409 naming it',
      { samples: [sampleRecord({ orders: [orderRef(true)] })] },
      conflictWith(`subject P-1 has samples in signed order ${ACCESSION}; a signed order's samples cannot be deleted`),
    ],
    [
      'a child naming it as a parent: 409',
      { children: [subjectRecord({ external_id: 'K-1' })] },
      conflictWith('subject P-1 is a parent of K-1; clear those mother_id/father_id links first'),
    ],
    ['an unknown subject: 404', { subject: undefined }, absent('subject')],
  ])('refuses %s', (_, over, refusal) => {
    expect(del(over)).toEqual({ ok: false, refusal })
  })
})

describe('a PATCH applied to a record', () => {
  it('lists the fields it changes, clears with null, and ignores values sent unchanged (timestamps by instant)', () => {
    const current: Partial<SubjectRecord> = { sex: 'male', display_name: 'A', phenotypes: ['HP:0000001'], created: NOW }
    const { changed, next } = applyPatch(current, { sex: 'male', display_name: null, phenotypes: ['HP:0000002'], birth_date: null })
    expect(changed).toEqual(['display_name', 'phenotypes'])
    expect(next).toEqual({ sex: 'male', phenotypes: ['HP:0000002'], created: NOW })
    expect(sameValue(NOW, Timestamp.fromMillis(NOW.toMillis()))).toBe(true)
    expect(sameValue(NOW, Timestamp.fromMillis(NOW.toMillis() + 1))).toBe(false)
    expect(sameValue(undefined, null)).toBe(true)
  })
})
