import { describe, expect, it } from 'vitest'
import type { ProjectRole } from '../../../../lib/auth/roles.js'
import { fetchDoc, operationsOf } from '../openapi-doc.js'
import { makeReportsWorld, signThroughStore } from '../../../support/reports.js'

/**
 * DOMAIN.md's role matrix on every mutating route of the report service: analysts draft and
 * comment, reviewers resolve and sign (in the browser), viewers read. A caller one rung too low
 * gets 403 (with an access.denied event) and the report is unchanged; a caller who may act gets
 * 404 for a report of another project, as if it did not exist. The table must list exactly the
 * service's mutating operations.
 */
describe('reports: roles and tenancy on every mutating route', async () => {
  const w = await makeReportsWorld()
  const ops = operationsOf(await fetchDoc(w.app)).filter((o) => ['post', 'put', 'patch', 'delete'].includes(o.method))

  const { report, variants } = await w.draft()
  const v = variants[0]!
  await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: v.id } })
  const comment = (await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'review', comment: 'c' } })).body
  // A signed report of the same project, to amend.
  const signedOne = await w.draft({ body: { conclusion: 'Negative.' } })
  await w.api('POST', `/reports/${signedOne.report.id}/transition`, { body: { to: 'in_review' } })
  await signThroughStore(w, signedOne.report.id, await w.caller(['reviewer']))

  // The same records in another project, where the test's callers have no role.
  const other = await w.otherProject()
  const foreignOrder = await w.orderWithVariants(1, other.project)
  const inOther = (method: string, path: string, body?: unknown) => w.api(method, path, { body, project: other.project.id })
  const foreign = (await inOther('POST', '/reports', { order_id: foreignOrder.order.id })).body
  await inOther('POST', `/reports/${foreign.id}/variants`, { variant_id: foreignOrder.variants[0]!.id })
  const foreignComment = (await inOther('POST', `/reports/${foreign.id}/comments`, { type: 'general', comment: 'c' })).body

  interface Row {
    op: string
    tooLow: ProjectRole
    path: string
    foreignPath?: string
    body?: unknown
    foreignBody?: unknown
  }
  const ROWS: Row[] = [
    { op: 'createReport', tooLow: 'lab', path: '/reports', body: { order_id: report.order_id }, foreignBody: { order_id: foreign.order_id } },
    { op: 'updateReport', tooLow: 'lab', path: `/reports/${report.id}`, foreignPath: `/reports/${foreign.id}`, body: { notes: 'x' } },
    { op: 'deleteReport', tooLow: 'lab', path: `/reports/${report.id}`, foreignPath: `/reports/${foreign.id}` },
    {
      op: 'transitionReport',
      tooLow: 'lab',
      path: `/reports/${report.id}/transition`,
      foreignPath: `/reports/${foreign.id}/transition`,
      body: { to: 'cancelled', reason: 'x' },
    },
    {
      op: 'amendReport',
      tooLow: 'lab',
      path: `/reports/${signedOne.report.id}/amendments`,
      foreignPath: `/reports/${foreign.id}/amendments`,
      body: { reason: 'x' },
    },
    {
      op: 'addReportVariant',
      tooLow: 'lab',
      path: `/reports/${report.id}/variants`,
      foreignPath: `/reports/${foreign.id}/variants`,
      body: { variant_id: variants[1]!.id },
      foreignBody: { variant_id: foreignOrder.variants[0]!.id },
    },
    {
      op: 'updateReportVariant',
      tooLow: 'lab',
      path: `/reports/${report.id}/variants/${v.id}`,
      foreignPath: `/reports/${foreign.id}/variants/${foreignOrder.variants[0]!.id}`,
      body: { interpretation: 'x' },
    },
    {
      op: 'removeReportVariant',
      tooLow: 'lab',
      path: `/reports/${report.id}/variants/${v.id}`,
      foreignPath: `/reports/${foreign.id}/variants/${foreignOrder.variants[0]!.id}`,
    },
    {
      op: 'createReportComment',
      tooLow: 'lab',
      path: `/reports/${report.id}/comments`,
      foreignPath: `/reports/${foreign.id}/comments`,
      body: { type: 'general', comment: 'x' },
    },
    {
      op: 'updateReportComment',
      tooLow: 'viewer',
      path: `/reports/${report.id}/comments/${comment.id}`,
      foreignPath: `/reports/${foreign.id}/comments/${foreignComment.id}`,
      body: { comment: 'x' },
    },
    { op: 'createReportSnapshot', tooLow: 'lab', path: `/reports/${report.id}/snapshots`, foreignPath: `/reports/${foreign.id}/snapshots` },
  ]

  it('lists every mutating operation of the service', () => {
    expect(ROWS.map((r) => r.op).sort()).toEqual(ops.map((o) => o.op.operationId).sort())
  })

  const methodOf = (op: string) => ops.find((o) => o.op.operationId === op)!.method.toUpperCase()

  it.each(ROWS)('$op: 403 for a $tooLow, recorded, and the report is unchanged', async (row) => {
    const caller = await w.caller([row.tooLow])
    const before = await w.api('GET', `/reports/${report.id}`)
    const res = await w.api(methodOf(row.op), row.path, { body: row.body, token: caller.token })
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/^permission \S+ is required$/)
    expect((await w.api('GET', `/reports/${report.id}`)).body).toEqual(before.body)
    const denied = await w.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', caller.user.id).get()
    expect(denied.size).toBe(1)
  })

  it.each(ROWS)("$op: 404 for another project's report", async (row) => {
    const res = await w.api(methodOf(row.op), row.foreignPath ?? row.path, { body: row.foreignBody ?? row.body })
    expect(res.status).toBe(404)
    expect(res.body.detail).toMatch(/not found$/)
  })

  it('lets a viewer read every record, and nobody without a role in the project', async () => {
    const viewer = await w.caller(['viewer'])
    for (const path of [
      '/reports',
      `/reports/${report.id}`,
      `/reports/${report.id}/variants`,
      `/reports/${report.id}/variants/${v.id}`,
      `/reports/${report.id}/comments`,
      `/reports/${report.id}/snapshots`,
    ]) {
      expect((await w.api('GET', path, { token: viewer.token })).status, path).toBe(200)
    }
    const stranger = await w.caller(['owner'], other.project)
    expect((await w.api('GET', `/reports/${report.id}`, { token: stranger.token })).status).toBe(403)
    expect((await w.api('GET', `/reports/${report.id}`, { token: stranger.token, project: other.project.id })).status).toBe(404)
  })
})
