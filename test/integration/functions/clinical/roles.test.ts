import { describe, expect, it } from 'vitest'
import type { ProjectRole } from '../../../../lib/auth/roles.js'
import { fetchDoc, operationsOf } from '../openapi-doc.js'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

/**
 * DOMAIN.md's role matrix on every mutating route of the clinical-data service: a caller one rung
 * too low gets 403 (whatever the record), and a caller who may act gets 404 for a record of
 * another project (or 400 where the other project's record is named in the body), as if it did
 * not exist. The table must list exactly the service's mutating operations.
 */
describe('clinical: roles and tenancy on every mutating route', async () => {
  const w = await makeClinicalWorld()
  const ops = operationsOf(await fetchDoc(w.app)).filter((o) => ['post', 'put', 'patch', 'delete'].includes(o.method))

  const t = await w.trio()
  const labflow = await w.api('POST', '/labflows', {
    body: {
      key: `flow_${rand()}`,
      name: 'Flow',
      stages: [{ key: 'a', name: 'A', order: 1 }],
      transitions: [],
    },
  })
  // The same records in another project, where the test's callers have no role.
  const other = await w.otherProject()
  const inOther = (path: string, body: unknown) => w.api('POST', path, { body, project: other.project.id })
  const foreignSubject = (await inOther('/subjects', { external_id: `P-${rand()}`, sex: 'female' })).body
  const foreignSample = (
    await inOther('/samples', {
      external_id: `S-${rand()}`,
      subject_id: foreignSubject.id,
      type: 'blood',
    })
  ).body
  const foreignOrder = (await inOther('/orders', { test_code: 'X', samples: [{ sample_id: foreignSample.id, role: 'proband' }] })).body
  const foreignLabflow = (
    await inOther('/labflows', { key: `flow_${rand()}`, name: 'F', stages: [{ key: 'a', name: 'A', order: 1 }], transitions: [] })
  ).body

  interface Row {
    op: string
    tooLow: ProjectRole
    path: string
    foreignPath?: string
    body?: unknown
    foreignBody?: unknown
    /** 404 for a path id of another project; 400 for another project's record named in the body. */
    foreign: 404 | 400 | 'none'
  }
  const ROWS: Row[] = [
    {
      op: 'createSubject',
      tooLow: 'viewer',
      path: '/subjects',
      body: { external_id: `P-${rand()}` },
      foreignBody: { external_id: `P-${rand()}`, mother_id: foreignSubject.id },
      foreign: 400,
    },
    {
      op: 'updateSubject',
      tooLow: 'viewer',
      path: `/subjects/${t.subjects.proband.id}`,
      foreignPath: `/subjects/${foreignSubject.id}`,
      body: { display_name: 'x' },
      foreign: 404,
    },
    {
      op: 'deleteSubject',
      tooLow: 'viewer',
      path: `/subjects/${t.subjects.proband.id}`,
      foreignPath: `/subjects/${foreignSubject.id}`,
      foreign: 404,
    },
    {
      op: 'createSample',
      tooLow: 'viewer',
      path: '/samples',
      body: { external_id: `S-${rand()}`, subject_id: t.subjects.proband.id, type: 'blood' },
      foreignBody: { external_id: `S-${rand()}`, subject_id: foreignSubject.id, type: 'blood' },
      foreign: 400,
    },
    {
      op: 'updateSample',
      tooLow: 'viewer',
      path: `/samples/${t.samples.proband.id}`,
      foreignPath: `/samples/${foreignSample.id}`,
      body: { type: 'dna' },
      foreign: 404,
    },
    { op: 'deleteSample', tooLow: 'viewer', path: `/samples/${t.samples.proband.id}`, foreignPath: `/samples/${foreignSample.id}`, foreign: 404 },
    {
      op: 'createOrder',
      tooLow: 'viewer',
      path: '/orders',
      body: { test_code: 'X' },
      foreignBody: { test_code: 'X', samples: [{ sample_id: foreignSample.id, role: 'proband' }] },
      foreign: 400,
    },
    {
      op: 'updateOrder',
      tooLow: 'viewer',
      path: `/orders/${t.order.id}`,
      foreignPath: `/orders/${foreignOrder.id}`,
      body: { priority: 'stat' },
      foreign: 404,
    },
    { op: 'deleteOrder', tooLow: 'viewer', path: `/orders/${t.order.id}`, foreignPath: `/orders/${foreignOrder.id}`, foreign: 404 },
    {
      op: 'transitionOrder',
      tooLow: 'viewer',
      path: `/orders/${t.order.id}/transition`,
      foreignPath: `/orders/${foreignOrder.id}/transition`,
      body: { to: 'signed' },
      foreign: 404,
    },
    {
      op: 'addOrderSample',
      tooLow: 'viewer',
      path: `/orders/${t.order.id}/samples/${t.samples.mother.id}`,
      foreignPath: `/orders/${t.order.id}/samples/${foreignSample.id}`,
      body: { role: 'mother' },
      foreign: 404,
    },
    {
      op: 'removeOrderSample',
      tooLow: 'viewer',
      path: `/orders/${t.order.id}/samples/${t.samples.mother.id}`,
      foreignPath: `/orders/${foreignOrder.id}/samples/${foreignSample.id}`,
      foreign: 404,
    },
    {
      op: 'moveOrderLabflow',
      tooLow: 'viewer',
      path: `/orders/${t.order.id}/labflow/transitions`,
      foreignPath: `/orders/${foreignOrder.id}/labflow/transitions`,
      body: { transition: 'advance-accessioning' },
      foreign: 404,
    },
    {
      op: 'createLabflow',
      tooLow: 'reviewer',
      path: '/labflows',
      body: { key: `k_${rand()}`, name: 'K', stages: [{ key: 'a', name: 'A', order: 1 }], transitions: [] },
      foreign: 'none',
    },
    {
      op: 'createLabflowVersion',
      tooLow: 'reviewer',
      path: `/labflows/${labflow.body.id}/versions`,
      foreignPath: `/labflows/${foreignLabflow.id}/versions`,
      body: { stages: [{ key: 'a', name: 'A', order: 1 }], transitions: [] },
      foreign: 404,
    },
  ]

  it('lists every mutating operation of the service', () => {
    expect(ROWS.map((r) => r.op).sort()).toEqual(ops.map((o) => o.op.operationId).sort())
  })

  const methodOf = (op: string) => ops.find((o) => o.op.operationId === op)!.method.toUpperCase()

  it.each(ROWS)('$op: 403 for a $tooLow, and the record is unchanged', async (row) => {
    const caller = await w.caller([row.tooLow])
    const before = await w.api('GET', `/orders/${t.order.id}`)
    const res = await w.api(methodOf(row.op), row.path, { body: row.body, token: caller.token })
    expect(res.status).toBe(403)
    expect(res.body.detail).toMatch(/^permission \S+ is required$/)
    expect((await w.api('GET', `/orders/${t.order.id}`)).body.updated).toBe(before.body.updated)
  })

  it.each(ROWS.filter((r) => r.foreign !== 'none'))("$op: $foreign for another project's record", async (row) => {
    const res = await w.api(methodOf(row.op), row.foreignPath ?? row.path, { body: row.foreignBody ?? row.body })
    expect(res.status).toBe(row.foreign)
    if (row.foreign === 404) expect(res.body.detail).toMatch(/not found$/)
  })

  it('lets a viewer read every record, and lists only what a lab member may do with an order', async () => {
    const viewer = await w.caller(['viewer'])
    for (const path of [
      '/subjects',
      `/subjects/${t.subjects.proband.id}`,
      '/samples',
      `/samples/${t.samples.proband.id}`,
      `/samples/${t.samples.proband.id}/sampleinfo`,
      '/orders',
      `/orders/${t.order.id}`,
      `/orders/${t.order.id}/samples`,
      `/orders/${t.order.id}/samplesheet`,
      `/orders/${t.order.id}/labflow`,
      '/labflows',
      `/labflows/${labflow.body.id}`,
    ]) {
      expect((await w.api('GET', path, { token: viewer.token })).status, path).toBe(200)
    }
    expect((await w.api('GET', `/orders/${t.order.id}`, { token: viewer.token })).body.available_transitions).toEqual([])
    const lab = await w.caller(['lab'])
    expect((await w.api('GET', `/orders/${t.order.id}`, { token: lab.token })).body.available_transitions).toEqual(['signed'])
    expect((await w.api('GET', `/orders/${t.order.id}`)).body.available_transitions).toEqual(['signed', 'cancelled', 'entered_in_error'])
    const stranger = await w.caller([], other.project)
    expect((await w.api('GET', '/subjects', { token: stranger.token })).status).toBe(403)
  })
})
