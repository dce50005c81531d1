import { createRoute, z } from '@hono/zod-openapi'
import type { PersonalTokenRecord } from '../../../lib/auth/tokens.js'
import { iso } from '../../../lib/db.js'
import { auditContext, loadProjectFor, resourceApp } from '../../../lib/http.js'
import { commonErrors, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import type { AdminDeps } from '../deps.js'
import { createPersonalToken, DEFAULT_TOKEN_DAYS, expiryOf, MAX_TOKEN_DAYS, revokePersonalToken, stateOf } from '../personal-tokens.js'
import { DefaultContext, Me, SetDefaultContext } from '../schemas.js'
import { visibleProjects } from './projects.js'

/**
 * /users: the caller (/users/me), their default project, and their personal access tokens.
 * A token carries no roles of its own: the user's roles are resolved on every request, so removing
 * a role restricts every token of the user at once. Token events go to the platform audit chain,
 * as a token is not bound to one organization.
 */
export const users = resourceApp<AdminDeps>()

const CreateToken = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ description: 'What the token is for, e.g. "laptop CLI" or "CI"' }),
    expires_in_days: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOKEN_DAYS)
      .optional()
      .openapi({ description: `Lifetime in days (default ${DEFAULT_TOKEN_DAYS}); send this or expires_at` }),
    expires_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: `Expiry as an ISO 8601 instant, at most ${MAX_TOKEN_DAYS} days ahead` }),
  })
  .refine((v) => v.expires_in_days === undefined || v.expires_at === undefined, {
    message: 'send at most one of expires_in_days and expires_at',
    path: ['expires_at'],
  })
  .openapi('CreatePersonalAccessToken')

const TokenState = z.enum(['active', 'expired', 'revoked'])

const PersonalAccessToken = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    hint: z.string().openapi({ description: 'The first characters of the value, to recognize it (plat_pat_xxxx)' }),
    state: TokenState,
    created: z.string(),
    expires_at: z.string(),
    revoked_at: z.string().optional(),
    last_used_at: z.string().optional().openapi({ description: 'Recorded with a resolution of one hour' }),
  })
  .openapi('PersonalAccessToken')

const NewPersonalAccessToken = PersonalAccessToken.extend({
  token: z.string().openapi({ description: 'The secret value. Shown only in this response: the platform keeps only its SHA-256.' }),
}).openapi('NewPersonalAccessToken')

function toToken(t: PersonalTokenRecord, now: Date): z.infer<typeof PersonalAccessToken> {
  return {
    id: t.id,
    name: t.name,
    hint: t.hint,
    state: stateOf(t, now),
    created: iso(t.created)!,
    expires_at: iso(t.expires_at)!,
    revoked_at: iso(t.revoked_at),
    last_used_at: iso(t.last_used_at),
  }
}

/** paginateArray orders by ascending key: inverting the creation time lists the newest token first. */
const newestFirst = (t: { created: string; id: string }) => `${String(Number.MAX_SAFE_INTEGER - Date.parse(t.created)).padStart(16, '0')}_${t.id}`

users.openapi(
  createRoute({
    operationId: 'getMe',
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

users.openapi(
  createRoute({
    operationId: 'getDefaultContext',
    method: 'get',
    path: '/users/me/default-context',
    tags: ['users'],
    summary: "The user's default project (null when none is set or it is no longer visible)",
    responses: { 200: json(DefaultContext), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const p = c.get('principal')
    const id = await deps.store.getDefaultProject(p.user.id)
    const visible = id ? (await visibleProjects(deps.store, p)).find((pr) => pr.id === id) : undefined
    return c.json({ project_id: visible?.id ?? null, org_id: visible?.org_id ?? null }, 200)
  },
)

users.openapi(
  createRoute({
    operationId: 'setDefaultContext',
    method: 'put',
    path: '/users/me/default-context',
    tags: ['users'],
    summary: "Set the user's default project",
    request: { body: { content: { 'application/json': { schema: SetDefaultContext } }, required: true } },
    responses: { 200: json(DefaultContext), ...commonErrors },
  }),
  async (c) => {
    const project = await loadProjectFor(c, c.req.valid('json').project_id, 'project.read')
    await c.get('deps').store.setDefaultProject(auditContext(c), c.get('principal').user, project)
    return c.json({ project_id: project.id, org_id: project.org_id }, 200)
  },
)

users.openapi(
  createRoute({
    operationId: 'createPersonalAccessToken',
    method: 'post',
    path: '/users/me/tokens',
    tags: ['tokens'],
    summary: 'Create a personal access token for the caller; the value is shown once',
    request: { body: { content: { 'application/json': { schema: CreateToken } }, required: true } },
    responses: { 201: json(NewPersonalAccessToken, 'Created; the token value is in this response only'), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const body = c.req.valid('json')
    const now = deps.clock.now()
    const created = await createPersonalToken(deps, auditContext(c), c.get('principal').user, { name: body.name, expiresAt: expiryOf(body, now) })
    c.header('Cache-Control', 'no-store')
    return c.json({ ...toToken(created.record, now), token: created.value }, 201)
  },
)

users.openapi(
  createRoute({
    operationId: 'listPersonalAccessTokens',
    method: 'get',
    path: '/users/me/tokens',
    tags: ['tokens'],
    summary: "The caller's personal access tokens, newest first, with their state (never their values)",
    request: { query: PageQuery },
    responses: { 200: { ...json(z.array(PersonalAccessToken)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const now = deps.clock.now()
    const tokens = (await deps.tokens.listPersonal(c.get('principal').user.id)).map((t) => toToken(t, now))
    return pageResponse(c, paginateArray(tokens, newestFirst, { filters: {}, query: c.req.valid('query') }))
  },
)

users.openapi(
  createRoute({
    operationId: 'revokePersonalAccessToken',
    method: 'delete',
    path: '/users/me/tokens/{id}',
    tags: ['tokens'],
    summary: "Revoke one of the caller's personal access tokens; it stops working at once",
    request: { params: IdParam },
    responses: { 204: { description: 'Revoked (also when it already was)' }, ...commonErrors },
  }),
  async (c) => {
    await revokePersonalToken(c.get('deps'), auditContext(c), c.get('principal').user.id, c.req.valid('param').id)
    return c.body(null, 204)
  },
)
