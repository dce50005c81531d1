import { describe, expect, it } from 'vitest'
import { PERMISSIONS, projectRolesGrant, type ProjectRole } from '../../../../lib/auth/roles.js'
import { availableTransitions, checkMove, REPORT_EDGES, REPORT_STATUSES, type ReportShape } from '../../../../domain/reports/status.js'

const can = (role: ProjectRole) => (p: (typeof PERMISSIONS)[number]) => projectRolesGrant([role], p)
const ready: Omit<ReportShape, 'status'> = { conclusion: 'Positive.', unclassified: 0 }

describe('the report status table', () => {
  it('never lets a JSON request sign a report or supersede one', () => {
    expect(REPORT_EDGES.filter((e) => e.to === 'signed' || e.to === 'superseded')).toEqual([])
    for (const status of REPORT_STATUSES) {
      expect(availableTransitions({ status, ...ready }, () => true)).not.toContain('signed')
    }
  })

  it.each([
    ['draft', 'analyst', ['in_review']],
    ['draft', 'admin', ['in_review', 'cancelled', 'entered_in_error']],
    ['in_review', 'analyst', ['draft']],
    ['in_review', 'reviewer', ['draft']],
    ['in_review', 'admin', ['draft', 'cancelled', 'entered_in_error']],
    ['signed', 'reviewer', []],
    ['signed', 'admin', ['entered_in_error']],
    ['superseded', 'admin', ['entered_in_error']],
    ['cancelled', 'admin', ['entered_in_error']],
    ['entered_in_error', 'owner', []],
    ['draft', 'viewer', []],
    ['draft', 'lab', []],
  ] as const)('from %s, a %s may move to %j', (status, role, targets) => {
    expect(availableTransitions({ status, ...ready }, can(role))).toEqual(targets)
  })

  it('sends a report to review only with a conclusion and its included variants classified', () => {
    expect(checkMove({ status: 'draft', conclusion: ' ', unclassified: 2 }, 'in_review', () => true, undefined)).toEqual({
      ok: false,
      kind: 'guard',
      failed: ['has_conclusion', 'variants_classified'],
    })
    expect(availableTransitions({ status: 'draft', conclusion: undefined, unclassified: 0 }, can('analyst'))).toEqual([])
  })

  it('asks for a reason to cancel or to mark a report entered in error, and for report.cancel', () => {
    expect(checkMove({ status: 'draft', ...ready }, 'cancelled', () => true, undefined)).toMatchObject({ ok: false, kind: 'reason' })
    expect(checkMove({ status: 'signed', ...ready }, 'entered_in_error', can('reviewer'), 'x')).toEqual({
      ok: false,
      kind: 'permission',
      permission: 'report.cancel',
    })
    expect(checkMove({ status: 'signed', ...ready }, 'draft', () => true, undefined)).toEqual({ ok: false, kind: 'no_edge' })
  })
})
