import { Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditKeyRing } from './audit-keys.js'
import { canonicalJson } from './canonical.js'
import type { Clock } from './clock.js'
import type { Db } from './db.js'
import { newId, sha256 } from './ids.js'
import type { Logger } from './log.js'

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
  /**
   * The key (AuditKeyRing) whose HMAC-SHA256 `hash` is. Absent on legacy events, written before
   * events were keyed, whose `hash` is a plain SHA-256 that anyone can recompute.
   */
  key_id?: string
  /**
   * Set when the writer found the head of the event's chain not verifying (changed outside the
   * platform): the event continues the chain from that head, and says so under its key, so that a
   * head moved back never becomes a sound chain by being written after.
   */
  chain_break?: string
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

/** The text an event's hash is taken of: its canonical JSON without the hash and the derived fields. */
function hashedText(event: Omit<AuditEvent, 'hash'> | AuditEvent): string {
  const body: Record<string, unknown> = { ...event }
  delete body.hash
  for (const field of DERIVED_FIELDS) delete body[field]
  return canonicalJson(body)
}

/** What verified an event's hash: its key, a plain SHA-256 (a legacy event), or nothing (its key is not in the ring). */
export type HashMethod = 'hmac-sha256' | 'sha256' | 'unverifiable'

/** An event ready to store: keyed with the ring's active key, with its derived fields. */
export function keyEvent(keys: AuditKeyRing, body: Omit<AuditEvent, 'hash' | 'key_id' | (typeof DERIVED_FIELDS)[number]>): AuditEvent {
  const keyed = { ...body, key_id: keys.activeId }
  const hash = keys.mac(keys.activeId, hashedText(keyed))!
  return { ...keyed, hash, action_group: actionGroupOf(body.action), scope: scopeKindOf(body) }
}

/** How an event's own hash checks out: by which method, and whether it matches (undefined when it cannot be checked). */
export function checkEventHash(event: AuditEvent, keys: AuditKeyRing): { method: HashMethod; key_id?: string; matches?: boolean } {
  const text = hashedText(event)
  if (event.key_id === undefined) return { method: 'sha256', matches: sha256(text) === event.hash }
  const matches = keys.verify(event.key_id, text, event.hash)
  return { method: matches === undefined ? 'unverifiable' : 'hmac-sha256', key_id: event.key_id, matches }
}

/**
 * Writes audit events, each keyed (its `hash` is an HMAC-SHA256 with the ring's active key, which
 * the database does not hold) and chained to the previous event of its chain, so that a removed or
 * altered event shows (a gap in `seq`, a `prev_hash` that does not match, a hash that is not the
 * key's), and the chain's head signed, so that removing the newest events shows too. A chain is one of
 * AUDIT_SHARDS per scope (project, else organization, else the platform), chosen by the entity: one
 * entity's history is always one ordered chain, and changes to different entities rarely share a
 * chain head. A single head per project would serialize every audited change of the project (and
 * Firestore sustains about one write per second on one document).
 * Inside a caller's transaction the event commits with the change it records; the chain head is
 * read outside the transaction's locks and written under a precondition (see `prepare`).
 */
export const AUDIT_SHARDS = 256

export type AuditScope = Pick<AuditInput, 'project_id' | 'org_id' | 'entity'>

/**
 * The chain an event belongs to: `project_<id>~hmac~<shard>`, `org_<id>~hmac~<shard>` or
 * `platform~hmac~<shard>`. Keyed chains are named apart from the legacy ones (`project_<id>~<shard>`,
 * written before events were keyed, and never extended since): a keyed chain's head must be signed,
 * so stripping a head's signature cannot pass a keyed chain off as a legacy one and let it be
 * rewritten without the key.
 */
export function auditChainKey(scope: AuditScope): string {
  const owner = scope.project_id ? `project_${scope.project_id}` : scope.org_id ? `org_${scope.org_id}` : 'platform'
  const shard = parseInt(sha256(`${scope.entity.type}/${scope.entity.id}`).slice(0, 8), 16) % AUDIT_SHARDS
  return `${owner}${KEYED_CHAIN}${shard}`
}

const KEYED_CHAIN = '~hmac~'
export const isKeyedChain = (chain: string) => chain.includes(KEYED_CHAIN)

/**
 * A chain's head document (`audit_heads/<chain>`): the newest event's `seq` and `hash`, and, for a
 * keyed chain, `mac`, the HMAC of the chain, seq and hash with key `key_id`. A head moved back
 * (the newest events deleted) or forward without the key shows.
 */
export interface AuditHead {
  seq: number
  hash: string
  updated?: Timestamp
  key_id?: string
  mac?: string
}

const headText = (chain: string, seq: number, hash: string) => canonicalJson({ head: chain, seq, hash })

export function signHead(keys: AuditKeyRing, chain: string, seq: number, hash: string, updated: Timestamp): AuditHead {
  return { seq, hash, updated, key_id: keys.activeId, mac: keys.mac(keys.activeId, headText(chain, seq, hash))! }
}

/**
 * What is wrong with a keyed chain's head, if anything: `failed` when it was changed outside the
 * platform, `unverifiable` when it is keyed with a key this process does not hold.
 */
export function headProblem(keys: AuditKeyRing, chain: string, head: Partial<AuditHead>): { failed?: string; unverifiable?: string } {
  if (!Number.isSafeInteger(head.seq) || typeof head.hash !== 'string') return { failed: "the chain's head is malformed" }
  if (typeof head.key_id !== 'string' || typeof head.mac !== 'string') return { failed: "the chain's head is not signed" }
  const verified = keys.verify(head.key_id, headText(chain, head.seq!, head.hash), head.mac)
  if (verified === undefined) return { unverifiable: `the chain's head is keyed with ${head.key_id}, which is not in the key ring` }
  return verified ? {} : { failed: "the chain's head does not match its signature: it was changed outside the platform" }
}

/**
 * What some audited changes also write, in their transaction: the webhook deliveries of the change
 * (domain/webhooks/outbox.ts), so that a change and the news of it commit together or not at all.
 * `prepare` is called with each chain `AuditWriter.prepare` opens, before the transaction writes:
 * it reads what it needs (outside the transaction's locks, as the chain head is read) and returns
 * what to do with each event of that chain, if anything.
 */
export interface AuditFollower {
  prepare(tx: Transaction, scope: AuditScope): Promise<((event: AuditEvent) => void) | undefined>
}

export class AuditWriter {
  constructor(
    private readonly db: Db,
    private readonly service: string,
    private readonly clock: Clock,
    /** Keys every event and chain head; the audit service verifies with the same ring. */
    readonly keys: AuditKeyRing,
    private readonly log: Logger,
    private readonly follower?: AuditFollower,
  ) {}

  /** The same writer, whose events `follower` also follows (a service that emits webhook events: its deps say so). */
  followedBy(follower: AuditFollower): AuditWriter {
    return new AuditWriter(this.db, this.service, this.clock, this.keys, this.log, follower)
  }

  /**
   * Reads the chain head for `tx`, then `write` records events after it. The head is the document
   * concurrent changes share most (every change of the entities of its shard), so it is read
   * outside the transaction's locks and written under a precondition (Db.writeIfUnchanged): two
   * transactions never wait on each other for it, and the one that commits second runs again after
   * the head its rival wrote, so the chain stays one unbroken sequence.
   */
  async prepare(tx: Transaction, scope: AuditScope) {
    const chain = auditChainKey(scope)
    const headRef = this.db.col('audit_heads').doc(chain)
    const [snap, follow] = await Promise.all([headRef.get(), this.follower?.prepare(tx, scope)])
    const head = snap.data() as Partial<AuditHead> | undefined
    let seq = head && Number.isSafeInteger(head.seq) ? head.seq! : 0
    let prev = typeof head?.hash === 'string' ? head.hash : ''
    // Checked on every write (one HMAC, no read): a head that does not verify is recorded as a break in the next event.
    const problem = head && headProblem(this.keys, chain, head)
    let chainBreak = problem && (problem.failed ?? problem.unverifiable)
    if (chainBreak) this.log.error('audit chain head does not verify: the next event records the break', { chain, problem: chainBreak })
    let headWritten = false
    return {
      write: (ctx: AuditContext, input: AuditInput): AuditEvent => {
        if (auditChainKey(input) !== chain) throw new Error(`audit event ${input.action} outside the prepared chain ${chain}`)
        seq += 1
        const event = keyEvent(this.keys, {
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
          chain_break: chainBreak,
        })
        chainBreak = undefined
        prev = event.hash
        tx.create(this.db.col('audit_events').doc(event.id), event)
        follow?.(event)
        const head = signHead(this.keys, chain, seq, event.hash, event.occurred_at)
        // Under the precondition once: a later event of this chain in the same transaction moves the head on from there.
        if (headWritten) tx.set(headRef, head)
        else this.db.writeIfUnchanged(tx, snap, head)
        headWritten = true
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
 * What an event says about itself, without its neighbours: how its hash checks out, whether its
 * derived fields agree with it, whether it is unkeyed in a keyed chain (a keyed event passed off as
 * a legacy one), and whether it records a break. `failed` lists what is wrong; `unverifiable` what
 * could not be checked for want of a key.
 */
export function checkEvent(event: AuditEvent, keys: AuditKeyRing) {
  const { method, key_id, matches } = checkEventHash(event, keys)
  const failed: string[] = []
  const unverifiable: string[] = []
  if (matches === false) failed.push('its content does not match its hash: it was altered')
  else if (matches === undefined) unverifiable.push(`its key ${key_id} is not in the key ring: its hash cannot be checked`)
  if (!derivedFieldsMatch(event)) failed.push('its query fields do not match its content')
  if (isKeyedChain(event.chain) && event.key_id === undefined) failed.push('it is not keyed, but its chain is: it was rewritten without the key')
  if (event.chain_break !== undefined) {
    failed.push(`it records a break in its chain: when it was written, ${event.chain_break}; events before it may have been removed or altered`)
  }
  return { method, key_id, failed, unverifiable }
}

/**
 * Checks the events of one chain (any order), and its head when given: `seq` runs 1, 2, 3…
 * without a gap, each `prev_hash` is the hash of the event before, each event checks out
 * (checkEvent), and the head names the newest event under a valid signature. Returns the problems
 * found, none for an intact chain; an event or head keyed with a key not in `keys` is one.
 */
export function verifyAuditChain(events: AuditEvent[], keys: AuditKeyRing, head?: Partial<AuditHead>): string[] {
  const problems: string[] = []
  const sorted = [...events].sort((a, b) => a.seq - b.seq)
  let prev = ''
  sorted.forEach((event, i) => {
    if (event.seq !== i + 1) problems.push(`seq ${i + 1} is missing (found ${event.seq})`)
    if (event.prev_hash !== prev) problems.push(`event ${event.id} (seq ${event.seq}) does not follow the event before it`)
    const { failed, unverifiable } = checkEvent(event, keys)
    for (const p of [...failed, ...unverifiable]) problems.push(`event ${event.id} (seq ${event.seq}): ${p}`)
    prev = event.hash
  })
  const newest = sorted.at(-1)
  if (head && newest) {
    if (head.seq !== newest.seq || head.hash !== newest.hash)
      problems.push(`the chain's head names seq ${head.seq}, not the newest event (seq ${newest.seq})`)
    if (isKeyedChain(newest.chain)) {
      const { failed, unverifiable } = headProblem(keys, newest.chain, head)
      const problem = failed ?? unverifiable
      if (problem) problems.push(problem)
    }
  }
  return problems
}
