import type { Permission } from '../../lib/auth/roles.js'

/**
 * A report's statuses (FHIR DiagnosticReport, docs/reports.md) and the one table of how they move, as
 * data. Two moves are not in the table because no JSON request makes them: `in_review → signed`
 * happens only through the browser sign-off (re-authentication, then a signature), and `signed →
 * superseded` only when an amendment of the report is signed, in the same transaction.
 *
 *   draft → in_review → (browser sign-off) → signed → (its amendment signed) → superseded
 *   in_review → draft                draft | in_review → cancelled (reason)
 *   any but entered_in_error → entered_in_error (reason)
 */
export const REPORT_STATUSES = ['draft', 'in_review', 'signed', 'superseded', 'cancelled', 'entered_in_error'] as const
export type ReportStatus = (typeof REPORT_STATUSES)[number]

/** Statuses whose content no longer changes, whatever happens to the report afterwards. */
export const CLOSED: ReadonlySet<ReportStatus> = new Set<ReportStatus>(['signed', 'superseded', 'cancelled', 'entered_in_error'])
/** Statuses in which comments are written, edited and resolved. */
export const DISCUSSABLE: ReadonlySet<ReportStatus> = new Set<ReportStatus>(['draft', 'in_review'])

/**
 * `has_conclusion`: a report goes to review with its conclusion written. `variants_classified`:
 * every variant included in the report has an ACMG classification. Both are checked on the
 * report's current content by the store (ReportShape).
 */
export type ReportGuard = 'has_conclusion' | 'variants_classified'

export interface ReportEdge {
  from: ReportStatus
  to: ReportStatus
  permission: Permission
  reasonRequired: boolean
  guards: readonly ReportGuard[]
}

export const REPORT_EDGES: readonly ReportEdge[] = [
  { from: 'draft', to: 'in_review', permission: 'report.draft', reasonRequired: false, guards: ['has_conclusion', 'variants_classified'] },
  { from: 'in_review', to: 'draft', permission: 'report.draft', reasonRequired: false, guards: [] },
  ...(['draft', 'in_review'] as const).map((from): ReportEdge => ({
    from,
    to: 'cancelled',
    permission: 'report.cancel',
    reasonRequired: true,
    guards: [],
  })),
  ...REPORT_STATUSES.filter((s) => s !== 'entered_in_error').map((from): ReportEdge => ({
    from,
    to: 'entered_in_error',
    permission: 'report.cancel',
    reasonRequired: true,
    guards: [],
  })),
]

export interface ReportShape {
  status: ReportStatus
  conclusion?: string
  /** Variants included in the report that have no classification. */
  unclassified: number
}

export const edgeBetween = (from: ReportStatus, to: ReportStatus) => REPORT_EDGES.find((e) => e.from === from && e.to === to)

export function failedGuards(edge: ReportEdge, report: ReportShape): ReportGuard[] {
  return edge.guards.filter((g) => {
    switch (g) {
      case 'has_conclusion':
        return !report.conclusion?.trim()
      case 'variants_classified':
        return report.unclassified > 0
    }
  })
}

export const GUARD_MESSAGES: Record<ReportGuard, (r: ReportShape) => string> = {
  has_conclusion: () => 'it has no conclusion',
  variants_classified: (r) => `${r.unclassified} included variant${r.unclassified === 1 ? ' has' : 's have'} no ACMG classification`,
}

/** The statuses this caller may move the report to now (never `signed`: see the sign-off). */
export function availableTransitions(report: ReportShape, can: (p: Permission) => boolean): ReportStatus[] {
  return REPORT_EDGES.filter((e) => e.from === report.status && can(e.permission) && !failedGuards(e, report).length).map((e) => e.to)
}

export type MoveCheck =
  | { ok: true; edge: ReportEdge }
  | { ok: false; kind: 'no_edge' | 'reason' }
  | { ok: false; kind: 'guard'; failed: ReportGuard[] }
  | { ok: false; kind: 'permission'; permission: Permission }

export function checkMove(report: ReportShape, to: ReportStatus, can: (p: Permission) => boolean, reason: string | undefined): MoveCheck {
  const edge = edgeBetween(report.status, to)
  if (!edge) return { ok: false, kind: 'no_edge' }
  if (!can(edge.permission)) return { ok: false, kind: 'permission', permission: edge.permission }
  const failed = failedGuards(edge, report)
  if (failed.length) return { ok: false, kind: 'guard', failed }
  if (edge.reasonRequired && !reason?.trim()) return { ok: false, kind: 'reason' }
  return { ok: true, edge }
}
