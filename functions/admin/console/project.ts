import type { Context } from 'hono'
import { canInProject, projectRolesOf, type OrgRecord, type ProjectRecord } from '../../../lib/auth/access.js'
import { PROJECT_ROLES, rolesAboveGranter, type ProjectRole } from '../../../lib/auth/roles.js'
import { UUID_RE } from '../../../lib/ids.js'
import type { AdminEnv } from '../deps.js'
import { granterIn } from '../routes/projects.js'
import { AddMember, serviceAccountEmail } from '../schemas.js'
import { adminConsole } from './app.js'
import {
  auditContext,
  badge,
  checkForm,
  confirmView,
  consoleProject,
  csrfField,
  field,
  formRefusal,
  html,
  ownConsoleUrl,
  redirectWithNotice,
  renderConsole,
  stopWithPage,
  time,
  withoutBlanks,
  type ConsoleProject,
  type Raw,
} from './kit.js'

/**
 * A project's administration (project admins; members see it read-only): its members and their
 * roles, changed with the store's decideMemberRoles (nobody changes their own roles, nobody grants
 * above their own), and its cloud credentials (the service account the platform impersonates).
 */

const ROLE_HELP: Record<ProjectRole, string> = {
  viewer: 'reads everything',
  lab: 'subjects, samples, orders, files',
  analyst: 'runs pipelines, drafts reports',
  reviewer: 'signs reports',
  admin: 'members, credentials, pipelines',
  owner: 'deletes the project',
  auditor: 'reads the audit log',
  pipeline: 'for service users that run pipelines',
}

function rolesFieldset(opts: { id: string; legend: string; checked: readonly ProjectRole[]; allowed: readonly ProjectRole[]; error?: string }): Raw {
  return html`<fieldset id="${opts.id}" ${opts.error ? html` aria-describedby="${opts.id}-error"` : ''}>
    <legend>${opts.legend}</legend>
    ${PROJECT_ROLES.map(
      (r) =>
        html`<label
          ><input
            type="checkbox"
            name="roles"
            value="${r}"
            ${opts.checked.includes(r) ? html` checked` : ''}${opts.allowed.includes(r) ? '' : html` disabled`}
          />
          ${r} <span class="muted">(${ROLE_HELP[r]})</span></label
        >`,
    )}
    ${opts.error ? html`<p class="error" id="${opts.id}-error">${opts.error}</p>` : ''}
  </fieldset>`
}

interface MemberForms {
  /** 'add', or the user id of the member whose roles form it is. */
  form?: string
  errors?: Record<string, string>
  values?: { email?: string; roles?: string[] }
}

const projectView = (s: ConsoleProject): { project: ProjectRecord; org?: OrgRecord } => ({ project: s.project, ...(s.org ? { org: s.org } : {}) })

async function membersPage(c: Context<AdminEnv>, s: ConsoleProject, forms: MemberForms = {}, status: 200 | 400 | 403 | 404 | 409 = 200) {
  const deps = c.get('deps')
  const { project } = s
  const members = (await deps.store.listMembers(project.id)).sort((a, b) => (a.user?.email ?? a.user_id).localeCompare(b.user?.email ?? b.user_id))
  const manage = projectRolesOf(s.principal, project)
  const canManage = canInProject(s.principal, project, 'members.manage')
  // What the person may give: nothing above their own highest role (decideMemberRoles says the same, and is what decides).
  const allowed = PROJECT_ROLES.filter((r) => rolesAboveGranter(manage, [r]).length === 0)
  const base = `/p/${project.id}`
  const body = html`<p class="crumbs">
      <a href="${ownConsoleUrl(c, `/orgs/${project.org_id}`)}">${s.org?.name ?? 'Organization'}</a> › ${project.name}
    </p>
    <h1>Members of ${project.name}</h1>
    <p class="actions"><a href="${ownConsoleUrl(c, `${base}/credentials`)}">Cloud credentials</a></p>
    <div class="table-wrap">
      <table id="members">
        <caption>
          Members and their roles
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">E-mail or id</th>
            <th scope="col">Roles</th>
            ${canManage ? html`<th scope="col">Change</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${members.map((m) => {
            const self = m.user_id === s.principal.user.id
            const open = forms.form === m.user_id
            return html`<tr id="member-${m.user_id}">
              <td>${m.user?.name ?? '—'}${m.user?.kind === 'service_user' ? html` ${badge('service user', 'info')}` : ''}</td>
              <td>${m.user?.email ?? html`<code>${m.user_id}</code>`}</td>
              <td>${m.roles.join(', ')}</td>
              ${
                canManage
                  ? html`<td>
                      ${
                        self
                          ? html`<span class="muted">your own roles: another admin changes them</span>`
                          : html`<details${open ? html` open` : ''}>
                            <summary>Roles of ${m.user?.email ?? m.user_id}</summary>
                            <form class="stack" method="post" action="${ownConsoleUrl(c, `${base}/members/${m.user_id}`)}">
                              ${csrfField(s)}
                              ${rolesFieldset({
                                id: `roles-${m.user_id}`,
                                legend: 'Roles',
                                checked: (open ? forms.values?.roles : m.roles) as ProjectRole[],
                                allowed,
                                error: open ? forms.errors?.roles : undefined,
                              })}
                              <div><button type="submit">Save the roles</button></div>
                            </form>
                            <form method="post" action="${ownConsoleUrl(c, `${base}/members/${m.user_id}/remove`)}" data-confirm="Remove ${m.user?.email ?? m.user_id} from ${project.name}?">
                              ${csrfField(s)}<button type="submit" class="danger">Remove from the project</button>
                            </form>
                          </details>`
                      }
                    </td>`
                  : ''
              }
            </tr>`
          })}
        </tbody>
      </table>
    </div>
    ${
      canManage
        ? html`<h2>Add a member</h2>
            <p>
              A person by e-mail (their account is made on their first sign-in), or a service user of ${s.org?.name ?? 'the organization'} by its id.
            </p>
            <form class="stack" method="post" action="${ownConsoleUrl(c, `${base}/members`)}" id="add-member">
              ${csrfField(s)}
              ${field({
                name: 'email',
                label: 'E-mail, or a service user id',
                value: forms.form === 'add' ? forms.values?.email : undefined,
                error: forms.form === 'add' ? forms.errors?.email : undefined,
                required: true,
              })}
              ${rolesFieldset({ id: 'add-roles', legend: 'Roles', checked: (forms.form === 'add' ? forms.values?.roles : ['viewer']) as ProjectRole[], allowed, error: forms.form === 'add' ? forms.errors?.roles : undefined })}
              <div><button type="submit">Add the member</button></div>
            </form>`
        : html`<p class="muted">Project admins add and change members.</p>`
    }`
  return renderConsole(c, { title: `Members of ${project.name}`, section: 'admin', session: s, project: projectView(s), body }, status)
}

adminConsole.get('/p/:project/members', async (c) => membersPage(c, await consoleProject(c, 'project.read')))

adminConsole.post('/p/:project/members', async (c) => {
  const s = await consoleProject(c, 'members.manage')
  const deps = c.get('deps')
  const who = s.form.get('email')
  const values = { email: who, roles: s.form.all('roles') }
  const asked = UUID_RE.test(who) ? { user_id: who } : { email: who.toLowerCase() }
  const checked = checkForm(AddMember, withoutBlanks({ ...asked, roles: values.roles.length ? values.roles : undefined }))
  if (!checked.ok) {
    const errors = { email: checked.errors.email ?? checked.errors.user_id, roles: checked.errors.roles && 'Choose at least one role.' }
    return membersPage(
      c,
      s,
      { form: 'add', errors: Object.fromEntries(Object.entries(errors).filter(([, v]) => v)) as Record<string, string>, values },
      400,
    )
  }
  try {
    const user = checked.data.email ? await deps.store.ensureUser(checked.data.email) : await deps.store.getUser(checked.data.user_id!)
    if (!user) return membersPage(c, s, { form: 'add', errors: { email: 'There is no account with this id.' }, values }, 404)
    await deps.store.setMemberRoles(auditContext(c), granterIn(c, s.project), s.project, user, checked.data.roles)
    return redirectWithNotice(
      c,
      ownConsoleUrl(c, `/p/${s.project.id}/members`),
      `${user.email ?? user.name} now has the roles ${checked.data.roles.join(', ')}.`,
    )
  } catch (error) {
    const refused = await formRefusal(c, error)
    return membersPage(
      c,
      s,
      { form: 'add', errors: { [refused.status === 404 ? 'email' : 'roles']: refused.detail }, values },
      refused.status === 412 ? 409 : refused.status,
    )
  }
})

adminConsole.post('/p/:project/members/:user', async (c) => {
  const s = await consoleProject(c, 'members.manage')
  const deps = c.get('deps')
  const userId = c.req.param('user')
  const roles = s.form.all('roles')
  const user = UUID_RE.test(userId) ? await deps.store.getUser(userId) : undefined
  if (!user) return stopWithPage(c, 404, 'There is no such member.')
  const values = { roles }
  if (!roles.length)
    return membersPage(
      c,
      s,
      { form: userId, errors: { roles: 'Choose at least one role; to take every role away, remove the member.' }, values },
      400,
    )
  const checked = checkForm(AddMember, { user_id: userId, roles })
  if (!checked.ok) return membersPage(c, s, { form: userId, errors: { roles: checked.errors.roles ?? 'Unknown role.' }, values }, 400)
  try {
    await deps.store.setMemberRoles(auditContext(c), granterIn(c, s.project), s.project, user, checked.data.roles)
    return redirectWithNotice(
      c,
      ownConsoleUrl(c, `/p/${s.project.id}/members`),
      `${user.email ?? user.name} now has the roles ${checked.data.roles.join(', ')}.`,
    )
  } catch (error) {
    const refused = await formRefusal(c, error)
    return membersPage(c, s, { form: userId, errors: { roles: refused.detail }, values }, refused.status === 412 ? 409 : refused.status)
  }
})

adminConsole.post('/p/:project/members/:user/remove', async (c) => {
  const s = await consoleProject(c, 'members.manage')
  const deps = c.get('deps')
  const userId = c.req.param('user')
  const member = (await deps.store.listMembers(s.project.id)).find((m) => m.user_id === userId)
  if (!member) return stopWithPage(c, 404, `There is no such member of ${s.project.name}.`)
  const name = member.user?.email ?? member.user?.name ?? userId
  if (!s.form.confirmed) {
    return renderConsole(c, {
      session: s,
      section: 'admin',
      project: projectView(s),
      ...confirmView({
        session: s,
        title: 'Remove a member',
        question: `Remove ${name} from ${s.project.name}? They, and every token of theirs, lose access to the project at once.`,
        action: ownConsoleUrl(c, `/p/${s.project.id}/members/${userId}/remove`),
        submit: 'Remove the member',
        cancel: ownConsoleUrl(c, `/p/${s.project.id}/members`),
      }),
    })
  }
  await deps.store.removeMember(auditContext(c), granterIn(c, s.project), s.project, userId)
  return redirectWithNotice(c, ownConsoleUrl(c, `/p/${s.project.id}/members`), `${name} is no longer a member of ${s.project.name}.`)
})

async function credentialsPage(
  c: Context<AdminEnv>,
  s: ConsoleProject,
  form: { value?: string; error?: string } = {},
  status: 200 | 400 | 403 | 409 = 200,
) {
  const { project } = s
  const canManage = canInProject(s.principal, project, 'credentials.manage')
  const creds = project.credentials
  const body = html`<p class="crumbs"><a href="${ownConsoleUrl(c, `/p/${project.id}/members`)}">${project.name}</a> › Cloud credentials</p>
    <h1>Cloud credentials of ${project.name}</h1>
    <p>
      The project's runs and files act as a Google service account that the platform impersonates: it holds no key of it. The file service's own
      identity needs <code>roles/iam.serviceAccountTokenCreator</code> on that account.
    </p>
    <dl class="facts" id="credentials">
      <dt>Bucket</dt>
      <dd><code>gs://${project.bucket_name}</code></dd>
      <dt>Service account</dt>
      <dd>${creds ? html`<code>${creds.service_account_email}</code>` : badge('not set: runs are refused', 'warn')}</dd>
      <dt>Set</dt>
      <dd>${creds ? time(creds.configured_at) : '—'}</dd>
    </dl>
    ${
      canManage
        ? html`<h2>${creds ? 'Change the service account' : 'Set the service account'}</h2>
            <form class="stack" method="post" action="${ownConsoleUrl(c, `/p/${project.id}/credentials`)}" id="set-credentials">
              ${csrfField(s)}
              ${field({
                name: 'service_account_email',
                label: 'Service account e-mail',
                type: 'email',
                hint: 'It serves this project only: one another project holds is refused.',
                value: form.value ?? creds?.service_account_email,
                error: form.error,
                required: true,
              })}
              <div><button type="submit">Save</button></div>
            </form>
            ${
              creds
                ? html`<form
                    method="post"
                    action="${ownConsoleUrl(c, `/p/${project.id}/credentials/remove`)}"
                    data-confirm="Remove the service account? The project's runs are refused until another is set."
                  >
                    ${csrfField(s)}<button type="submit" class="danger">Remove the service account</button>
                  </form>`
                : ''
            }`
        : ''
    }`
  return renderConsole(c, { title: `Cloud credentials of ${project.name}`, section: 'admin', session: s, project: projectView(s), body }, status)
}

adminConsole.get('/p/:project/credentials', async (c) => credentialsPage(c, await consoleProject(c, 'credentials.read')))

adminConsole.post('/p/:project/credentials', async (c) => {
  const s = await consoleProject(c, 'credentials.manage')
  const deps = c.get('deps')
  const value = s.form.get('service_account_email')
  const checked = serviceAccountEmail.safeParse(value)
  if (!checked.success) return credentialsPage(c, s, { value, error: checked.error.issues[0]?.message ?? 'not a service account e-mail' }, 400)
  try {
    await deps.store.setCredentials(auditContext(c), s.project, checked.data, deps.config.storage.platformAccounts)
    return redirectWithNotice(c, ownConsoleUrl(c, `/p/${s.project.id}/credentials`), `The project now acts as ${checked.data}.`)
  } catch (error) {
    const refused = await formRefusal(c, error)
    return credentialsPage(c, s, { value, error: refused.detail }, refused.status === 403 ? 403 : refused.status === 409 ? 409 : 400)
  }
})

adminConsole.post('/p/:project/credentials/remove', async (c) => {
  const s = await consoleProject(c, 'credentials.manage')
  const deps = c.get('deps')
  if (!s.project.credentials) return stopWithPage(c, 404, 'The project has no service account to remove.')
  if (!s.form.confirmed) {
    return renderConsole(c, {
      session: s,
      section: 'admin',
      project: projectView(s),
      ...confirmView({
        session: s,
        title: 'Remove the service account',
        question: `Remove ${s.project.credentials.service_account_email} from ${s.project.name}? Its runs are refused until another is set.`,
        action: ownConsoleUrl(c, `/p/${s.project.id}/credentials/remove`),
        submit: 'Remove it',
        cancel: ownConsoleUrl(c, `/p/${s.project.id}/credentials`),
      }),
    })
  }
  await deps.store.setCredentials(auditContext(c), s.project, null, deps.config.storage.platformAccounts)
  return redirectWithNotice(c, ownConsoleUrl(c, `/p/${s.project.id}/credentials`), 'The service account is removed.')
})
