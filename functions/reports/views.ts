import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { canInProject } from '../../lib/auth/access.js'
import type { Permission } from '../../lib/auth/roles.js'
import { iso } from '../../lib/db.js'
import { notFound } from '../../lib/errors.js'
import type { Prefetch } from '../../lib/http.js'
import { UUID_RE } from '../../lib/ids.js'
import { publicBase } from '../../lib/pages.js'
import { combineCriteria, parseCriteria } from '../../domain/reports/acmg.js'
import { blockersFor, contributorsOf, describeBlocker, transitionsFor, type OrderFacts, type ReportProject } from '../../domain/reports/decide.js'
import type { CommentRecord, ReportRecord, SnapshotRecord, UserRef } from '../../domain/reports/model.js'
import { canonicalizationOf } from '../../domain/reports/snapshot.js'
import type { JoinedVariant } from '../../domain/reports/store.js'
import type { ReportsDeps, ReportsEnv } from './deps.js'
import type { Comment, Report, ReportVariant, Snapshot } from './schemas.js'

/**
 * Every route under /reports/{id} reads the report first: it is declared, so the kernel reads it in
 * the same round trip as the caller's account (lib/http.ts, `Prefetch`) and loadReport finds it there.
 */
export const reportPrefetch: Array<Prefetch<ReportsDeps>> = (['get', 'post', 'patch', 'delete'] as const).map((method) => ({
  method,
  paths: [
    '/reports/{id}',
    '/reports/{id}/transition',
    '/reports/{id}/amendments',
    '/reports/{id}/variants',
    '/reports/{id}/variants/{variant_id}',
    '/reports/{id}/comments',
    '/reports/{id}/comments/{comment_id}',
    '/reports/{id}/snapshots',
  ],
  docs: ({ id }, deps) => (id && UUID_RE.test(id) ? [deps.reports.refs.report(id)] : []),
}))

/** Records as the API shows them, and the per-request helpers every report route uses. */
export const canFor = (c: Context<ReportsEnv>) => (permission: Permission) => canInProject(c.get('principal'), c.get('project'), permission)

export function projectOf(c: Context<ReportsEnv>): ReportProject {
  return { id: c.get('project').id, org_id: c.get('project').org_id }
}

export function callerRef(c: Context<ReportsEnv>): UserRef {
  const u = c.get('principal').user
  return { id: u.id, name: u.name, ...(u.email ? { email: u.email } : {}) }
}

export async function loadReport(c: Context<ReportsEnv>, id: string): Promise<ReportRecord> {
  const report = await c.get('deps').reports.get(c.get('project').id, id, c.get('reads'))
  if (!report) throw notFound('report')
  return report
}

export const reportBase = (c: Context<ReportsEnv>) => publicBase(c)

/** Reports as the API shows them, with what this caller may do with each now (which depends on its order: one read for all). */
export async function toReports(c: Context<ReportsEnv>, records: ReportRecord[]): Promise<Array<z.infer<typeof Report>>> {
  const orders = records.length ? await c.get('deps').reports.ordersOf(records) : new Map<string, OrderFacts>()
  return records.map((r) => toReport(c, r, orders.get(r.order_id)))
}

export const presentReport = async (c: Context<ReportsEnv>, r: ReportRecord) => (await toReports(c, [r]))[0]!

function toReport(c: Context<ReportsEnv>, r: ReportRecord, order: OrderFacts | undefined): z.infer<typeof Report> {
  const can = canFor(c)
  const base = `${reportBase(c)}/${r.id}`
  return {
    id: r.id,
    project_id: r.project_id,
    order_id: r.order_id,
    order_accession: r.order_accession,
    status: r.status,
    template_type: r.template_type,
    summary: r.summary,
    notes: r.notes,
    conclusion: r.conclusion,
    author: r.author,
    contributors: contributorsOf(r),
    revision: r.revision,
    replaces: r.replaces,
    amendment: r.amendment ? { ...r.amendment, at: iso(r.amendment.at)! } : undefined,
    pending_revision: r.pending_revision,
    superseded_by: r.superseded_by,
    signatures: r.signatures.map((s) => ({ ...s, at: iso(s.at)!, auth_time: iso(s.auth_time)! })),
    status_history: r.status_history.map((h) => ({
      from: h.from as ReportRecord['status'],
      to: h.to as ReportRecord['status'],
      by: h.by,
      at: iso(h.at)!,
      reason: h.reason,
    })),
    variant_count: r.variant_count,
    unclassified_count: r.unclassified_count,
    comment_count: r.comment_count,
    open_review_comments: r.open_review_comments,
    snapshot_count: r.snapshot_count,
    latest_snapshot: r.latest_snapshot ? { ...r.latest_snapshot, taken_at: iso(r.latest_snapshot.taken_at)! } : undefined,
    available_transitions: transitionsFor(r, order, can),
    sign_off:
      r.status === 'in_review'
        ? { url: `${base}/signoff/`, blockers: blockersFor(r, order, { user: c.get('principal').user, can }).map(describeBlocker) }
        : null,
    print_url: `${base}/print`,
    created: iso(r.created)!,
    updated: iso(r.updated)!,
  }
}

export function toVariant(v: JoinedVariant): z.infer<typeof ReportVariant> {
  const r = v.record
  const parsed = parseCriteria(r.acmg_criteria)
  return {
    report_id: r.report_id,
    variant_id: r.variant_id,
    in_cache: v.cached !== undefined,
    variant: v.cached ?? null,
    acmg_classification: r.acmg_classification ?? null,
    acmg_criteria: r.acmg_criteria,
    criteria_suggest: combineCriteria(parsed.ok ? parsed.value : []),
    transcript: r.transcript ?? null,
    hgvs_c: r.hgvs_c ?? null,
    hgvs_p: r.hgvs_p ?? null,
    inheritance: r.inheritance ?? null,
    interpretation: r.interpretation ?? null,
    include_in_report: r.include_in_report,
    added_by: r.added_by,
    added_at: iso(r.added_at)!,
    updated: iso(r.updated)!,
  }
}

export function toComment(c: CommentRecord): z.infer<typeof Comment> {
  return {
    id: c.id,
    report_id: c.report_id,
    type: c.type,
    comment: c.comment,
    author: c.author,
    created: iso(c.created)!,
    updated: iso(c.updated)!,
    edited_at: iso(c.edited_at),
    resolved: c.resolved ? { by: c.resolved.by, at: iso(c.resolved.at)! } : null,
    copied_from: c.copied_from,
  }
}

export function toSnapshot(s: SnapshotRecord): z.infer<typeof Snapshot> {
  return {
    id: s.id,
    report_id: s.report_id,
    seq: s.seq,
    sha256: s.sha256,
    canonicalization: canonicalizationOf(s),
    taken_by: s.taken_by,
    taken_at: iso(s.taken_at)!,
    report_status: s.report_status,
    content: JSON.parse(s.content) as Record<string, unknown>,
  }
}
