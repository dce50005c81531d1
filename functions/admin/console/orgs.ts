import type { Context } from 'hono'
import { canInOrg, type OrgRecord } from '../../../lib/auth/access.js'
import { ORG_ROLES, type OrgPermission } from '../../../lib/auth/roles.js'
import { refuse } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { paginate } from '../../../lib/pagination.js'
import type { ServiceUserRecord } from '../../../domain/tenancy/service-users.js'
import type { AdminEnv } from '../deps.js'
import { orgVisible } from '../org-access.js'
import { assertMayChangeOrgMember, organizationsOf } from '../routes/organizations.js'
import { visibleProjects } from '../routes/projects.js'
import { AddOrgMember, CreateOrganization, CreateProject, CreateServiceUser } from '../schemas.js'
import { adminConsole } from './app.js'
import {
  auditContext,
  badge,
  checkForm,
  confirmView,
  csrfField,
  field,
  formRefusal,
  html,
  ownConsoleUrl,
  pager,
  redirectWithNotice,
  renderConsole,
  requireConsoleOrg,
  requireConsoleSession,
  stopWithPage,
  time,
  withoutBlanks,
  type ConsoleSession,
} from './kit.js'

/**
 * Admin → organizations: the organizations a person can see; in one, its projects (created here),
 * its members and their organization roles (the API's no-escalation rules: only owners grant or
 * remove owners, nobody changes their own role), and its service users. Every change goes through
 * the store functions and checks of /organizations and /projects.
 */

type FormErrors = Record<string, string>
interface OrgForms {
  /** Which form the errors and values are for. */
  form?: 'project' | 'member' | 'service-user'
  errors?: FormErrors
  values?: Record<string, string>
}

/** The organization of the address, visible to the caller (else 404) and in which they hold `permission` (else a 403 page naming the role, and access.denied). */
async function orgOf(c: Context<AdminEnv>, session: ConsoleSession, orgId: string, permission: OrgPermission): Promise<OrgRecord> {
  const org = UUID_RE.test(orgId) ? await c.get('deps').access.getOrg(orgId) : undefined
  if (!org || !(await orgVisible(c, org.id))) return stopWithPage(c, 404, 'There is no such organization, or you cannot see it.')
  await requireConsoleOrg(c, session, org.id, permission)
  return org
}

/** A refused form's text under the field it is about, with the refusal's status (formRefusal records a 403's access.denied). */
async function refusedOn(c: Context<AdminEnv>, error: unknown, field: string) {
  const { status, detail } = await formRefusal(c, error)
  return { status: status === 412 ? 409 : status, errors: { [field]: detail } }
}

adminConsole.get('/orgs', async (c) => orgsPage(c, await requireConsoleSession(c)))

async function orgsPage(
  c: Context<AdminEnv>,
  session: ConsoleSession,
  forms: { errors?: FormErrors; values?: Record<string, string> } = {},
  status: 200 | 400 | 409 = 200,
) {
  const { store } = c.get('deps')
  const orgs = (await organizationsOf(store, session.principal)).sort((a, b) => a.name.localeCompare(b.name))
  const role = (id: string) => session.principal.orgRoles.get(id)
  const body = html`<h1>Organizations</h1>
    ${
      orgs.length
        ? html`<div class="table-wrap">
            <table id="orgs">
              <caption class="visually-hidden">
                Organizations you can see
              </caption>
              <thead>
                <tr>
                  <th scope="col">Organization</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Your role</th>
                </tr>
              </thead>
              <tbody>
                ${orgs.map(
                  (o) =>
                    html`<tr>
                      <td><a href="${ownConsoleUrl(c, `/orgs/${o.id}`)}">${o.name}</a></td>
                      <td><code>${o.slug}</code></td>
                      <td>${role(o.id) ?? 'member of a project'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">You belong to no organization.</p>`
    }
    ${
      session.principal.user.platform_admin
        ? html`<h2>Create an organization</h2>
            <p>As a platform administrator you may create organizations; you become the owner of the new one.</p>
            <form class="stack" method="post" action="${ownConsoleUrl(c, '/orgs')}" id="create-org">
              ${csrfField(session)} ${field({ name: 'name', label: 'Name', value: forms.values?.name, error: forms.errors?.name, required: true })}
              ${field({ name: 'slug', label: 'Slug (optional)', hint: 'Lower-case letters, digits and hyphens; made from the name when left empty.', value: forms.values?.slug, error: forms.errors?.slug })}
              <div><button type="submit">Create the organization</button></div>
            </form>`
        : ''
    }`
  return renderConsole(c, { title: 'Organizations', section: 'admin', session, body }, status)
}

adminConsole.post('/orgs', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  if (!session.principal.user.platform_admin) {
    await refuse(
      c,
      { reason: 'platform administrator required', detail: 'Only platform administrators create organizations.' },
      {},
      { type: 'organization', id: '-' },
    )
  }
  const values = { name: session.form.get('name'), slug: session.form.get('slug') }
  const checked = checkForm(CreateOrganization, withoutBlanks(values))
  if (!checked.ok) return orgsPage(c, session, { errors: checked.errors, values }, 400)
  try {
    const org = await deps.store.createOrg(auditContext(c), { ...checked.data, ownerId: session.principal.user.id })
    return redirectWithNotice(c, ownConsoleUrl(c, `/orgs/${org.id}`), `The organization ${org.name} is created; you are its owner.`)
  } catch (error) {
    const refused = await refusedOn(c, error, 'slug')
    return orgsPage(c, session, { errors: refused.errors, values }, refused.status === 409 ? 409 : 400)
  }
})

async function orgPage(
  c: Context<AdminEnv>,
  session: ConsoleSession,
  org: OrgRecord,
  forms: OrgForms = {},
  status: 200 | 400 | 403 | 404 | 409 = 200,
) {
  const deps = c.get('deps')
  const { principal } = session
  const can = (permission: OrgPermission) => canInOrg(principal, org.id, permission)
  const member = principal.orgRoles.has(org.id)
  const [projects, members, serviceUsers] = await Promise.all([
    visibleProjects(deps.store, principal).then((ps) => ps.filter((p) => p.org_id === org.id).sort((a, b) => a.name.localeCompare(b.name))),
    member ? deps.store.listOrgMembers(org.id) : Promise.resolve([]),
    member
      ? paginate(
          deps.serviceUsers.ofOrg(org.id),
          { orderBy: [['created', 'asc']], filters: { org_id: org.id }, query: { page_token: c.req.query('page_token') } },
          (d) => d.data() as ServiceUserRecord,
        )
      : Promise.resolve({ items: [] as ServiceUserRecord[], nextPageToken: undefined }),
  ])
  const err = (form: OrgForms['form'], name: string) => (forms.form === form ? forms.errors?.[name] : undefined)
  const val = (form: OrgForms['form'], name: string) => (forms.form === form ? forms.values?.[name] : undefined)
  const grantable = ORG_ROLES.filter((r) => r !== 'org_owner' || principal.orgRoles.get(org.id) === 'org_owner')
  const body = html`<p class="crumbs"><a href="${ownConsoleUrl(c, '/orgs')}">Organizations</a> › ${org.name}</p>
    <h1>${org.name}</h1>
    <dl class="facts">
      <dt>Slug</dt>
      <dd><code>${org.slug}</code></dd>
      <dt>Your role</dt>
      <dd>${principal.orgRoles.get(org.id) ?? 'none (you are a member of one of its projects)'}</dd>
      <dt>Created</dt>
      <dd>${time(org.created)}</dd>
    </dl>

    <h2 id="projects-title">Projects</h2>
    ${
      projects.length
        ? html`<div class="table-wrap">
            <table id="projects" aria-labelledby="projects-title">
              <thead>
                <tr>
                  <th scope="col">Project</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Bucket</th>
                  <th scope="col">Service account</th>
                </tr>
              </thead>
              <tbody>
                ${projects.map(
                  (p) =>
                    html`<tr>
                      <td><a href="${ownConsoleUrl(c, `/p/${p.id}/members`)}">${p.name}</a></td>
                      <td><code>${p.slug}</code></td>
                      <td><code>gs://${p.bucket_name}</code></td>
                      <td>${p.credentials ? html`<code>${p.credentials.service_account_email}</code>` : badge('not set', 'pending')}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">No project you can see.</p>`
    }
    ${
      can('project.create')
        ? html`<h3>Create a project</h3>
            <form class="stack" method="post" action="${ownConsoleUrl(c, `/orgs/${org.id}/projects`)}" id="create-project">
              ${csrfField(session)}
              ${field({ name: 'name', label: 'Project name', value: val('project', 'name'), error: err('project', 'name'), required: true })}
              ${field({ name: 'slug', label: 'Slug (optional)', hint: 'Made from the name when left empty.', value: val('project', 'slug'), error: err('project', 'slug') })}
              ${field({
                name: 'service_account_email',
                label: 'Service account (optional)',
                hint: "The Google service account the project's runs and files act as; it can be set later.",
                value: val('project', 'service_account_email'),
                error: err('project', 'service_account_email'),
              })}
              ${
                principal.user.platform_admin
                  ? field({
                      name: 'bucket_name',
                      label: 'Existing bucket (optional, platform administrators)',
                      hint: 'Leave empty and the platform assigns one.',
                      value: val('project', 'bucket_name'),
                      error: err('project', 'bucket_name'),
                    })
                  : ''
              }
              <div><button type="submit">Create the project</button></div>
            </form>`
        : ''
    }
    ${
      member
        ? html`<h2 id="members-title">Members</h2>
            <div class="table-wrap">
              <table id="org-members" aria-labelledby="members-title">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    ${can('org.manage') ? html`<th scope="col">Actions</th>` : ''}
                  </tr>
                </thead>
                <tbody>
                  ${members.map(
                    (m) =>
                      html`<tr>
                        <td>${m.user?.name ?? m.user_id}${m.user?.kind === 'service_user' ? html` ${badge('service user', 'info')}` : ''}</td>
                        <td>${m.user?.email ?? '—'}</td>
                        <td>${m.role}</td>
                        ${
                          can('org.manage')
                            ? html`<td>
                                ${
                                  m.user_id === principal.user.id
                                    ? html`<span class="muted">you</span>`
                                    : html`<form
                                        class="inline"
                                        method="post"
                                        action="${ownConsoleUrl(c, `/orgs/${org.id}/members/${m.user_id}/remove`)}"
                                        data-confirm="Remove ${m.user?.email ?? m.user_id} from ${org.name}?"
                                      >
                                        ${csrfField(session)}<button type="submit" class="danger">
                                          Remove<span class="visually-hidden"> ${m.user?.email ?? m.user_id}</span>
                                        </button>
                                      </form>`
                                }
                              </td>`
                            : ''
                        }
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${
              can('org.manage')
                ? html`<h3>Add a member or change a role</h3>
                    <form class="stack" method="post" action="${ownConsoleUrl(c, `/orgs/${org.id}/members`)}" id="add-org-member">
                      ${csrfField(session)}
                      ${field({ name: 'email', label: 'E-mail', type: 'email', value: val('member', 'email'), error: err('member', 'email'), required: true })}
                      ${field({
                        name: 'role',
                        label: 'Organization role',
                        hint: 'org_member sees the organization; org_admin manages it and acts as admin on every project; org_owner as owner.',
                        options: grantable.map((r) => ({ value: r, label: r })),
                        value: val('member', 'role') ?? 'org_member',
                        error: err('member', 'role'),
                      })}
                      <div><button type="submit">Save the role</button></div>
                    </form>`
                : ''
            }

            <h2 id="service-users-title">Service users</h2>
            ${
              serviceUsers.items.length
                ? html`<div class="table-wrap">
                      <table id="service-users" aria-labelledby="service-users-title">
                        <thead>
                          <tr>
                            <th scope="col">Name</th>
                            <th scope="col">Description</th>
                            <th scope="col">State</th>
                            <th scope="col">Created</th>
                          </tr>
                        </thead>
                        <tbody>
                          ${serviceUsers.items.map(
                            (u) =>
                              html`<tr>
                                <td>
                                  ${can('service_user.manage') ? html`<a href="${ownConsoleUrl(c, `/service-users/${u.id}`)}">${u.name}</a>` : u.name}
                                </td>
                                <td>${u.description ?? ''}</td>
                                <td>${u.disabled ? badge('disabled', 'warn') : badge('enabled', 'ok')}</td>
                                <td>${time(u.created)}</td>
                              </tr>`,
                          )}
                        </tbody>
                      </table>
                    </div>
                    ${pager(c, serviceUsers.nextPageToken)}`
                : html`<p class="muted">No service users.</p>`
            }
            ${
              can('service_user.manage')
                ? html`<h3>Create a service user</h3>
                    <form class="stack" method="post" action="${ownConsoleUrl(c, `/orgs/${org.id}/service-users`)}" id="create-service-user">
                      ${csrfField(session)}
                      ${field({ name: 'name', label: 'Name', hint: 'Unique in the organization, e.g. "pipeline-runner".', value: val('service-user', 'name'), error: err('service-user', 'name'), required: true })}
                      ${field({ name: 'description', label: 'Description (optional)', value: val('service-user', 'description'), error: err('service-user', 'description') })}
                      <div><button type="submit">Create the service user</button></div>
                    </form>`
                : ''
            }`
        : ''
    }`
  return renderConsole(c, { title: org.name, section: 'admin', session, body }, status)
}

adminConsole.get('/orgs/:org', async (c) => {
  const session = await requireConsoleSession(c)
  return orgPage(c, session, await orgOf(c, session, c.req.param('org'), 'org.read'))
})

adminConsole.post('/orgs/:org/projects', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const org = await orgOf(c, session, c.req.param('org'), 'project.create')
  const values = {
    name: session.form.get('name'),
    slug: session.form.get('slug'),
    service_account_email: session.form.get('service_account_email'),
    bucket_name: session.form.get('bucket_name'),
  }
  const checked = checkForm(CreateProject, withoutBlanks({ ...values, org_id: org.id }))
  if (!checked.ok) return orgPage(c, session, org, { form: 'project', errors: checked.errors, values }, 400)
  try {
    const project = await deps.store.createProject(auditContext(c), {
      org,
      name: checked.data.name,
      slug: checked.data.slug,
      bucketName: checked.data.bucket_name,
      serviceAccountEmail: checked.data.service_account_email,
      operator: session.principal.user.platform_admin === true,
      sharedBuckets: deps.config.storage.sharedBuckets,
      platformAccounts: deps.config.storage.platformAccounts,
    })
    return redirectWithNotice(
      c,
      ownConsoleUrl(c, `/p/${project.id}/members`),
      `The project ${project.name} is created, with the bucket gs://${project.bucket_name}.`,
    )
  } catch (error) {
    const refused = await refusedOn(c, error, 'name')
    return orgPage(c, session, org, { form: 'project', errors: refused.errors, values }, refused.status)
  }
})

adminConsole.post('/orgs/:org/members', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const org = await orgOf(c, session, c.req.param('org'), 'org.manage')
  const values = { email: session.form.get('email'), role: session.form.get('role') }
  const checked = checkForm(AddOrgMember, withoutBlanks(values))
  if (!checked.ok) return orgPage(c, session, org, { form: 'member', errors: checked.errors, values }, 400)
  try {
    const user = await deps.store.ensureUser(checked.data.email)
    await assertMayChangeOrgMember(c, org.id, user.id, [checked.data.role])
    await deps.store.setOrgRole(auditContext(c), org.id, user, checked.data.role)
    return redirectWithNotice(c, ownConsoleUrl(c, `/orgs/${org.id}`), `${checked.data.email} is now ${checked.data.role} of ${org.name}.`)
  } catch (error) {
    // A refused grant (above the granter's own role, one's own role) is a 403 with its access.denied event, next to the role.
    const refused = await refusedOn(c, error, 'role')
    return orgPage(c, session, org, { form: 'member', errors: refused.errors, values }, refused.status)
  }
})

adminConsole.post('/orgs/:org/members/:user/remove', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const org = await orgOf(c, session, c.req.param('org'), 'org.manage')
  const userId = c.req.param('user')
  const target = UUID_RE.test(userId) ? await deps.access.getUser(userId) : undefined
  if (!target || !target.grants?.orgs?.[org.id]) return stopWithPage(c, 404, `There is no such member of ${org.name}.`)
  if (!session.form.confirmed) {
    return renderConsole(c, {
      session,
      section: 'admin',
      ...confirmView({
        session,
        title: 'Remove a member',
        question: `Remove ${target.email ?? target.name} from ${org.name}? They lose the organization role at once (their project roles stay).`,
        action: ownConsoleUrl(c, `/orgs/${org.id}/members/${userId}/remove`),
        submit: 'Remove the member',
        cancel: ownConsoleUrl(c, `/orgs/${org.id}`),
      }),
    })
  }
  await assertMayChangeOrgMember(c, org.id, userId, [])
  await deps.store.removeOrgMember(auditContext(c), org.id, userId)
  return redirectWithNotice(c, ownConsoleUrl(c, `/orgs/${org.id}`), `${target.email ?? target.name} is no longer a member of ${org.name}.`)
})

adminConsole.post('/orgs/:org/service-users', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const org = await orgOf(c, session, c.req.param('org'), 'service_user.manage')
  const values = { name: session.form.get('name'), description: session.form.get('description') }
  const checked = checkForm(CreateServiceUser, withoutBlanks(values))
  if (!checked.ok) return orgPage(c, session, org, { form: 'service-user', errors: checked.errors, values }, 400)
  try {
    const user = await deps.serviceUsers.create(auditContext(c), { orgId: org.id, name: checked.data.name, description: checked.data.description })
    return redirectWithNotice(
      c,
      ownConsoleUrl(c, `/service-users/${user.id}`),
      `The service user ${user.name} is created: make it a key, and give it project roles.`,
    )
  } catch (error) {
    const refused = await refusedOn(c, error, 'name')
    return orgPage(c, session, org, { form: 'service-user', errors: refused.errors, values }, refused.status)
  }
})
