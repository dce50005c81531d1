import { createRoute } from '@hono/zod-openapi'
import type { AuditContext } from '../../../lib/audit.js'
import { ApiError, badRequest, describeZodError, unauthorized } from '../../../lib/errors.js'
import { attemptKeys, auditContext, resourceApp } from '../../../lib/http.js'
import { ErrorBody, json } from '../../../lib/openapi.js'
import type { ServiceKeyRecord } from '../../../domain/tenancy/service-users.js'
import type { AdminDeps } from '../deps.js'
import { assertedKeyId, JWT_BEARER_GRANT, tokenEndpoint, verifyAssertion } from '../jwt-bearer.js'
import { TokenRequest, TokenResponse } from '../schemas.js'

/** /oauth/token: the RFC 7523 exchange of a service user's signed assertion for a short-lived token (a public path). */
export const oauth = resourceApp<AdminDeps>()

const tokenRoute = createRoute({
  operationId: 'exchangeServiceToken',
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

oauth.openapi(
  tokenRoute,
  async (c) => {
    const deps = c.get('deps')
    const type = c.req.header('content-type') ?? ''
    const body = /^application\/x-www-form-urlencoded/i.test(type)
      ? c.req.valid('form')
      : /^application\/json/i.test(type)
        ? c.req.valid('json')
        : undefined
    if (!body) throw badRequest('invalid_request: send grant_type and assertion as application/x-www-form-urlencoded or application/json')
    if (body.grant_type !== JWT_BEARER_GRANT) throw badRequest(`unsupported_grant_type: only ${JWT_BEARER_GRANT} is supported`)

    const attempt = attemptKeys(c, `assertion:${assertedKeyId(body.assertion)}`)
    await deps.throttle.check(attempt)
    const now = deps.clock.now()
    let key: ServiceKeyRecord | undefined
    const ctxFor = (k: ServiceKeyRecord): AuditContext => ({
      actor: { type: 'service_user', id: k.service_user_id, auth_method: 'jwt_bearer' },
      request: auditContext(c).request,
    })
    try {
      const verified = await verifyAssertion(body.assertion, {
        audience: [tokenEndpoint(deps.config, c)],
        now,
        loadKey: (kid) => deps.serviceUsers.getKey(kid),
        onKey: (k) => (key = k),
      })
      const user = await deps.serviceUsers.get(verified.key.service_user_id)
      if (!user) throw unauthorized('invalid_grant: the service user no longer exists')
      if (user.disabled) throw unauthorized('invalid_grant: the service user is disabled')
      const ttlSeconds = deps.config.serviceTokenTtlSeconds
      const issued = await deps.serviceUsers.exchange(ctxFor(verified.key), {
        key: verified.key,
        jti: verified.jti,
        assertionExpiresAt: verified.expiresAt,
        ttlSeconds,
      })
      await deps.throttle.succeeded(attempt)
      c.header('Cache-Control', 'no-store')
      c.header('Pragma', 'no-cache')
      return c.json({ access_token: issued.value, token_type: 'Bearer' as const, expires_in: ttlSeconds }, 200)
    } catch (err) {
      if (err instanceof ApiError) await deps.throttle.failed(attempt)
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
