import { Timestamp, type Transaction } from '@google-cloud/firestore'
import { canonicalJson } from './canonical.js'
import type { Clock } from './clock.js'
import type { Db } from './db.js'
import { newId, sha256 } from './ids.js'

export type Outcome = 'success' | 'denied' | 'failure'

export interface AuditActor {
  type: 'user' | 'service_user' | 'system'
  id: string
  email?: string
  auth_method?: string
}

export interface AuditRequest {
  id?: string
  ip?: string
  user_agent?: string
  method?: string
  path?: string
}

/** What a handler says about a change; the writer adds who, when, where and the chain. */
export interface AuditInput {
  action: string
  outcome?: Outcome
  org_id?: string
  project_id?: string
  entity: { type: string; id: string; parent?: string }
  /** Never a secret or a token value. `query`: the filters of a read of the audit log. */
  change?: { from?: string; to?: string; reason?: string; fields?: string[]; query?: Record<string, string> }
}

export interface AuditContext {
  actor: AuditActor
  request?: AuditRequest
}

export interface AuditEvent extends Required<Pick<AuditInput, 'action' | 'entity'>> {
  id: string
  occurred_at: Timestamp
  service: string
  outcome: Outcome
  org_id?: string
  project_id?: string
  actor: AuditActor
  request?: AuditRequest
  change?: AuditInput['change']
  /** The chain (see auditChainKey) in which `seq` and `prev_hash` apply. */
  chain: string
  seq: number
  prev_hash: string
  hash: string
  /** Derived for querying (see DERIVED_FIELDS); absent on events written before they existed. */
  action_group?: string
  scope?: AuditScopeKind
}

export type AuditScopeKind = 'project' | 'organization' | 'platform'

/**
 * Fields computed from the event's own content so that the audit service's queries are index
 * lookups: `action_group` (the action without its last segment, `run` of `run.submitted`: the
 * `run.*` filter is an equality) and `scope` (`platform` events have neither organization nor
 * project, which Firestore cannot filter on). They stay outside the hashed body, so the hashes of
 * events written before them still verify, and adding another later changes no hash.
 */
export const DERIVED_FIELDS = ['action_group', 'scope'] as const

export const actionGroupOf = (action: string) => (action.includes('.') ? action.slice(0, action.lastIndexOf('.')) : action)
export const scopeKindOf = (e: Pick<AuditInput, 'project_id' | 'org_id'>): AuditScopeKind =>
  e.project_id ? 'project' : e.org_id ? 'organization' : 'platform'

export const SYSTEM_ACTOR: AuditContext = { actor: { type: 'system', id: 'platform' } }

export function eventHash(event: Omit<AuditEvent, 'hash'>): string {
  const body: Record<string, unknown> = { ...event }
  for (const field of DERIVED_FIELDS) delete body[field]
  return sha256(canonicalJson(body))
}

/**
 * Writes audit events, each chained by hash to the previous event of its chain, so that a removed
 * or altered event shows (a gap in `seq`, or a `prev_hash` that does not match). A chain is one of
 * AUDIT_SHARDS per scope (project, else organization, else the platform), chosen by the entity: one
 * entity's history is always one ordered chain, and changes to different entities rarely share a
 * chain head. A single head per project would serialize every audited change of the project (and
 * Firestore sustains about one write per second on one document).
 * Inside a caller's transaction the event commits with the change it records; the chain head is
 * read first, as Firestore requires every read of a transaction to come before its writes.
 */
export const AUDIT_SHARDS = 256

export type AuditScope = Pick<AuditInput, 'project_id' | 'org_id' | 'entity'>

/** The chain an event belongs to: `project_<id>~<shard>`, `org_<id>~<shard>` or `platform~<shard>`. */
export function auditChainKey(scope: AuditScope): string {
  const owner = scope.project_id ? `project_${scope.project_id}` : scope.org_id ? `org_${scope.org_id}` : 'platform'
  const shard = parseInt(sha256(`${scope.entity.type}/${scope.entity.id}`).slice(0, 8), 16) % AUDIT_SHARDS
  return `${owner}~${shard}`
}

export class AuditWriter {
  constructor(
    private readonly db: Db,
    private readonly service: string,
    private readonly clock: Clock,
  ) {}

  /** Reads the chain head in `tx`; call before any write of the transaction, then `write` after. */
  async prepare(tx: Transaction, scope: AuditScope) {
    const chain = auditChainKey(scope)
    const headRef = this.db.col('audit_heads').doc(chain)
    const head = await tx.get(headRef)
    let seq = (head.get('seq') as number | undefined) ?? 0
    let prev = (head.get('hash') as string | undefined) ?? ''
    return {
      write: (ctx: AuditContext, input: AuditInput): AuditEvent => {
        if (auditChainKey(input) !== chain) throw new Error(`audit event ${input.action} outside the prepared chain ${chain}`)
        seq += 1
        const body: Omit<AuditEvent, 'hash'> = {
          id: newId(),
          occurred_at: Timestamp.fromDate(this.clock.now()),
          service: this.service,
          outcome: input.outcome ?? 'success',
          org_id: input.org_id,
          project_id: input.project_id,
          action: input.action,
          entity: input.entity,
          // A change with nothing in it is left out: Firestore would drop the empty map, and the stored event would no longer match its hash.
          change: input.change && Object.values(input.change).some((v) => v !== undefined) ? input.change : undefined,
          actor: ctx.actor,
          request: ctx.request,
          chain,
          seq,
          prev_hash: prev,
        }
        const event: AuditEvent = { ...body, hash: eventHash(body), action_group: actionGroupOf(input.action), scope: scopeKindOf(input) }
        prev = event.hash
        tx.create(this.db.col('audit_events').doc(event.id), event)
        tx.set(headRef, { seq, hash: event.hash, updated: event.occurred_at })
        return event
      },
    }
  }

  /**
   * Prepares the chains of several entities changed in one transaction (a cascade, an order and
   * its samples): each chain head is read once, even when two entities share a shard, and the
   * returned `write` sends each event to its entity's chain.
   */
  async prepareMany(tx: Transaction, scopes: AuditScope[]) {
    const chains = new Map<string, Awaited<ReturnType<AuditWriter['prepare']>>>()
    for (const scope of scopes) {
      const key = auditChainKey(scope)
      if (!chains.has(key)) chains.set(key, await this.prepare(tx, scope))
    }
    return {
      write: (ctx: AuditContext, input: AuditInput): AuditEvent => {
        const chain = chains.get(auditChainKey(input))
        if (!chain) throw new Error(`audit event ${input.action} for ${input.entity.type} ${input.entity.id} outside the prepared chains`)
        return chain.write(ctx, input)
      },
    }
  }

  /** Records one event in a transaction of its own (denials, logins: nothing else changes). */
  async record(ctx: AuditContext, input: AuditInput): Promise<AuditEvent> {
    return this.db.transaction(async (tx) => (await this.prepare(tx, input)).write(ctx, input))
  }
}

/** The derived fields, where present, agree with the hashed content (they are absent on older events). */
export function derivedFieldsMatch(e: AuditEvent): boolean {
  return (e.action_group === undefined || e.action_group === actionGroupOf(e.action)) && (e.scope === undefined || e.scope === scopeKindOf(e))
}

/**
 * Checks the events of one chain (any order): `seq` runs 1, 2, 3… without a gap, each
 * `prev_hash` is the hash of the event before, and each hash matches the event's content.
 * Returns the problems found, none for an intact chain.
 */
export function verifyAuditChain(events: AuditEvent[]): string[] {
  const problems: string[] = []
  const sorted = [...events].sort((a, b) => a.seq - b.seq)
  let prev = ''
  sorted.forEach((event, i) => {
    const { hash, ...body } = event
    if (event.seq !== i + 1) problems.push(`seq ${i + 1} is missing (found ${event.seq})`)
    if (event.prev_hash !== prev) problems.push(`event ${event.id} (seq ${event.seq}) does not follow the event before it`)
    if (eventHash(body) !== hash) problems.push(`event ${event.id} (seq ${event.seq}) was altered`)
    else if (!derivedFieldsMatch(event)) problems.push(`event ${event.id} (seq ${event.seq}) has query fields that do not match its content`)
    prev = hash
  })
  return problems
}
