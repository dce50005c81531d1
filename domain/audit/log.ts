import { Timestamp, type DocumentSnapshot, type Query } from '@google-cloud/firestore'
import { checkEvent, headProblem, isKeyedChain, type AuditEvent, type AuditHead, type HashMethod, type Outcome } from '../../lib/audit.js'
import type { AuditKeyRing } from '../../lib/audit-keys.js'
import type { Db } from '../../lib/db.js'
import { badRequest } from '../../lib/errors.js'
import { UUID_RE } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'

/**
 * Reading the audit log (DOMAIN.md, Audit events): one scope (a project, an organization with all
 * its projects, or the platform's own events), filters, newest first, a page at a time, and the
 * check of one event's link in its hash chain.
 *
 * Every filter is an equality on a field of the event (or on one derived from it when written:
 * `action_group` for `run.*`, `scope` for the platform), ordered by `occurred_at`, with the time
 * range on that same field. A query is served from an index of its own: one per scope and
 * combination of filters would be 162, which with the other collections' passes the 200 composite
 * indexes a database may have, and Firestore documents merging the indexes of single filters for
 * equalities and an order, not with a range. So a query holds the scope, the time range and the one filter that
 * narrows the log most (firestore.indexes.json has an index for each scope and filter field), and
 * the other filters are checked on the events read, a bounded number per page (lib/pagination.ts
 * SCAN_BUDGET): a page may be short, even empty, and still carry a token.
 */
export type AuditReadScope = { kind: 'project'; project_id: string } | { kind: 'organization'; org_id: string } | { kind: 'platform' }

export interface AuditFilters {
  /** `type:id` (run:3f0e…) or a type alone (run). */
  entity?: string
  /** An exact action (run.submitted), or a group ending in `.*` (run.*). */
  action?: string
  /** A user id, or an e-mail (contains '@'). */
  actor?: string
  outcome?: Outcome
  /** Inclusive. */
  from?: Date
  /** Exclusive. */
  to?: Date
}

export interface QueryPlan {
  /** The scope's field, then at most one filter: what the query says, served by an index of its own. */
  equal: Array<[field: string, value: string]>
  range: Array<[field: string, op: '>=' | '<', value: Date]>
  orderBy: Array<[field: string, direction: 'desc']>
  /** The other filters, checked on each event read. */
  post: Array<[field: string, value: string]>
}

/**
 * The filter fields, the one that narrows the log most first: an entity's id names a handful of
 * events, an actor or an action more, an entity type, an action group or an outcome many. The
 * first a request has goes into the query.
 */
export const NARROWEST_FIRST = ['entity.id', 'actor.id', 'actor.email', 'action', 'entity.type', 'action_group', 'outcome'] as const

const ENTITY_TYPE = /^[a-z][a-z0-9_]{0,63}$/
const ACTION = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/
const ACTION_GROUP = /^([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*)\.\*$/

/** The query a scope and filters make; a malformed filter is a 400 naming it. Pure: the index test reads it too. */
export function auditQueryPlan(scope: AuditReadScope, f: AuditFilters): QueryPlan {
  const filters: QueryPlan['post'] = []
  if (f.entity !== undefined) {
    const colon = f.entity.indexOf(':')
    const type = colon < 0 ? f.entity : f.entity.slice(0, colon)
    if (!ENTITY_TYPE.test(type)) throw badRequest(`entity: '${f.entity}' is not <type> or <type>:<id> (e.g. run or run:3f0e…)`)
    filters.push(['entity.type', type])
    if (colon >= 0) {
      const id = f.entity.slice(colon + 1)
      if (!id) throw badRequest("entity: the id after ':' is empty")
      filters.push(['entity.id', id])
    }
  }
  if (f.action !== undefined) {
    const group = ACTION_GROUP.exec(f.action)
    if (group) filters.push(['action_group', group[1]!])
    else if (ACTION.test(f.action)) filters.push(['action', f.action])
    else throw badRequest(`action: '${f.action}' is not an action (run.submitted) or a group of them (run.*)`)
  }
  if (f.actor !== undefined) {
    if (!f.actor) throw badRequest('actor: empty')
    filters.push(f.actor.includes('@') ? ['actor.email', f.actor.toLowerCase()] : ['actor.id', f.actor])
  }
  if (f.outcome !== undefined) filters.push(['outcome', f.outcome])
  if (f.from && f.to && f.from >= f.to) throw badRequest('from: must be before to')
  const range: QueryPlan['range'] = []
  if (f.from) range.push(['occurred_at', '>=', f.from])
  if (f.to) range.push(['occurred_at', '<', f.to])
  const rank = (field: string) => (NARROWEST_FIRST as readonly string[]).indexOf(field)
  const [first, ...post] = filters.sort(([a], [b]) => rank(a) - rank(b))
  const scoped: [string, string] =
    scope.kind === 'project' ? ['project_id', scope.project_id] : scope.kind === 'organization' ? ['org_id', scope.org_id] : ['scope', 'platform']
  return { equal: first ? [scoped, first] : [scoped], range, orderBy: [['occurred_at', 'desc']], post }
}

/**
 * The check of one event's link in its chain: `verified` when every check passed, `failed` when one
 * did not (`problems` says which), `unverifiable` when none failed but a key needed is not in the
 * ring. `method` says what its own hash was checked with: `hmac-sha256` (its key, `key_id`), or
 * `sha256` for a legacy event, written before events were keyed, which shows accidents but not a
 * rewrite by someone with write access to the database.
 */
export interface ChainCheck {
  result: 'verified' | 'failed' | 'unverifiable'
  method: HashMethod
  key_id?: string
  problems: string[]
}

export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly keys: AuditKeyRing,
  ) {}

  private get events() {
    return this.db.col('audit_events')
  }

  async list(scope: AuditReadScope, filters: AuditFilters, page: PageQuery): Promise<Page<AuditEvent>> {
    const plan = auditQueryPlan(scope, filters)
    let q: Query = this.events
    for (const [field, value] of plan.equal) q = q.where(field, '==', value)
    for (const [field, op, value] of plan.range) q = q.where(field, op, Timestamp.fromDate(value))
    const keyed = Object.fromEntries([...plan.equal, ...plan.post, ...plan.range.map(([f, op, v]) => [`${f}${op}`, v.toISOString()])])
    const post = plan.post.length ? (d: DocumentSnapshot) => plan.post.every(([field, value]) => d.get(field) === value) : undefined
    return paginate(q, { orderBy: plan.orderBy, filters: keyed, query: page, post }, (d: DocumentSnapshot) => d.data() as AuditEvent)
  }

  async get(id: string): Promise<AuditEvent | undefined> {
    if (!UUID_RE.test(id)) return undefined
    const snap = await this.events.doc(id).get()
    return snap.exists ? (snap.data() as AuditEvent) : undefined
  }

  private async atSeq(chain: string, seq: number): Promise<AuditEvent[]> {
    const q = await this.events.where('chain', '==', chain).where('seq', '==', seq).get()
    return q.docs.map((d) => d.data() as AuditEvent)
  }

  /**
   * Whether an event's place in its chain holds: its own hash and fields check out (checkEvent);
   * its prev_hash is the hash of the event before it (seq − 1, or '' for the first); the event after
   * it names its hash (or, for the newest, the chain's head does); no other event claims its seq;
   * and, in a keyed chain, the head is there, signed, and not behind it.
   */
  async checkLink(event: AuditEvent): Promise<ChainCheck> {
    const { method, key_id, failed, unverifiable } = checkEvent(event, this.keys)
    const problems = failed
    const { hash } = event
    const [before, same, after, headSnap] = await Promise.all([
      event.seq > 1 ? this.atSeq(event.chain, event.seq - 1) : Promise.resolve([]),
      this.atSeq(event.chain, event.seq),
      this.atSeq(event.chain, event.seq + 1),
      this.db.col('audit_heads').doc(event.chain).get(),
    ])
    const head = headSnap.data() as Partial<AuditHead> | undefined
    if (event.seq === 1) {
      if (event.prev_hash !== '') problems.push('it is the first of its chain but names a previous hash')
    } else if (before.length !== 1) {
      problems.push(
        before.length ? `${before.length} events claim seq ${event.seq - 1} before it` : `the event before it (seq ${event.seq - 1}) is missing`,
      )
    } else if (before[0]!.hash !== event.prev_hash) {
      problems.push('its prev_hash is not the hash of the event before it')
    }
    if (same.length !== 1) problems.push(`${same.length} events claim its seq ${event.seq}`)
    if (after.length > 1) problems.push(`${after.length} events claim seq ${event.seq + 1} after it`)
    else if (after.length === 1 && after[0]!.prev_hash !== hash) problems.push('the event after it does not name its hash')
    else if (after.length === 0) {
      const headSeq = head?.seq
      if (headSeq !== undefined && headSeq > event.seq) problems.push(`the event after it (seq ${event.seq + 1}) is missing`)
      else if (headSeq === event.seq && head?.hash !== hash) problems.push("the chain's head does not name its hash")
    }
    if (isKeyedChain(event.chain)) {
      if (!head) problems.push('its chain has no head: it was deleted')
      else {
        const headCheck = headProblem(this.keys, event.chain, head)
        if (headCheck.failed) problems.push(headCheck.failed)
        if (headCheck.unverifiable) unverifiable.push(headCheck.unverifiable)
        if (typeof head.seq === 'number' && head.seq < event.seq)
          problems.push(`the chain's head (seq ${head.seq}) is behind it: the head was moved back`)
      }
    }
    const result = problems.length ? 'failed' : unverifiable.length ? 'unverifiable' : 'verified'
    return { result, method, key_id, problems: [...problems, ...unverifiable] }
  }
}
