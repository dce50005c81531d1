import { createRoute, z, type RouteHandler } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { OrgRecord, Principal } from '../../../lib/auth/access.js'
import type { OrgRole } from '../../../lib/auth/roles.js'
import { Refused } from '../../../lib/decision.js'
import { iso } from '../../../lib/db.js'
import { forbidden, notFound } from '../../../lib/errors.js'
import { auditContext, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json, pathId } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginate, paginateArray } from '../../../lib/pagination.js'
import { orgGrantRefusal } from '../../../domain/tenancy/decide.js'
import type { ServiceUserRecord } from '../../../domain/tenancy/service-users.js'
import type { AdminStore } from '../../../domain/tenancy/store.js'
import type { AdminDeps, AdminEnv } from '../deps.js'
import { orgFor, orgVisible } from '../org-access.js'
import { AddOrgMember, CreateOrganization, CreateServiceUser, Organization, OrgMember, OrgParam, ServiceUser, toServiceUser } from '../schemas.js'

/** /organizations: organizations, their members, and the creation and listing of their service users. */
export const organizations = resourceApp<AdminDeps>()

export const toOrganization = (o: OrgRecord) => ({ id: o.id, name: o.name, slug: o.slug, created: iso(o.created)! })

export const listRoute = (path: '/orgs' | '/organizations') =>
  createRoute({
    operationId: path === '/orgs' ? 'listOrgs' : 'listOrganizations',
    method: 'get',
    path,
    tags: ['organizations'],
    summary: 'List the organizations the caller belongs to (or has a project in)',
    request: { query: PageQuery },
    responses: { 200: { ...json(z.array(Organization)), headers: pageHeaders }, ...commonErrors },
  })

/** The organizations the caller belongs to, or has a project in (all of them for platform administrators). */
/** The organizations the caller belongs to, or has a project in (all of them for platform administrators). */
export async function organizationsOf(store: AdminStore, p: Principal): Promise<OrgRecord[]> {
  const ids = new Set<string>(p.orgRoles.keys())
  if (p.projectRoles.size) {
    const projects = await store.listProjects([...p.projectRoles.keys()], [])
    for (const pr of projects) ids.add(pr.org_id)
  }
  return store.listOrgs(p.user.platform_admin ? 'all' : [...ids])
}

export const listOrganizationsHandler: RouteHandler<ReturnType<typeof listRoute>, AdminEnv> = async (c) => {
  const orgs = await organizationsOf(c.get('deps').store, c.get('principal'))
  return pageResponse(
    c,
    paginateArray(orgs.map(toOrganization), (o) => o.id, { filters: {}, query: c.req.valid('query') }),
  )
}

/** Refuses an organization role change that the grant rules forbid (orgGrantRefusal): 403, with an access.denied event. */
export async function assertMayChangeOrgMember(c: Context<AdminEnv>, orgId: string, targetId: string, roles: OrgRole[]) {
  const principal = c.get('principal')
  const target = await c.get('deps').access.getUser(targetId)
  const refusal = orgGrantRefusal(
    { granter: { id: principal.user.id, role: principal.orgRoles.get(orgId) }, targetId, current: target?.grants?.orgs?.[orgId] },
    roles,
  )
  if (refusal) throw new Refused(refusal, { scope: { org_id: orgId }, entity: { type: 'org_member', id: targetId } })
}

organizations.openapi(listRoute('/organizations'), listOrganizationsHandler)

organizations.openapi(
  createRoute({
    operationId: 'getOrganization',
    method: 'get',
    path: '/organizations/{id}',
    tags: ['organizations'],
    summary: 'Organization details',
    request: { params: IdParam },
    responses: { 200: json(Organization), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const org = UUID_RE.test(id) ? await c.get('deps').access.getOrg(id) : undefined
    if (!org || !(await orgVisible(c, org.id))) throw notFound('organization')
    return c.json(toOrganization(org), 200)
  },
)

organizations.openapi(
  createRoute({
    operationId: 'createOrganization',
    method: 'post',
    path: '/organizations',
    tags: ['organizations'],
    summary: 'Create an organization (platform administrators); the caller becomes its owner',
    request: { body: { content: { 'application/json': { schema: CreateOrganization } }, required: true } },
    responses: { 201: json(Organization, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const deps = c.get('deps')
    const p = c.get('principal')
    if (!p.user.platform_admin) {
      await deps.audit.record(auditContext(c), {
        action: 'access.denied',
        outcome: 'denied',
        entity: { type: 'organization', id: '-' },
        change: { reason: 'platform administrator required' },
      })
      throw forbidden('only platform administrators create organizations')
    }
    const body = c.req.valid('json')
    const org = await deps.store.createOrg(auditContext(c), { name: body.name, slug: body.slug, ownerId: p.user.id })
    return c.json(toOrganization(org), 201)
  },
)

organizations.openapi(
  createRoute({
    operationId: 'listOrganizationMembers',
    method: 'get',
    path: '/organizations/{id}/members',
    tags: ['organizations'],
    summary: 'Members of an organization and their organization roles',
    request: { params: IdParam },
    responses: { 200: json(z.array(OrgMember)), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    await orgFor(c, id, 'org.read')
    const members = await c.get('deps').store.listOrgMembers(id)
    return c.json(
      members.map((m) => ({ user_id: m.user_id, email: m.user?.email, name: m.user?.name, kind: m.user?.kind ?? 'user', role: m.role })),
      200,
    )
  },
)

organizations.openapi(
  createRoute({
    operationId: 'addOrganizationMember',
    method: 'post',
    path: '/organizations/{id}/members',
    tags: ['organizations'],
    summary: 'Grant an organization role to a user, by e-mail (org admins)',
    request: { params: IdParam, body: { content: { 'application/json': { schema: AddOrgMember } }, required: true } },
    responses: { 200: json(OrgMember), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const { id } = c.req.valid('param')
    const body = c.req.valid('json')
    await orgFor(c, id, 'org.manage')
    const user = await deps.store.ensureUser(body.email)
    await assertMayChangeOrgMember(c, id, user.id, [body.role])
    const m = await deps.store.setOrgRole(auditContext(c), id, user, body.role)
    return c.json({ user_id: user.id, email: user.email, name: user.name, kind: user.kind, role: m.role }, 200)
  },
)

organizations.openapi(
  createRoute({
    operationId: 'removeOrganizationMember',
    method: 'delete',
    path: '/organizations/{id}/members/{user_id}',
    tags: ['organizations'],
    summary: 'Remove a user from an organization (org admins)',
    request: { params: IdParam.extend({ user_id: pathId('user_id') }) },
    responses: { 204: { description: 'Removed' }, ...commonErrors },
  }),
  async (c) => {
    const { id, user_id } = c.req.valid('param')
    await orgFor(c, id, 'org.manage')
    await assertMayChangeOrgMember(c, id, user_id, [])
    await c.get('deps').store.removeOrgMember(auditContext(c), id, user_id)
    return c.body(null, 204)
  },
)

organizations.openapi(
  createRoute({
    operationId: 'createServiceUser',
    method: 'post',
    path: '/organizations/{org_id}/service-users',
    tags: ['service users'],
    summary: 'Create a service user in an organization (org admins); grant it project roles with POST /projects/{id}/members',
    request: { params: OrgParam, body: { content: { 'application/json': { schema: CreateServiceUser } }, required: true } },
    responses: { 201: json(ServiceUser, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { org_id } = c.req.valid('param')
    await orgFor(c, org_id, 'service_user.manage')
    const body = c.req.valid('json')
    const user = await c.get('deps').serviceUsers.create(auditContext(c), { orgId: org_id, name: body.name, description: body.description })
    return c.json(toServiceUser(user), 201)
  },
)

organizations.openapi(
  createRoute({
    operationId: 'listServiceUsers',
    method: 'get',
    path: '/organizations/{org_id}/service-users',
    tags: ['service users'],
    summary: 'The service users of an organization, oldest first',
    request: { params: OrgParam, query: PageQuery },
    responses: { 200: { ...json(z.array(ServiceUser)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { org_id } = c.req.valid('param')
    await orgFor(c, org_id, 'org.read')
    const page = await paginate(
      c.get('deps').serviceUsers.ofOrg(org_id),
      { orderBy: [['created', 'asc']], filters: { org_id }, query: c.req.valid('query') },
      (d) => toServiceUser(d.data() as ServiceUserRecord),
    )
    return pageResponse(c, page)
  },
)
