import { describe, expect, it } from 'vitest'
import { csrfToken } from '../../../lib/console/index.js'
import { createKernel } from '../../../lib/kernel.js'
import { SESSION_COOKIE } from '../../../lib/http.js'
import type { ProjectRole } from '../../../lib/auth/roles.js'
import { auditDeps } from '../../../functions/audit/deps.js'
import { createAuditApp } from '../../../functions/audit/service.js'
import { makeReportsWorld } from '../../support/reports.js'

/**
 * The report console's forms without a browser: each POST is the API's change (same store, same
 * audit event, same refusal) and is refused without the session's CSRF token, from another origin,
 * without the role (a 403 page naming it, and access.denied), or on another project's report (404).
 * The audit history page checks every event's chain link and needs audit.read.
 */

const ORIGIN = 'http://reports.console.test'

describe('the report console: permissions, CSRF, Origin and tenancy of its forms', async () => {
  const w = await makeReportsWorld({ REPORTS_PUBLIC_URL: ORIGIN, AUDIT_PUBLIC_URL: 'http://audit.console.test' })
  const audit = createAuditApp(auditDeps(createKernel(w.deps.config, 'audit', { firestore: w.deps.db.firestore })))

  /** A person with `roles` in the project and a browser session: its cookie and its forms' token. */
  async function person(roles: ProjectRole[]) {
    const { user } = await w.caller(roles)
    const session = await w.deps.tokens.createSession({ userId: user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
    return { user, cookie: `${SESSION_COOKIE}=${session.value}`, csrf: csrfToken({ key: w.deps.tokens.sessionKey(session.value) }) }
  }
  const ann = await person(['analyst'])
  const vera = await person(['viewer'])
  const audrey = await person(['auditor'])

  const p = w.project.id
  async function post(
    path: string,
    who: { cookie: string; csrf: string },
    fields: Record<string, string>,
    opts: { origin?: string | null; csrf?: string | null } = {},
  ) {
    const body = new URLSearchParams(fields)
    const token = opts.csrf === undefined ? who.csrf : opts.csrf
    if (token !== null) body.set('csrf_token', token)
    const headers: Record<string, string> = { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' }
    const origin = opts.origin === undefined ? ORIGIN : opts.origin
    if (origin !== null) headers.origin = origin
    const res = await w.app.request(`/console/p/${p}${path}`, { method: 'POST', headers, body })
    return { status: res.status, location: res.headers.get('location'), text: await res.text() }
  }
  const get = async (path: string, who: { cookie: string }, app: { request: typeof w.app.request } = w.app) => {
    const res = await app.request(path, { headers: { cookie: who.cookie } })
    return { status: res.status, text: await res.text() }
  }
  const events = async (entityId: string, action: string) =>
    (await w.deps.db.col('audit_events').where('entity.id', '==', entityId).where('action', '==', action).get()).docs.map((d) => d.data())

  it('creates a draft from the order page with the session, audited as the API audits it, and redirects to the report', async () => {
    const { order } = await w.orderWithVariants(1)
    const created = await post(`/orders/${order.accession}/reports`, ann, { template_type: 'germline_diagnostic', summary: 'Trio genome.' })
    expect(created.status).toBe(303)
    const id = /\/reports\/([0-9a-f-]{36})$/.exec(created.location ?? '')?.[1]
    expect(id).toBeDefined()
    const [event] = await events(id!, 'report.created')
    expect(event).toMatchObject({ actor: { id: ann.user.id, auth_method: 'session' }, project_id: p })
    const page = await get(`/console/p/${p}/reports/${id}`, ann)
    expect(page.status).toBe(200)
    expect(page.text).toContain('Trio genome.')
  })

  it.each([
    ['without the security token', { csrf: null }],
    ["with another session's token", { csrf: 'x'.repeat(43) }],
    ['from another origin', { origin: 'https://evil.example' }],
    ['without an Origin', { origin: null }],
  ] as const)('refuses a form %s with a 403 page and access.denied, creating nothing', async (_, opts) => {
    const { order } = await w.orderWithVariants(1)
    const before = Date.now()
    const res = await post(`/orders/${order.accession}/reports`, ann, { summary: 'forged' }, opts)
    expect(res.status).toBe(403)
    expect(res.text).toContain('Not allowed')
    const list = await w.api('GET', `/reports?order_id=${order.accession}`)
    expect(list.body).toEqual([])
    const denied = (await w.deps.db.col('audit_events').where('action', '==', 'access.denied').get()).docs
      .map((d) => d.data())
      .filter((e) => e.occurred_at.toMillis() >= before - 1000)
    expect(denied.length).toBeGreaterThan(0)
  })

  it('shows a viewer the report but refuses her a draft with a 403 page naming the roles, and records access.denied', async () => {
    const { report, variants } = await w.draft()
    expect((await get(`/console/p/${p}/reports/${report.id}`, vera)).status).toBe(200)
    const res = await post(`/reports/${report.id}/variants`, vera, { variant_id: variants[0]!.id, acmg_classification: 'pathogenic' })
    expect(res.status).toBe(403)
    expect(res.text).toContain('report.draft')
    expect(res.text).toContain('analyst')
    const [denied] = (await w.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', vera.user.id).get()).docs
    expect(denied?.data().change.reason).toContain('report.draft')
    expect((await w.api('GET', `/reports/${report.id}/variants`)).body).toEqual([])
  })

  it("answers another project's report as absent, and a project its member is not in as absent", async () => {
    const other = await w.otherProject()
    const elsewhere = await w.draft()
    const { user } = await w.caller(['analyst'], other.project)
    const session = await w.deps.tokens.createSession({ userId: user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
    const stranger = { cookie: `${SESSION_COOKIE}=${session.value}`, csrf: csrfToken({ key: w.deps.tokens.sessionKey(session.value) }) }
    expect((await get(`/console/p/${p}/reports/${elsewhere.report.id}`, stranger)).status).toBe(404)
    expect((await get(`/console/p/${other.project.id}/reports/${elsewhere.report.id}`, stranger)).status).toBe(404)
    expect((await post(`/reports/${elsewhere.report.id}/comments`, stranger, { type: 'review', comment: 'x' })).status).toBe(404)
    expect((await w.api('GET', `/reports/${elsewhere.report.id}/comments`)).body).toEqual([])
  })

  it("refuses an analyst the resolution of a review comment as the API does: the rule's 403 on the page, and access.denied", async () => {
    const { report } = await w.draft()
    const comment = await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'review', comment: 'Check the father.' } })
    const res = await post(`/reports/${report.id}/comments/${comment.body.id}`, ann, { resolved: 'yes' })
    expect(res.status).toBe(403)
    expect(res.text).toContain('comment.resolve')
    const denied = (await w.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', ann.user.id).get()).docs.map(
      (d) => d.data(),
    )
    expect(denied.map((e) => e.entity)).toContainEqual({ type: 'report', id: report.id })
    expect((await w.api('GET', `/reports/${report.id}/comments`)).body[0].resolved).toBeNull()
  })

  it("re-renders a refused form with the rule's reason next to it and the refusal's status", async () => {
    const { report, variants } = await w.draft()
    const bad = await post(`/reports/${report.id}/variants`, ann, { variant_id: variants[0]!.id, acmg_criteria: 'PS2 PM7' })
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('PM7')
    expect(bad.text).toContain('aria-invalid="true"')
    const added = await post(`/reports/${report.id}/variants`, ann, {
      variant_id: variants[0]!.id,
      acmg_classification: 'pathogenic',
      acmg_criteria: 'PS2, PM2_Supporting PP3',
      include_in_report: 'yes',
    })
    expect(added.status).toBe(303)
    const [variant] = (await w.api('GET', `/reports/${report.id}/variants`)).body
    expect(variant).toMatchObject({ acmg_classification: 'pathogenic', acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'], include_in_report: true })
    // The page says what the criteria combine to, as the API's criteria_suggest does.
    expect((await get(`/console/p/${p}/reports/${report.id}`, ann)).text).toContain(variant.criteria_suggest.rule)
    // No conclusion yet: the move to review is refused by the same rule as the API's.
    const moved = await post(`/reports/${report.id}/transition`, ann, { to: 'in_review' })
    expect(moved.status).toBe(409)
    expect(moved.text).toContain('conclusion')
    expect((await w.api('GET', `/reports/${report.id}`)).body.status).toBe('draft')
  })

  it('shows the audit history of a report newest first with each chain link verified, to auditors only', async () => {
    const { report } = await w.draft()
    await post(`/reports/${report.id}/comments`, ann, { type: 'general', comment: 'Looks complete.' })
    const history = `/console/p/${p}/history?entity=${encodeURIComponent(`report:${report.id}`)}`
    const page = await get(history, audrey, audit)
    expect(page.status).toBe(200)
    const actions = [...page.text.matchAll(/<code>(report\.[a-z_]+)<\/code>/g)].map((m) => m[1])
    expect(actions).toEqual(['report.comment_added', 'report.created'])
    expect(page.text).toContain('none failed')
    expect(page.text).not.toContain('FAILED')
    const [queried] = (await w.deps.db.col('audit_events').where('action', '==', 'audit.queried').where('actor.id', '==', audrey.user.id).get()).docs
    expect(queried?.data().change.query).toMatchObject({ entity: `report:${report.id}`, via: 'console' })
    const refused = await get(history, ann, audit)
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('audit.read')
    expect((await get(`/console/p/${p}/history?entity=report`, audrey, audit)).status).toBe(400)
  })
})
