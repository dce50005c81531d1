import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Command } from 'commander'
import type { OrderStatus, UpdateSubject } from '../../../cli/client.js'
import {
  createOrderBody,
  createSampleBody,
  parseSampleRole,
  subjectOptions,
  updateOrderBody,
  updateSampleBody,
  updateSubjectBody,
  type Parents,
  type SubjectOptions,
} from '../../../cli/clinical-input.js'
import { CliError, EXIT } from '../../../cli/errors.js'
import { chooseNamed } from '../../../cli/names.js'
import { ORDER_STATUSES, ORDER_VERBS, targetStatus } from '../../../cli/order-moves.js'

/** The exit code and message a call fails with. */
function failure(call: () => unknown): { code: number; message: string } {
  try {
    call()
  } catch (error) {
    if (error instanceof CliError) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected a CliError')
}

const rec = (id: string) => ({ id })

describe('names: the one record a name stands for', () => {
  it.each([
    ['subject', 'P-1', [rec('a')], 'a'],
    ['sample', 'S-1', [rec('b')], 'b'],
    ['order', 'ORD-2026-000001', [rec('c')], 'c'],
  ] as const)('a %s name matching one record (%s) is that record', (kind, ref, matches, id) => {
    expect(chooseNamed(kind, ref, matches).id).toBe(id)
  })

  it.each([
    ['subject', 'P-9', EXIT.notFound, "not found: no subject with id or external id 'P-9' in this project (platform subjects list shows them)"],
    ['sample', 'S-9', EXIT.notFound, "not found: no sample with id or external id 'S-9' in this project (platform samples list shows them)"],
    [
      'order',
      'ORD-2026-999999',
      EXIT.notFound,
      "not found: no order with id or accession 'ORD-2026-999999' in this project (platform orders list shows them)",
    ],
  ] as const)('a %s name matching none is not found (exit 6), saying where to look', (kind, ref, code, message) => {
    expect(failure(() => chooseNamed(kind, ref, []))).toEqual({ code, message })
  })

  it('a name matching several records is a usage error (exit 3) listing every candidate by id', () => {
    expect(failure(() => chooseNamed('subject', 'P-1', [rec('a'), rec('b'), rec('c')]))).toEqual({
      code: EXIT.usage,
      message: "subject external id 'P-1' is ambiguous: a, b, c; pass the id (platform subjects list)",
    })
  })

  it('never picks a record when more than one matched, whatever they are', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uuid(), { minLength: 2, maxLength: 10 }), (ids) => {
        const { code, message } = failure(() => chooseNamed('sample', 'S-1', ids.map(rec)))
        expect(code).toBe(EXIT.usage)
        for (const id of ids) expect(message).toContain(id)
      }),
    )
  })
})

describe('orders transition: the status a word moves an order to', () => {
  const draft = { accession: 'ORD-2026-000001', status: 'draft' as OrderStatus }
  const held = { accession: 'ORD-2026-000001', status: 'on_hold' as OrderStatus, held_from: 'in_progress' as OrderStatus }

  it.each([
    ['sign', draft, 'signed'],
    ['start', draft, 'in_progress'],
    ['review', draft, 'in_review'],
    ['complete', draft, 'completed'],
    ['hold', draft, 'on_hold'],
    ['cancel', draft, 'cancelled'],
    ['enter-in-error', draft, 'entered_in_error'],
    ['resume', held, 'in_progress'],
    ['signed', draft, 'signed'],
    ['in_progress', draft, 'in_progress'],
    ['in-progress', draft, 'in_progress'],
    ['ON_HOLD', draft, 'on_hold'],
    [' entered-in-error ', draft, 'entered_in_error'],
  ] as const)("'%s' (order %o) moves to %s", (word, order, to) => {
    expect(targetStatus(word, order)).toBe(to)
  })

  it.each([
    ['approve', draft, "'approve' is neither an order status nor a transition"],
    ['', draft, 'is neither an order status nor a transition'],
    ['resume', draft, 'order ORD-2026-000001 is draft, not on hold: nothing to resume'],
  ] as const)("'%s' is a usage error: %s", (word, order, message) => {
    const { code, message: got } = failure(() => targetStatus(word, order))
    expect(code).toBe(EXIT.usage)
    expect(got).toContain(message)
  })

  it('takes every status by its own name, in either spelling, and every verb', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ORDER_STATUSES), fc.boolean(), (status, hyphens) => {
        expect(targetStatus(hyphens ? status.replace(/_/g, '-') : status, held)).toBe(status)
      }),
    )
    for (const verb of Object.keys(ORDER_VERBS)) expect(ORDER_STATUSES).toContain(targetStatus(verb, held))
  })
})

describe('create and edit flags: the request bodies', () => {
  it.each([
    ['S-1=proband', { sample: 'S-1', role: 'proband' }],
    ['a=b=mother', { sample: 'a=b', role: 'mother' }],
    ['0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f=tumor', { sample: '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f', role: 'tumor' }],
  ])('--sample %s is %o', (flag, parsed) => expect(parseSampleRole(flag)).toEqual(parsed))

  it.each(['S-1', '=proband', 'S-1=aunt', 'S-1='])('--sample %s is a usage error naming the roles', (flag) => {
    const { code, message } = failure(() => parseSampleRole(flag))
    expect(code).toBe(EXIT.usage)
    expect(message).toContain('proband, mother, father, sibling, relative, tumor, normal')
  })

  it.each<[SubjectOptions, Parents, UpdateSubject]>([
    [{ name: 'Ada' }, {}, { display_name: 'Ada' }],
    [{ affectedStatus: 'affected', phenotype: ['HP:0001250'] }, {}, { affected_status: 'affected', phenotypes: ['HP:0001250'] }],
    [{ clear: ['birth-date', 'phenotypes'] }, {}, { birth_date: null, phenotypes: null }],
    [{ clear: ['mother'] }, { father_id: 'f' }, { mother_id: null, father_id: 'f' }],
    [{ externalId: 'P-2' }, {}, { external_id: 'P-2' }],
  ])('subjects edit %o (parents %o) sends %o: only what was given', (opts, parents, body) => {
    expect(updateSubjectBody(opts, parents)).toEqual(body)
  })

  it.each([
    [() => updateSubjectBody({}, {}), 'nothing to change'],
    [() => updateSubjectBody({ name: 'Ada', clear: ['name'] }, {}), 'display_name is both set and cleared'],
    [() => updateSampleBody({ clear: ['vcf'], vcf: 'gs://b/x.vcf' }, undefined), 'vcf is both set and cleared'],
    [() => updateOrderBody({}), 'nothing to change'],
    [() => updateOrderBody({ requesterOrg: 'Hospital' }), '--requester-org goes with --requester'],
    [() => createOrderBody({}, []), '--test-code is required'],
    [() => createSampleBody('S-1', {}, 'subject'), '--type is required'],
  ])('refuses before sending anything: %#', (call, message) => {
    const { code, message: got } = failure(call)
    expect(code).toBe(EXIT.usage)
    expect(got).toContain(message)
  })

  it('samples edit sends the subject resolved, the FASTQ list whole and nulls for what is cleared', () => {
    expect(updateSampleBody({ fastq: ['gs://b/1.fq.gz', 'gs://b/2.fq.gz'], clear: ['cram'] }, 'subj')).toEqual({
      subject_id: 'subj',
      fastq: ['gs://b/1.fq.gz', 'gs://b/2.fq.gz'],
      cram: null,
    })
  })

  it('orders edit sends a requester whole, with its organization', () => {
    expect(updateOrderBody({ requester: 'Dr. A', requesterOrg: 'H', clear: ['notes'] })).toEqual({
      requester: { name: 'Dr. A', organization: 'H' },
      notes: null,
    })
  })

  it('subjects create and edit name each field with the same flag; only edit can clear or rename', () => {
    const flags = (edit: boolean) => subjectOptions(new Command(), edit).options.map((o) => o.long)
    expect(flags(true)).toEqual(['--external-id', ...flags(false), '--clear'])
  })
})
