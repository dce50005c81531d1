import { createRoute, z } from '@hono/zod-openapi'
import type { OrgRecord, Principal, ProjectRecord, UserRecord } from '../../../lib/access.js'
import { iso } from '../../../lib/db.js'
import { notFound } from '../../../lib/errors.js'
import { auditContext, commonErrors, conflictError, json, loadProjectFor, requireOrg, resourceApp, type KernelDeps } from '../../../lib/http.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import { projectRoleFromOrg } from '../../../lib/roles.js'
import type { AdminStore } from '../store.js'
import { AddMember, CreateProject, DefaultContext, IdParam, Me, Member, Project, SetDefaultContext, SetRoles } from '../schemas.js'

export function toProject(p: ProjectRecord, org: Pick<OrgRecord, 'name'> | undefined) {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    org_id: p.org_id,
    org_name: org?.name ?? '',
    bucket_name: p.bucket_name,
    credentials_configured: Boolean(p.credentials),
    created: iso(p.created)!,
  }
}

/** A service user acts only inside its own organization; a grant elsewhere is refused as if it did not exist. */
function assertSameOrg(user: UserRecord, project: ProjectRecord) {
  if (user.kind === 'service_user' && user.org_id !== project.org_id) throw notFound('user')
}

/** Projects the caller can see: explicit memberships, and every project of an organization they administer. */
async function visibleProjects(store: AdminStore, p: Principal): Promise<ProjectRecord[]> {
  const orgWide = [...p.orgRoles].filter(([, role]) => projectRoleFromOrg(role)).map(([org]) => org)
  return store.listProjects([...p.projectRoles.keys()], orgWide)
}

export function projectRoutes(deps: KernelDeps, store: AdminStore) {
  const app = resourceApp()
  const withOrgs = async (projects: ProjectRecord[]) => {
    const orgs = new Map((await store.listOrgs([...new Set(projects.map((p) => p.org_id))])).map((o) => [o.id, o]))
    return projects.map((p) => toProject(p, orgs.get(p.org_id)))
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/projects',
      tags: ['projects'],
      summary: 'List the projects the caller can see (a JSON array of Project)',
      request: { query: PageQuery.extend({ org_id: z.string().uuid().optional() }) },
      responses: { 200: { ...json(z.array(Project)), headers: pageHeaders }, ...commonErrors },
    }),
    async (c) => {
      const query = c.req.valid('query')
      const projects = (await visibleProjects(store, c.get('principal'))).filter((p) => !query.org_id || p.org_id === query.org_id)
      const page = paginateArray(projects, (p) => p.id, { filters: { org_id: query.org_id }, query })
      return pageResponse(c, { items: await withOrgs(page.items), nextPageToken: page.nextPageToken })
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/projects/{id}',
      tags: ['projects'],
      summary: 'Project details',
      request: { params: IdParam },
      responses: { 200: json(Project), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'project.read')
      return c.json(toProject(project, await deps.access.getOrg(project.org_id)), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'post',
      path: '/projects',
      tags: ['projects'],
      summary: 'Create a project in an organization (org admins)',
      request: { body: { content: { 'application/json': { schema: CreateProject } }, required: true } },
      responses: { 201: json(Project, 'Created'), ...commonErrors, ...conflictError },
    }),
    async (c) => {
      const body = c.req.valid('json')
      const org = await deps.access.getOrg(body.org_id)
      if (!org || !c.get('principal').orgRoles.has(org.id)) throw notFound('organization')
      await requireOrg(deps, c, org.id, 'project.create')
      const project = await store.createProject(auditContext(c), {
        org,
        name: body.name,
        slug: body.slug,
        bucketName: body.bucket_name,
        serviceAccountEmail: body.service_account_email,
      })
      return c.json(toProject(project, org), 201)
    },
  )

  const toMember = (m: { user_id: string; roles: string[]; user?: { email?: string; name: string; kind: 'user' | 'service_user' } }) => ({
    user_id: m.user_id,
    email: m.user?.email,
    name: m.user?.name,
    kind: m.user?.kind ?? ('user' as const),
    roles: m.roles as z.infer<typeof Member>['roles'],
  })

  app.openapi(
    createRoute({
      method: 'get',
      path: '/projects/{id}/members',
      tags: ['members'],
      summary: 'Members of a project and their roles',
      request: { params: IdParam },
      responses: { 200: json(z.array(Member)), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'project.read')
      return c.json((await store.listMembers(project.id)).map(toMember), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'post',
      path: '/projects/{id}/members',
      tags: ['members'],
      summary: 'Grant project roles to a user (by e-mail or id), or replace their roles (project admins)',
      request: { params: IdParam, body: { content: { 'application/json': { schema: AddMember } }, required: true } },
      responses: { 200: json(Member), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'members.manage')
      const body = c.req.valid('json')
      const user = body.email ? await store.ensureUser(body.email) : await store.getUser(body.user_id!)
      if (!user) throw notFound('user')
      assertSameOrg(user, project)
      const m = await store.setMemberRoles(auditContext(c), project, user, body.roles)
      return c.json(toMember({ ...m, user }), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'put',
      path: '/projects/{id}/members/{user_id}',
      tags: ['members'],
      summary: "Replace a member's project roles (project admins)",
      request: {
        params: IdParam.extend({ user_id: z.string().uuid() }),
        body: { content: { 'application/json': { schema: SetRoles } }, required: true },
      },
      responses: { 200: json(Member), ...commonErrors },
    }),
    async (c) => {
      const { id, user_id } = c.req.valid('param')
      const project = await loadProjectFor(deps, c, id, 'members.manage')
      const user = await store.getUser(user_id)
      if (!user) throw notFound('user')
      assertSameOrg(user, project)
      const m = await store.setMemberRoles(auditContext(c), project, user, c.req.valid('json').roles)
      return c.json(toMember({ ...m, user }), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/projects/{id}/members/{user_id}',
      tags: ['members'],
      summary: 'Remove a member from a project (project admins); their tokens lose the access at once',
      request: { params: IdParam.extend({ user_id: z.string() }) },
      responses: { 204: { description: 'Removed' }, ...commonErrors },
    }),
    async (c) => {
      const { id, user_id } = c.req.valid('param')
      const project = await loadProjectFor(deps, c, id, 'members.manage')
      await store.removeMember(auditContext(c), project, user_id)
      return c.body(null, 204)
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/users/me',
      tags: ['users'],
      summary: 'The caller, with the roles in force for this request',
      responses: { 200: json(Me), ...commonErrors },
    }),
    async (c) => {
      const p = c.get('principal')
      return c.json(
        {
          id: p.user.id,
          kind: p.user.kind,
          email: p.user.email,
          name: p.user.name,
          platform_admin: Boolean(p.user.platform_admin),
          auth_method: p.method,
          org_roles: Object.fromEntries(p.orgRoles),
          project_roles: Object.fromEntries(p.projectRoles),
        },
        200,
      )
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/users/me/default-context',
      tags: ['users'],
      summary: "The user's default project (null when none is set or it is no longer visible)",
      responses: { 200: json(DefaultContext), ...commonErrors },
    }),
    async (c) => {
      const p = c.get('principal')
      const id = await store.getDefaultProject(p.user.id)
      const visible = id ? (await visibleProjects(store, p)).find((pr) => pr.id === id) : undefined
      return c.json({ project_id: visible?.id ?? null, org_id: visible?.org_id ?? null }, 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'put',
      path: '/users/me/default-context',
      tags: ['users'],
      summary: "Set the user's default project",
      request: { body: { content: { 'application/json': { schema: SetDefaultContext } }, required: true } },
      responses: { 200: json(DefaultContext), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('json').project_id, 'project.read')
      await store.setDefaultProject(auditContext(c), c.get('principal').user, project)
      return c.json({ project_id: project.id, org_id: project.org_id }, 200)
    },
  )
  return app
}
