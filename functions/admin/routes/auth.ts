import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { CookieOptions } from 'hono/utils/cookie'
import type { AuditContext } from '../../../lib/audit.js'
import { ApiError } from '../../../lib/errors.js'
import { attemptKeys, auditContext, resourceApp, SESSION_COOKIE } from '../../../lib/http.js'
import { ErrorBody, json } from '../../../lib/openapi.js'
import type { CliLoginMethod } from '../../../domain/identity/cli-logins.js'
import type { UserRecord } from '../../../lib/auth/access.js'
import type { AdminDeps, AdminEnv } from '../deps.js'
import { DEFAULT_RETURN_TO, effectiveRoles, LoginRejected, safeReturnTo, userActor } from '../login.js'

/** Binds a browser login to the browser that started it, so that nobody can log a victim into their own account. */
const LOGIN_STATE_COOKIE = 'platform_login_state'

const PasswordLogin = z
  .object({
    email: z.email().max(320),
    password: z.string().min(1).max(1024),
  })
  .openapi('PasswordLogin')

const RefreshRequest = z
  .object({
    refresh_token: z.string().min(1).max(4096).openapi({ description: 'The refresh credential (plat_clr_…) of the latest pair: each works once' }),
  })
  .openapi('RefreshRequest')

const RevokeRequest = z
  .object({
    token: z
      .string()
      .min(1)
      .max(4096)
      .openapi({ description: "A refresh (plat_clr_…) or access (plat_cli_…) credential of the CLI login to end, as RFC 7009's token" }),
  })
  .openapi('RevokeRequest')

const CliLogin = z
  .object({
    issuer: z.string().openapi({ description: 'The identity provider (its OIDC issuer) that the CLI logs in at, through this service' }),
    methods: z.array(z.enum(['browser', 'password'])).openapi({
      description:
        'How the CLI may log in, the one it prefers first: browser, the OAuth 2.0 device authorization grant (POST /auth/device), offered when the provider has a device authorization endpoint; ' +
        'password (POST /auth/password), unless the grant types the provider lists leave the password grant out. A personal access token always works besides.',
    }),
  })
  .openapi('CliLogin')

const DeviceLogin = z
  .object({
    device_code: z
      .string()
      .openapi({ description: 'What the CLI sends to POST /auth/device/token while it waits; a secret of this login, never shown' }),
    user_code: z.string().openapi({ description: 'The code the person checks (or types) at verification_uri', example: 'WDJB-MJHT' }),
    verification_uri: z.string().openapi({ description: "The identity provider's page where the person enters user_code, in any browser" }),
    verification_uri_complete: z
      .string()
      .optional()
      .openapi({ description: 'The same page with the code filled in, when the provider gives one (Entra ID does not)' }),
    expires_in: z.number().int().openapi({ description: 'Seconds until the codes expire' }),
    interval: z.number().int().openapi({ description: 'Seconds to wait between polls (5 when the provider names none)' }),
  })
  .openapi('DeviceLogin')

const DeviceTokenRequest = z.object({ device_code: z.string().min(1).max(4096) }).openapi('DeviceTokenRequest')

const DeviceLoginPending = z
  .object({
    status: z.enum(['authorization_pending', 'slow_down']).openapi({
      description:
        'authorization_pending: the person has not finished at the provider yet; slow_down: poll 5 s less often from now on (RFC 8628 §3.5)',
    }),
  })
  .openapi('DeviceLoginPending')

const LoginTokens = z
  .object({
    access_token: z.string().openapi({
      description:
        "The platform's access credential (plat_cli_…) for Authorization: Bearer on every service, until expires_in; the user's roles are read on every request",
    }),
    refresh_token: z.string().openapi({
      description:
        "The platform's refresh credential (plat_clr_…) for POST /auth/refresh, once: each refresh returns a new pair, and presenting a used one again ends the login (every credential of it). " +
        'POST /auth/revoke ends the login. No credential of a login outlives its absolute lifetime (CLI_REFRESH_TTL_SECONDS, 30 days by default)',
    }),
    expires_in: z.number().int().openapi({ description: "Seconds until the access credential expires: 3600, less in the login's last hour" }),
    token_type: z.literal('Bearer'),
  })
  .openapi('LoginTokens')

const LoginQuery = z.object({
  return_to: z
    .string()
    .optional()
    .openapi({
      description: `Where to land after login: a path on this service, e.g. ${DEFAULT_RETURN_TO} (the default), or an address on one of the platform's own origins (PUBLIC_ORIGINS, e.g. a report's sign-off page). Other origins are refused.`,
    }),
  prompt: z
    .enum(['login'])
    .optional()
    .openapi({ description: 'login: the identity provider authenticates the user again, whatever session it has (OIDC Core 3.1.2.1)' }),
  max_age: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .openapi({
      description:
        "The maximum age in seconds of the user's authentication at the provider (0: now). The ID token's auth_time is checked against it. " +
        'With prompt or max_age, a browser that has a session re-authenticates it: the session keeps its cookie and records the new auth_time with the prompt and max_age asked, and an authentication as another user is refused (the session is left as it was). ' +
        'A max_age above 0 lets the provider answer from its own session without asking for a password: a report signature does not accept such a re-authentication.',
    }),
  purpose: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .openapi({
      description:
        "What a re-authentication confirms, in a few words (e.g. 'Sign report ORD-1 revision 2: approved'): passed to the identity provider as the authorization parameter purpose, which the local suite's sign-in page shows and other providers ignore (RFC 6749 §3.1). " +
        "A re-authentication also passes the session's e-mail as login_hint, so that the provider asks for the same person's password.",
    }),
})

const CallbackQuery = z.object({
  state: z.string().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  iss: z.string().optional(),
})

const redirect = (description: string) => ({ description, headers: z.object({ Location: z.string() }) })
const errorResponse = (description: string) => json(ErrorBody, description)

/**
 * /auth: the login flows (public paths): the browser's OIDC redirect, callback and logout, which
 * set and clear the platform_session cookie, and the CLI's logins (in a browser by the device
 * authorization grant, or with e-mail and password) and refresh.
 */
export const auth = resourceApp<AdminDeps>()

const cookieOptions = (c: Context<AdminEnv>, maxAge: number, path = '/'): CookieOptions => ({
  httpOnly: true,
  sameSite: 'Lax',
  path,
  secure: c.get('deps').login.secureCookies,
  maxAge,
})
const callbackPath = (c: Context<AdminEnv>) => new URL(c.get('deps').login.redirectUri).pathname

/** Ends the request's browser session (the API's logout, the console's sign-out): deleted from the shared store, the cookie cleared, session.ended recorded. */
export async function endBrowserSession(c: Context<AdminEnv>): Promise<void> {
  const deps = c.get('deps')
  const value = getCookie(c, SESSION_COOKIE)
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c, 0))
  const ended = value ? await deps.tokens.endSession(value) : undefined
  if (ended) {
    const user = await deps.access.getUser(ended.user_id)
    const ctx: AuditContext = user ? userActor(user, auditContext(c).request, 'session') : auditContext(c)
    await deps.audit.record(ctx, { action: 'session.ended', entity: { type: 'session', id: ended.id, parent: ended.user_id } })
  }
}

/** The end of a CLI login: the platform's own pair for the user the identity provider's ID token named, with login.succeeded. */
function beginCliLogin(c: Context<AdminEnv>, user: UserRecord, method: CliLoginMethod, authMethod: string) {
  const deps = c.get('deps')
  return deps.cliLogins.begin(userActor(user, auditContext(c).request, authMethod), {
    userId: user.id,
    method,
    lifetimeSeconds: deps.config.cliRefreshTtlSeconds,
  })
}

async function recordFailure(c: Context<AdminEnv>, who: string, reason: string, method: string) {
  const { audit, log } = c.get('deps')
  await audit
    .record(auditContext(c), {
      action: 'login.failed',
      outcome: 'failure',
      entity: { type: 'login', id: who },
      change: { reason: `${method}: ${reason}` },
    })
    .catch((error) => log.error('audit write failed', { error }))
}

auth.openapi(
  createRoute({
    operationId: 'beginLogin',
    method: 'get',
    path: '/auth/login',
    tags: ['auth'],
    summary: "Start a browser login: redirects to the identity provider's authorization endpoint",
    description:
      'Authorization code flow with PKCE (S256), state and nonce. The verifier, nonce and return_to stay on the server for 10 minutes, under the state; ' +
      'the browser gets only the state (in the redirect and in a short-lived cookie that binds the login to this browser).',
    security: [],
    request: { query: LoginQuery },
    responses: {
      302: redirect('To the identity provider'),
      400: errorResponse("return_to is not a path on this service or an address on the platform's origins"),
      404: errorResponse('Login is not configured'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    const query = c.req.valid('query')
    const returnTo = safeReturnTo(query.return_to, deps.config.publicOrigins)
    const fresh = query.prompt !== undefined || query.max_age !== undefined
    const session = fresh ? getCookie(c, SESSION_COOKIE) : undefined
    const current = session ? await deps.tokens.getSession(session, deps.clock.now()) : undefined
    // A re-authentication is the session's own person again: the provider is told whom to ask (login_hint), and what for.
    const reauthenticating = current?.ok ? await deps.access.getUser(current.record.user_id) : undefined
    const { authorizationUrl, state } = await deps.login.begin(
      returnTo,
      {
        prompt: query.prompt,
        maxAge: query.max_age,
        reauthSession: current?.ok ? deps.tokens.sessionKey(session!) : undefined,
        ...(reauthenticating?.email ? { loginHint: reauthenticating.email } : {}),
        ...(query.purpose ? { purpose: query.purpose } : {}),
      },
      deps.log,
    )
    setCookie(c, LOGIN_STATE_COOKIE, state, cookieOptions(c, 600, callbackPath(c)))
    c.header('Cache-Control', 'no-store')
    return c.redirect(authorizationUrl.href, 302)
  },
)

auth.openapi(
  createRoute({
    operationId: 'completeLogin',
    method: 'get',
    path: '/auth/callback',
    tags: ['auth'],
    summary: 'Where the identity provider sends the browser back: creates the session and sets the platform_session cookie',
    description:
      'Checks the state (once only, and only from the browser that started the login), exchanges the code with the PKCE verifier, verifies the ID token (signature, issuer, audience, expiry, nonce), ' +
      `maps the identity to a platform user, stores the session (with the roles at login and the ID token's auth_time) and sets ${SESSION_COOKIE} (HttpOnly, SameSite=Lax, Secure over HTTPS) for the session lifetime. Then redirects to return_to. ` +
      'A re-authentication (a login begun with prompt or max_age by a browser with a session) creates no session: the session records the new auth_time, with the prompt and max_age the login began with, when its own user authenticated, or that another user was refused. ' +
      'A report signature accepts only a re-authentication begun with prompt=login and max_age=0 after its form was posted.',
    security: [],
    request: { query: CallbackQuery },
    responses: {
      302: redirect('To return_to, with the session cookie set'),
      400: errorResponse('Unknown, used or expired state'),
      401: errorResponse('The identity provider refused the login, or its answer failed a check'),
      404: errorResponse('Login is not configured'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    const query = new URL(c.req.url).searchParams
    const boundState = getCookie(c, LOGIN_STATE_COOKIE)
    deleteCookie(c, LOGIN_STATE_COOKIE, cookieOptions(c, 0, callbackPath(c)))
    c.header('Cache-Control', 'no-store')
    try {
      const { user, email, returnTo, authTime, asked, reauthSession } = await deps.login.complete(query, boundState, deps.log)
      const now = deps.clock.now()
      const reauthenticated = reauthSession ? await deps.tokens.getSessionByKey(reauthSession, now) : undefined
      if (reauthSession && reauthenticated?.ok && authTime) {
        // A re-authentication: the browser keeps its session, which records the new authentication
        // time, or, when someone else authenticated, only that it was refused. Never another user's session in its place.
        const same = reauthenticated.record.user_id === user.id
        const owner = same ? user : await deps.access.getUser(reauthenticated.record.user_id)
        const ctx = userActor(owner ?? user, auditContext(c).request, 'oidc')
        const entity = { type: 'session', id: reauthenticated.record.id, parent: reauthenticated.record.user_id }
        if (same) {
          await deps.tokens.recordReauthentication(reauthSession, { authTime, now, ...asked })
          await deps.audit.record(ctx, {
            action: 'session.reauthenticated',
            entity,
            change: { reason: `prompt=${asked.prompt ?? 'none'}, max_age=${asked.maxAge ?? 'none'}; auth_time ${authTime.toISOString()}` },
          })
        } else {
          await deps.tokens.recordRefusedReauthentication(reauthSession, { userId: user.id, email, now })
          await deps.audit.record(ctx, {
            action: 'session.reauthentication_refused',
            outcome: 'denied',
            entity,
            change: { reason: `re-authentication by another user (${email ?? user.id}) in this session; the session is unchanged` },
          })
        }
        return c.redirect(deps.login.returnUrl(returnTo), 302)
      }
      const ttl = deps.config.sessionTtlSeconds
      const session = await deps.tokens.createSession({
        userId: user.id,
        ttlSeconds: ttl,
        now,
        effectiveRoles: await effectiveRoles(deps, user.id),
        authTime,
      })
      const ctx = userActor(user, auditContext(c).request, 'oidc')
      try {
        await deps.audit.record(ctx, { action: 'session.created', entity: { type: 'session', id: session.record.id, parent: user.id } })
      } catch (error) {
        // A session nobody can account for must not stay usable.
        await deps.tokens.endSession(session.value)
        throw error
      }
      setCookie(c, SESSION_COOKIE, session.value, cookieOptions(c, ttl))
      return c.redirect(deps.login.returnUrl(returnTo), 302)
    } catch (error) {
      if (error instanceof LoginRejected) {
        await recordFailure(c, error.email ?? 'unknown', error.reason, 'oidc')
        throw new ApiError(401, `login failed: ${error.reason}`)
      }
      throw error
    }
  },
)

auth.openapi(
  createRoute({
    operationId: 'logout',
    method: 'post',
    path: '/auth/logout',
    tags: ['auth'],
    summary: 'End the browser session and clear the platform_session cookie',
    description:
      'Idempotent: answers 204 also when there is no session. The session is deleted from the shared store, so every service refuses it at once.',
    security: [],
    responses: { 204: { description: 'Logged out' } },
  }),
  async (c) => {
    await endBrowserSession(c)
    return c.body(null, 204)
  },
)

auth.openapi(
  createRoute({
    operationId: 'passwordLogin',
    method: 'post',
    path: '/auth/password',
    tags: ['auth'],
    summary: "Log in with e-mail and password (the CLI): returns the platform's access and refresh credentials",
    description:
      "The e-mail and password go to the identity provider's token endpoint (the password grant, as the CLI's client: OIDC_CLI_CLIENT_ID, else the platform's client); " +
      "the platform never stores a password. The provider's ID token says who signed in (a first login creates the platform user); the platform then issues its own pair and keeps nothing of the provider's. " +
      'Where the provider does not offer the grant (Google; Keycloak, Okta and Entra ID unless allowed for the client) the answer is 400, and where the account needs more than a password ' +
      '(Entra ID with multi-factor authentication or conditional access) 401: both details say to use the browser login (POST /auth/device) instead.',
    security: [],
    request: { body: { content: { 'application/json': { schema: PasswordLogin } }, required: true } },
    responses: {
      200: json(LoginTokens),
      400: errorResponse('Invalid parameters, or the identity provider does not offer e-mail and password login: use the browser login'),
      401: errorResponse('Wrong e-mail or password, account disabled, or the account needs more than a password: use the browser login'),
      429: errorResponse('Too many failed logins for this e-mail or from this address: wait Retry-After seconds'),
      404: errorResponse('Login is not configured'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    const { email, password } = c.req.valid('json')
    c.header('Cache-Control', 'no-store')
    const keys = attemptKeys(c, `password:${email}`)
    await deps.throttle.check(keys)
    try {
      const user = await deps.login.password(email, password, deps.log)
      await deps.throttle.succeeded(keys)
      return c.json(await beginCliLogin(c, user, 'password', 'password'), 200)
    } catch (error) {
      if (error instanceof LoginRejected) {
        await deps.throttle.failed(keys)
        await recordFailure(c, email.toLowerCase(), error.reason, 'password')
        throw new ApiError(401, error.detail ?? (error.reason === 'invalid_grant' ? 'wrong e-mail or password' : `login failed: ${error.reason}`))
      }
      throw error
    }
  },
)

auth.openapi(
  createRoute({
    operationId: 'cliLoginMethods',
    method: 'get',
    path: '/auth/cli',
    tags: ['auth'],
    summary: 'How the CLI may log in here: the identity provider, and the login methods it offers',
    description:
      "Read from the provider's metadata (discovered once). The CLI logs in through this service only, which holds the provider's client (docs/cli-login.md).",
    security: [],
    responses: {
      200: json(CliLogin),
      404: errorResponse('Login is not configured'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    return c.json(await deps.login.cliMethods(deps.log), 200)
  },
)

auth.openapi(
  createRoute({
    operationId: 'beginDeviceLogin',
    method: 'post',
    path: '/auth/device',
    tags: ['auth'],
    summary: "Begin the CLI's browser login: the OAuth 2.0 device authorization grant (RFC 8628) at the identity provider",
    description:
      "The service asks the provider's device authorization endpoint, as the CLI's client (OIDC_CLI_CLIENT_ID, else the platform's client) for OIDC_CLI_SCOPE. " +
      'The person opens verification_uri in any browser, on any device, signs in as the provider asks (password, multi-factor authentication, single sign-on) and confirms user_code; ' +
      'meanwhile the CLI polls POST /auth/device/token with device_code every interval seconds.',
    security: [],
    responses: {
      200: json(DeviceLogin),
      404: errorResponse('Login is not configured, or the provider does not offer the device authorization grant to the CLI client'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    c.header('Cache-Control', 'no-store')
    return c.json(await deps.login.beginDevice(deps.log), 200)
  },
)

auth.openapi(
  createRoute({
    operationId: 'pollDeviceLogin',
    method: 'post',
    path: '/auth/device/token',
    tags: ['auth'],
    summary: "Poll the CLI's browser login: 202 until the person has confirmed the code, then the platform's credentials",
    description:
      "Each call is one poll of the provider's token endpoint (grant type urn:ietf:params:oauth:grant-type:device_code). " +
      "202 while the person has not finished (slow_down: wait 5 s longer between polls from now on); 200 once they have: the provider's ID token says who signed in (a first login creates the platform user), " +
      "and the platform issues its own access and refresh credentials (nothing of the provider's is kept); 401 when the person refused at the provider, the code expired, or it is unknown or used (the detail begins with the provider's RFC 8628 error code).",
    security: [],
    request: { body: { content: { 'application/json': { schema: DeviceTokenRequest } }, required: true } },
    responses: {
      200: json(LoginTokens),
      202: json(DeviceLoginPending, 'Not yet: poll again after the interval'),
      400: errorResponse('Invalid parameters'),
      401: errorResponse('Refused at the provider, expired, or an unknown or used device code; or account disabled'),
      404: errorResponse('Login is not configured'),
      429: errorResponse('Too many failed polls from this address: wait Retry-After seconds'),
      500: errorResponse('Identity provider unavailable'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    c.header('Cache-Control', 'no-store')
    const keys = attemptKeys(c)
    await deps.throttle.check(keys)
    try {
      const poll = await deps.login.pollDevice(c.req.valid('json').device_code, deps.log)
      if (poll.status !== 'complete') return c.json({ status: poll.status }, 202)
      return c.json(await beginCliLogin(c, poll.user, 'browser', 'device_code'), 200)
    } catch (error) {
      if (error instanceof LoginRejected) {
        await deps.throttle.failed(keys)
        await recordFailure(c, error.email ?? 'unknown', error.reason, 'device_code')
        throw new ApiError(401, error.detail ?? error.reason)
      }
      throw error
    }
  },
)

auth.openapi(
  createRoute({
    operationId: 'refreshLogin',
    method: 'post',
    path: '/auth/refresh',
    tags: ['auth'],
    summary: "Exchange the CLI's refresh credential for a new pair (rotation)",
    description:
      'The refresh credential is spent: the answer carries a new access credential and a new refresh credential, never past the end of the login (CLI_REFRESH_TTL_SECONDS after the sign-in). ' +
      'A spent refresh credential presented again ends the whole login (OAuth 2.0 Security BCP, RFC 9700 §4.14: a copy may have been stolen), and is answered 401; so are an unknown, expired or logged-out one, a disabled account, ' +
      'and a refresh token of the identity provider kept by a CLI from before the platform issued its own credentials. Every 401 says to log in again.',
    security: [],
    request: { body: { content: { 'application/json': { schema: RefreshRequest } }, required: true } },
    responses: {
      200: json(LoginTokens),
      400: errorResponse('Invalid parameters'),
      401: errorResponse('Refresh credential unknown, used, expired or revoked, or account disabled: log in again'),
    },
  }),
  async (c) => {
    c.header('Cache-Control', 'no-store')
    const deps = c.get('deps')
    const { tokens } = await deps.cliLogins.refresh(auditContext(c).request, c.req.valid('json').refresh_token)
    return c.json(tokens, 200)
  },
)

auth.openapi(
  createRoute({
    operationId: 'revokeLogin',
    method: 'post',
    path: '/auth/revoke',
    tags: ['auth'],
    summary: 'End a CLI login (platform logout): its refresh and access credentials stop working at once',
    description:
      'Takes either credential of the login (RFC 7009). Answers 204 whatever the token, known or not, already revoked or not, so that it tells nothing about it; ' +
      "a login it ends leaves token.revoked in the audit log. The identity provider's own session is not touched.",
    security: [],
    request: { body: { content: { 'application/json': { schema: RevokeRequest } }, required: true } },
    responses: {
      204: { description: 'The login is ended, if the token was a credential of one' },
      400: errorResponse('Invalid parameters'),
    },
  }),
  async (c) => {
    const deps = c.get('deps')
    await deps.cliLogins.logout(auditContext(c).request, c.req.valid('json').token)
    return c.body(null, 204)
  },
)
