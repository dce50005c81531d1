import { describe, expect, it } from 'vitest'
import { createKernel } from '../../../lib/kernel.js'
import { csrfToken } from '../../../lib/console/csrf.js'
import { clinicalDeps } from '../../../functions/clinical/deps.js'
import { createClinicalApp } from '../../../functions/clinical/service.js'
import { apiFor, makeWorld, rand } from '../../support/world.js'

/**
 * The clinical console's forms without a browser: each POST goes through the same stores and
 * decisions as the API (same audit events, same refusals), only from the platform's own origin
 * with the session's CSRF token, only for the roles the API asks, only in the caller's projects.
 */
describe('the clinical console: permissions, CSRF, tenancy and frozen fields of its forms', async () => {
  const CLINICAL = 'http://clinical.console.test'
  const world = await makeWorld({ LOG_LEVEL: 'silent', CLINICAL_PUBLIC_URL: CLINICAL, ADMIN_PUBLIC_URL: 'http://admin.console.test' })
  const deps = clinicalDeps(createKernel(world.deps.config, 'clinical', { firestore: world.deps.db.firestore }))
  const app = createClinicalApp(deps)
  const api = apiFor(app, world)
  const p = `/console/p/${world.project.id}`

  /** A browser of `userId`: its session cookie and the CSRF token its pages carry. */
  async function browserOf(userId: string) {
    const { value } = await world.deps.tokens.createSession({ userId, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
    const csrf = csrfToken({ key: world.deps.tokens.sessionKey(value) })
    const cookie = `platform_session=${value}`
    return {
      get: (path: string) => app.request(path, { headers: { cookie } }),
      post: (path: string, fields: Record<string, string>, opts: { origin?: string | null; csrf?: string | null } = {}) =>
        app.request(path, {
          method: 'POST',
          headers: {
            cookie,
            'content-type': 'application/x-www-form-urlencoded',
            ...(opts.origin === null ? {} : { origin: opts.origin ?? CLINICAL }),
          },
          body: new URLSearchParams({ ...fields, ...(opts.csrf === null ? {} : { csrf_token: opts.csrf ?? csrf }) }).toString(),
        }),
    }
  }
  const owner = await browserOf(world.owner.user.id)
  const events = async (action: string, actor: string) =>
    (await world.deps.db.col('audit_events').where('action', '==', action).where('actor.id', '==', actor).get()).docs.map((d) => d.data())

  it('creates a subject from the form, redirects to its page with a notice, and records subject.created by the person', async () => {
    const external = `P-${rand()}`
    const res = await owner.post(`${p}/subjects`, {
      external_id: external,
      sex: 'female',
      affected_status: 'affected',
      phenotypes: 'HP:0001250, HP:0001263',
    })
    expect(res.status).toBe(303)
    const location = res.headers.get('location')!
    expect(location).toMatch(new RegExp(`^${CLINICAL}${p}/subjects/[0-9a-f-]{36}$`))
    const id = location.split('/').at(-1)!
    const stored = await api('GET', `/subjects/${id}`)
    expect(stored.body).toMatchObject({ external_id: external, sex: 'female', affected_status: 'affected', phenotypes: ['HP:0001250', 'HP:0001263'] })
    const created = (await events('subject.created', world.owner.user.id)).filter((e) => e.entity.id === id)
    expect(created).toHaveLength(1)
    expect(created[0]!.actor.auth_method).toBe('session')
    const page = await (await owner.get(`${p}/subjects/${id}`)).text()
    expect(page).toContain(external)
  })

  it('re-renders the form with the field named and status 400 for bad input, and 409 for a taken external id', async () => {
    const bad = await owner.post(`${p}/subjects`, { external_id: 'has space', phenotypes: 'not-hpo' })
    expect(bad.status).toBe(400)
    const text = await bad.text()
    expect(text).toContain('id="f-external_id-error"')
    expect(text).toContain('id="f-phenotypes-error"')
    const external = `P-${rand()}`
    expect((await owner.post(`${p}/subjects`, { external_id: external })).status).toBe(303)
    const again = await owner.post(`${p}/subjects`, { external_id: external })
    expect(again.status).toBe(409)
    expect(await again.text()).toContain(`a subject with external_id &#39;${external}&#39; already exists in this project`)
  })

  it.each([
    ['from another site', { origin: 'https://evil.example' }],
    ['without an Origin', { origin: null }],
    ['without the CSRF token', { csrf: null }],
    ["with another session's token", { csrf: 'x'.repeat(43) }],
  ] as Array<[string, { origin?: string | null; csrf?: string | null }]>)(
    'refuses a form %s with a 403 page and an access.denied event, creating nothing',
    async (_, opts) => {
      const external = `P-${rand()}`
      const before = (await events('access.denied', world.owner.user.id)).length
      const res = await owner.post(`${p}/subjects`, { external_id: external }, opts)
      expect(res.status).toBe(403)
      expect((await api('GET', `/subjects?external_id=${external}`)).body).toEqual([])
      expect((await events('access.denied', world.owner.user.id)).length).toBe(before + 1)
    },
  )

  it('lets a viewer read the pages but not post: a 403 page naming the roles that may, and access.denied', async () => {
    const viewer = await world.caller(['viewer'])
    const browser = await browserOf(viewer.user.id)
    expect((await browser.get(`${p}/subjects`)).status).toBe(200)
    expect((await browser.get(`${p}/orders`)).status).toBe(200)
    const form = await browser.get(`${p}/subjects/new`)
    expect(form.status).toBe(403)
    expect(await form.text()).toContain('clinical.write')
    const res = await browser.post(`${p}/subjects`, { external_id: `P-${rand()}` })
    expect(res.status).toBe(403)
    expect((await events('access.denied', viewer.user.id)).length).toBeGreaterThanOrEqual(2)
  })

  it("answers 404 for another project's records and for a project the person is not in, as the API does", async () => {
    const other = await world.otherProject()
    const stranger = await world.caller([], other.project)
    const theirs = await browserOf(stranger.user.id)
    expect((await theirs.get(`${p}/subjects`)).status).toBe(404)
    const subject = (await api('POST', '/subjects', { body: { external_id: `P-${rand()}` } })).body as { id: string }
    // The owner's other project: the subject of this project is absent there.
    const elsewhere = `/console/p/${other.project.id}`
    expect((await owner.get(`${elsewhere}/subjects/${subject.id}`)).status).toBe(404)
    const edit = await owner.post(`${elsewhere}/subjects/${subject.id}/edit`, { display_name: 'Moved' })
    expect(edit.status).toBe(404)
    expect((await api('GET', `/subjects/${subject.id}`)).body.display_name).toBeUndefined()
  })

  it('answers a bad filter with a 400 page naming the field, as the API answers it', async () => {
    const res = await owner.get(`${p}/orders?status=shipped`)
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('status: ')
    expect((await owner.get(`${p}/orders?status=&priority=urgent&assignee=me`)).status).toBe(200)
  })

  it('finds subjects by an exact external id, a family id or a part of a name, saying in the address which it matched', async () => {
    const tag = rand()
    const created = (
      await api('POST', '/subjects', { body: { external_id: `P-${tag}`, display_name: `Lovelace-${tag}, Ada`, family_id: `FAM-${tag}` } })
    ).body
    for (const [q, by] of [
      [`P-${tag}`, 'external_id'],
      [`FAM-${tag}`, 'family_id'],
      [`lovelace-${tag}`, 'name'],
    ]) {
      const res = await owner.get(`${p}/subjects?q=${q}`)
      expect(res.status).toBe(302)
      const found = new URL(res.headers.get('location')!)
      expect(found.searchParams.get('by')).toBe(by)
      expect(await (await owner.get(`${found.pathname}${found.search}`)).text()).toContain(`/subjects/${created.id}`)
    }
  })

  it('sends a person without a session to the platform login, returning to the page', async () => {
    const res = await app.request(`${p}/orders`)
    expect(res.status).toBe(302)
    const login = new URL(res.headers.get('location')!)
    expect(login.origin).toBe('http://admin.console.test')
    expect(login.searchParams.get('return_to')).toBe(`${CLINICAL}${p}/orders`)
  })

  /** A trio through the API: three subjects of one family, a sample each, a draft order holding the three with their roles. */
  async function trio() {
    const bucket = world.project.bucket_name
    const family = `FAM-${rand()}`
    const subject = async (body: Record<string, unknown>) =>
      (await api('POST', '/subjects', { body: { external_id: `P-${rand()}`, family_id: family, ...body } })).body as { id: string }
    const mother = await subject({ sex: 'female', affected_status: 'unaffected' })
    const father = await subject({ sex: 'male', affected_status: 'unaffected' })
    const proband = await subject({ sex: 'male', affected_status: 'affected', mother_id: mother.id, father_id: father.id })
    const sample = async (subjectId: string) => {
      const external_id = `S-${rand()}`
      const fastq = ['R1', 'R2'].map((r) => `gs://${bucket}/fastq/${external_id}_${r}.fastq.gz`)
      return (await api('POST', '/samples', { body: { external_id, subject_id: subjectId, type: 'blood', fastq } })).body as { id: string }
    }
    const samples = { proband: await sample(proband.id), mother: await sample(mother.id), father: await sample(father.id) }
    const order = (await api('POST', '/orders', { body: { test_code: 'WGS-trio' } })).body as { id: string; accession: string }
    return { family, proband, mother, father, samples, order }
  }

  it('fills an order with samples and roles, signs it through its status button, and serves the samplesheet the API serves', async () => {
    const t = await trio()
    for (const [role, s] of Object.entries(t.samples)) {
      expect((await owner.post(`${p}/orders/${t.order.id}/samples`, { sample_id: s.id, role })).status).toBe(303)
    }
    const draft = await (await owner.get(`${p}/orders/${t.order.id}`)).text()
    expect(draft).toContain('id="move-signed"')
    expect((await owner.post(`${p}/orders/${t.order.id}/transition`, { to: 'signed' })).status).toBe(303)
    expect((await api('GET', `/orders/${t.order.id}`)).body.status).toBe('signed')
    // The owner's signed order offers several moves that take a reason, and the labflow's: each field its own id, each label its own field.
    const signed = await (await owner.get(`${p}/orders/${t.order.id}`)).text()
    const ids = [...signed.matchAll(/ id="([^"]+)"/g)].map((m) => m[1])
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([])
    expect(signed).toContain('id="reason-on_hold"')
    expect(signed).toContain('id="reason-cancelled"')
    const sheet = await owner.get(`${p}/orders/${t.order.accession}/samplesheet.csv`)
    expect(sheet.status).toBe(200)
    expect(sheet.headers.get('content-type')).toContain('text/csv')
    expect(await sheet.text()).toBe((await api('GET', `/orders/${t.order.id}/samplesheet`)).body)
    // The labflow moves as the API moves it: the first stage's advance; a repeat needs a reason (400, nothing moved); a viewer may not (403).
    expect((await owner.post(`${p}/orders/${t.order.id}/labflow`, { transition: 'advance-accessioning' })).status).toBe(303)
    expect((await api('GET', `/orders/${t.order.id}/labflow`)).body.stage.key).toBe('extraction')
    const noReason = await owner.post(`${p}/orders/${t.order.id}/labflow`, { transition: 'repeat-extraction' })
    expect(noReason.status).toBe(400)
    expect(await noReason.text()).toContain('transition &#39;repeat-extraction&#39; requires a reason')
    const viewer = await browserOf((await world.caller(['viewer'])).user.id)
    expect((await viewer.post(`${p}/orders/${t.order.id}/labflow`, { transition: 'repeat-extraction', reason: 'low yield' })).status).toBe(403)
    expect((await api('GET', `/orders/${t.order.id}/labflow`)).body.history).toHaveLength(2)
    // Signed: the edit form offers the assignee and due date only; a posted change to another field is the decision's 409.
    const edit = await (await owner.get(`${p}/orders/${t.order.id}/edit`)).text()
    expect(edit).toContain('name="due_date"')
    expect(edit).not.toContain('name="test_code"')
    expect((await owner.post(`${p}/orders/${t.order.id}/edit`, { due_date: '2026-12-24' })).status).toBe(303)
    expect((await api('GET', `/orders/${t.order.id}`)).body.due_date).toBe('2026-12-24')
    const tampered = await owner.post(`${p}/orders/${t.order.id}/edit`, { test_code: 'WES' })
    expect(tampered.status).toBe(409)
    expect(await tampered.text()).toContain('only assignee and due_date can change once an order is signed')
    expect((await api('GET', `/orders/${t.order.id}`)).body.test_code).toBe('WGS-trio')
    // Cancelling asks first (the no-script confirmation page), then moves with the reason.
    const ask = await owner.post(`${p}/orders/${t.order.id}/transition`, { to: 'cancelled', reason: 'duplicate request' })
    expect(ask.status).toBe(200)
    expect(await ask.text()).toContain('id="confirm"')
    expect((await api('GET', `/orders/${t.order.id}`)).body.status).toBe('signed')
  })

  it('shows a signed subject’s pedigree fields as frozen, and refuses a posted change to one with 409 naming the order, changing nothing', async () => {
    const t = await trio()
    for (const [role, s] of Object.entries(t.samples)) await api('POST', `/orders/${t.order.id}/samples/${s.id}`, { body: { role } })
    expect((await api('POST', `/orders/${t.order.id}/transition`, { body: { to: 'signed' } })).status).toBe(200)
    const edit = await (await owner.get(`${p}/subjects/${t.proband.id}/edit`)).text()
    expect(edit).not.toContain('name="sex"')
    expect(edit).not.toContain('name="affected_status"')
    expect(edit).toContain('name="display_name"')
    expect(edit).toContain(`Signed order ${t.order.accession} holds`)
    const res = await owner.post(`${p}/subjects/${t.proband.id}/edit`, { sex: 'female', display_name: 'Renamed' })
    expect(res.status).toBe(409)
    expect(await res.text()).toContain(`signed order ${t.order.accession}`)
    expect((await api('GET', `/subjects/${t.proband.id}`)).body).toMatchObject({ sex: 'male' })
    expect((await api('GET', `/subjects/${t.proband.id}`)).body.display_name).toBeUndefined()
    // The fields the order does not freeze still change.
    expect((await owner.post(`${p}/subjects/${t.proband.id}/edit`, { display_name: 'Proband, Test' })).status).toBe(303)
    expect((await api('GET', `/subjects/${t.proband.id}`)).body.display_name).toBe('Proband, Test')
  })

  it('refuses a move the order-status table does not give this person (no button shown) with the decision’s 403 and access.denied on the order', async () => {
    const t = await trio()
    const lab = await world.caller(['lab'])
    const browser = await browserOf(lab.user.id)
    const page = await (await browser.get(`${p}/orders/${t.order.id}`)).text()
    expect(page).not.toContain('id="move-cancelled"')
    const res = await browser.post(`${p}/orders/${t.order.id}/transition`, { to: 'cancelled', reason: 'duplicate', confirmed: 'yes' })
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('permission order.cancel is required')
    expect((await api('GET', `/orders/${t.order.id}`)).body.status).toBe('draft')
    const denied = (await events('access.denied', lab.user.id)).filter((e) => e.entity.type === 'order' && e.entity.id === t.order.id)
    expect(denied).toHaveLength(1)
  })

  it('draws the family as an SVG pedigree with a text table of the same members', async () => {
    const t = await trio()
    const res = await owner.get(`${p}/families/${t.family}`)
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toContain('<svg')
    expect(text.match(/<rect /g)).toHaveLength(2)
    expect(text.match(/<circle /g)).toHaveLength(1)
    expect(text).toContain(`Members of family ${t.family}`)
  })

  it("offers the project's members as assignees by name, lists orders by any of them, and names an order's assignee", async () => {
    const analyst = await world.caller(['analyst'])
    await world.deps.db.col('users').doc(analyst.user.id).update({ name: 'Ana Lyst' })
    const leaver = await world.caller([])
    const theirs = (await api('POST', '/orders', { body: { test_code: 'WGS-trio', assignee: analyst.user.id } })).body as { accession: string }
    const mine = (await api('POST', '/orders', { body: { test_code: 'WES' } })).body as { accession: string }

    const list = await (await owner.get(`${p}/orders`)).text()
    const offered = new RegExp(`<option value="${analyst.user.id}"\\s*>Ana Lyst</option>`)
    expect(list).toMatch(offered)
    expect(list).not.toContain(leaver.user.id)
    const byAnalyst = await (await owner.get(`${p}/orders?assignee=${analyst.user.id}`)).text()
    expect(byAnalyst).toContain(theirs.accession)
    expect(byAnalyst).not.toContain(mine.accession)
    expect(byAnalyst).toContain('assigned to Ana Lyst')
    expect(byAnalyst).toMatch(/<td>Ana Lyst<\/td>/)

    const form = await (await owner.get(`${p}/orders/new`)).text()
    expect(form).toMatch(offered)
    const created = await owner.post(`${p}/orders`, { test_code: 'WGS', priority: 'routine', assignee: analyst.user.id })
    expect(created.status).toBe(303)
    const refused = await owner.post(`${p}/orders`, { test_code: 'WGS', priority: 'routine', assignee: leaver.user.id })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('is not a member of this project')
  })
})
