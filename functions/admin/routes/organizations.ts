import { createRoute, z, type RouteHandler } from '@hono/zod-openapi'
import { auditContext, commonErrors, conflictError, json, requireOrg, resourceApp, type AppEnv, type KernelDeps } from '../../../lib/http.js'
import { forbidden, notFound } from '../../../lib/errors.js'
import { iso } from '../../../lib/db.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import type { OrgRecord } from '../../../lib/access.js'
import type { AdminStore } from '../store.js'
import { AddOrgMember, CreateOrganization, IdParam, Organization, OrgMember } from '../schemas.js'
import { UUID_RE } from '../../../lib/ids.js'

export const toOrganization = (o: OrgRecord) => ({ id: o.id, name: o.name, slug: o.slug, created: iso(o.created)! })

const listRoute = (path: '/orgs' | '/organizations') =>
  createRoute({
    method: 'get',
    path,
    tags: ['organizations'],
    summary: 'List the organizations the caller belongs to (or has a project in)',
    request: { query: PageQuery },
    responses: { 200: { ...json(z.array(Organization)), headers: pageHeaders }, ...commonErrors },
  })

export function organizationRoutes(deps: KernelDeps, store: AdminStore) {
  const app = resourceApp()

  const list: RouteHandler<ReturnType<typeof listRoute>, AppEnv> = async (c) => {
    const p = c.get('principal')
    const ids = new Set<string>(p.orgRoles.keys())
    if (p.projectRoles.size) {
      const projects = await store.listProjects([...p.projectRoles.keys()], [])
      for (const pr of projects) ids.add(pr.org_id)
    }
    const orgs = await store.listOrgs(p.user.platform_admin ? 'all' : [...ids])
    return pageResponse(
      c,
      paginateArray(orgs.map(toOrganization), (o) => o.id, { filters: {}, query: c.req.valid('query') }),
    )
  }
  app.openapi(listRoute('/orgs'), list)
  app.openapi(listRoute('/organizations'), list)

  app.openapi(
    createRoute({
      method: 'get',
      path: '/organizations/{id}',
      tags: ['organizations'],
      summary: 'Organization details',
      request: { params: IdParam },
      responses: { 200: json(Organization), ...commonErrors },
    }),
    async (c) => {
      const { id } = c.req.valid('param')
      const p = c.get('principal')
      const org = UUID_RE.test(id) ? await deps.access.getOrg(id) : undefined
      const visible =
        org &&
        (p.user.platform_admin ||
          p.orgRoles.has(org.id) ||
          (await store.listProjects([...p.projectRoles.keys()], [])).some((pr) => pr.org_id === org.id))
      if (!org || !visible) throw notFound('organization')
      return c.json(toOrganization(org), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'post',
      path: '/organizations',
      tags: ['organizations'],
      summary: 'Create an organization (platform administrators); the caller becomes its owner',
      request: { body: { content: { 'application/json': { schema: CreateOrganization } }, required: true } },
      responses: { 201: json(Organization, 'Created'), ...commonErrors, ...conflictError },
    }),
    async (c) => {
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
      const org = await store.createOrg(auditContext(c), { name: body.name, slug: body.slug, ownerId: p.user.id })
      return c.json(toOrganization(org), 201)
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/organizations/{id}/members',
      tags: ['organizations'],
      summary: 'Members of an organization and their organization roles',
      request: { params: IdParam },
      responses: { 200: json(z.array(OrgMember)), ...commonErrors },
    }),
    async (c) => {
      const { id } = c.req.valid('param')
      if (!c.get('principal').orgRoles.has(id)) throw notFound('organization')
      const members = await store.listOrgMembers(id)
      return c.json(
        members.map((m) => ({ user_id: m.user_id, email: m.user?.email, name: m.user?.name, kind: m.user?.kind ?? 'user', role: m.role })),
        200,
      )
    },
  )

  app.openapi(
    createRoute({
      method: 'post',
      path: '/organizations/{id}/members',
      tags: ['organizations'],
      summary: 'Grant an organization role to a user, by e-mail (org admins)',
      request: { params: IdParam, body: { content: { 'application/json': { schema: AddOrgMember } }, required: true } },
      responses: { 200: json(OrgMember), ...commonErrors },
    }),
    async (c) => {
      const { id } = c.req.valid('param')
      const body = c.req.valid('json')
      if (!c.get('principal').orgRoles.has(id)) throw notFound('organization')
      await requireOrg(deps, c, id, 'org.manage')
      if (body.role === 'org_owner') await requireOrg(deps, c, id, 'org.delete')
      const user = await store.ensureUser(body.email)
      const m = await store.setOrgRole(auditContext(c), id, user, body.role)
      return c.json({ user_id: user.id, email: user.email, name: user.name, kind: user.kind, role: m.role }, 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/organizations/{id}/members/{user_id}',
      tags: ['organizations'],
      summary: 'Remove a user from an organization (org admins)',
      request: { params: IdParam.extend({ user_id: z.string() }) },
      responses: { 204: { description: 'Removed' }, ...commonErrors },
    }),
    async (c) => {
      const { id, user_id } = c.req.valid('param')
      if (!c.get('principal').orgRoles.has(id)) throw notFound('organization')
      await requireOrg(deps, c, id, 'org.manage')
      await store.removeOrgMember(auditContext(c), id, user_id)
      return c.body(null, 204)
    },
  )
  return app
}
