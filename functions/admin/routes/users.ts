import { Timestamp } from '@google-cloud/firestore'
import { createRoute, z } from '@hono/zod-openapi'
import type { PersonalTokenRecord } from '../../../lib/auth/tokens.js'
import { iso } from '../../../lib/db.js'
import { badRequest, forbidden, notFound } from '../../../lib/errors.js'
import { auditContext, loadProjectFor, resourceApp } from '../../../lib/http.js'
import { newId } from '../../../lib/ids.js'
import { commonErrors, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import type { AdminDeps } from '../deps.js'
import { DefaultContext, Me, SetDefaultContext } from '../schemas.js'
import { visibleProjects } from './projects.js'

/**
 * /users: the caller (/users/me), their default project, and their personal access tokens.
 * A token carries no roles of its own: the user's roles are resolved on every request, so removing
 * a role restricts every token of the user at once. Token events go to the platform audit chain,
 * as a token is not bound to one organization.
 */
export const users = resourceApp<AdminDeps>()

export const DEFAULT_TOKEN_DAYS = 90
export const MAX_TOKEN_DAYS = 366
const DAY_MS = 86_400_000

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

function stateOf(t: PersonalTokenRecord, now: Date): z.infer<typeof TokenState> {
  if (t.revoked_at) return 'revoked'
  return t.expires_at.toMillis() <= now.getTime() ? 'expired' : 'active'
}

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

function expiryOf(body: z.infer<typeof CreateToken>, now: Date): Date {
  if (body.expires_at === undefined) return new Date(now.getTime() + (body.expires_in_days ?? DEFAULT_TOKEN_DAYS) * DAY_MS)
  const at = new Date(body.expires_at)
  if (at.getTime() <= now.getTime()) throw badRequest('expires_at: must be in the future')
  if (at.getTime() > now.getTime() + MAX_TOKEN_DAYS * DAY_MS) throw badRequest(`expires_at: must be at most ${MAX_TOKEN_DAYS} days ahead`)
  return at
}

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
    const p = c.get('principal')
    // A service user's access must end when its key is revoked; a long-lived token would outlive that.
    if (p.user.kind === 'service_user') throw forbidden('service users obtain short-lived tokens with their keys at POST /oauth/token')
    const body = c.req.valid('json')
    const now = deps.clock.now()
    const expiresAt = expiryOf(body, now)
    const ctx = auditContext(c)
    const created = await deps.db.transaction(async (tx) => {
      const id = newId()
      const chain = await deps.audit.prepare(tx, { entity: { type: 'personal_token', id } })
      const t = deps.tokens.createPersonalIn(tx, { id, userId: p.user.id, name: body.name, expiresAt, now })
      chain.write(ctx, {
        action: 'token.created',
        entity: { type: 'personal_token', id: t.record.id, parent: p.user.id },
        change: { to: iso(t.record.expires_at) },
      })
      return t
    })
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
    const deps = c.get('deps')
    const userId = c.get('principal').user.id
    const id = c.req.valid('param').id
    const ctx = auditContext(c)
    const now = deps.clock.now()
    await deps.db.transaction(async (tx) => {
      const chain = await deps.audit.prepare(tx, { entity: { type: 'personal_token', id } })
      const found = await deps.tokens.getPersonalIn(tx, userId, id)
      if (!found) throw notFound('token')
      if (found.record.revoked_at) return
      tx.update(found.ref, { revoked_at: Timestamp.fromDate(now) })
      chain.write(ctx, { action: 'token.revoked', entity: { type: 'personal_token', id, parent: userId } })
    })
    return c.body(null, 204)
  },
)
