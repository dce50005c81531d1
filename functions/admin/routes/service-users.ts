import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AuditContext } from '../../../lib/audit.js'
import { iso } from '../../../lib/db.js'
import { ApiError, badRequest, describeZodError, notFound, unauthorized } from '../../../lib/errors.js'
import { API_PREFIX, auditContext, commonErrors, conflictError, ErrorBody, json, requireOrg, resourceApp, type AppEnv } from '../../../lib/http.js'
import { newId } from '../../../lib/ids.js'
import { PageQuery, pageHeaders, pageResponse, paginate } from '../../../lib/pagination.js'
import type { OrgPermission } from '../../../lib/roles.js'
import type { AdminDeps } from '../app.js'
import { generateServiceKey, JWT_BEARER_GRANT, KEY_ALGORITHM, MAX_ASSERTION_LIFETIME_SECONDS, verifyAssertion } from '../jwt-bearer.js'
import { ProjectRoleSchema } from '../schemas.js'
import { MAX_ACTIVE_KEYS, ServiceUserStore, type ServiceKeyRecord, type ServiceUserRecord } from '../service-users-store.js'

const ServiceUser = z
  .object({
    id: z.string().uuid().openapi({
      description: 'The user id: grant it project roles with POST /projects/{id}/members {user_id, roles}; iss and sub of its assertions',
    }),
    kind: z.literal('service_user'),
    org_id: z.string().uuid(),
    name: z.string(),
    description: z.string().optional(),
    disabled: z.boolean(),
    created: z.string(),
    created_by: z.string().optional(),
  })
  .openapi('ServiceUser')

const ServiceUserDetail = ServiceUser.extend({
  project_roles: z.record(z.string(), z.array(ProjectRoleSchema)).openapi({ description: 'Project id to the roles held there' }),
}).openapi('ServiceUserDetail')

const CreateServiceUser = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ description: 'Unique in the organization, e.g. "pipeline-runner"' }),
    description: z.string().trim().max(500).optional(),
  })
  .openapi('CreateServiceUser')

const UpdateServiceUser = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    description: z.string().trim().max(500).optional(),
    disabled: z
      .boolean()
      .optional()
      .openapi({ description: 'A disabled service user cannot exchange assertions, and its current tokens stop working' }),
  })
  .openapi('UpdateServiceUser')

const ServiceKey = z
  .object({
    key_id: z.string().openapi({ description: 'The kid to put in the header of assertions' }),
    service_user_id: z.string().uuid(),
    algorithm: z.string(),
    public_jwk: z.record(z.string(), z.unknown()).openapi({ description: 'The public key, as a JWK' }),
    created: z.string(),
    revoked_at: z.string().optional(),
    last_used_at: z.string().optional(),
  })
  .openapi('ServiceKey')

const NewServiceKey = ServiceKey.extend({
  token_endpoint: z.string().openapi({ description: 'Where to exchange assertions, and their aud' }),
  private_key_pem: z.string().openapi({ description: 'PKCS #8 PEM. Shown only in this response: the platform keeps only the public key.' }),
  private_key_jwk: z.record(z.string(), z.unknown()).openapi({ description: 'The same private key as a JWK' }),
}).openapi('NewServiceKey')

const TokenRequest = z
  .object({
    grant_type: z.string().openapi({ example: JWT_BEARER_GRANT }),
    assertion: z.string().openapi({
      description: `A JWT signed with the service key (ES256 or RS256): header kid = key_id; claims iss = sub = the service user id, aud = the token endpoint, exp at most ${MAX_ASSERTION_LIFETIME_SECONDS} s ahead, iat, and a unique jti`,
    }),
    scope: z.string().optional().openapi({ description: 'Ignored: the token carries the roles of the service user' }),
  })
  .openapi('TokenRequest')

const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: 'A service token (plat_sat_…), sent as Authorization: Bearer' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'Seconds until the token expires' }),
  })
  .openapi('TokenResponse')

const OrgParam = z.object({ org_id: z.string().openapi({ param: { name: 'org_id', in: 'path' } }) })
const SuParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) })
const KeyParam = SuParam.extend({ key_id: z.string().openapi({ param: { name: 'key_id', in: 'path' } }) })

const toServiceUser = (u: ServiceUserRecord): z.infer<typeof ServiceUser> => ({
  id: u.id,
  kind: 'service_user',
  org_id: u.org_id,
  name: u.name,
  description: u.description,
  disabled: Boolean(u.disabled),
  created: iso(u.created)!,
  created_by: u.created_by,
})

const toKey = (k: ServiceKeyRecord): z.infer<typeof ServiceKey> => ({
  key_id: k.id,
  service_user_id: k.service_user_id,
  algorithm: k.alg,
  public_jwk: { ...k.public_jwk },
  created: iso(k.created)!,
  revoked_at: iso(k.revoked_at),
  last_used_at: iso(k.last_used_at),
})

/** The address assertions must name as aud: the configured public address, else the one this request reached. */
export function tokenEndpoint(deps: AdminDeps, c: Context): string {
  if (deps.config.adminPublicUrl) return `${deps.config.adminPublicUrl.replace(/\/+$/, '')}${API_PREFIX}/oauth/token`
  return new URL(`${API_PREFIX}/oauth/token`, new URL(c.req.url).origin).href
}

/**
 * Service users (non-human accounts of an organization) and their keys, and the RFC 7523 token
 * exchange. Keys are ES256 pairs made here: the public JWK is stored, the private key is shown
 * once. Events go to the organization's audit chain.
 */
export function serviceUsersRoutes(deps: AdminDeps) {
  const app = resourceApp()
  const store = new ServiceUserStore(deps.db, deps.audit, deps.clock, deps.tokens)

  /** An organization the caller belongs to (else 404, as if absent) and in which they hold `permission` (else 403). */
  const orgFor = async (c: Context<AppEnv>, orgId: string, permission: OrgPermission) => {
    if (!c.get('principal').orgRoles.has(orgId)) throw notFound('organization')
    await requireOrg(deps, c, orgId, permission)
  }
  const serviceUserFor = async (c: Context<AppEnv>, id: string, permission: OrgPermission) => {
    const user = await store.get(id)
    if (!user || !c.get('principal').orgRoles.has(user.org_id)) throw notFound('service user')
    await requireOrg(deps, c, user.org_id, permission)
    return user
  }

  app.openapi(
    createRoute({
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
      const user = await store.create(auditContext(c), { orgId: org_id, name: body.name, description: body.description })
      return c.json(toServiceUser(user), 201)
    },
  )

  app.openapi(
    createRoute({
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
      const page = await paginate(store.ofOrg(org_id), { orderBy: [['created', 'asc']], filters: { org_id }, query: c.req.valid('query') }, (d) =>
        toServiceUser(d.data() as ServiceUserRecord),
      )
      return pageResponse(c, page)
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/service-users/{id}',
      tags: ['service users'],
      summary: 'A service user, with the project roles it holds',
      request: { params: SuParam },
      responses: { 200: json(ServiceUserDetail), ...commonErrors },
    }),
    async (c) => {
      const user = await serviceUserFor(c, c.req.valid('param').id, 'org.read')
      const { projectRoles } = await deps.access.rolesOf(user.id)
      return c.json({ ...toServiceUser(user), project_roles: Object.fromEntries(projectRoles) }, 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/service-users/{id}',
      tags: ['service users'],
      summary: 'Rename, describe, disable or enable a service user (org admins)',
      request: { params: SuParam, body: { content: { 'application/json': { schema: UpdateServiceUser } }, required: true } },
      responses: { 200: json(ServiceUser), ...commonErrors, ...conflictError },
    }),
    async (c) => {
      const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
      const updated = await store.update(auditContext(c), user, c.req.valid('json'))
      return c.json(toServiceUser(updated), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'post',
      path: '/service-users/{id}/keys',
      tags: ['service users'],
      summary: `Create a key pair (${KEY_ALGORITHM}) for a service user; the private key is shown once (org admins, at most ${MAX_ACTIVE_KEYS} active keys)`,
      request: { params: SuParam },
      responses: { 201: json(NewServiceKey, 'Created; the private key is in this response only'), ...commonErrors, ...conflictError },
    }),
    async (c) => {
      const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
      const keyId = newId()
      const pair = await generateServiceKey(keyId)
      const key = await store.addKey(auditContext(c), user, { keyId, alg: KEY_ALGORITHM, publicJwk: pair.publicJwk })
      c.header('Cache-Control', 'no-store')
      return c.json(
        { ...toKey(key), token_endpoint: tokenEndpoint(deps, c), private_key_pem: pair.privatePem, private_key_jwk: { ...pair.privateJwk } },
        201,
      )
    },
  )

  app.openapi(
    createRoute({
      method: 'get',
      path: '/service-users/{id}/keys',
      tags: ['service users'],
      summary: 'The keys of a service user, newest first (public parts only)',
      request: { params: SuParam },
      responses: { 200: json(z.array(ServiceKey)), ...commonErrors },
    }),
    async (c) => {
      const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
      return c.json((await store.listKeys(user.id)).map(toKey), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/service-users/{id}/keys/{key_id}',
      tags: ['service users'],
      summary: 'Revoke a key; the tokens obtained with it stop working at once',
      request: { params: KeyParam },
      responses: { 204: { description: 'Revoked (also when it already was)' }, ...commonErrors },
    }),
    async (c) => {
      const { id, key_id } = c.req.valid('param')
      const user = await serviceUserFor(c, id, 'service_user.manage')
      await store.revokeKey(auditContext(c), user, key_id)
      return c.body(null, 204)
    },
  )

  const tokenRoute = createRoute({
    method: 'post',
    path: '/oauth/token',
    tags: ['service users'],
    summary: 'Exchange a JWT assertion signed with a service key for a short-lived access token (RFC 7523)',
    description:
      'Send grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and the assertion, form-encoded (RFC 6749) or as JSON. ' +
      'Errors use the platform shape { detail }, whose text begins with the RFC 6749 error code: 400 for a malformed request, 401 for an assertion that fails a check.',
    security: [],
    request: {
      body: {
        content: { 'application/x-www-form-urlencoded': { schema: TokenRequest }, 'application/json': { schema: TokenRequest } },
        required: false,
      },
    },
    responses: {
      200: json(TokenResponse),
      400: json(ErrorBody, 'Malformed request (invalid_request, unsupported_grant_type)'),
      401: json(ErrorBody, 'The assertion failed a check (invalid_grant)'),
    },
  })

  app.openapi(
    tokenRoute,
    async (c) => {
      const type = c.req.header('content-type') ?? ''
      const body = /^application\/x-www-form-urlencoded/i.test(type)
        ? c.req.valid('form')
        : /^application\/json/i.test(type)
          ? c.req.valid('json')
          : undefined
      if (!body) throw badRequest('invalid_request: send grant_type and assertion as application/x-www-form-urlencoded or application/json')
      if (body.grant_type !== JWT_BEARER_GRANT) throw badRequest(`unsupported_grant_type: only ${JWT_BEARER_GRANT} is supported`)

      const now = deps.clock.now()
      let key: ServiceKeyRecord | undefined
      const ctxFor = (k: ServiceKeyRecord): AuditContext => ({
        actor: { type: 'service_user', id: k.service_user_id, auth_method: 'jwt_bearer' },
        request: auditContext(c).request,
      })
      try {
        const verified = await verifyAssertion(body.assertion, {
          audience: [tokenEndpoint(deps, c)],
          now,
          loadKey: (kid) => store.getKey(kid),
          onKey: (k) => (key = k),
        })
        const user = await store.get(verified.key.service_user_id)
        if (!user) throw unauthorized('invalid_grant: the service user no longer exists')
        if (user.disabled) throw unauthorized('invalid_grant: the service user is disabled')
        const ttlSeconds = deps.config.serviceTokenTtlSeconds
        const issued = await store.exchange(ctxFor(verified.key), {
          key: verified.key,
          jti: verified.jti,
          assertionExpiresAt: verified.expiresAt,
          ttlSeconds,
        })
        c.header('Cache-Control', 'no-store')
        c.header('Pragma', 'no-cache')
        return c.json({ access_token: issued.value, token_type: 'Bearer' as const, expires_in: ttlSeconds }, 200)
      } catch (err) {
        // Only failures with a real key are recorded: anonymous garbage would let anyone flood the chain.
        if (key && err instanceof ApiError) {
          const k: ServiceKeyRecord = key
          await deps.audit
            .record(ctxFor(k), {
              action: 'service_token.denied',
              outcome: 'failure',
              org_id: k.org_id,
              entity: { type: 'service_user', id: k.service_user_id, parent: k.org_id },
              change: { reason: err.detail },
            })
            .catch((error) => deps.log.error('audit write failed', { error }))
        }
        throw err
      }
    },
    (result, c) => (result.success ? undefined : c.json({ detail: `invalid_request: ${describeZodError(result.error)}` }, 400)),
  )

  return app
}
