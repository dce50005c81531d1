import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { canInOrg, canInProject, type OrgRecord, type ProjectRecord } from '../auth/access.js'
import { ORG_ROLES, orgRoleGrants, PROJECT_ROLES, projectRolesGrant, type OrgPermission, type Permission } from '../auth/roles.js'
import { recordDenial, type AppEnv } from '../http.js'
import { UUID_RE } from '../ids.js'
import { html, loginUrl, pageSession, publicBase, type PageSession } from '../pages.js'
import { csrfValid } from './csrf.js'
import { errorView, renderConsole, type ConsoleView } from './layout.js'

/** The fields of a posted console form: text values only (files are never posted to the console). */
export class ConsoleForm {
  constructor(private readonly fields: Record<string, string | File | (string | File)[]>) {}
  /** The field's value, trimmed; '' when absent. */
  get(name: string): string {
    const v = this.fields[name]
    const first = Array.isArray(v) ? v[0] : v
    return typeof first === 'string' ? first.trim() : ''
  }
  /** Every value of a repeated field (checkboxes). */
  all(name: string): string[] {
    const v = this.fields[name]
    return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string')
  }
  /** True when the person confirmed the action (the dialog of console.js, or the confirmation page). */
  get confirmed(): boolean {
    return this.get('confirmed') === 'yes'
  }
}

export interface ConsoleSession extends PageSession {
  /** The posted form of a POST (checked: Origin and CSRF token); empty on a GET. */
  form: ConsoleForm
}

/** What a page handler throws to answer at once with a page (a redirect to the login, a 403): the console's error handler returns it as it is. */
export const stopWith = (res: Response): never => {
  throw new HTTPException(res.status as 400, { res })
}

/** The caller of the request, kept so that an error page shows the header of a signed-in person. */
const seen = new WeakMap<Request, { session?: PageSession; project?: ConsoleView['project'] }>()
export const seenOn = (c: Context) => seen.get(c.req.raw) ?? {}

const SAFE = new Set(['GET', 'HEAD'])

/** Renders an error page and stops the handler. */
export function stopWithPage<E extends AppEnv>(c: Context<E>, status: 400 | 401 | 403 | 404 | 409 | 412, detail: string): never {
  return stopWith(renderConsole(c, { ...seenOn(c), ...errorView(status, detail) }, status))
}

async function denied<E extends AppEnv>(
  c: Context<E>,
  reason: string,
  detail: string,
  on: { scope: { project_id?: string; org_id?: string }; entity: { type: string; id: string } },
): Promise<never> {
  await recordDenial(c, reason, on)
  return stopWithPage(c, 403, detail)
}

/**
 * The signed-in caller of a console page, from the platform_session cookie (lib/pages.ts
 * `pageSession`: read afresh, throttled like the API). Without a session a GET goes to the admin
 * service's login and comes back to the same address; a POST is refused (its form would be lost).
 * A POST must come from one of the platform's origins (Origin) and carry the session's CSRF token
 * (csrf.ts), else it is a 403 page and an access.denied event; a POST with an Authorization header
 * is refused too (the console is a browser's, a token's requests go to the API).
 */
export async function requireConsoleSession<E extends AppEnv>(c: Context<E>): Promise<ConsoleSession> {
  const config = c.get('deps').config
  const safe = SAFE.has(c.req.method)
  const session = await pageSession(c)
  if (!session) {
    const url = new URL(c.req.url)
    const login = safe ? loginUrl(config, `${publicBase(c)}${c.req.path}${url.search}`) : undefined
    if (login) return stopWith(c.redirect(login, 302))
    return stopWithPage(c, 401, 'Your platform session has ended or was never started: sign in, then open the page again.')
  }
  seen.set(c.req.raw, { session })
  if (safe) return { ...session, form: new ConsoleForm({}) }
  // Checked once the caller is known (pageSession set the principal), so that each refusal's access.denied names them.
  const on = { scope: {}, entity: { type: 'session', id: session.session.id } }
  if (c.req.header('authorization') !== undefined) {
    await denied(
      c,
      'console form posted with an Authorization header',
      'The console takes forms from a browser with your platform session; use the API with a token.',
      on,
    )
  }
  const origin = c.req.header('origin')
  if (!origin || !config.publicOrigins.includes(origin)) {
    await denied(
      c,
      `cross-origin console form (Origin: ${origin?.slice(0, 200) ?? 'none'})`,
      'This form did not come from the platform (cross-origin request): nothing was changed.',
      on,
    )
  }
  const form = new ConsoleForm(await c.req.parseBody({ all: true }))
  if (!csrfValid(session, form.get('csrf_token'))) {
    await denied(
      c,
      'console form without a valid security token',
      "The form's security token is missing or not this session's: open the page again and send the form from it.",
      on,
    )
  }
  return { ...session, form }
}

/** The roles that hold a permission in a project, for the 403 page that says which one is missing. */
export const rolesHolding = (permission: Permission) => PROJECT_ROLES.filter((r) => projectRolesGrant([r], permission))
const orgRolesHolding = (permission: OrgPermission) => ORG_ROLES.filter((r) => orgRoleGrants(r, permission))

const orList = (items: readonly string[]) => (items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : (items[0] ?? ''))

export interface ConsoleProject extends ConsoleSession {
  project: ProjectRecord
  org: OrgRecord | undefined
}

/**
 * The session and the project of a `/console/p/:project/...` page (the project's id, or its slug
 * where that names one project the caller can see), with `permission` checked as the API checks it
 * (`canInProject`): a project the caller cannot see is a 404 page, one without the permission a
 * 403 page that names the roles that hold it, with an access.denied event.
 */
export async function consoleProject<E extends AppEnv>(c: Context<E>, permission: Permission, param = 'project'): Promise<ConsoleProject> {
  const session = await requireConsoleSession(c)
  const { access } = c.get('deps')
  const ref = c.req.param(param) ?? ''
  const candidates: Array<ProjectRecord | undefined> = UUID_RE.test(ref)
    ? [await access.getProject(ref)]
    : ref.length <= 100
      ? await access.projectsWithSlug(ref)
      : []
  const visible = candidates.filter((p): p is ProjectRecord => !!p && canInProject(session.principal, p, 'project.read'))
  if (visible.length !== 1) {
    return stopWithPage(
      c,
      404,
      visible.length
        ? `Several of your projects are called "${ref}": open the project from the project chooser.`
        : 'There is no such project, or you are not a member of it.',
    )
  }
  const project = visible[0]!
  const org = await access.getOrg(project.org_id)
  seen.set(c.req.raw, { session, project: { project, org } })
  if (!canInProject(session.principal, project, permission)) {
    await denied(
      c,
      `missing permission ${permission}`,
      `This page needs the role ${orList(rolesHolding(permission))} in the project ${project.name} (permission ${permission}).`,
      {
        scope: { project_id: project.id, org_id: project.org_id },
        entity: { type: 'project', id: project.id },
      },
    )
  }
  return { ...session, project, org }
}

/** The organization-level check of a console page (the admin console): a 403 page that names the role, and access.denied. */
export async function requireConsoleOrg<E extends AppEnv>(
  c: Context<E>,
  session: PageSession,
  orgId: string,
  permission: OrgPermission,
): Promise<void> {
  if (canInOrg(session.principal, orgId, permission)) return
  await denied(
    c,
    `missing permission ${permission}`,
    `This page needs the organization role ${orList(orgRolesHolding(permission))} (permission ${permission}).`,
    {
      scope: { org_id: orgId },
      entity: { type: 'organization', id: orgId },
    },
  )
}

/**
 * `/console/` of a service: the caller's default project (PUT /users/me/default-context) when they
 * can still see it, else their one project, else the admin console's project chooser.
 */
export async function redirectToDefaultProject<E extends AppEnv>(c: Context<E>, section: string): Promise<Response> {
  const session = await requireConsoleSession(c)
  const { access, config } = c.get('deps')
  const { principal } = session
  const preferred = principal.user.default_project_id ? await access.getProject(principal.user.default_project_id) : undefined
  const only = principal.orgRoles.size === 0 && principal.projectRoles.size === 1 ? [...principal.projectRoles.keys()][0] : undefined
  const target = preferred && canInProject(principal, preferred, 'project.read') ? preferred.id : only
  if (target) return c.redirect(`${publicBase(c)}/console/p/${target}/${section}`, 302)
  const chooser = config.publicUrls.admin ? `${config.publicUrls.admin}/console/projects` : undefined
  if (chooser) return c.redirect(chooser, 302)
  return renderConsole(c, { session, ...errorView(404, 'You have no default project: ask an administrator to add you to a project.', html``) }, 404)
}
