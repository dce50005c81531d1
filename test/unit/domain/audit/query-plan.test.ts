import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { auditQueryPlan, NARROWEST_FIRST, type AuditFilters, type QueryPlan } from '../../../../domain/audit/log.js'
import { actionGroupOf } from '../../../../lib/audit.js'

/** The fields of an event the filters read, as stored (with the derived action_group). */
interface StoredEvent {
  'entity.type': string
  'entity.id': string
  action: string
  action_group: string
  'actor.id': string
  'actor.email': string
  outcome: 'success' | 'denied' | 'failure'
  occurred_at: Date
}

const ACTIONS = ['run.submitted', 'run.cancelled', 'order.transitioned', 'report.variant.added', 'access.denied']
const event: fc.Arbitrary<StoredEvent> = fc
  .record({
    type: fc.constantFrom('run', 'order', 'report'),
    id: fc.constantFrom('r1', 'r2', 'o1'),
    action: fc.constantFrom(...ACTIONS),
    actor: fc.constantFrom('u1', 'u2'),
    outcome: fc.constantFrom('success' as const, 'denied' as const, 'failure' as const),
    minute: fc.integer({ min: 0, max: 10 }),
  })
  .map((e) => ({
    'entity.type': e.type,
    'entity.id': e.id,
    action: e.action,
    action_group: actionGroupOf(e.action),
    'actor.id': e.actor,
    'actor.email': `${e.actor}@lab.example`,
    outcome: e.outcome,
    occurred_at: new Date(Date.UTC(2020, 0, 1, 0, e.minute)),
  }))

const at = (minute: number) => new Date(Date.UTC(2020, 0, 1, 0, minute))
const filters: fc.Arbitrary<AuditFilters> = fc
  .record(
    {
      entity: fc.constantFrom('run', 'order', 'run:r1', 'order:o1', 'report:r2'),
      action: fc.constantFrom(...ACTIONS, 'run.*', 'report.variant.*', 'report.*'),
      actor: fc.constantFrom('u1', 'u2', 'U1@LAB.EXAMPLE', 'u2@lab.example'),
      outcome: fc.constantFrom('success' as const, 'denied' as const, 'failure' as const),
      from: fc.integer({ min: 0, max: 4 }).map(at),
      to: fc.integer({ min: 5, max: 11 }).map(at),
    },
    { requiredKeys: [] },
  )
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as AuditFilters)

/** What the filters mean (the API's description), read directly. */
function means(f: AuditFilters, e: StoredEvent): boolean {
  if (f.entity !== undefined) {
    const [type, id] = f.entity.split(':')
    if (e['entity.type'] !== type || (id !== undefined && e['entity.id'] !== id)) return false
  }
  if (f.action !== undefined && (f.action.endsWith('.*') ? e.action_group !== f.action.slice(0, -2) : e.action !== f.action)) return false
  if (f.actor !== undefined && (f.actor.includes('@') ? e['actor.email'] !== f.actor.toLowerCase() : e['actor.id'] !== f.actor)) return false
  if (f.outcome !== undefined && e.outcome !== f.outcome) return false
  return (!f.from || e.occurred_at >= f.from) && (!f.to || e.occurred_at < f.to)
}

/** What the plan selects: the query (past the scope), its range, and the conditions checked on each event read. */
function selects(plan: QueryPlan, e: StoredEvent): boolean {
  const get = (field: string) => e[field as keyof StoredEvent]
  return (
    plan.equal.slice(1).every(([field, value]) => get(field) === value) &&
    plan.range.every(([, op, value]) => (op === '>=' ? e.occurred_at >= value : e.occurred_at < value)) &&
    plan.post.every(([field, value]) => get(field) === value)
  )
}

describe('auditQueryPlan', () => {
  it('selects exactly the events the filters mean, the query and the checks in memory together', () => {
    fc.assert(
      fc.property(filters, fc.array(event, { maxLength: 40 }), (f, events) => {
        const plan = auditQueryPlan({ kind: 'project', project_id: 'p' }, f)
        expect(events.filter((e) => selects(plan, e))).toEqual(events.filter((e) => means(f, e)))
      }),
      { numRuns: 500 },
    )
  })

  it('queries the scope and at most one filter, the narrowest sent, and checks the others on the events', () => {
    fc.assert(
      fc.property(filters, (f) => {
        const plan = auditQueryPlan({ kind: 'organization', org_id: 'o' }, f)
        expect(plan.equal[0]).toEqual(['org_id', 'o'])
        expect(plan.equal.length).toBeLessThanOrEqual(2)
        const rank = (field: string) => (NARROWEST_FIRST as readonly string[]).indexOf(field)
        for (const [field] of plan.post) expect(rank(field)).toBeGreaterThan(rank(plan.equal[1]![0]))
      }),
    )
  })

  it.each<[string, AuditFilters, string | undefined, string[]]>([
    ['an entity by id', { entity: 'run:r1', action: 'run.submitted' }, 'entity.id', ['action', 'entity.type']],
    ['an actor over an action', { action: 'report.signed', actor: 'a@lab.example', outcome: 'success' }, 'actor.email', ['action', 'outcome']],
    ['an action over a type', { entity: 'report', action: 'report.signed' }, 'action', ['entity.type']],
    ['an outcome alone', { outcome: 'denied' }, 'outcome', []],
    ['a time range alone', { from: at(1), to: at(2) }, undefined, []],
  ])('for %s, queries %s and checks %j on the events', (_, f, queried, checked) => {
    const plan = auditQueryPlan({ kind: 'platform' }, f)
    expect(plan.equal[0]).toEqual(['scope', 'platform'])
    expect(plan.equal[1]?.[0]).toBe(queried)
    expect(plan.post.map(([field]) => field)).toEqual(checked)
  })
})
