import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { projectRolesOf, type OrgRecord, type Principal, type ProjectRecord } from '../../../lib/auth/access.js'
import { projectRoleFromOrg } from '../../../lib/auth/roles.js'
import { iso } from '../../../lib/db.js'
import { ApiError, notFound } from '../../../lib/errors.js'
import { auditContext, loadProjectFor, resourceApp, type AppEnv } from '../../../lib/http.js'
import { commonErrors, conflictError, IdParam, json, pathId } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import type { Granter } from '../../../domain/tenancy/decide.js'
import type { AdminStore } from '../../../domain/tenancy/store.js'
import type { AdminDeps } from '../deps.js'
import { orgFor } from '../org-access.js'
import { AddMember, CreateProject, LetterheadSchema, Member, Project, serviceAccountEmail, SetRoles } from '../schemas.js'

/** /projects: projects, their members and roles, and their cloud credentials. */
export const projects = resourceApp<AdminDeps>()

export function toProject(p: ProjectRecord, org: Pick<OrgRecord, 'name'> | undefined) {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    org_id: p.org_id,
    org_name: org?.name ?? '',
    bucket_name: p.bucket_name,
    credentials_configured: Boolean(p.credentials),
    letterhead: p.letterhead,
    created: iso(p.created)!,
  }
}

/** Who grants, in a member change: the caller and their roles in the project (decideMemberRoles never lets them exceed these). */
export function granterIn<E extends AppEnv>(c: Context<E>, project: ProjectRecord): Granter {
  const principal = c.get('principal')
  return { id: principal.user.id, roles: projectRolesOf(principal, project) }
}

/** Projects the caller can see: explicit memberships, and every project of an organization they administer. */
export async function visibleProjects(store: AdminStore, p: Principal): Promise<ProjectRecord[]> {
  const orgWide = [...p.orgRoles].filter(([, role]) => projectRoleFromOrg(role)).map(([org]) => org)
  return store.listProjects([...p.projectRoles.keys()], orgWide)
}

const toMember = (m: { user_id: string; roles: string[]; user?: { email?: string; name: string; kind: 'user' | 'service_user' } }) => ({
  user_id: m.user_id,
  email: m.user?.email,
  name: m.user?.name,
  kind: m.user?.kind ?? ('user' as const),
  roles: m.roles as z.infer<typeof Member>['roles'],
})

async function withOrgs(store: AdminStore, projects: ProjectRecord[]) {
  const orgs = new Map((await store.listOrgs([...new Set(projects.map((p) => p.org_id))])).map((o) => [o.id, o]))
  return projects.map((p) => toProject(p, orgs.get(p.org_id)))
}

/** The IAM Credentials API, through which the file service acts as the project's service account. */
const IAM_CREDENTIALS = 'https://iamcredentials.googleapis.com/v1'
const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write'
/** Short-lived by design: an access token minted for one operation, and signed URLs of the spec's 900 s. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900
export const SIGNED_URL_TTL_SECONDS = 900

const ProjectCredentials = z
  .object({
    project_id: z.string().uuid(),
    bucket_name: z.string(),
    bucket_uri: z.string().openapi({ example: 'gs://lab-germline' }),
    mode: z.literal('impersonation').openapi({
      description:
        'The platform holds no key of this service account. The file service uses its own runtime identity, which must hold roles/iam.serviceAccountTokenCreator on it, to mint short-lived access tokens and to sign V4 URLs through IAM Credentials.',
    }),
    service_account_email: z.string(),
    configured_at: z.string(),
    scopes: z.array(z.string()),
    access_token_lifetime_seconds: z.number().int().openapi({ description: 'Lifetime to request from generateAccessToken' }),
    signed_url_ttl_seconds: z.number().int(),
    required_role: z.string().openapi({ description: "What the caller's runtime identity needs on the service account" }),
    iam_credentials: z
      .object({
        generate_access_token: z.url(),
        sign_blob: z.url(),
      })
      .openapi({ description: 'The IAM Credentials endpoints to call for this service account' }),
  })
  .openapi('ProjectCredentials')

const SetCredentials = z
  .object({
    service_account_email: serviceAccountEmail.openapi({
      example: 'runner@lab-prod.iam.gserviceaccount.com',
      description:
        'The service account the project acts as. It serves one project only: an account another project holds is a 409 naming it. Binding another releases the previous one; DELETE releases it.',
    }),
  })
  .openapi('SetProjectCredentials')

const noCredentials = (project: ProjectRecord) =>
  new ApiError(
    404,
    `no cloud credentials are configured for project ${project.id}; a project admin sets them with PUT /projects/${project.id}/credentials`,
  )

function toCredentials(project: ProjectRecord): z.infer<typeof ProjectCredentials> {
  if (!project.credentials) throw noCredentials(project)
  const account = `${IAM_CREDENTIALS}/projects/-/serviceAccounts/${encodeURIComponent(project.credentials.service_account_email)}`
  return {
    project_id: project.id,
    bucket_name: project.bucket_name,
    bucket_uri: `gs://${project.bucket_name}`,
    mode: 'impersonation',
    service_account_email: project.credentials.service_account_email,
    configured_at: iso(project.credentials.configured_at)!,
    scopes: [STORAGE_SCOPE],
    access_token_lifetime_seconds: ACCESS_TOKEN_LIFETIME_SECONDS,
    signed_url_ttl_seconds: SIGNED_URL_TTL_SECONDS,
    required_role: 'roles/iam.serviceAccountTokenCreator',
    iam_credentials: { generate_access_token: `${account}:generateAccessToken`, sign_blob: `${account}:signBlob` },
  }
}

/**
 * A project's cloud credentials are a reference, not a secret: the service account its runs and
 * files use. Whoever reads them (the file service, a 'pipeline' service user) still needs an IAM
 * grant of its own to act as that account, so nothing here is worth stealing.
 */
projects.openapi(
  createRoute({
    operationId: 'getProjectCredentials',
    method: 'get',
    path: '/projects/{id}/credentials',
    tags: ['credentials'],
    summary: 'How the file service reaches the project bucket: the service account to impersonate (no long-lived secret)',
    request: { params: IdParam },
    responses: { 200: json(ProjectCredentials), ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'credentials.read')
    return c.json(toCredentials(project), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'setProjectCredentials',
    method: 'put',
    path: '/projects/{id}/credentials',
    tags: ['credentials'],
    summary: 'Set the service account of a project (project admins)',
    request: { params: IdParam, body: { content: { 'application/json': { schema: SetCredentials } }, required: true } },
    responses: { 200: json(ProjectCredentials), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'credentials.manage')
    const updated = await c
      .get('deps')
      .store.setCredentials(auditContext(c), project, c.req.valid('json').service_account_email, c.get('deps').config.storage.platformAccounts)
    return c.json(toCredentials(updated), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'deleteProjectCredentials',
    method: 'delete',
    path: '/projects/{id}/credentials',
    tags: ['credentials'],
    summary: 'Remove the credentials of a project (project admins); its runs are refused until new ones are set',
    request: { params: IdParam },
    responses: { 204: { description: 'Removed' }, ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'credentials.manage')
    await c.get('deps').store.setCredentials(auditContext(c), project, null, c.get('deps').config.storage.platformAccounts)
    return c.body(null, 204)
  },
)

projects.openapi(
  createRoute({
    operationId: 'setProjectLetterhead',
    method: 'put',
    path: '/projects/{id}/letterhead',
    tags: ['projects'],
    summary: "Set the laboratory's letterhead on the project's reports (project admins)",
    description: 'The printable reports of the report service carry it: the laboratory, its address and contacts, its accreditation, its director.',
    request: { params: IdParam, body: { content: { 'application/json': { schema: LetterheadSchema } }, required: true } },
    responses: { 200: json(LetterheadSchema), ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'project.manage')
    const updated = await c.get('deps').store.setLetterhead(auditContext(c), project, c.req.valid('json'))
    return c.json(updated.letterhead!, 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'deleteProjectLetterhead',
    method: 'delete',
    path: '/projects/{id}/letterhead',
    tags: ['projects'],
    summary: "Remove the project's letterhead: its reports carry the organization's name again (project admins)",
    request: { params: IdParam },
    responses: { 204: { description: 'Removed' }, ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'project.manage')
    if (!project.letterhead) throw notFound('letterhead')
    await c.get('deps').store.setLetterhead(auditContext(c), project, null)
    return c.body(null, 204)
  },
)

projects.openapi(
  createRoute({
    operationId: 'listProjects',
    method: 'get',
    path: '/projects',
    tags: ['projects'],
    summary: 'List the projects the caller can see (a JSON array of Project)',
    request: { query: PageQuery.extend({ org_id: z.string().uuid().optional() }) },
    responses: { 200: { ...json(z.array(Project)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const query = c.req.valid('query')
    const projects = (await visibleProjects(deps.store, c.get('principal'))).filter((p) => !query.org_id || p.org_id === query.org_id)
    const page = paginateArray(projects, (p) => p.id, { filters: { org_id: query.org_id }, query })
    return pageResponse(c, { items: await withOrgs(deps.store, page.items), nextPageToken: page.nextPageToken })
  },
)

projects.openapi(
  createRoute({
    operationId: 'getProject',
    method: 'get',
    path: '/projects/{id}',
    tags: ['projects'],
    summary: 'Project details',
    request: { params: IdParam },
    responses: { 200: json(Project), ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'project.read')
    return c.json(toProject(project, await c.get('deps').access.getOrg(project.org_id)), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'createProject',
    method: 'post',
    path: '/projects',
    tags: ['projects'],
    summary: 'Create a project in an organization (org admins)',
    request: { body: { content: { 'application/json': { schema: CreateProject } }, required: true } },
    responses: { 201: json(Project, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const deps = c.get('deps')
    const body = c.req.valid('json')
    const org = await deps.access.getOrg(body.org_id)
    if (!org) throw notFound('organization')
    await orgFor(c, org.id, 'project.create')
    const project = await deps.store.createProject(auditContext(c), {
      org,
      name: body.name,
      slug: body.slug,
      bucketName: body.bucket_name,
      serviceAccountEmail: body.service_account_email,
      operator: c.get('principal').user.platform_admin === true,
      sharedBuckets: deps.config.storage.sharedBuckets,
      platformAccounts: deps.config.storage.platformAccounts,
    })
    return c.json(toProject(project, org), 201)
  },
)

projects.openapi(
  createRoute({
    operationId: 'listProjectMembers',
    method: 'get',
    path: '/projects/{id}/members',
    tags: ['members'],
    summary: 'Members of a project and their roles',
    request: { params: IdParam },
    responses: { 200: json(z.array(Member)), ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('param').id, 'project.read')
    return c.json((await c.get('deps').store.listMembers(project.id)).map(toMember), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'addProjectMember',
    method: 'post',
    path: '/projects/{id}/members',
    tags: ['members'],
    summary: 'Grant project roles to a user (by e-mail or id), or replace their roles (project admins)',
    request: { params: IdParam, body: { content: { 'application/json': { schema: AddMember } }, required: true } },
    responses: { 200: json(Member), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const project = await loadProjectFor(c, c.req.valid('param').id, 'members.manage')
    const body = c.req.valid('json')
    const user = body.email ? await deps.store.ensureUser(body.email) : await deps.store.getUser(body.user_id!)
    if (!user) throw notFound('user')
    const m = await deps.store.setMemberRoles(auditContext(c), granterIn(c, project), project, user, body.roles)
    return c.json(toMember({ ...m, user }), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'setProjectMemberRoles',
    method: 'put',
    path: '/projects/{id}/members/{user_id}',
    tags: ['members'],
    summary: "Replace a member's project roles (project admins)",
    request: {
      params: IdParam.extend({ user_id: pathId('user_id') }),
      body: { content: { 'application/json': { schema: SetRoles } }, required: true },
    },
    responses: { 200: json(Member), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const { id, user_id } = c.req.valid('param')
    const project = await loadProjectFor(c, id, 'members.manage')
    const user = await deps.store.getUser(user_id)
    if (!user) throw notFound('user')
    const m = await deps.store.setMemberRoles(auditContext(c), granterIn(c, project), project, user, c.req.valid('json').roles)
    return c.json(toMember({ ...m, user }), 200)
  },
)

projects.openapi(
  createRoute({
    operationId: 'removeProjectMember',
    method: 'delete',
    path: '/projects/{id}/members/{user_id}',
    tags: ['members'],
    summary: 'Remove a member from a project (project admins); their tokens lose the access at once',
    request: { params: IdParam.extend({ user_id: pathId('user_id') }) },
    responses: { 204: { description: 'Removed' }, ...commonErrors },
  }),
  async (c) => {
    const { id, user_id } = c.req.valid('param')
    const deps = c.get('deps')
    const project = await loadProjectFor(c, id, 'members.manage')
    await deps.store.removeMember(auditContext(c), granterIn(c, project), project, user_id)
    return c.body(null, 204)
  },
)
