import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProjectRole } from '../../../../lib/auth/roles.js'
import { FROZEN_SUBJECT_FIELDS } from '../../../../domain/clinical/decide-subject.js'
import { AFFECTED_STATUSES, SAMPLE_ROLES, SAMPLE_TYPES, SEXES, type OrderRecord, type SampleRecord } from '../../../../domain/clinical/model.js'
import { ORDER_STATUSES } from '../../../../domain/clinical/order-status.js'
import { emptyWorld, run, samplesheetOf, snapshot, type Caller, type Command, type World } from './clinical-model.js'

/**
 * "Frozen means frozen", as properties of the pure decisions: sequences of subject, sample and
 * order commands by callers of every role that may write clinical records are applied to an
 * in-memory world (clinical-model.ts), and after every step no signed order's samplesheet has
 * changed and no sample of a signed order has changed or gone. Commands name records by position
 * among those that exist when they run, so that most of them hit something real.
 */

const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined)
const ids = (m: Map<string, unknown>) => [...m.keys()]
const fq = (name: string) => [`gs://lab/fastq/${name}_R1.fastq.gz`, `gs://lab/fastq/${name}_R2.fastq.gz`]

/** A command as generated: records named by position, resolved against the world when it runs. */
type Abstract = (w: World) => Command | undefined

const ref = fc.nat(40)
const maybeRef = fc.option(ref, { nil: undefined })
const nullableRef = fc.option(fc.option(ref, { nil: null }), { nil: undefined })
const subjectName = fc.constantFrom('P-1', 'P-2', 'P-3', 'P-4', 'P-5', 'P-6')
const sampleName = fc.constantFrom('S-1', 'S-2', 'S-3', 'S-4', 'S-5', 'S-6', 'S-7', 'S-8')
const fastq = fc.constantFrom<string[]>([], fq('a'), fq('b'), [...fq('a'), ...fq('c')])
const family = fc.option(fc.option(fc.constantFrom('FAM-1', 'FAM-2'), { nil: null }), { nil: undefined })
const sex = fc.constantFrom(...SEXES)
const affected = fc.constantFrom(...AFFECTED_STATUSES)
const role = fc.constantFrom(...SAMPLE_ROLES)
/** A parent named by position: undefined leaves it (or, on create, names none), null clears it. */
const parentOf = (w: World, n: number | null | undefined) => (n === undefined ? undefined : n === null ? null : pick(ids(w.subjects), n))

const createSubject: fc.Arbitrary<Abstract> = fc.record({ name: subjectName, sex, affected, family, mother: maybeRef, father: maybeRef }).map(
  (a) => (w) =>
    ({
      kind: 'createSubject',
      input: {
        external_id: a.name,
        sex: a.sex,
        affected_status: a.affected,
        phenotypes: [],
        family_id: a.family ?? undefined,
        mother_id: parentOf(w, a.mother) ?? undefined,
        father_id: parentOf(w, a.father) ?? undefined,
      },
    }) satisfies Command,
)

const updateSubject: fc.Arbitrary<Abstract> = fc
  .record(
    {
      target: ref,
      name: subjectName,
      sex,
      affected,
      family,
      mother: nullableRef,
      father: nullableRef,
      display_name: fc.constantFrom('A', 'B'),
      phenotypes: fc.constantFrom<string[]>([], ['HP:0001250']),
    },
    { requiredKeys: ['target'] },
  )
  .map((a) => (w) => {
    const id = pick(ids(w.subjects), a.target)
    if (!id) return undefined
    return {
      kind: 'updateSubject',
      id,
      patch: {
        external_id: a.name,
        sex: a.sex,
        affected_status: a.affected,
        family_id: a.family,
        mother_id: parentOf(w, a.mother),
        father_id: parentOf(w, a.father),
        display_name: a.display_name,
        phenotypes: a.phenotypes,
      },
    }
  })

const deleteSubject: fc.Arbitrary<Abstract> = ref.map((n) => (w) => {
  const id = pick(ids(w.subjects), n)
  return id ? { kind: 'deleteSubject', id } : undefined
})

const createSample: fc.Arbitrary<Abstract> = fc
  .record({ name: sampleName, subject: ref, fastq, type: fc.constantFrom(...SAMPLE_TYPES) })
  .map((a) => (w) => {
    const subject = pick(ids(w.subjects), a.subject)
    return subject ? { kind: 'createSample', input: { external_id: a.name, subject_id: subject, type: a.type, fastq: a.fastq } } : undefined
  })

const updateSample: fc.Arbitrary<Abstract> = fc
  .record({ target: ref, name: sampleName, subject: ref, fastq, type: fc.constantFrom(...SAMPLE_TYPES) }, { requiredKeys: ['target'] })
  .map((a) => (w) => {
    const id = pick(ids(w.samples), a.target)
    if (!id) return undefined
    const subject = a.subject === undefined ? undefined : pick(ids(w.subjects), a.subject)
    return { kind: 'updateSample', id, patch: { external_id: a.name, subject_id: subject, fastq: a.fastq, type: a.type } }
  })

const deleteSample: fc.Arbitrary<Abstract> = ref.map((n) => (w) => {
  const id = pick(ids(w.samples), n)
  return id ? { kind: 'deleteSample', id } : undefined
})

const createOrder: fc.Arbitrary<Abstract> = fc.array(fc.record({ sample: ref, role }), { maxLength: 4 }).map((entries) => (w) => {
  const samples = entries.flatMap((e) => {
    const id = pick(ids(w.samples), e.sample)
    return id ? [{ sample_id: id, role: e.role }] : []
  })
  return { kind: 'createOrder', input: { priority: 'routine', test_code: 'WGS', samples } }
})

const updateOrder: fc.Arbitrary<Abstract> = fc
  .record(
    {
      target: ref,
      test_code: fc.constantFrom('WGS', 'WES'),
      due_date: fc.constantFrom('2027-01-01', null),
      outcome: fc.constantFrom('positive', 'negative'),
    },
    { requiredKeys: ['target'] },
  )
  .map((a) => (w) => {
    const id = pick(ids(w.orders), a.target)
    return id ? { kind: 'updateOrder', id, update: { test_code: a.test_code, due_date: a.due_date, outcome: a.outcome } } : undefined
  })

const deleteOrder: fc.Arbitrary<Abstract> = ref.map((n) => (w) => {
  const id = pick(ids(w.orders), n)
  return id ? { kind: 'deleteOrder', id } : undefined
})

const transition: fc.Arbitrary<Abstract> = fc
  .record({ target: ref, to: fc.constantFrom(...ORDER_STATUSES), reason: fc.option(fc.constant('because'), { nil: undefined }) })
  .map((a) => (w) => {
    const id = pick(ids(w.orders), a.target)
    return id ? { kind: 'transition', id, to: a.to, reason: a.reason } : undefined
  })

const addSample: fc.Arbitrary<Abstract> = fc.record({ target: ref, sample: ref, role }).map((a) => (w) => {
  const id = pick(ids(w.orders), a.target)
  const sampleId = pick(ids(w.samples), a.sample)
  return id && sampleId ? { kind: 'addSample', id, sampleId, role: a.role } : undefined
})

const removeSample: fc.Arbitrary<Abstract> = fc.record({ target: ref, sample: ref }).map((a) => (w) => {
  const order = pick([...w.orders.values()], a.target)
  const sampleId = order && pick(order.sample_ids, a.sample)
  return order && sampleId ? { kind: 'removeSample', id: order.id, sampleId } : undefined
})

const moveLabflow: fc.Arbitrary<Abstract> = fc
  .record({ target: ref, transition: fc.constantFrom('advance-accessioning', 'advance-extraction', 'repeat-extraction', 'remove-extraction') })
  .map((a) => (w) => {
    const id = pick(ids(w.orders), a.target)
    return id ? { kind: 'moveLabflow', id, transition: a.transition, reason: 'because' } : undefined
  })

/** Every role that may write clinical records (the routes refuse the others before any decision). */
const caller: fc.Arbitrary<Caller> = fc
  .constantFrom<ProjectRole>('lab', 'analyst', 'reviewer', 'admin', 'owner')
  .map((r) => ({ id: `user-${r}`, role: r }))

const step = fc.record({
  caller,
  command: fc.oneof(
    createSubject,
    updateSubject,
    deleteSubject,
    createSample,
    updateSample,
    deleteSample,
    createOrder,
    updateOrder,
    deleteOrder,
    transition,
    transition,
    addSample,
    removeSample,
    moveLabflow,
  ),
})

const owner: Caller = { id: 'user-owner', role: 'owner' }

/** A world with a signed trio order (and its subjects in a family), a draft order and a spare subject, for the commands to work on. */
function startingWorld(): World {
  const w = emptyWorld()
  const ok = (cmd: Command) => {
    const d = run(w, owner, cmd)
    if (!d.ok) throw new Error(`${show(cmd)}: ${JSON.stringify(d.refusal)}`)
    return d.changes.result as { id: string }
  }
  const subject = (external_id: string, extra: Record<string, string>) =>
    ok({ kind: 'createSubject', input: { external_id, sex: 'unknown', affected_status: 'unaffected', phenotypes: [], family_id: 'FAM-T', ...extra } })
      .id
  const mother = subject('M-T', { sex: 'female' })
  const father = subject('F-T', { sex: 'male' })
  const proband = subject('P-T', { sex: 'male', affected_status: 'affected', mother_id: mother, father_id: father })
  subject('X-T', {})
  const sample = (external_id: string, subject_id: string) =>
    ok({ kind: 'createSample', input: { external_id, subject_id, type: 'blood', fastq: fq(external_id) } }).id
  const samples = { proband: sample('SP-T', proband), mother: sample('SM-T', mother), father: sample('SF-T', father) }
  const order = ok({
    kind: 'createOrder',
    input: {
      priority: 'routine',
      test_code: 'WGS-trio',
      samples: (['proband', 'mother', 'father'] as const).map((r) => ({ sample_id: samples[r], role: r })),
    },
  })
  ok({ kind: 'transition', id: order.id, to: 'signed' })
  ok({ kind: 'createOrder', input: { priority: 'routine', test_code: 'WGS', samples: [{ sample_id: samples.proband, role: 'proband' }] } })
  return w
}

/**
 * The orders DOMAIN.md calls signed, by their history rather than by the `frozen` flags under test:
 * signed once and not entered in error since (on hold, in progress, completed and cancelled ones included).
 */
const signedOrders = (w: World): OrderRecord[] => [...w.orders.values()].filter((o) => o.ever_signed && o.status !== 'entered_in_error')
/** The samples of signed orders, each with the orders that hold it. */
const signedSamples = (w: World) =>
  [...w.samples.values()].flatMap((sample) => {
    const orders = signedOrders(w).filter((o) => o.sample_ids.includes(sample.id))
    return orders.length ? [{ sample, orders }] : []
  })
const withoutOrders = ({ orders: _, ...rest }: SampleRecord) => rest
const entryOf = (order: OrderRecord, sampleId: string) => order.samples.find((e) => e.sample_id === sampleId)

/** A command as a failure names it (the counterexample itself shows the generated functions only). */
const show = (cmd: Command) => JSON.stringify(cmd)

/** Runs the steps, checking `check(before, after)` after each one that ran. */
function runSteps(steps: Array<{ caller: Caller; command: Abstract }>, check: (before: World, after: World, cmd: Command) => void) {
  const w = startingWorld()
  for (const s of steps) {
    const cmd = s.command(w)
    if (!cmd) continue
    const before = snapshot(w)
    run(w, s.caller, cmd)
    check(before, w, cmd)
  }
}

const RUNS = Number(process.env.CLINICAL_PROPERTY_RUNS ?? 300)
const steps = fc.array(step, { minLength: 1, maxLength: 40 })

describe('frozen means frozen: properties of the clinical decisions', () => {
  it("no command sequence changes a signed order's samplesheet", () => {
    fc.assert(
      fc.property(steps, (list) =>
        runSteps(list, (before, after, cmd) => {
          for (const order of signedOrders(before)) {
            const now = after.orders.get(order.id)
            expect(now, `${show(cmd)} deleted signed order ${order.accession}`).toBeDefined()
            expect(samplesheetOf(after, now!), `${show(cmd)} changed the samplesheet of ${order.accession}`).toEqual(samplesheetOf(before, order))
          }
        }),
      ),
      { numRuns: RUNS },
    )
  })

  it('a sample in a signed order never changes, leaves the order or disappears, and its subject keeps the fields the samplesheet reads', () => {
    fc.assert(
      fc.property(steps, (list) =>
        runSteps(list, (before, after, cmd) => {
          for (const { sample, orders } of signedSamples(before)) {
            const now = after.samples.get(sample.id)
            expect(now, `${show(cmd)} deleted frozen sample ${sample.external_id}`).toBeDefined()
            expect(withoutOrders(now!), `${show(cmd)} changed frozen sample ${sample.external_id}`).toEqual(withoutOrders(sample))
            for (const order of orders) {
              const later = after.orders.get(order.id)!
              // Entered in error: the order is void and its samples free again.
              if (later.status === 'entered_in_error') continue
              expect(entryOf(later, sample.id), `${show(cmd)} took frozen sample ${sample.external_id} out of ${order.accession}`).toEqual(
                entryOf(order, sample.id),
              )
            }
            const subject = before.subjects.get(sample.subject_id)!
            const kept = after.subjects.get(sample.subject_id)
            expect(kept, `${show(cmd)} deleted the subject of frozen sample ${sample.external_id}`).toBeDefined()
            for (const field of FROZEN_SUBJECT_FIELDS) expect(kept![field], `${show(cmd)} changed ${field}`).toEqual(subject[field])
          }
        }),
      ),
      { numRuns: RUNS },
    )
  })

  it("keeps each sample's frozen flags equal to whether a signed order holds it (what the files service reads)", () => {
    fc.assert(
      fc.property(steps, (list) =>
        runSteps(list, (_, after, cmd) => {
          for (const sample of after.samples.values()) {
            const signed = signedOrders(after)
              .filter((o) => o.sample_ids.includes(sample.id))
              .map((o) => o.id)
            expect(
              sample.orders.filter((o) => o.frozen).map((o) => o.order_id),
              `${show(cmd)} left the frozen flags of ${sample.external_id} wrong`,
            ).toEqual(signed)
          }
        }),
      ),
      { numRuns: RUNS },
    )
  })

  it('every change a decision allows records an audit event, and one that writes nothing records none', () => {
    fc.assert(
      fc.property(steps, (list) => {
        const w = startingWorld()
        for (const s of list) {
          const cmd = s.command(w)
          if (!cmd) continue
          const decision = run(w, s.caller, cmd)
          if (!decision.ok) continue
          if (decision.changes.writes.length) expect(decision.events.length, `${show(cmd)} changed records without an audit event`).toBeGreaterThan(0)
          else expect(decision.events).toEqual([])
        }
      }),
      { numRuns: RUNS },
    )
  })

  it('signs some orders on the way (the properties are not vacuous)', () => {
    let signedLater = 0
    fc.assert(
      fc.property(steps, (list) => {
        runSteps(list, (before, after) => {
          if (signedOrders(after).length > signedOrders(before).length) signedLater += 1
        })
      }),
      { numRuns: RUNS },
    )
    expect(signedLater).toBeGreaterThan(0)
  })
})
