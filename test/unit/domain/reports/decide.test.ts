import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { refusalDetail, refusalStatus, type Decision } from '../../../../lib/decision.js'
import { ORDER_STATUSES, type OrderStatus } from '../../../../domain/clinical/order-status.js'
import {
  blockersFor,
  contributorsOf,
  decideAddVariant,
  decideAmend,
  decideCreate,
  decideFormPost,
  decideRemoveVariant,
  decideSignature,
  decideSignoffPage,
  decideTransition,
  decideUpdate,
  decideUpdateVariant,
  describeBlocker,
  judgeReauthentication,
  transitionsFor,
  withContribution,
  type OrderFacts,
  type ReauthState,
  type ReportPatch,
  type Signer,
  type VariantOverrides,
} from '../../../../domain/reports/decide.js'
import type { ReportRecord, ReportVariantRecord, SignoffRecord } from '../../../../domain/reports/model.js'
import { REPORT_STATUSES, type ReportStatus } from '../../../../domain/reports/status.js'

/**
 * The rules of reports as data (domain/reports/decide.ts): who is recorded as having changed a
 * report and so may not sign it, which orders stop a report, and what a signature's
 * re-authentication must prove. Tables for the cases, fast-check for the two properties the issue
 * names: no command sequence lets one person both change and sign a report; no report is signed,
 * changed or created while its order is cancelled or entered in error.
 */

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0)
const at = (ms: number) => new Date(T0 + ms)
const stamp = (ms: number) => Timestamp.fromMillis(T0 + ms)
const ORDER = { id: 'order-1', accession: 'ORD-2026-000001', project_id: 'p1' }
const order = (status: OrderStatus = 'in_progress'): OrderFacts & { project_id: string } => ({ ...ORDER, status })
const all = () => true

function report(over: Partial<ReportRecord> = {}): ReportRecord {
  return {
    id: 'r1',
    project_id: 'p1',
    org_id: 'o1',
    order_id: ORDER.id,
    order_accession: ORDER.accession,
    status: 'draft',
    template_type: 'germline_diagnostic',
    conclusion: 'Positive.',
    author: { id: 'ann' },
    contributors: [{ id: 'ann', did: ['created'] }],
    revision: 1,
    signatures: [],
    status_history: [],
    variant_count: 0,
    unclassified_count: 0,
    comment_count: 0,
    open_review_comments: 0,
    snapshot_count: 0,
    created: stamp(0),
    updated: stamp(0),
    ...over,
  }
}

const variant = (id: string, over: Partial<ReportVariantRecord> = {}): ReportVariantRecord => ({
  report_id: 'r1',
  project_id: 'p1',
  order_id: ORDER.id,
  variant_id: id,
  acmg_classification: 'pathogenic',
  acmg_criteria: [],
  include_in_report: true,
  added_by: 'ann',
  added_at: stamp(0),
  updated: stamp(0),
  ...over,
})

const signer = (id: string, can: Signer['can'] = all): Signer => ({ user: { id, email: `${id}@lab.example` }, sessionId: `session-${id}`, can })

/** A pending sign-off of `who`, its form posted at `postedMs`, for content hashing to `sha`. */
const pending = (who: string, postedMs: number, sha = 'sha-1'): SignoffRecord => ({
  stage: 'reauth',
  report_id: 'r1',
  project_id: 'p1',
  user_id: who,
  session_id: `session-${who}`,
  snapshot_id: 'snap-1',
  sha256: sha,
  meaning: 'approved',
  created: stamp(postedMs),
  expires_at: stamp(postedMs + 5 * 60_000),
})

/** The session of `who` after a re-authentication asked as prompt=login, max_age=0, begun half a second before `authMs`, recorded a second after. */
const reauthenticated = (who: string, authMs: number, asked: { prompt?: string; maxAge?: number } = { prompt: 'login', maxAge: 0 }): ReauthState => ({
  userId: who,
  sessionId: `session-${who}`,
  reauth: { ...asked, begunAt: at(authMs - 500), authTime: at(authMs), at: at(authMs + 1000) },
})

/** The final step for `who`, posted at 0, re-authenticated at 2 s, now at 3 s: everything in order but the report and the order. */
const sign = (r: ReportRecord, o: OrderFacts | undefined, who: string, can: Signer['can'] = all) =>
  decideSignature({
    pending: pending(who, 0),
    othersPending: false,
    report: r,
    order: o,
    replaced: undefined,
    sha256: 'sha-1',
    signer: signer(who, can),
    session: reauthenticated(who, 2000),
    now: at(3000),
  })

const refusal = (d: Decision<unknown>) => (d.ok ? undefined : { status: refusalStatus(d.refusal), detail: refusalDetail(d.refusal) })

describe('contributors: who changed a report', () => {
  const draft = report({ variant_count: 1 })
  const now = at(1000)
  it.each([
    ['a PATCH of the conclusion', 'edited', () => decideUpdate(draft, order(), { patch: { conclusion: 'Negative.' }, by: 'rita', now })],
    ['a PATCH of the summary', 'edited', () => decideUpdate(draft, order(), { patch: { summary: 'Trio.' }, by: 'rita', now })],
    ['a PATCH of the notes', 'edited', () => decideUpdate(draft, order(), { patch: { notes: 'Coverage 30x.' }, by: 'rita', now })],
    ['a PATCH of the template type', 'edited', () => decideUpdate(draft, order(), { patch: { template_type: 'negative' }, by: 'rita', now })],
    [
      'adding a variant',
      'changed_variants',
      () => decideAddVariant(draft, order(), { variantId: 'v2', overrides: {}, onReport: false, by: 'rita', now }),
    ],
    ['removing a variant', 'changed_variants', () => decideRemoveVariant(draft, order(), variant('v1'), { variantId: 'v1', by: 'rita', now })],
    [
      'changing an override',
      'changed_overrides',
      () => decideUpdateVariant(draft, order(), variant('v1'), { variantId: 'v1', overrides: { acmg_classification: 'benign' }, by: 'rita', now }),
    ],
    ['sending it to review', 'sent_to_review', () => decideTransition(draft, order(), undefined, { to: 'in_review', can: all, by: 'rita', now })],
  ] as const)('records %s as %s', (_, did, decide) => {
    const decision = decide()
    expect(decision.ok).toBe(true)
    if (!decision.ok) return
    expect(decision.changes.report?.contributors).toEqual([
      { id: 'ann', did: ['created'] },
      { id: 'rita', did: [did] },
    ])
  })

  it.each([
    ['a PATCH that changes nothing', () => decideUpdate(draft, order(), { patch: { conclusion: 'Positive.' }, by: 'rita', now })],
    [
      'an override set to what it is',
      () =>
        decideUpdateVariant(draft, order(), variant('v1'), { variantId: 'v1', overrides: { acmg_classification: 'pathogenic' }, by: 'rita', now }),
    ],
    [
      'sending a report back to draft',
      () => decideTransition(report({ status: 'in_review' }), order(), undefined, { to: 'draft', can: all, by: 'rita', now }),
    ],
  ] as const)('records nobody for %s', (_, decide) => {
    const decision = decide()
    expect(decision.ok).toBe(true)
    if (decision.ok) expect(decision.changes.report?.contributors ?? draft.contributors).toEqual(draft.contributors)
  })

  it('keeps each person once, with their acts in one order, people in the order they first acted', () => {
    let list = withContribution([], 'ann', 'created')
    list = withContribution(list, 'rita', 'sent_to_review')
    list = withContribution(list, 'ann', 'edited')
    list = withContribution(list, 'rita', 'edited')
    list = withContribution(list, 'rita', 'edited')
    expect(list).toEqual([
      { id: 'ann', did: ['created', 'edited'] },
      { id: 'rita', did: ['edited', 'sent_to_review'] },
    ])
  })

  it('reads a report written before contributors were recorded: its author and whoever sent it to review', () => {
    const legacy = report({
      status: 'in_review',
      status_history: [{ from: 'draft', to: 'in_review', by: 'rita', at: stamp(1) }],
    })
    delete legacy.contributors
    expect(contributorsOf(legacy)).toEqual([
      { id: 'ann', did: ['created'] },
      { id: 'rita', did: ['sent_to_review'] },
    ])
  })

  it("starts an amendment's contributors with its own author: the signed revision's are not carried over", () => {
    const signed = report({ status: 'signed', contributors: [{ id: 'ann', did: ['created', 'edited', 'sent_to_review'] }] })
    const amended = decideAmend(signed, order(), {
      id: 'r2',
      kind: 'amended',
      reason: 'reclassified',
      author: { id: 'bob' },
      now: at(5000),
      variants: [],
      comments: [],
      commentIds: [],
    })
    expect(amended.ok && amended.changes.report.contributors).toEqual([{ id: 'bob', did: ['amended'] }])
  })
})

describe('who signs', () => {
  const inReview = report({
    status: 'in_review',
    contributors: [
      { id: 'ann', did: ['created', 'changed_variants'] },
      { id: 'rita', did: ['edited', 'sent_to_review'] },
    ],
  })

  it.each([
    ['the author', 'ann', 403, 'you are the author of this report (you also added or removed variants)'],
    ['a reviewer who edited it and sent it to review', 'rita', 403, 'you changed this report (you edited its text and sent it to review)'],
  ] as const)('refuses %s, on the page, at the form and in the final step', (_, who, status, message) => {
    const page = decideSignoffPage(inReview, order(), signer(who))
    const post = decideFormPost({
      page: { ...pending(who, 0), stage: 'page' },
      form: { snapshotId: 'snap-1', meaning: 'approved' },
      report: inReview,
      order: order(),
      sha256: 'sha-1',
      signer: signer(who),
      now: at(1000),
    })
    for (const d of [page, post, sign(inReview, order(), who)]) {
      expect(d).toMatchObject({ ok: false, stop: 'blocked' })
      expect(refusal(d)).toMatchObject({ status })
      expect(refusal(d)!.detail).toContain(message)
    }
  })

  it('lets a reviewer who changed nothing sign, and says why the others may not', () => {
    expect(sign(inReview, order(), 'sam').ok).toBe(true)
    expect(blockersFor(inReview, order(), { user: { id: 'sam' }, can: () => false }).map(describeBlocker)).toEqual([
      'signing needs the permission report.sign (a reviewer of the project)',
    ])
    const blocked = blockersFor(report({ status: 'draft', open_review_comments: 2 }), order('cancelled'), { user: { id: 'ann' }, can: all })
    expect(blocked.map(describeBlocker)).toEqual([
      'order ORD-2026-000001 is cancelled: a report of a cancelled order, or of one entered in error, is not signed',
      'the report is a draft: it is signed once it is in review',
      'you are the author of this report: a second person, who did not change it, reviews and signs it',
      '2 review comments are still open: resolve them before signing',
    ])
  })
})

describe('orders that stop a report', () => {
  it.each(ORDER_STATUSES.map((s) => [s, ['draft', 'cancelled', 'entered_in_error'].includes(s)] as const))(
    'creating a report for an order that is %s: refused %s',
    (status, refused) => {
      const d = decideCreate(order(status), {
        project: { id: 'p1', org_id: 'o1' },
        orderRef: ORDER.accession,
        id: 'r9',
        fields: { template_type: 'germline_diagnostic' },
        author: { id: 'ann' },
        now: at(0),
      })
      expect(d.ok).toBe(!refused)
      if (refused) expect(refusal(d)).toEqual({ status: 409, detail: expect.stringContaining(`order ${ORDER.accession} is ${status}`) })
    },
  )

  it.each(['cancelled', 'entered_in_error'] as const)('an order that is %s leaves its report only the withdrawals', (status) => {
    expect(transitionsFor(report(), order(status), all)).toEqual(['cancelled', 'entered_in_error'])
    expect(transitionsFor(report({ status: 'signed' }), order(status), all)).toEqual(['entered_in_error'])
    const withdrawn = decideTransition(report(), order(status), undefined, {
      to: 'cancelled',
      reason: 'order withdrawn',
      can: all,
      by: 'adm',
      now: at(0),
    })
    expect(withdrawn.ok).toBe(true)
  })

  it('answers 404 for an order of another project, as if it did not exist', () => {
    const d = decideCreate(
      { ...order(), project_id: 'p2' },
      {
        project: { id: 'p1', org_id: 'o1' },
        orderRef: ORDER.id,
        id: 'r9',
        fields: { template_type: 'negative' },
        author: { id: 'ann' },
        now: at(0),
      },
    )
    expect(refusal(d)).toEqual({ status: 404, detail: `order ${ORDER.id} not found` })
  })
})

describe('the re-authentication of a signature', () => {
  const posted = 60_000
  const now = posted + 90_000
  it.each([
    ['none recorded', undefined, 'you did not sign in again'],
    [
      'one recorded before the form was posted',
      { prompt: 'login', maxAge: 0, begunAt: posted - 21_000, authTime: posted - 20_000, at: posted - 19_000 },
      'you did not sign in again',
    ],
    [
      'a login begun before the post, completed after it',
      { prompt: 'login', maxAge: 0, begunAt: posted - 1000, authTime: posted + 4000, at: posted + 5000 },
      'started before you posted',
    ],
    [
      'one from a session recorded before the platform kept when its login began',
      { prompt: 'login', maxAge: 0, authTime: posted + 4000, at: posted + 5000 },
      'started before you posted',
    ],
    [
      'max_age=300 answered from the provider session (the attack)',
      { maxAge: 300, begunAt: posted + 3000, authTime: posted - 100_000, at: posted + 5000 },
      'prompt=none, max_age=300',
    ],
    [
      'prompt=login with max_age=300',
      { prompt: 'login', maxAge: 300, begunAt: posted + 3000, authTime: posted + 4000, at: posted + 5000 },
      'max_age=300',
    ],
    ['max_age=0 without prompt=login', { maxAge: 0, begunAt: posted + 3000, authTime: posted + 4000, at: posted + 5000 }, 'prompt=none, max_age=0'],
    [
      'prompt=login, max_age=0, but an auth_time before the post',
      { prompt: 'login', maxAge: 0, begunAt: posted + 3000, authTime: posted - 2000, at: posted + 5000 },
      'before you posted',
    ],
    [
      'prompt=login, max_age=0, over five minutes old now',
      { prompt: 'login', maxAge: 0, begunAt: posted + 500, authTime: posted + 1000, at: posted + 2000 },
      'more than five minutes old',
      posted + 302_000,
    ],
  ] as const)('refuses %s', (_, r, message, when = now) => {
    const reauth = r && {
      prompt: 'prompt' in r ? r.prompt : undefined,
      maxAge: r.maxAge,
      begunAt: 'begunAt' in r ? at(r.begunAt) : undefined,
      authTime: at(r.authTime),
      at: at(r.at),
    }
    const judged = judgeReauthentication(at(posted), reauth, at(when))
    expect(judged && refusalStatus(judged)).toBe(403)
    expect(judged && refusalDetail(judged)).toContain(message)
  })

  it.each([
    ['after the post', posted + 4000],
    ["in the post's own second (auth_time counts whole seconds)", Math.floor((posted + 700) / 1000) * 1000],
  ])('accepts prompt=login, max_age=0 with an auth_time %s', (_, authTime) => {
    const postedAt = at(posted + 700)
    const reauth = { prompt: 'login', maxAge: 0, begunAt: at(posted + 800), authTime: at(authTime), at: at(posted + 5000) }
    expect(judgeReauthentication(postedAt, reauth, at(now))).toBeUndefined()
  })

  it("records the re-authentication's auth_time on the signature", () => {
    const d = sign(report({ status: 'in_review' }), order(), 'sam')
    expect(d.ok && d.changes.signature.auth_time.toMillis()).toBe(T0 + 2000)
  })

  it('property: a re-authentication is accepted exactly when asked as prompt=login, max_age=0, begun after the post, and at most five minutes old', () => {
    fc.assert(
      fc.property(
        fc.record({
          postedMs: fc.integer({ min: 0, max: 600_000 }),
          prompt: fc.constantFrom<'login' | undefined>('login', undefined),
          maxAge: fc.constantFrom<number | undefined>(0, 1, 300, undefined),
          begunDelta: fc.integer({ min: -60_000, max: 60_000 }),
          authDelta: fc.integer({ min: -400_000, max: 400_000 }),
          recordedDelta: fc.integer({ min: 0, max: 60_000 }),
          nowDelta: fc.integer({ min: 0, max: 400_000 }),
        }),
        ({ postedMs, prompt, maxAge, begunDelta, authDelta, recordedDelta, nowDelta }) => {
          // auth_time is whole seconds, as the ID token says it.
          const authTime = Math.floor((postedMs + authDelta) / 1000) * 1000
          const recorded = Math.max(authTime, postedMs + authDelta) + recordedDelta
          const now = recorded + nowDelta
          const begunAt = postedMs + begunDelta
          const accepted = !judgeReauthentication(
            at(postedMs),
            { prompt, maxAge, begunAt: at(begunAt), authTime: at(authTime), at: at(recorded) },
            at(now),
          )
          const expected =
            prompt === 'login' &&
            maxAge === 0 &&
            begunAt >= postedMs &&
            recorded >= postedMs &&
            authTime >= Math.floor(postedMs / 1000) * 1000 &&
            now - authTime <= 5 * 60_000
          expect(accepted).toBe(expected)
        },
      ),
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Properties over command sequences

const PEOPLE = ['ann', 'rita', 'sam', 'bob'] as const
const VARIANTS = ['v1', 'v2', 'v3'] as const
const person = fc.constantFrom(...PEOPLE)
const patch: fc.Arbitrary<ReportPatch> = fc.record(
  {
    summary: fc.constantFrom('Trio genome.', 'Exome.', null),
    conclusion: fc.constantFrom('Positive.', 'Negative.', 'Inconclusive.'),
    notes: fc.constantFrom('n1', 'n2', null),
    template_type: fc.constantFrom('germline_diagnostic', 'negative'),
  },
  { requiredKeys: [] },
)
const overrides: fc.Arbitrary<VariantOverrides> = fc.record(
  {
    acmg_classification: fc.constantFrom('pathogenic', 'benign', null),
    include_in_report: fc.boolean(),
    interpretation: fc.constantFrom('De novo.', null),
  },
  { requiredKeys: [] },
)

type Command =
  | { kind: 'update'; by: string; patch: ReportPatch }
  | { kind: 'add'; by: string; variantId: string; overrides: VariantOverrides }
  | { kind: 'override'; by: string; variantId: string; overrides: VariantOverrides }
  | { kind: 'remove'; by: string; variantId: string }
  | { kind: 'move'; by: string; to: ReportStatus }
  | { kind: 'sign'; by: string }
  | { kind: 'amend'; by: string }

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('update' as const), by: person, patch }),
  fc.record({ kind: fc.constant('add' as const), by: person, variantId: fc.constantFrom(...VARIANTS), overrides }),
  fc.record({ kind: fc.constant('override' as const), by: person, variantId: fc.constantFrom(...VARIANTS), overrides }),
  fc.record({ kind: fc.constant('remove' as const), by: person, variantId: fc.constantFrom(...VARIANTS) }),
  fc.record({ kind: fc.constant('move' as const), by: person, to: fc.constantFrom<ReportStatus>('in_review', 'in_review', 'draft', 'cancelled') }),
  fc.record({ kind: fc.constant('sign' as const), by: person }),
  fc.record({ kind: fc.constant('amend' as const), by: person }),
)

/** What a report says, as a reader of it would compare two versions: its text and its variants with what it says of each. */
const contentOf = (r: ReportRecord, variants: Map<string, ReportVariantRecord>) =>
  JSON.stringify({
    t: r.template_type,
    s: r.summary ?? null,
    n: r.notes ?? null,
    c: r.conclusion ?? null,
    v: [...variants.values()]
      .map((v) => [v.variant_id, v.acmg_classification ?? null, v.include_in_report, v.interpretation ?? null])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  })

/** A report's life under a sequence of commands, each decided as its store would, in an order that stays `orderStatus`. */
function run(commands: Command[], orderStatus: OrderStatus = 'in_progress') {
  let clock = 0
  const tick = () => at((clock += 1000))
  const o = order(orderStatus)
  let current = report({ status: 'draft', conclusion: undefined })
  let variants = new Map<string, ReportVariantRecord>()
  /** The test's own account of who changed the current revision: its content differs after their command, or they sent it to review. */
  let changers = new Set<string>(['ann'])
  const signatures: Array<{ signer: string; changers: Set<string> }> = []
  for (const cmd of commands) {
    const before = contentOf(current, variants)
    const now = tick()
    let moved = false
    switch (cmd.kind) {
      case 'update': {
        const d = decideUpdate(current, o, { patch: cmd.patch, by: cmd.by, now })
        if (d.ok && d.changes.report) current = d.changes.report
        break
      }
      case 'add': {
        const d = decideAddVariant(current, o, { ...cmd, onReport: variants.has(cmd.variantId), now })
        if (d.ok) {
          current = d.changes.report
          variants = new Map(variants).set(cmd.variantId, d.changes.variant)
        }
        break
      }
      case 'override': {
        const d = decideUpdateVariant(current, o, variants.get(cmd.variantId), { ...cmd, now })
        if (d.ok && d.changes.report) {
          current = d.changes.report
          variants = new Map(variants).set(cmd.variantId, d.changes.variant)
        }
        break
      }
      case 'remove': {
        const d = decideRemoveVariant(current, o, variants.get(cmd.variantId), { ...cmd, now })
        if (d.ok) {
          current = d.changes.report
          variants = new Map(variants)
          variants.delete(cmd.variantId)
        }
        break
      }
      case 'move': {
        const d = decideTransition(current, o, undefined, { to: cmd.to, reason: 'r', can: all, by: cmd.by, now })
        if (d.ok) {
          current = d.changes.report
          moved = cmd.to === 'in_review'
        }
        break
      }
      case 'sign': {
        // Everything about the session and the content in order: only the rules about the signer and the report decide.
        const d = decideSignature({
          pending: { ...pending(cmd.by, clock - 500), report_id: current.id },
          othersPending: false,
          report: current,
          order: o,
          replaced: undefined,
          sha256: 'sha-1',
          signer: signer(cmd.by),
          session: reauthenticated(cmd.by, clock),
          now,
        })
        if (d.ok) {
          current = d.changes.report
          signatures.push({ signer: cmd.by, changers })
        }
        break
      }
      case 'amend': {
        const id = `r${current.revision + 1}`
        const d = decideAmend(current, o, {
          id,
          kind: 'amended',
          reason: 'r',
          author: { id: cmd.by },
          now,
          variants: [...variants.values()],
          comments: [],
          commentIds: [],
        })
        if (d.ok) {
          current = d.changes.report
          variants = new Map(d.changes.variants.map((v) => [v.variant_id, v]))
          changers = new Set([cmd.by])
        }
        break
      }
    }
    if (moved || contentOf(current, variants) !== before) changers.add(cmd.by)
  }
  return { current, changers, signatures }
}

describe('properties over command sequences', () => {
  it('no command sequence lets one person both change and sign a report', () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 40 }), (commands) => {
        const { current, changers, signatures } = run(commands)
        for (const s of signatures) expect(s.changers.has(s.signer)).toBe(false)
        // The report records exactly those who changed it, and refuses each of them as signer.
        expect(new Set(contributorsOf(current).map((c) => c.id))).toEqual(changers)
        if (current.status === 'in_review') {
          for (const who of PEOPLE) {
            const refused = blockersFor(current, order(), { user: { id: who }, can: all }).some((b) => b.kind === 'contributor')
            expect(refused).toBe(changers.has(who))
          }
        }
      }),
      { numRuns: 300 },
    )
  })

  it('signs some report in some sequence: the property above is not vacuous', () => {
    const { signatures } = run([
      { kind: 'update', by: 'ann', patch: { conclusion: 'Positive.' } },
      { kind: 'move', by: 'ann', to: 'in_review' },
      { kind: 'sign', by: 'ann' },
      { kind: 'sign', by: 'rita' },
      { kind: 'amend', by: 'sam' },
      { kind: 'update', by: 'sam', patch: { notes: 'n1' } },
      { kind: 'move', by: 'sam', to: 'in_review' },
      { kind: 'sign', by: 'sam' },
      { kind: 'sign', by: 'ann' },
    ])
    expect(signatures.map((s) => s.signer)).toEqual(['rita', 'ann'])
  })

  it('no report is signed, changed or created while its order is cancelled or entered in error', () => {
    const withdrawn = fc.constantFrom<OrderStatus>('cancelled', 'entered_in_error')
    const state = fc.record({
      status: fc.constantFrom(...REPORT_STATUSES),
      conclusion: fc.constantFrom('Positive.', undefined),
    })
    fc.assert(
      fc.property(withdrawn, state, command, person, (orderStatus, over, cmd, who) => {
        const r = report(over)
        const now = at(10_000)
        const existing = variant('v1')
        const decisions: Array<[string, (o: OrderFacts & { project_id: string }) => Decision<unknown>]> = [
          [
            'create',
            (o) =>
              decideCreate(o, {
                project: { id: 'p1', org_id: 'o1' },
                orderRef: o.accession,
                id: 'r9',
                fields: { template_type: 'negative' },
                author: { id: who },
                now,
              }),
          ],
          ['update', (o) => decideUpdate(r, o, { patch: { conclusion: 'Changed.' }, by: who, now })],
          ['add', (o) => decideAddVariant(r, o, { variantId: 'v2', overrides: {}, onReport: false, by: who, now })],
          ['override', (o) => decideUpdateVariant(r, o, existing, { variantId: 'v1', overrides: { interpretation: 'x' }, by: who, now })],
          ['remove', (o) => decideRemoveVariant(r, o, existing, { variantId: 'v1', by: who, now })],
          [
            'amend',
            (o) =>
              decideAmend(r, o, { id: 'r2', kind: 'amended', reason: 'x', author: { id: who }, now, variants: [], comments: [], commentIds: [] }),
          ],
          ['page', (o) => decideSignoffPage(r, o, signer(who))],
          [
            'post',
            (o) =>
              decideFormPost({
                page: { ...pending(who, 0), stage: 'page' },
                form: { snapshotId: 'snap-1', meaning: 'approved' },
                report: r,
                order: o,
                sha256: 'sha-1',
                signer: signer(who),
                now: at(1000),
              }),
          ],
          ['sign', (o) => sign(r, o, who)],
        ]
        if (cmd.kind === 'move' && cmd.to !== 'cancelled') {
          const to = cmd.to
          decisions.push(['move', (o) => decideTransition(r, o, undefined, { to, can: all, by: who, now })])
        }
        for (const [what, decide] of decisions) {
          const stopped = decide(order(orderStatus))
          expect(stopped.ok, what).toBe(false)
          // Whatever an open order would have allowed is refused for the order's status, with a 409 that names it.
          if (decide(order('in_progress')).ok)
            expect(refusal(stopped), what).toEqual({ status: 409, detail: expect.stringContaining(`is ${orderStatus}`) })
        }
      }),
      { numRuns: 300 },
    )
  })
})
