import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { OrgPermission } from '../../../lib/auth/roles.js'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requireOrg, resourceApp } from '../../../lib/http.js'
import { newId } from '../../../lib/ids.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { MAX_ACTIVE_KEYS, type ServiceUserRecord } from '../../../domain/tenancy/service-users.js'
import type { AdminDeps, AdminEnv } from '../deps.js'
import { orgVisible } from '../org-access.js'
import { generateServiceKey, KEY_ALGORITHM, tokenEndpoint } from '../jwt-bearer.js'
import { KeyParam, NewServiceKey, ServiceKey, ServiceUser, ServiceUserDetail, SuParam, toKey, toServiceUser, UpdateServiceUser } from '../schemas.js'

/**
 * /service-users: non-human accounts of an organization and their keys. Keys are ES256 pairs
 * made here: the public JWK is stored, the private key is shown once. Events go to the
 * organization's audit chain. (They are created and listed under /organizations/{org_id}.)
 */
export const serviceUsers = resourceApp<AdminDeps>()

/** A service user of an organization the caller belongs to (else 404, as if absent), in which they hold `permission` (else 403). */
export async function serviceUserFor(c: Context<AdminEnv>, id: string, permission: OrgPermission) {
  const user = await c.get('deps').serviceUsers.get(id)
  if (!user || !(await orgVisible(c, user.org_id))) throw notFound('service user')
  await requireOrg(c, user.org_id, permission)
  return user
}

/** A new key pair of the service user (the API's and the console's): the public key stored with service_key.created, the private key returned once. */
export async function issueServiceKey(c: Context<AdminEnv>, user: ServiceUserRecord): Promise<z.infer<typeof NewServiceKey>> {
  const deps = c.get('deps')
  const keyId = newId()
  const pair = await generateServiceKey(keyId)
  const key = await deps.serviceUsers.addKey(auditContext(c), user, { keyId, alg: KEY_ALGORITHM, publicJwk: pair.publicJwk })
  return { ...toKey(key), token_endpoint: tokenEndpoint(deps.config, c), private_key_pem: pair.privatePem, private_key_jwk: { ...pair.privateJwk } }
}

serviceUsers.openapi(
  createRoute({
    operationId: 'getServiceUser',
    method: 'get',
    path: '/service-users/{id}',
    tags: ['service users'],
    summary: 'A service user, with the project roles it holds',
    request: { params: SuParam },
    responses: { 200: json(ServiceUserDetail), ...commonErrors },
  }),
  async (c) => {
    const user = await serviceUserFor(c, c.req.valid('param').id, 'org.read')
    const { projectRoles } = await c.get('deps').access.rolesOf(user.id)
    return c.json({ ...toServiceUser(user), project_roles: Object.fromEntries(projectRoles) }, 200)
  },
)

serviceUsers.openapi(
  createRoute({
    operationId: 'updateServiceUser',
    method: 'patch',
    path: '/service-users/{id}',
    tags: ['service users'],
    summary: 'Rename, describe, disable or enable a service user (org admins)',
    request: { params: SuParam, body: { content: { 'application/json': { schema: UpdateServiceUser } }, required: true } },
    responses: { 200: json(ServiceUser), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
    const updated = await c.get('deps').serviceUsers.update(auditContext(c), user, c.req.valid('json'))
    return c.json(toServiceUser(updated), 200)
  },
)

serviceUsers.openapi(
  createRoute({
    operationId: 'createServiceKey',
    method: 'post',
    path: '/service-users/{id}/keys',
    tags: ['service users'],
    summary: `Create a key pair (${KEY_ALGORITHM}) for a service user; the private key is shown once (org admins, at most ${MAX_ACTIVE_KEYS} active keys)`,
    request: { params: SuParam },
    responses: { 201: json(NewServiceKey, 'Created; the private key is in this response only'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
    const created = await issueServiceKey(c, user)
    c.header('Cache-Control', 'no-store')
    return c.json(created, 201)
  },
)

serviceUsers.openapi(
  createRoute({
    operationId: 'listServiceKeys',
    method: 'get',
    path: '/service-users/{id}/keys',
    tags: ['service users'],
    summary: 'The keys of a service user, newest first (public parts only)',
    request: { params: SuParam },
    responses: { 200: json(z.array(ServiceKey)), ...commonErrors },
  }),
  async (c) => {
    const user = await serviceUserFor(c, c.req.valid('param').id, 'service_user.manage')
    return c.json((await c.get('deps').serviceUsers.listKeys(user.id)).map(toKey), 200)
  },
)

serviceUsers.openapi(
  createRoute({
    operationId: 'revokeServiceKey',
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
    await c.get('deps').serviceUsers.revokeKey(auditContext(c), user, key_id)
    return c.body(null, 204)
  },
)
