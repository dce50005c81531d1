import { Timestamp } from '@google-cloud/firestore'
import type { AuditInput } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import {
  absent,
  allow,
  conflictWith,
  deny,
  forbiddenBy,
  invalid,
  missingPermission,
  refusalDetail,
  type Allowed,
  type Decision,
  type Denied,
  type Refusal,
} from '../../lib/decision.js'
import type { OrderRecord } from '../clinical/model.js'
import type { OrderStatus } from '../clinical/order-status.js'
import type { AcmgClassification } from './acmg.js'
import {
  CONTRIBUTIONS,
  MAX_REPORT_COMMENTS,
  MAX_REPORT_SNAPSHOTS,
  MAX_REPORT_VARIANTS,
  MAX_SNAPSHOT_BYTES,
  type AmendmentKind,
  type CommentRecord,
  type CommentType,
  type Contribution,
  type Contributor,
  type Inheritance,
  type ReportRecord,
  type ReportVariantRecord,
  type SignatureMeaning,
  type SignatureRecord,
  type SignoffRecord,
  type SnapshotRecord,
  type StatusChange,
  type TemplateType,
  type UserRef,
} from './model.js'
import { SNAPSHOT_CANONICALIZATION } from './snapshot.js'
import { availableTransitions, checkMove, CLOSED, DISCUSSABLE, GUARD_MESSAGES, type ReportShape, type ReportStatus } from './status.js'

/**
 * The rules of reports, decided in one place (DESIGN.md "One domain, seven doors"; STYLE.md 11a):
 * who changes a report and what that records (its contributors), for which orders a report is
 * written, changed and signed, who signs it, and what a signature's re-authentication must prove.
 * Each `decide…` takes the state its store read in one Firestore transaction and a command (with
 * `now`), and returns the records to write and the audit events to record with them, or a refusal
 * (lib/decision.ts). Nothing here reads, writes, or looks at the clock.
 */

// ---------------------------------------------------------------------------------------------
// Commands' shapes

export interface ReportProject {
  id: string
  org_id: string
}

export interface ReportFields {
  template_type: TemplateType
  summary?: string
  notes?: string
  conclusion?: string
}

/** PATCH: only the fields sent change; null clears an optional one. */
export type ReportPatch = { template_type?: TemplateType } & { [K in 'summary' | 'notes' | 'conclusion']?: string | null }

/** The per-report values of a report variant; on PATCH, null clears one. */
export interface VariantOverrides {
  acmg_classification?: AcmgClassification | null
  acmg_criteria?: string[]
  transcript?: string | null
  hgvs_c?: string | null
  hgvs_p?: string | null
  inheritance?: Inheritance | null
  interpretation?: string | null
  include_in_report?: boolean
}

const OVERRIDE_FIELDS = [
  'acmg_classification',
  'acmg_criteria',
  'transcript',
  'hgvs_c',
  'hgvs_p',
  'inheritance',
  'interpretation',
  'include_in_report',
] as const

export type Can = (permission: Permission) => boolean

/** The order of a report, as the rules see it. */
export type OrderFacts = Pick<OrderRecord, 'id' | 'accession' | 'status'>

const ts = (d: Date) => Timestamp.fromDate(d)

function event(r: Pick<ReportRecord, 'id' | 'order_id' | 'project_id' | 'org_id'>, action: string, change?: AuditInput['change']): AuditInput {
  return { action, project_id: r.project_id, org_id: r.org_id, entity: { type: 'report', id: r.id, parent: r.order_id }, change }
}

const unclassified = (v: Pick<ReportVariantRecord, 'include_in_report' | 'acmg_classification'> | undefined) =>
  v && v.include_in_report && !v.acmg_classification ? 1 : 0

export const shapeOf = (r: ReportRecord): ReportShape => ({ status: r.status, conclusion: r.conclusion, unclassified: r.unclassified_count })

/** Writes `value` to `record[key]`, or removes the key for null (a cleared optional field). */
function assign(record: Record<string, unknown>, key: string, value: unknown) {
  if (value === null) delete record[key]
  else record[key] = value
}

// ---------------------------------------------------------------------------------------------
// Contributors (four eyes)

/**
 * Everyone who changed the report, with what they did. A report written before contributors were
 * recorded has its author and whoever sent it to review (from its status history): its edits are
 * known only to the audit log, so a reviewer who edited such a draft is not found here.
 */
export function contributorsOf(r: Pick<ReportRecord, 'contributors' | 'author' | 'amendment' | 'status_history'>): Contributor[] {
  if (r.contributors) return r.contributors
  let list = withContribution([], r.author.id, r.amendment ? 'amended' : 'created')
  for (const h of r.status_history) if (h.to === 'in_review') list = withContribution(list, h.by, 'sent_to_review')
  return list
}

/** The list with `id` recorded as having done `did` (once; their acts in CONTRIBUTIONS order, people in the order they first acted). */
export function withContribution(list: readonly Contributor[], id: string, did: Contribution): Contributor[] {
  const found = list.find((c) => c.id === id)
  if (!found) return [...list, { id, did: [did] }]
  return list.map((c) => (c.id === id ? { id, did: CONTRIBUTIONS.filter((x) => x === did || c.did.includes(x)) } : c))
}

export const CONTRIBUTION_WORDS: Record<Contribution, string> = {
  created: 'wrote it',
  amended: 'started this revision',
  edited: 'edited its text',
  changed_variants: 'added or removed variants',
  changed_overrides: 'changed what it says about its variants',
  sent_to_review: 'sent it to review',
}

const listed = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`)

// ---------------------------------------------------------------------------------------------
// The order: a report is written, changed and signed only for an order that is being worked on

/** Order statuses a report is written, changed and signed for: from signing on, and not cancelled or entered in error. */
export const REPORTABLE_ORDERS: ReadonlySet<OrderStatus> = new Set<OrderStatus>(['signed', 'in_progress', 'in_review', 'on_hold', 'completed'])

/** Report statuses a report still moves to when its order stops: it is withdrawn with it. */
const WITHDRAWALS: ReadonlySet<ReportStatus> = new Set<ReportStatus>(['cancelled', 'entered_in_error'])

/** 409 naming the order's status when the order is not one a report is written, changed or signed for. */
function orderRefusal(order: OrderFacts | undefined, refused: string): Refusal | undefined {
  if (!order) return conflictWith(`the order of the report no longer exists: ${refused}`)
  if (REPORTABLE_ORDERS.has(order.status)) return undefined
  return conflictWith(`order ${order.accession} is ${order.status}: ${refused}`)
}

const stoppedOrder = (r: Pick<ReportRecord, 'id'>) =>
  `report ${r.id} is not changed or signed while its order is withdrawn (it can still be cancelled or marked entered in error)`

function draftOnly(report: ReportRecord, what: string): Refusal | undefined {
  if (report.status === 'draft') return undefined
  return conflictWith(
    `report ${report.id} is ${report.status}; only a draft report ${what}${CLOSED.has(report.status) ? ' (amend a signed report to change it)' : ''}`,
  )
}

/** The first refusal of a change to a report's content: its order withdrawn, then its status. */
const contentRefusal = (report: ReportRecord, order: OrderFacts | undefined, what: string) =>
  orderRefusal(order, stoppedOrder(report)) ?? draftOnly(report, what)

// ---------------------------------------------------------------------------------------------
// Reports

export function decideCreate(
  order: (OrderFacts & { project_id: string }) | undefined,
  cmd: { project: ReportProject; orderRef: string; id: string; fields: ReportFields; author: UserRef; now: Date },
): Decision<{ report: ReportRecord }> {
  if (!order || order.project_id !== cmd.project.id) return deny(absent(`order ${cmd.orderRef}`))
  if (!REPORTABLE_ORDERS.has(order.status)) {
    return deny(
      conflictWith(
        `order ${order.accession} is ${order.status}; a report is written for a signed order (not a draft, cancelled or entered in error)`,
      ),
    )
  }
  const now = ts(cmd.now)
  const report: ReportRecord = {
    ...cmd.fields,
    id: cmd.id,
    project_id: cmd.project.id,
    org_id: cmd.project.org_id,
    order_id: order.id,
    order_accession: order.accession,
    status: 'draft',
    author: cmd.author,
    contributors: withContribution([], cmd.author.id, 'created'),
    revision: 1,
    signatures: [],
    status_history: [],
    variant_count: 0,
    unclassified_count: 0,
    comment_count: 0,
    open_review_comments: 0,
    snapshot_count: 0,
    created: now,
    updated: now,
  }
  return allow({ report }, [event(report, 'report.created', { to: 'draft', fields: Object.keys(cmd.fields).sort() })])
}

/** A PATCH: the fields that differ change, and whoever changed them is a contributor. `report` absent: nothing changed. */
export function decideUpdate(
  report: ReportRecord,
  order: OrderFacts | undefined,
  cmd: { patch: ReportPatch; by: string; now: Date },
): Decision<{ report?: ReportRecord }> {
  const refusal = contentRefusal(report, order, 'is updated')
  if (refusal) return deny(refusal)
  const changed = (Object.keys(cmd.patch) as Array<keyof ReportPatch>)
    .filter((k) => cmd.patch[k] !== undefined && (cmd.patch[k] ?? undefined) !== report[k])
    .sort()
  if (!changed.length) return allow({})
  const next: Record<string, unknown> = {
    ...report,
    contributors: withContribution(contributorsOf(report), cmd.by, 'edited'),
    updated: ts(cmd.now),
  }
  for (const k of changed) assign(next, k, cmd.patch[k])
  return allow({ report: next as unknown as ReportRecord }, [event(report, 'report.updated', { fields: changed })])
}

/** A draft is deleted (with its variants, comments and snapshots); a draft amendment frees the revision it would replace. */
export function decideDelete(report: ReportRecord, replaced: ReportRecord | undefined): Decision<{ replaced?: ReportRecord }> {
  const refusal = draftOnly(report, 'is deleted')
  if (refusal) return deny(refusal)
  const events = [event(report, 'report.deleted', { from: report.status })]
  if (replaced?.pending_revision !== report.id) return allow({}, events)
  const { pending_revision: _freed, ...rest } = replaced
  events.push(event(replaced, 'report.amendment_withdrawn', { reason: `revision ${report.revision} (${report.id}) deleted` }))
  return allow({ replaced: rest }, events)
}

/** The statuses this caller may move the report to now: none but a withdrawal while its order is withdrawn. */
export function transitionsFor(report: ReportRecord, order: OrderFacts | undefined, can: Can): ReportStatus[] {
  const open = !orderRefusal(order, '')
  return availableTransitions(shapeOf(report), can).filter((to) => open || WITHDRAWALS.has(to))
}

/**
 * Moves the report along REPORT_EDGES (never to signed: that is the sign-off's). Sending it to
 * review makes the sender a contributor; a cancelled or erroneous amendment frees the revision it
 * would have replaced (`replaced`, read when the move is a withdrawal).
 */
export function decideTransition(
  report: ReportRecord,
  order: OrderFacts | undefined,
  replaced: ReportRecord | undefined,
  cmd: { to: ReportStatus; reason?: string; can: Can; by: string; now: Date },
): Decision<{ report: ReportRecord; replaced?: ReportRecord }> {
  const reason = cmd.reason?.trim() || undefined
  const shape = shapeOf(report)
  const check = checkMove(shape, cmd.to, cmd.can, reason)
  if (!check.ok && check.kind === 'no_edge') {
    const allowed = transitionsFor(report, order, cmd.can)
    const signing = cmd.to === 'signed' ? ' (a report is signed in a browser, through its sign-off page)' : ''
    return deny(
      conflictWith(`cannot move report ${report.id} from ${report.status} to ${cmd.to}${signing}; allowed: ${allowed.join(', ') || 'none'}`),
    )
  }
  if (!WITHDRAWALS.has(cmd.to)) {
    const refusal = orderRefusal(order, stoppedOrder(report))
    if (refusal) return deny(refusal)
  }
  if (!check.ok) {
    switch (check.kind) {
      case 'permission':
        return deny(missingPermission(check.permission))
      case 'reason':
        return deny(invalid(`reason: required to move report ${report.id} to ${cmd.to}`))
      case 'guard':
        return deny(conflictWith(`report ${report.id} cannot move to ${cmd.to}: ${check.failed.map((g) => GUARD_MESSAGES[g](shape)).join('; ')}`))
    }
  }
  const now = ts(cmd.now)
  const change: StatusChange = { from: report.status, to: cmd.to, by: cmd.by, at: now, ...(reason ? { reason } : {}) }
  const next: ReportRecord = {
    ...report,
    status: cmd.to,
    status_history: [...report.status_history, change],
    ...(cmd.to === 'in_review' ? { contributors: withContribution(contributorsOf(report), cmd.by, 'sent_to_review') } : {}),
    updated: now,
  }
  const events = [event(report, 'report.transitioned', { from: report.status, to: cmd.to, reason })]
  if (!WITHDRAWALS.has(cmd.to) || replaced?.pending_revision !== report.id) return allow({ report: next }, events)
  const { pending_revision: _freed, ...freed } = replaced
  events.push(event(replaced, 'report.amendment_withdrawn', { reason: `revision ${report.revision} (${report.id}) ${cmd.to}` }))
  return allow({ report: next, replaced: freed }, events)
}

/**
 * Starts an amendment of a signed report: a new draft, revision n + 1, that replaces it, with its
 * fields, variants and comments copied as the starting point (`commentIds`: the copies' ids). Its
 * contributors start with its author alone: the signed revision's content was already reviewed by
 * its signer, and what needs a second person now is the change, so whoever wrote or sent the
 * earlier revision may review and sign this one, unless they change it too (docs/reports.md).
 */
export function decideAmend(
  source: ReportRecord,
  order: OrderFacts | undefined,
  cmd: {
    id: string
    kind: AmendmentKind
    reason: string
    author: UserRef
    now: Date
    variants: ReportVariantRecord[]
    comments: CommentRecord[]
    commentIds: string[]
  },
): Decision<{ report: ReportRecord; source: ReportRecord; variants: ReportVariantRecord[]; comments: CommentRecord[] }> {
  const refusal =
    orderRefusal(order, `report ${source.id} is not amended while its order is withdrawn (mark it entered in error instead)`) ??
    (source.status !== 'signed'
      ? conflictWith(
          `report ${source.id} is ${source.status}; only a signed report is amended${source.status === 'superseded' && source.superseded_by ? ` (its current revision is ${source.superseded_by})` : ''}`,
        )
      : source.pending_revision
        ? conflictWith(`report ${source.id} already has an amendment in progress: report ${source.pending_revision}`)
        : undefined)
  if (refusal) return deny(refusal)
  const now = ts(cmd.now)
  const report: ReportRecord = {
    id: cmd.id,
    project_id: source.project_id,
    org_id: source.org_id,
    order_id: source.order_id,
    order_accession: source.order_accession,
    status: 'draft',
    template_type: source.template_type,
    ...(source.summary !== undefined ? { summary: source.summary } : {}),
    ...(source.notes !== undefined ? { notes: source.notes } : {}),
    ...(source.conclusion !== undefined ? { conclusion: source.conclusion } : {}),
    author: cmd.author,
    contributors: withContribution([], cmd.author.id, 'amended'),
    revision: source.revision + 1,
    replaces: source.id,
    amendment: { kind: cmd.kind, reason: cmd.reason, by: cmd.author.id, at: now },
    signatures: [],
    status_history: [],
    variant_count: cmd.variants.length,
    unclassified_count: cmd.variants.reduce((n, v) => n + unclassified(v), 0),
    comment_count: cmd.comments.length,
    open_review_comments: cmd.comments.filter((c) => c.type === 'review' && !c.resolved).length,
    snapshot_count: 0,
    created: now,
    updated: now,
  }
  return allow(
    {
      report,
      source: { ...source, pending_revision: cmd.id },
      variants: cmd.variants.map((v) => ({ ...v, report_id: cmd.id, added_at: now, added_by: cmd.author.id, updated: now })),
      comments: cmd.comments.map((c, i) => ({ ...c, id: cmd.commentIds[i]!, report_id: cmd.id, copied_from: c.id })),
    },
    [
      event(report, 'report.created', { to: 'draft', reason: `revision ${report.revision}, ${cmd.kind}: amends report ${source.id}` }),
      event(source, 'report.amended', { reason: `${cmd.kind}: ${cmd.reason}; revision ${report.revision} is report ${cmd.id}` }),
    ],
  )
}

// ---------------------------------------------------------------------------------------------
// Report variants

export function decideAddVariant(
  report: ReportRecord,
  order: OrderFacts | undefined,
  cmd: { variantId: string; overrides: VariantOverrides; onReport: boolean; by: string; now: Date },
): Decision<{ report: ReportRecord; variant: ReportVariantRecord }> {
  const refusal =
    contentRefusal(report, order, 'takes variants') ??
    (cmd.onReport
      ? conflictWith(`variant ${cmd.variantId} is already on report ${report.id}; PATCH it to change its overrides`)
      : report.variant_count >= MAX_REPORT_VARIANTS
        ? conflictWith(`report ${report.id} already has ${MAX_REPORT_VARIANTS} variants`)
        : undefined)
  if (refusal) return deny(refusal)
  const now = ts(cmd.now)
  const added: Record<string, unknown> = {
    report_id: report.id,
    project_id: report.project_id,
    order_id: report.order_id,
    variant_id: cmd.variantId,
    acmg_criteria: [],
    include_in_report: true,
    added_by: cmd.by,
    added_at: now,
    updated: now,
  }
  const given = OVERRIDE_FIELDS.filter((k) => cmd.overrides[k] !== undefined && cmd.overrides[k] !== null)
  for (const k of given) added[k] = cmd.overrides[k]
  const variant = added as unknown as ReportVariantRecord
  return allow(
    {
      variant,
      report: {
        ...report,
        variant_count: report.variant_count + 1,
        unclassified_count: report.unclassified_count + unclassified(variant),
        contributors: withContribution(contributorsOf(report), cmd.by, 'changed_variants'),
        updated: now,
      },
    },
    [event(report, 'report.variant_added', { reason: `variant ${cmd.variantId}`, fields: given })],
  )
}

/** A variant's overrides: those that differ change. `report` absent: nothing changed. */
export function decideUpdateVariant(
  report: ReportRecord,
  order: OrderFacts | undefined,
  existing: ReportVariantRecord | undefined,
  cmd: { variantId: string; overrides: VariantOverrides; by: string; now: Date },
): Decision<{ variant: ReportVariantRecord; report?: ReportRecord }> {
  if (!existing) return deny(absent(`variant ${cmd.variantId} on report ${report.id}`))
  const refusal = contentRefusal(report, order, "has its variants' overrides changed")
  if (refusal) return deny(refusal)
  const changed = OVERRIDE_FIELDS.filter(
    (k) => cmd.overrides[k] !== undefined && JSON.stringify(cmd.overrides[k] ?? null) !== JSON.stringify(existing[k] ?? null),
  )
  if (!changed.length) return allow({ variant: existing })
  const now = ts(cmd.now)
  const next: Record<string, unknown> = { ...existing, updated: now }
  for (const k of changed) assign(next, k, cmd.overrides[k])
  const variant = next as unknown as ReportVariantRecord
  return allow(
    {
      variant,
      report: {
        ...report,
        unclassified_count: report.unclassified_count - unclassified(existing) + unclassified(variant),
        contributors: withContribution(contributorsOf(report), cmd.by, 'changed_overrides'),
        updated: now,
      },
    },
    [event(report, 'report.variant_updated', { reason: `variant ${cmd.variantId}`, fields: [...changed] })],
  )
}

export function decideRemoveVariant(
  report: ReportRecord,
  order: OrderFacts | undefined,
  existing: ReportVariantRecord | undefined,
  cmd: { variantId: string; by: string; now: Date },
): Decision<{ report: ReportRecord }> {
  if (!existing) return deny(absent(`variant ${cmd.variantId} on report ${report.id}`))
  const refusal = contentRefusal(report, order, 'has variants removed')
  if (refusal) return deny(refusal)
  return allow(
    {
      report: {
        ...report,
        variant_count: report.variant_count - 1,
        unclassified_count: report.unclassified_count - unclassified(existing),
        contributors: withContribution(contributorsOf(report), cmd.by, 'changed_variants'),
        updated: ts(cmd.now),
      },
    },
    [event(report, 'report.variant_removed', { reason: `variant ${cmd.variantId}` })],
  )
}

// ---------------------------------------------------------------------------------------------
// Comments (a conversation about the report, not its content: writing one makes nobody a contributor)

export function decideAddComment(
  report: ReportRecord,
  cmd: { id: string; type: CommentType; comment: string; author: UserRef; now: Date },
): Decision<{ comment: CommentRecord; report: ReportRecord }> {
  if (!DISCUSSABLE.has(report.status)) return deny(notDiscussable(report))
  if (report.comment_count >= MAX_REPORT_COMMENTS) return deny(conflictWith(`report ${report.id} already has ${MAX_REPORT_COMMENTS} comments`))
  const now = ts(cmd.now)
  const comment: CommentRecord = {
    id: cmd.id,
    report_id: report.id,
    project_id: report.project_id,
    type: cmd.type,
    comment: cmd.comment,
    author: cmd.author,
    created: now,
    updated: now,
  }
  return allow(
    {
      comment,
      report: {
        ...report,
        comment_count: report.comment_count + 1,
        open_review_comments: report.open_review_comments + (cmd.type === 'review' ? 1 : 0),
        updated: now,
      },
    },
    [event(report, 'report.comment_added', { reason: `${cmd.type} comment ${cmd.id}` })],
  )
}

const notDiscussable = (report: ReportRecord) =>
  conflictWith(`report ${report.id} is ${report.status}; comments are written while a report is a draft or in review`)

/**
 * Edits a comment's text (its author only, with comment.write) or resolves or reopens it (with
 * comment.resolve). A resolved comment's text no longer changes. `comment` absent: nothing changed.
 */
export function decideCommentUpdate(
  report: ReportRecord,
  existing: CommentRecord | undefined,
  cmd: { commentId: string; comment?: string; resolved?: boolean; caller: { id: string; can: Can }; now: Date },
): Decision<{ comment: CommentRecord; report?: ReportRecord }> {
  if (!existing || existing.report_id !== report.id) return deny(absent('comment'))
  const editsText = cmd.comment !== undefined && cmd.comment !== existing.comment
  const resolves = cmd.resolved !== undefined && cmd.resolved !== Boolean(existing.resolved)
  if (editsText) {
    if (!cmd.caller.can('comment.write')) return deny(missingPermission('comment.write'))
    if (existing.author.id !== cmd.caller.id) {
      return deny(forbiddenBy(`edit of comment ${cmd.commentId} by someone other than its author`, 'only its author edits a comment'))
    }
  }
  if (resolves && !cmd.caller.can('comment.resolve')) return deny(missingPermission('comment.resolve'))
  if (!editsText && !resolves) return allow({ comment: existing })
  if (!DISCUSSABLE.has(report.status)) return deny(notDiscussable(report))
  const reopens = resolves && cmd.resolved === false
  if (editsText && existing.resolved && !reopens) {
    return deny(conflictWith(`comment ${cmd.commentId} is resolved; reopen it (resolved: false) to edit its text`))
  }
  const now = ts(cmd.now)
  const next: CommentRecord = { ...existing, updated: now }
  const events: AuditInput[] = []
  if (editsText) {
    next.comment = cmd.comment!
    next.edited_at = now
    events.push(event(report, 'report.comment_edited', { reason: `comment ${cmd.commentId}` }))
  }
  let open = report.open_review_comments
  if (resolves) {
    if (cmd.resolved) next.resolved = { by: cmd.caller.id, at: now }
    else delete next.resolved
    if (existing.type === 'review') open += cmd.resolved ? -1 : 1
    events.push(
      event(report, cmd.resolved ? 'report.comment_resolved' : 'report.comment_reopened', { reason: `${existing.type} comment ${cmd.commentId}` }),
    )
  }
  return allow({ comment: next, report: { ...report, open_review_comments: open, updated: now } }, events)
}

// ---------------------------------------------------------------------------------------------
// Snapshots

/** What a snapshot is taken of, read in one transaction: the report and its content now, and (when reused) its latest snapshot. */
export interface SnapshotState {
  report: ReportRecord
  json: string
  sha256: string
  /** The latest snapshot, read only when a reuse was asked and its hash is the content's. */
  latest?: SnapshotRecord
}

/**
 * An immutable snapshot of the report as it is now, or the latest one when it says the same and
 * was read to be reused. `report` absent: nothing to write.
 */
export function decideSnapshot(
  state: SnapshotState,
  cmd: { id: string; by: string; now: Date },
): Decision<{ snapshot: SnapshotRecord; report?: ReportRecord }> {
  const { report, json, sha256 } = state
  if (state.latest) return allow({ snapshot: state.latest })
  const bytes = Buffer.byteLength(json)
  if (bytes > MAX_SNAPSHOT_BYTES) return deny(conflictWith(`report ${report.id} is too large to snapshot (${Math.ceil(bytes / 1024)} KiB)`))
  if (report.snapshot_count >= MAX_REPORT_SNAPSHOTS) return deny(conflictWith(`report ${report.id} already has ${MAX_REPORT_SNAPSHOTS} snapshots`))
  const now = ts(cmd.now)
  const seq = report.snapshot_count + 1
  const snapshot: SnapshotRecord = {
    id: cmd.id,
    report_id: report.id,
    project_id: report.project_id,
    seq,
    content: json,
    sha256,
    canonicalization: SNAPSHOT_CANONICALIZATION,
    taken_by: cmd.by,
    taken_at: now,
    report_status: report.status,
  }
  return allow(
    // Not `updated`: a snapshot records the report, it does not change it.
    { snapshot, report: { ...report, snapshot_count: seq, latest_snapshot: { id: cmd.id, seq, sha256, taken_at: now } } },
    [event(report, 'report.snapshot_taken', { reason: `snapshot ${seq} sha256:${sha256}` })],
  )
}

// ---------------------------------------------------------------------------------------------
// Who signs

export interface Signer {
  user: UserRef
  /** The platform session the browser uses (SessionRecord.id). */
  sessionId: string
  can: Can
}

export type Blocker =
  | { kind: 'status'; status: ReportStatus }
  | { kind: 'order'; accession: string; status: OrderStatus | 'missing' }
  | { kind: 'permission'; permission: Permission }
  | { kind: 'contributor'; did: Contribution[] }
  | { kind: 'open_review'; count: number }

/** Why this signer may not sign this report now (of this order): none when they may. */
export function blockersFor(report: ReportRecord, order: OrderFacts | undefined, signer: { user: Pick<UserRef, 'id'>; can: Can }): Blocker[] {
  const blockers: Blocker[] = []
  if (!order || !REPORTABLE_ORDERS.has(order.status)) {
    blockers.push({ kind: 'order', accession: order?.accession ?? report.order_accession, status: order?.status ?? 'missing' })
  }
  if (report.status !== 'in_review') blockers.push({ kind: 'status', status: report.status })
  if (!signer.can('report.sign')) blockers.push({ kind: 'permission', permission: 'report.sign' })
  const mine = contributorsOf(report).find((c) => c.id === signer.user.id)
  if (mine) blockers.push({ kind: 'contributor', did: mine.did })
  if (report.open_review_comments > 0) blockers.push({ kind: 'open_review', count: report.open_review_comments })
  return blockers
}

export function describeBlocker(b: Blocker): string {
  switch (b.kind) {
    case 'order':
      return b.status === 'missing'
        ? `order ${b.accession} no longer exists: its reports are not signed`
        : `order ${b.accession} is ${b.status}: a report of a cancelled order, or of one entered in error, is not signed`
    case 'status':
      return b.status === 'draft'
        ? 'the report is a draft: it is signed once it is in review'
        : `the report is ${b.status.replaceAll('_', ' ')}: only a report in review is signed`
    case 'permission':
      return `signing needs the permission ${b.permission} (a reviewer of the project)`
    case 'contributor': {
      const wrote = b.did.includes('amended') ? 'revision' : b.did.includes('created') ? 'report' : undefined
      const also = b.did.filter((d) => d !== 'created' && d !== 'amended').map((d) => CONTRIBUTION_WORDS[d])
      return wrote
        ? `you are the author of this ${wrote}${also.length ? ` (you also ${listed(also)})` : ''}: a second person, who did not change it, reviews and signs it`
        : `you changed this report (you ${listed(also)}): a second person, who did not change it, reviews and signs it`
    }
    case 'open_review':
      return `${b.count} review comment${b.count === 1 ? ' is' : 's are'} still open: resolve ${b.count === 1 ? 'it' : 'them'} before signing`
  }
}

/** What the blockers refuse: 409 when the order stops the report for everyone, 403 when it is about the signer, else 409. */
function blockedRefusal(blockers: Blocker[]): Refusal {
  const detail = blockers.map(describeBlocker).join('; ')
  if (blockers.some((b) => b.kind === 'order')) return conflictWith(detail)
  const contributor = blockers.find((b) => b.kind === 'contributor')
  if (contributor) return forbiddenBy(`signing by someone who changed the report (${contributor.did.join(', ')})`, detail)
  if (blockers.some((b) => b.kind === 'permission')) return forbiddenBy('signing without the permission report.sign', detail)
  return conflictWith(detail)
}

// ---------------------------------------------------------------------------------------------
// The browser sign-off: the page, the form's post, the signature

export const PAGE_TTL_MS = 15 * 60 * 1000
const REAUTH_TTL_MS = 5 * 60 * 1000
/** A signature is accepted only with an authentication at the identity provider this recent (21 CFR 11.200). */
const MAX_AUTH_AGE_MS = 5 * 60 * 1000

/**
 * Where a sign-off stopped: the rules about the signer, the report and its order (`blocked`), the
 * content changed since the page (`changed`), the form's token or the pending sign-off (`token`),
 * the browser session (`session`), the re-authentication (`reauthentication`).
 */
export type SignoffStop = 'blocked' | 'changed' | 'token' | 'session' | 'reauthentication'
export interface SignoffDenied extends Denied {
  stop: SignoffStop
}
export type SignoffDecision<C> = Allowed<C> | SignoffDenied

const stopped = (stop: SignoffStop, refusal: Refusal): SignoffDenied => ({ ...deny(refusal), stop })
const tokenProblem = (detail: string) => stopped('token', forbiddenBy(`sign-off refused: ${detail}`, detail))
const sessionProblem = (detail: string) => stopped('session', forbiddenBy(`sign-off in another session: ${detail}`, detail))

/** The audit event of a refused step (outcome denied), in the transaction that spends its token. */
export function signoffRefusedEvent(report: ReportRecord, denied: SignoffDenied): AuditInput {
  return {
    ...event(report, 'report.signoff_refused', { reason: `${denied.stop}: ${refusalDetail(denied.refusal)}`.slice(0, 500) }),
    outcome: 'denied',
  }
}

/** Step 1, the page: whether this signer may sign this report of this order now. */
export function decideSignoffPage(report: ReportRecord, order: OrderFacts | undefined, signer: Signer): SignoffDecision<null> {
  const blockers = blockersFor(report, order, signer)
  return blockers.length ? stopped('blocked', blockedRefusal(blockers)) : allow(null)
}

/**
 * Step 2, the form's post. Its token must be the page's (same session, user, report and snapshot,
 * unexpired); the signer may still sign; the report must still say what the page showed. Then the
 * pending sign-off, valid five minutes, waits for the signer to come back from the identity
 * provider; its `created` is the time of the post that a re-authentication must follow.
 */
export function decideFormPost(state: {
  page: SignoffRecord | undefined
  form: { snapshotId: string; meaning: SignatureMeaning }
  report: ReportRecord
  order: OrderFacts | undefined
  sha256: string
  signer: Signer
  now: Date
}): SignoffDecision<{ pending: SignoffRecord }> {
  const { page, form, signer, now } = state
  if (!page) return tokenProblem('the form has no valid security token: open the sign-off page again and sign from it')
  if (page.stage !== 'page' || page.report_id !== state.report.id || page.snapshot_id !== form.snapshotId) {
    return tokenProblem('the form does not belong to this sign-off: open the sign-off page again and sign from it')
  }
  if (page.expires_at.toMillis() <= now.getTime()) return tokenProblem('the sign-off page has expired: open it again')
  if (page.session_id !== signer.sessionId || page.user_id !== signer.user.id) {
    return tokenProblem('the form was shown in another session: sign from a page you opened yourself')
  }
  const blockers = blockersFor(state.report, state.order, signer)
  if (blockers.length) return stopped('blocked', blockedRefusal(blockers))
  if (state.sha256 !== page.sha256) return stopped('changed', conflictWith(CHANGED))
  const pending: SignoffRecord = {
    ...page,
    stage: 'reauth',
    meaning: form.meaning,
    created: ts(now),
    expires_at: ts(new Date(now.getTime() + REAUTH_TTL_MS)),
  }
  return allow({ pending }, [
    event(state.report, 'report.signoff_started', {
      reason: `snapshot ${page.snapshot_id} sha256:${page.sha256}; meaning ${form.meaning}; re-authentication requested`,
    }),
  ])
}

const CHANGED =
  'the report changed after this page was shown: what you would sign is no longer what it says. Open the sign-off page again to see the report as it is now.'

/** The browser session as the last step sees it: whose it is, its latest re-authentication, and a refused one. */
export interface ReauthState {
  userId: string
  sessionId: string
  /**
   * The session's latest re-authentication by its own user: how the login asked for it and when it
   * began (absent on sessions recorded before the platform kept it), the ID token's auth_time, and
   * when the platform recorded it.
   */
  reauth?: { prompt?: string; maxAge?: number; begunAt?: Date; authTime: Date; at: Date }
  /** A re-authentication in this session by another user, refused by the admin service. */
  refused?: { at: Date; userId: string; email?: string }
}

/**
 * Whether the session's re-authentication is one a signature posted at `postedAt` accepts
 * (21 CFR 11.200: both components at signing): the admin service's login asked the provider for a
 * new authentication (prompt=login) that may not reuse an earlier one (max_age=0); the login began
 * after the post, and the platform recorded it after the post; the provider's auth_time is not before the post (auth_time counts
 * whole seconds, so the post's second is the bound); and it is at most five minutes old now.
 * A login with max_age=300, say, lets the provider answer from its session without asking for a
 * password, with the auth_time of an earlier login: it proves nothing about who posted the form.
 */
export function judgeReauthentication(postedAt: Date, reauth: ReauthState['reauth'], now: Date): Refusal | undefined {
  const again = 'start the sign-off again'
  if (!reauth || reauth.at.getTime() < postedAt.getTime()) {
    return forbiddenBy(
      'signature without a re-authentication after its form',
      `you did not sign in again at the identity provider for this signature: ${again}`,
    )
  }
  if (!reauth.begunAt || reauth.begunAt.getTime() < postedAt.getTime()) {
    return forbiddenBy(
      'signature with a re-authentication begun before its form',
      `the sign-in you completed was started before you posted the signature's form, not for this signature: ${again}`,
    )
  }
  if (reauth.prompt !== 'login' || reauth.maxAge !== 0) {
    const asked = `prompt=${reauth.prompt ?? 'none'}, max_age=${reauth.maxAge ?? 'none'}`
    return forbiddenBy(
      `signature with a re-authentication not asked as prompt=login, max_age=0 (${asked})`,
      `your last sign-in at the identity provider was not a new one asked for this signature (${asked}; a signature needs prompt=login, max_age=0): ${again}`,
    )
  }
  if (reauth.authTime.getTime() < Math.floor(postedAt.getTime() / 1000) * 1000) {
    return forbiddenBy(
      'signature with an authentication older than its form',
      `your sign-in at the identity provider happened before you posted the signature's form: ${again}`,
    )
  }
  if (now.getTime() - reauth.authTime.getTime() > MAX_AUTH_AGE_MS) {
    return forbiddenBy(
      'signature with an authentication over five minutes old',
      `your sign-in at the identity provider is more than five minutes old: ${again}`,
    )
  }
  return undefined
}

/**
 * Step 3, back from the identity provider: the pending sign-off must be this session's and
 * unexpired, the session's own user must have re-authenticated as `judgeReauthentication` asks,
 * every rule of signing must still hold on the report and its order, and the report must hash as
 * the page's snapshot did. Then the signature, the report signed, and the revision it amends
 * superseded. `othersPending`: another user's session waits to sign this report.
 */
export function decideSignature(state: {
  pending: SignoffRecord | undefined
  othersPending: boolean
  report: ReportRecord
  order: OrderFacts | undefined
  replaced: ReportRecord | undefined
  sha256: string
  signer: Signer
  session: ReauthState
  now: Date
}): SignoffDecision<{ report: ReportRecord; superseded?: ReportRecord; signature: SignatureRecord }> {
  const { pending, report, signer, session, now } = state
  if (!pending) {
    return state.othersPending
      ? sessionProblem("this sign-off was started by another user: this browser's session is not theirs, and nothing was signed")
      : tokenProblem('no sign-off of this report is waiting in this session (it was completed, or it expired): open the sign-off page again')
  }
  if (pending.expires_at.toMillis() <= now.getTime()) return tokenProblem('this sign-off has expired (five minutes): open the sign-off page again')
  if (session.sessionId !== pending.session_id || session.userId !== pending.user_id || signer.user.id !== pending.user_id) {
    return sessionProblem('this sign-off was started in another session, by another user: the session is not theirs')
  }
  const postedAt = pending.created.toDate()
  if (session.refused && session.refused.at.getTime() >= postedAt.getTime()) {
    return sessionProblem(
      `you signed in again as ${session.refused.email ?? 'another user'}, not as ${signer.user.email ?? 'the user who started this sign-off'}: the signature must be the signer's own. Nothing was signed.`,
    )
  }
  const reauthRefusal = judgeReauthentication(postedAt, session.reauth, now)
  if (reauthRefusal) return stopped('reauthentication', reauthRefusal)
  const blockers = blockersFor(report, state.order, signer)
  if (blockers.length) return stopped('blocked', blockedRefusal(blockers))
  if (state.sha256 !== pending.sha256) return stopped('changed', conflictWith(CHANGED))

  const at = ts(now)
  const signature: SignatureRecord = {
    signer: signer.user,
    at,
    meaning: pending.meaning ?? 'approved',
    snapshot_id: pending.snapshot_id,
    sha256: pending.sha256,
    // judgeReauthentication accepted it, so it is there.
    auth_time: ts(session.reauth!.authTime),
  }
  const reason = `signed by ${signer.user.email ?? signer.user.id} (${signature.meaning}); snapshot ${pending.snapshot_id} sha256:${pending.sha256}`
  const signed: ReportRecord = {
    ...report,
    status: 'signed',
    signatures: [...report.signatures, signature],
    status_history: [...report.status_history, { from: 'in_review', to: 'signed', by: signer.user.id, at, reason }],
    updated: at,
  }
  const events = [event(signed, 'report.signed', { from: 'in_review', to: 'signed', reason })]
  const replaced = state.replaced?.status === 'signed' ? state.replaced : undefined
  if (!replaced) return allow({ report: signed, signature }, events)
  const supersededReason = `revision ${signed.revision} (report ${signed.id}) signed`
  const { pending_revision: _done, ...rest } = replaced
  const superseded: ReportRecord = {
    ...rest,
    status: 'superseded',
    superseded_by: signed.id,
    status_history: [...replaced.status_history, { from: 'signed', to: 'superseded', by: signer.user.id, at, reason: supersededReason }],
    updated: at,
  }
  events.push(event(replaced, 'report.superseded', { from: 'signed', to: 'superseded', reason: supersededReason }))
  return allow({ report: signed, superseded, signature }, events)
}
