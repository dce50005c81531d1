import { describe, expect, it } from 'vitest'
import { GERMLINE_ID } from '../../../../domain/clinical/labflows.js'
import { rand } from '../../../support/world.js'
import { makeClinicalWorld } from '../../../support/clinical.js'

const stages = [
  { key: 'accessioning', name: 'Accessioning', order: 1, assignee_roles: ['lab'] },
  { key: 'capture', name: 'Exome capture', order: 2, assignee_roles: ['lab'] },
  { key: 'delivered', name: 'Delivered', order: 3, assignee_roles: ['analyst'] },
]
const transitions = [
  { id: 'advance-accessioning', kind: 'advance', from: 'accessioning', to: 'capture', permission: 'labflow.move', requires_reason: false },
  { id: 'complete-capture', kind: 'complete', from: 'capture', to: 'delivered', permission: 'run.submit', requires_reason: false },
]

describe('clinical: labflows', async () => {
  const w = await makeClinicalWorld()
  const lab = await w.caller(['lab'])
  const analyst = await w.caller(['analyst'])
  const labflow = (id: string, token?: string) => w.api('GET', `/orders/${id}/labflow`, { token })
  const take = (id: string, body: Record<string, unknown>, token?: string) => w.api('POST', `/orders/${id}/labflow/transitions`, { body, token })

  it("lists the platform's default germline flow without any seeding, with its stages and transitions", async () => {
    const list = await w.api('GET', '/labflows')
    expect(list.status).toBe(200)
    const germline = list.body.find((l: any) => l.id === GERMLINE_ID)
    expect(germline).toMatchObject({ key: 'germline', scope: 'platform', version: 1, latest_version: 1 })
    expect(germline.stages.map((s: any) => s.key)).toEqual(['accessioning', 'extraction', 'library_prep', 'sequencing', 'primary_qc', 'delivered'])
    const got = await w.api('GET', `/labflows/${GERMLINE_ID}`)
    expect(got.body).toEqual(germline)
    const reworks = got.body.transitions.filter((t: any) => t.kind === 'rework').map((t: any) => `${t.from}>${t.to}`)
    expect(reworks.sort()).toEqual(
      ['library_prep>extraction', 'primary_qc>extraction', 'primary_qc>library_prep', 'sequencing>extraction', 'sequencing>library_prep'].sort(),
    )
    expect(got.body.transitions.filter((t: any) => t.kind === 'remove').every((t: any) => t.permission === 'order.cancel' && t.requires_reason)).toBe(
      true,
    )
  })

  it('lets admins define a labflow and new versions of it; a platform labflow cannot be changed by a project', async () => {
    const key = `exome_${rand()}`
    const created = await w.api('POST', '/labflows', { body: { key, name: 'Exome', stages, transitions } })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ key, version: 1, scope: 'project' })
    expect((await w.api('POST', '/labflows', { body: { key, name: 'Again', stages, transitions } })).status).toBe(409)
    const v2 = await w.api('POST', `/labflows/${created.body.id}/versions`, { body: { stages, transitions: transitions.slice(0, 1) } })
    expect(v2.status).toBe(201)
    expect(v2.body).toMatchObject({ version: 2, name: 'Exome' })
    expect((await w.api('GET', `/labflows/${created.body.id}`)).body.version).toBe(2)
    expect((await w.api('GET', `/labflows/${created.body.id}?version=1`)).body.transitions).toHaveLength(2)
    expect((await w.api('GET', `/labflows/${created.body.id}/versions`)).body.map((v: any) => v.version)).toEqual([1, 2])
    const platform = await w.api('POST', `/labflows/${GERMLINE_ID}/versions`, { body: { stages, transitions } })
    expect(platform.status).toBe(409)
    expect((await w.api('POST', '/labflows', { body: { key: `x_${rand()}`, name: 'X', stages, transitions }, token: analyst.token })).status).toBe(
      403,
    )
    const broken = await w.api('POST', '/labflows', {
      body: { key: `bad_${rand()}`, name: 'Bad', stages, transitions: [{ ...transitions[0], to: 'nowhere' }] },
    })
    expect(broken.status).toBe(400)
    expect(broken.body.detail).toContain("transitions.0.to: no stage 'nowhere'")
    const { project } = await w.otherProject()
    expect((await w.api('GET', `/labflows/${created.body.id}`, { project: project.id })).status).toBe(404)
  })

  it('starts at the first stage when the order is signed, and moves by permission, with reasons where asked and history', async () => {
    const t = await w.trio()
    const before = await labflow(t.order.id)
    expect(before.body).toMatchObject({ status: 'not_started', stage: null, labflow: { id: GERMLINE_ID, version: null }, available_transitions: [] })
    expect((await take(t.order.id, { transition: 'advance-accessioning' })).status).toBe(409)
    await w.move(t.order.id, 'signed')
    const started = await labflow(t.order.id, lab.token)
    expect(started.body).toMatchObject({ status: 'active', stage: { key: 'accessioning' }, labflow: { version: 1 } })
    expect(started.body.available_transitions.map((x: any) => x.id)).toEqual(['advance-accessioning']) // remove needs order.cancel
    const advanced = await take(t.order.id, { transition: 'advance-accessioning', assignee: lab.user.id }, lab.token)
    expect(advanced.status).toBe(200)
    expect(advanced.body).toMatchObject({ stage: { key: 'extraction' }, assignee: lab.user.id })
    const noReason = await take(t.order.id, { transition: 'repeat-extraction' }, lab.token)
    expect(noReason.status).toBe(400)
    expect(noReason.body.detail).toMatch(/^reason:/)
    const repeated = await take(t.order.id, { transition: 'repeat-extraction', reason: 'low yield' }, lab.token)
    expect(repeated.body.stage.key).toBe('extraction')
    const wrong = await take(t.order.id, { transition: 'complete-primary_qc' }, lab.token)
    expect(wrong.status).toBe(409)
    expect(wrong.body.detail).toBe(
      "transition 'complete-primary_qc' cannot be taken at stage extraction; allowed: advance-extraction, repeat-extraction",
    )
    for (const x of ['advance-extraction', 'advance-library_prep']) expect((await take(t.order.id, { transition: x }, lab.token)).status).toBe(200)
    const rework = await take(t.order.id, { transition: 'rework-sequencing-to-library_prep', reason: 'adapter dimers' }, lab.token)
    expect(rework.body.stage.key).toBe('library_prep')
    expect((await take(t.order.id, { transition: 'remove-library_prep', reason: 'x' }, lab.token)).status).toBe(403)
    const after = await labflow(t.order.id)
    expect(after.body.history.map((h: any) => h.transition)).toEqual([
      'start',
      'advance-accessioning',
      'repeat-extraction',
      'advance-extraction',
      'advance-library_prep',
      'rework-sequencing-to-library_prep',
    ])
    expect(after.body.history[2]).toMatchObject({ from: 'extraction', to: 'extraction', by: lab.user.id, reason: 'low yield' })
    const events = await w.deps.db.col('audit_events').where('entity.id', '==', t.order.id).where('action', '==', 'order.labflow_moved').get()
    expect(events.size).toBe(5)
  })

  it('keeps the version an order was signed with when a new version appears', async () => {
    const key = `pinned_${rand()}`
    const created = await w.api('POST', '/labflows', { body: { key, name: 'Pinned', stages, transitions } })
    const t = await w.trio()
    expect((await w.api('PUT', `/orders/${t.order.id}`, { body: { labflow_id: created.body.id } })).status).toBe(200)
    await w.move(t.order.id, 'signed')
    await w.api('POST', `/labflows/${created.body.id}/versions`, { body: { stages, transitions: [] } })
    const state = await labflow(t.order.id, analyst.token)
    expect(state.body.labflow).toMatchObject({ id: created.body.id, version: 1 })
    expect(state.body.available_transitions.map((x: any) => x.id)).toEqual(['advance-accessioning'])
    await take(t.order.id, { transition: 'advance-accessioning' }, analyst.token)
    expect((await take(t.order.id, { transition: 'complete-capture' }, lab.token)).status).toBe(403)
    const done = await take(t.order.id, { transition: 'complete-capture' }, analyst.token)
    expect(done.body).toMatchObject({ status: 'completed', stage: { key: 'delivered' }, available_transitions: [] })
    const unknown = await w.api('POST', '/orders', { body: { test_code: 'X', labflow_id: '00000000-0000-4000-8000-000000000000' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.detail).toMatch(/^labflow_id:/)
  })

  it('does not move the labflow of an order on hold', async () => {
    const t = await w.trio()
    await w.move(t.order.id, 'signed')
    await w.move(t.order.id, 'on_hold', 'consent pending')
    const res = await take(t.order.id, { transition: 'advance-accessioning' })
    expect(res.status).toBe(409)
    expect(res.body.detail).toContain('on_hold')
  })
})
