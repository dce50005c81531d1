import { describe, expect, it } from 'vitest'
import type { AdminDeps } from '../../../functions/admin/deps.js'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import {
  consolePages,
  consoleProject,
  html,
  redirectToDefaultProject,
  redirectWithNotice,
  renderConsole,
  requireConsoleSession,
} from '../../../lib/console/index.js'
import { forbiddenBy, Refused } from '../../../lib/decision.js'
import { serviceApp } from '../../../lib/service.js'
import { admin } from '../../../functions/admin/service.js'
import { makeWorld } from '../../support/world.js'

/**
 * The console's kernel on a service of its own (the admin service's dependencies, pages of the
 * test's): where `/console/` goes, the project of the address and the permission checked, the
 * headers and assets, a refusal thrown by a store as a page, the notice after a redirect.
 */
describe('the console kernel', async () => {
  const ADMIN = 'http://admin.test'
  const world = await makeWorld({ ADMIN_PUBLIC_URL: ADMIN, COMPUTE_PUBLIC_URL: 'http://compute.test' })
  const pages = consolePages<AdminDeps>()
  pages.get('/', (c) => redirectToDefaultProject(c, 'runs'))
  pages.get('/p/:project/runs', async (c) => {
    const s = await consoleProject(c, 'run.read')
    return renderConsole(c, {
      title: 'Runs',
      section: 'runs',
      session: s,
      project: { project: s.project },
      body: html`<h1>Runs of ${s.project.name}</h1>`,
    })
  })
  pages.get('/p/:project/cancel', async (c) => {
    await consoleProject(c, 'run.cancel')
    return renderConsole(c, { title: 'Cancel', body: html`<h1>Cancel</h1>` })
  })
  pages.get('/refused', async (c) => {
    await requireConsoleSession(c)
    throw new Refused(forbiddenBy('a test rule', 'the rule of this test forbids it'), {
      scope: { project_id: world.project.id },
      entity: { type: 'test', id: 't' },
    })
  })
  pages.get('/noticed', async (c) => redirectWithNotice(c, `${ADMIN}/console/shown`, 'It is done.'))
  pages.get('/shown', async (c) => renderConsole(c, { title: 'Shown', session: await requireConsoleSession(c), body: html`<h1>Shown</h1>` }))
  const app = serviceApp({ ...admin.definition, pages: [pages] }, world.deps)

  async function sessionOf(userId: string) {
    const now = world.deps.clock.now()
    const { value } = await world.deps.tokens.createSession({ userId, ttlSeconds: 3600, now, effectiveRoles: {} })
    return `platform_session=${value}`
  }
  const get = (path: string, cookie?: string) => app.request(`${ADMIN}${path}`, { headers: cookie ? { cookie } : {} })
  const viewer = await world.caller(['viewer'])
  const viewerCookie = await sessionOf(viewer.user.id)

  it("sends /console/ to the person's default project, else their only one, else the project chooser", async () => {
    const slash = await get('/console/', viewerCookie)
    expect(slash.status).toBe(301)
    expect(slash.headers.get('location')).toBe(`${ADMIN}/console`)
    const only = await get('/console', viewerCookie)
    expect(only.status).toBe(302)
    expect(only.headers.get('location')).toBe(`${ADMIN}/console/p/${world.project.id}/runs`)
    const other = await world.otherProject()
    await world.deps.store.setMemberRoles(SYSTEM_ACTOR, { id: 'system', roles: ['owner'] }, other.project, viewer.user, ['viewer'])
    expect((await get('/console', viewerCookie)).headers.get('location')).toBe(`${ADMIN}/console/projects`)
    await world.deps.store.setDefaultProject(SYSTEM_ACTOR, viewer.user, other.project)
    expect((await get('/console', viewerCookie)).headers.get('location')).toBe(`${ADMIN}/console/p/${other.project.id}/runs`)
  })

  it('shows a project page with the console headers: its script and styles from itself only', async () => {
    const res = await get(`/console/p/${world.project.id}/runs`, viewerCookie)
    expect(res.status).toBe(200)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("style-src 'self'")
    expect(csp).toContain("default-src 'none'")
    expect(res.headers.get('cache-control')).toBe('no-store')
    const page = await res.text()
    expect(page).toContain('Runs of Germline')
    expect(page).toMatch(new RegExp(`<a href="http://compute.test/console/p/${world.project.id}/runs"\\s+aria-current="page">Runs</a>`))
    expect(page).not.toMatch(/<script>|style="/)
    const script = await get('/console/assets/console.js')
    expect(script.headers.get('content-type')).toContain('javascript')
    expect(script.headers.get('cache-control')).toContain('max-age')
  })

  it('answers 404 for a project the person cannot see, and a 403 page naming the roles for a permission they lack, with access.denied', async () => {
    const { project: foreign } = await world.otherProject()
    expect((await get(`/console/p/${foreign.id}/runs`, await sessionOf((await world.caller(['viewer'])).user.id))).status).toBe(404)
    expect((await get('/console/p/no-such-project/runs', viewerCookie)).status).toBe(404)
    const res = await get(`/console/p/${world.project.id}/cancel`, viewerCookie)
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('This page needs the role analyst, reviewer, admin or owner in the project Germline (permission run.cancel).')
    const denied = await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', viewer.user.id).get()
    expect(denied.docs.map((d) => d.get('change.reason'))).toContain('missing permission run.cancel')
  })

  it("shows a store's refusal as a page with its status, and records a 403's access.denied", async () => {
    const res = await get('/console/refused', viewerCookie)
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('the rule of this test forbids it')
    const denied = await world.deps.db.col('audit_events').where('action', '==', 'access.denied').where('entity.type', '==', 'test').get()
    expect(denied.size).toBe(1)
  })

  it('says what a form did on the page it redirects to, once', async () => {
    const res = await get('/console/noticed', viewerCookie)
    expect(res.status).toBe(303)
    const notice = res.headers.get('set-cookie')!.split(';')[0]!
    const shown = await get('/console/shown', `${viewerCookie}; ${notice}`)
    expect(await shown.text()).toContain('<p class="notice ok" role="status" id="notice">It is done.</p>')
    expect(shown.headers.get('set-cookie')).toMatch(/console_notice=;/)
  })
})
