import { Timestamp, type DocumentSnapshot, type Transaction } from '@google-cloud/firestore'
import { SYSTEM_ACTOR, type AuditContext, type AuditWriter } from '../../lib/audit.js'
import { isPermission, type Permission } from '../../lib/auth/roles.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { allow, conflictWith, deny, invalid, missingPermission, type Decision } from '../../lib/decision.js'
import { badRequest, conflict, notFound } from '../../lib/errors.js'
import { sha256 } from '../../lib/ids.js'
import type { LabflowHistoryEntry, OrderLabflowState } from './model.js'

/**
 * Labflows (DOMAIN.md): versioned definitions of the wet-lab and analysis stages an order goes
 * through, with named transitions between stages, each allowed to a permission and some needing a
 * reason (Clarity LIMS steps, SENAITE workflows, FHIR Task). A version is immutable: a change is a
 * new version, and an order keeps the version it was signed with.
 */
export const TRANSITION_KINDS = ['advance', 'repeat', 'rework', 'remove', 'complete'] as const
export type TransitionKind = (typeof TRANSITION_KINDS)[number]

export interface LabflowStage {
  key: string
  name: string
  order: number
  /** Project roles that work at this stage (who an item here is usually assigned to). */
  assignee_roles: string[]
}

export interface LabflowTransition {
  id: string
  kind: TransitionKind
  from: string
  /** The stage the item moves to; null for `remove` (the item leaves the flow). */
  to: string | null
  permission: Permission
  requires_reason: boolean
}

export interface LabflowContent {
  name: string
  description?: string
  stages: LabflowStage[]
  transitions: LabflowTransition[]
}

/** One immutable version (labflow_versions/{id}~v{version}). */
export interface LabflowVersion extends LabflowContent {
  id: string
  key: string
  version: number
  /** 'platform' or the id of the project that owns it. */
  scope: string
  created: Timestamp
  created_by: string
}

/** The head of a labflow (labflows/{id}): its newest version. */
export interface LabflowHead {
  id: string
  key: string
  scope: string
  name: string
  latest_version: number
  created: Timestamp
  updated: Timestamp
}

export const PLATFORM_SCOPE = 'platform'

/** A labflow's id: stable for its scope and key, so a key is unique per scope by construction. */
export function labflowId(scope: string, key: string): string {
  const h = sha256(`labflow\n${scope}\n${key}`)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const WET_LAB = ['extraction', 'library_prep', 'sequencing'] as const
const stage = (key: string, name: string, order: number, roles: string[]): LabflowStage => ({ key, name, order, assignee_roles: roles })
const move = (kind: TransitionKind, from: string, to: string | null, permission: Permission, requires_reason: boolean): LabflowTransition => ({
  id: kind === 'advance' || kind === 'complete' ? `${kind}-${from}` : kind === 'rework' ? `rework-${from}-to-${to}` : `${kind}-${from}`,
  kind,
  from,
  to,
  permission,
  requires_reason,
})

/** The default germline flow of the platform (version 1), served from code, so it works before any seeding. */
export const GERMLINE_KEY = 'germline'
export const GERMLINE_ID = labflowId(PLATFORM_SCOPE, GERMLINE_KEY)
export const GERMLINE: LabflowContent = {
  name: 'Germline sequencing',
  description: 'Accessioning, DNA extraction, library preparation, sequencing and primary QC to delivery of the data.',
  stages: [
    stage('accessioning', 'Accessioning', 1, ['lab']),
    stage('extraction', 'DNA extraction', 2, ['lab']),
    stage('library_prep', 'Library preparation', 3, ['lab']),
    stage('sequencing', 'Sequencing', 4, ['lab']),
    stage('primary_qc', 'Primary QC', 5, ['analyst']),
    stage('delivered', 'Delivered', 6, ['analyst']),
  ],
  transitions: [
    move('advance', 'accessioning', 'extraction', 'labflow.move', false),
    move('advance', 'extraction', 'library_prep', 'labflow.move', false),
    move('advance', 'library_prep', 'sequencing', 'labflow.move', false),
    move('advance', 'sequencing', 'primary_qc', 'labflow.move', false),
    move('complete', 'primary_qc', 'delivered', 'labflow.move', false),
    ...WET_LAB.map((s) => move('repeat', s, s, 'labflow.move', true)),
    move('rework', 'library_prep', 'extraction', 'labflow.move', true),
    move('rework', 'sequencing', 'extraction', 'labflow.move', true),
    move('rework', 'sequencing', 'library_prep', 'labflow.move', true),
    move('rework', 'primary_qc', 'extraction', 'labflow.move', true),
    move('rework', 'primary_qc', 'library_prep', 'labflow.move', true),
    ...['accessioning', ...WET_LAB, 'primary_qc'].map((s) => move('remove', s, null, 'order.cancel', true)),
  ],
}

const EPOCH = Timestamp.fromMillis(Date.UTC(2026, 0, 1))
export const GERMLINE_V1: LabflowVersion = {
  ...GERMLINE,
  id: GERMLINE_ID,
  key: GERMLINE_KEY,
  version: 1,
  scope: PLATFORM_SCOPE,
  created: EPOCH,
  created_by: 'platform',
}
const GERMLINE_HEAD: LabflowHead = {
  id: GERMLINE_ID,
  key: GERMLINE_KEY,
  scope: PLATFORM_SCOPE,
  name: GERMLINE.name,
  latest_version: 1,
  created: EPOCH,
  updated: EPOCH,
}

/** Problems with a definition, as messages naming the field; none for a usable one. */
export function labflowProblems(def: LabflowContent): string[] {
  const problems: string[] = []
  const keys = def.stages.map((s) => s.key)
  if (!def.stages.length) problems.push('stages: at least one stage')
  keys.forEach((k, i) => keys.indexOf(k) !== i && problems.push(`stages.${i}.key: '${k}' appears twice`))
  const orders = def.stages.map((s) => s.order)
  orders.forEach((o, i) => orders.indexOf(o) !== i && problems.push(`stages.${i}.order: ${o} appears twice`))
  const ids = def.transitions.map((t) => t.id)
  def.transitions.forEach((t, i) => {
    const at = `transitions.${i}`
    if (ids.indexOf(t.id) !== i) problems.push(`${at}.id: '${t.id}' appears twice`)
    if (!keys.includes(t.from)) problems.push(`${at}.from: no stage '${t.from}'`)
    if (t.kind === 'remove') {
      if (t.to !== null) problems.push(`${at}.to: a remove transition has no target (null)`)
    } else if (t.to === null || !keys.includes(t.to)) problems.push(`${at}.to: no stage '${String(t.to)}'`)
    if (t.kind === 'repeat' && t.to !== t.from) problems.push(`${at}.to: a repeat stays at its stage`)
    if (!isPermission(t.permission)) problems.push(`${at}.permission: unknown permission '${t.permission}'`)
  })
  return problems
}

export const firstStage = (def: Pick<LabflowContent, 'stages'>) => [...def.stages].sort((a, b) => a.order - b.order)[0]!

/** A new order's labflow state at the first stage of the version it was signed with. */
export function startState(def: LabflowVersion, at: Timestamp, by: string): OrderLabflowState {
  const first = firstStage(def).key
  return {
    labflow_id: def.id,
    version: def.version,
    status: 'active',
    stage: first,
    started_at: at,
    history: [{ transition: 'start', from: first, to: first, by, at }],
  }
}

/** The transitions from the item's stage this caller may take now. */
export function availableLabflowTransitions(def: LabflowContent, state: OrderLabflowState, can: (p: Permission) => boolean): LabflowTransition[] {
  if (state.status !== 'active') return []
  return def.transitions.filter((t) => t.from === state.stage && can(t.permission))
}

/**
 * Takes a transition: the next state, or a refusal. The permission is the caller's (`can`); a
 * transition from another stage or unknown is a 409 naming what may be taken now.
 */
export function takeTransition(
  def: LabflowContent,
  state: OrderLabflowState,
  input: { transition: string; reason?: string; assignee?: string | null },
  can: (p: Permission) => boolean,
  by: string,
  at: Timestamp,
): Decision<{ state: OrderLabflowState; entry: LabflowHistoryEntry; taken: LabflowTransition }> {
  const t = def.transitions.find((x) => x.id === input.transition)
  const allowed = availableLabflowTransitions(def, state, can).map((x) => x.id)
  if (!t || t.from !== state.stage || state.status !== 'active') {
    const where = state.status === 'active' ? `at stage ${state.stage}` : `(${state.status})`
    return deny(conflictWith(`transition '${input.transition}' cannot be taken ${where}; allowed: ${allowed.join(', ') || 'none'}`))
  }
  if (!can(t.permission)) return deny(missingPermission(t.permission))
  const reason = input.reason?.trim() || undefined
  if (t.requires_reason && !reason) return deny(invalid(`reason: transition '${t.id}' requires a reason`))
  const entry: LabflowHistoryEntry = { transition: t.id, from: state.stage, to: t.to, by, at, ...(reason ? { reason } : {}) }
  const assignee = input.assignee === undefined ? state.assignee : (input.assignee ?? undefined)
  const next: OrderLabflowState = {
    ...state,
    stage: t.to ?? state.stage,
    status: t.kind === 'remove' ? 'removed' : t.kind === 'complete' ? 'completed' : 'active',
    history: [...state.history, entry],
  }
  if (assignee) next.assignee = assignee
  else delete next.assignee
  return allow({ state: next, entry, taken: t })
}

/** Labflow definitions: the platform's (the default germline flow, from code) and each project's own. */
export class LabflowStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

  private heads() {
    return this.db.col('labflows')
  }
  private versionRef(id: string, version: number) {
    return this.db.col('labflow_versions').doc(`${id}~v${version}`)
  }
  private static visible(scope: string, projectId: string) {
    return scope === PLATFORM_SCOPE || scope === projectId
  }

  /** The heads the project sees: the platform's and its own, by key. */
  async list(projectId: string): Promise<LabflowHead[]> {
    const q = await this.heads().where('scope', 'in', [PLATFORM_SCOPE, projectId]).get()
    const found = q.docs.map((d) => d.data() as LabflowHead)
    if (!found.some((h) => h.id === GERMLINE_ID)) found.push(GERMLINE_HEAD)
    return found.sort((a, b) => (a.scope === b.scope ? a.key.localeCompare(b.key) : a.scope === PLATFORM_SCOPE ? -1 : 1))
  }

  async head(projectId: string, id: string): Promise<LabflowHead | undefined> {
    const snap = await this.heads().doc(id).get()
    const head = snap.exists ? (snap.data() as LabflowHead) : id === GERMLINE_ID ? GERMLINE_HEAD : undefined
    return head && LabflowStore.visible(head.scope, projectId) ? head : undefined
  }

  /** A version the project sees (the latest when none is given). */
  async get(projectId: string, id: string, version?: number): Promise<LabflowVersion | undefined> {
    const head = await this.head(projectId, id)
    if (!head) return undefined
    return this.version(id, version ?? head.latest_version)
  }

  /** Any stored version by id (an order's pinned version stays readable whatever happens to the head). */
  async version(id: string, version: number, tx?: Transaction): Promise<LabflowVersion | undefined> {
    const ref = this.versionRef(id, version)
    const snap: DocumentSnapshot = tx ? await tx.get(ref) : await ref.get()
    if (snap.exists) return snap.data() as LabflowVersion
    return id === GERMLINE_ID && version === 1 ? GERMLINE_V1 : undefined
  }

  async versions(projectId: string, id: string): Promise<LabflowVersion[]> {
    const head = await this.head(projectId, id)
    if (!head) return []
    const all = await Promise.all(Array.from({ length: head.latest_version }, (_, i) => this.version(id, i + 1)))
    return all.filter((v): v is LabflowVersion => v !== undefined)
  }

  /** The latest version of a labflow, read in a transaction (signing pins it). */
  async latestIn(tx: Transaction, projectId: string, id: string): Promise<LabflowVersion | undefined> {
    const snap = await tx.get(this.heads().doc(id))
    const head = snap.exists ? (snap.data() as LabflowHead) : id === GERMLINE_ID ? GERMLINE_HEAD : undefined
    if (!head || !LabflowStore.visible(head.scope, projectId)) return undefined
    return this.version(id, head.latest_version, tx)
  }

  /** A new labflow of the project (version 1); its key is unique in the project (409). */
  async create(
    ctx: AuditContext,
    project: { id: string; org_id: string },
    key: string,
    content: LabflowContent,
    by: string,
  ): Promise<LabflowVersion> {
    const problems = labflowProblems(content)
    if (problems.length) throw badRequest(problems.join('; '))
    const id = labflowId(project.id, key)
    if (id === GERMLINE_ID) throw conflict(`labflow key '${key}' is taken`)
    return this.db.transaction(async (tx) => {
      const existing = await tx.get(this.heads().doc(id))
      const platform = await tx.get(this.heads().doc(labflowId(PLATFORM_SCOPE, key)))
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'labflow', id } })
      if (existing.exists || platform.exists || key === GERMLINE_KEY) {
        throw conflict(
          `a labflow with key '${key}' already exists; add a version to it with POST /labflows/${existing.exists ? id : '{id}'}/versions`,
        )
      }
      const now = Timestamp.fromDate(this.clock.now())
      const version: LabflowVersion = { ...content, id, key, version: 1, scope: project.id, created: now, created_by: by }
      tx.create(this.heads().doc(id), {
        id,
        key,
        scope: project.id,
        name: content.name,
        latest_version: 1,
        created: now,
        updated: now,
      } satisfies LabflowHead)
      tx.create(this.versionRef(id, 1), version)
      chain.write(ctx, {
        action: 'labflow.created',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'labflow', id, parent: key },
        change: { to: '1' },
      })
      return version
    })
  }

  /** A new version of a labflow of the project; a platform labflow cannot be changed by a project (409). */
  async addVersion(
    ctx: AuditContext,
    project: { id: string; org_id: string },
    id: string,
    content: Partial<LabflowContent> & Pick<LabflowContent, 'stages' | 'transitions'>,
    by: string,
  ): Promise<LabflowVersion> {
    return this.db.transaction(async (tx) => {
      const snap = await tx.get(this.heads().doc(id))
      const head = snap.exists ? (snap.data() as LabflowHead) : id === GERMLINE_ID ? GERMLINE_HEAD : undefined
      if (!head || !LabflowStore.visible(head.scope, project.id)) throw notFound('labflow')
      if (head.scope === PLATFORM_SCOPE) {
        throw conflict(
          `labflow '${head.key}' belongs to the platform and cannot be changed by a project; create the project's own with POST /labflows`,
        )
      }
      const previous = await this.version(id, head.latest_version, tx)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'labflow', id } })
      const merged: LabflowContent = {
        name: content.name ?? previous?.name ?? head.name,
        description: content.description ?? previous?.description,
        stages: content.stages,
        transitions: content.transitions,
      }
      const problems = labflowProblems(merged)
      if (problems.length) throw badRequest(problems.join('; '))
      const now = Timestamp.fromDate(this.clock.now())
      const n = head.latest_version + 1
      const version: LabflowVersion = { ...merged, id, key: head.key, version: n, scope: head.scope, created: now, created_by: by }
      tx.create(this.versionRef(id, n), version)
      tx.update(this.heads().doc(id), { latest_version: n, name: merged.name, updated: now })
      chain.write(ctx, {
        action: 'labflow.version_created',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'labflow', id, parent: head.key },
        change: { from: String(head.latest_version), to: String(n) },
      })
      return version
    })
  }

  /** Stores the platform's germline flow as version 1 (the local suite's seed; idempotent). */
  async seedPlatform(): Promise<void> {
    await this.db.transaction(async (tx) => {
      const head = await tx.get(this.heads().doc(GERMLINE_ID))
      const chain = await this.audit.prepare(tx, { entity: { type: 'labflow', id: GERMLINE_ID } })
      if (head.exists) return
      tx.create(this.heads().doc(GERMLINE_ID), GERMLINE_HEAD)
      tx.set(this.versionRef(GERMLINE_ID, 1), GERMLINE_V1)
      chain.write(SYSTEM_ACTOR, {
        action: 'labflow.created',
        entity: { type: 'labflow', id: GERMLINE_ID, parent: GERMLINE_KEY },
        change: { to: '1' },
      })
    })
  }
}
