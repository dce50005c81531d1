import {
  auditContext,
  csrfField,
  html,
  loginUrl,
  ownConsoleUrl,
  redirectWithNotice,
  renderConsole,
  requireConsoleSession,
  stopWithPage,
} from './kit.js'
import { endBrowserSession } from '../routes/auth.js'
import { visibleProjects } from '../routes/projects.js'
import { adminConsole } from './app.js'

/** Account: who the signed-in person is, and their roles in each organization and project (what GET /users/me says). */

// The admin service's console opens on the person's account.
adminConsole.get('/', (c) => c.redirect(ownConsoleUrl(c, '/account'), 302))

adminConsole.get('/account', async (c) => {
  const session = await requireConsoleSession(c)
  const { principal } = session
  const { store } = c.get('deps')
  const projects = await visibleProjects(store, principal)
  const named = await store.listOrgs([...new Set([...principal.orgRoles.keys(), ...projects.map((p) => p.org_id)])])
  const orgName = new Map(named.map((o) => [o.id, o.name]))
  const orgs = named.filter((o) => principal.orgRoles.has(o.id))
  const projectRows = projects
    .map((p) => ({ p, roles: [...(principal.projectRoles.get(p.id) ?? [])], via: principal.orgRoles.get(p.org_id) }))
    .sort((a, b) => a.p.name.localeCompare(b.p.name))
  const u = principal.user
  const body = html`<h1>Account</h1>
    <dl class="facts" id="me">
      <dt>Name</dt>
      <dd>${u.name}</dd>
      <dt>E-mail</dt>
      <dd>${u.email ?? '—'}</dd>
      <dt>Account id</dt>
      <dd><code>${u.id}</code></dd>
      <dt>Platform administrator</dt>
      <dd>${u.platform_admin ? 'yes (may create organizations)' : 'no'}</dd>
    </dl>
    <p class="actions"><a class="button" href="tokens" id="cli-tokens">CLI tokens</a> <a class="button secondary" href="projects">Projects</a></p>
    <h2>Organizations</h2>
    ${
      orgs.length
        ? html`<div class="table-wrap">
            <table id="org-roles">
              <caption class="visually-hidden">
                Your organization roles
              </caption>
              <thead>
                <tr>
                  <th scope="col">Organization</th>
                  <th scope="col">Role</th>
                </tr>
              </thead>
              <tbody>
                ${orgs.map(
                  (o) =>
                    html`<tr>
                      <td><a href="orgs/${o.id}">${o.name}</a></td>
                      <td>${principal.orgRoles.get(o.id)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">You hold no organization role.</p>`
    }
    <h2>Projects</h2>
    ${
      projectRows.length
        ? html`<div class="table-wrap">
            <table id="project-roles">
              <caption class="visually-hidden">
                Your project roles
              </caption>
              <thead>
                <tr>
                  <th scope="col">Project</th>
                  <th scope="col">Organization</th>
                  <th scope="col">Roles</th>
                </tr>
              </thead>
              <tbody>
                ${projectRows.map(
                  (r) =>
                    html`<tr>
                      <td>${r.p.name} <span class="muted">(${r.p.slug})</span></td>
                      <td>${orgName.get(r.p.org_id) ?? ''}</td>
                      <td>${[...r.roles, ...(r.via ? [`${r.via === 'org_owner' ? 'owner' : 'admin'} (as ${r.via})`] : [])].join(', ') || '—'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">You are not a member of any project yet: an administrator adds you.</p>`
    }`
  return renderConsole(c, { title: 'Account', section: 'account', session, body })
})

/** Sign-out (the header's form on every service's pages posts here): the session ends everywhere at once. */
adminConsole.post('/sign-out', async (c) => {
  await requireConsoleSession(c)
  await endBrowserSession(c)
  const again = loginUrl(c.get('deps').config, `${c.get('deps').config.publicUrls.admin ?? ''}/console/account`)
  return renderConsole(c, {
    title: 'Signed out',
    body: html`<h1>Signed out</h1>
      <p class="notice ok" role="status" id="signed-out">Your platform session has ended on every service.</p>
      ${again ? html`<p><a href="${again}">Sign in again</a></p>` : ''}`,
  })
})

/** The project chooser: the projects the person can see, and the default one the console (and the CLI) open (PUT /users/me/default-context). */
adminConsole.get('/projects', async (c) => {
  const session = await requireConsoleSession(c)
  const { store, config } = c.get('deps')
  const [projects, current] = await Promise.all([visibleProjects(store, session.principal), store.getDefaultProject(session.principal.user.id)])
  const orgs = new Map((await store.listOrgs([...new Set(projects.map((p) => p.org_id))])).map((o) => [o.id, o.name]))
  const runs = config.publicUrls.compute
  const body = html`<h1>Projects</h1>
    <p>Choose the project the console opens. It is also the default project of the command-line tool.</p>
    ${
      projects.length
        ? html`<div class="table-wrap">
            <table id="projects">
              <caption class="visually-hidden">
                Projects you can open
              </caption>
              <thead>
                <tr>
                  <th scope="col">Project</th>
                  <th scope="col">Organization</th>
                  <th scope="col">Default</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${projects
                  .sort((a, b) => a.name.localeCompare(b.name))
                  .map(
                    (p) =>
                      html`<tr>
                        <td>
                          ${runs ? html`<a href="${runs}/console/p/${p.id}/runs">${p.name}</a>` : p.name} <span class="muted">(${p.slug})</span>
                        </td>
                        <td>${orgs.get(p.org_id) ?? ''}</td>
                        <td>${p.id === current ? html`<span class="badge ok">default</span>` : ''}</td>
                        <td>
                          ${
                            p.id === current
                              ? ''
                              : html`<form class="inline" method="post" action="projects/default">
                                  ${csrfField(session)}<input type="hidden" name="project_id" value="${p.id}" />
                                  <button type="submit" class="secondary">Make default<span class="visually-hidden">: ${p.name}</span></button>
                                </form>`
                          }
                        </td>
                      </tr>`,
                  )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">You are not a member of any project yet: an administrator adds you.</p>`
    }`
  return renderConsole(c, { title: 'Projects', section: 'account', session, body })
})

adminConsole.post('/projects/default', async (c) => {
  const session = await requireConsoleSession(c)
  const { store } = c.get('deps')
  const id = session.form.get('project_id')
  const project = (await visibleProjects(store, session.principal)).find((p) => p.id === id)
  if (!project) return stopWithPage(c, 404, 'There is no such project, or you are not a member of it.')
  await store.setDefaultProject(auditContext(c), session.principal.user, project)
  return redirectWithNotice(c, ownConsoleUrl(c, '/projects'), `${project.name} is now your default project.`)
})
