import { Timestamp } from '@google-cloud/firestore'
import * as oidc from 'openid-client'
import type { UserRecord } from '../../lib/auth/access.js'
import type { AuditContext } from '../../lib/audit.js'
import { ApiError, badRequest } from '../../lib/errors.js'
import { API_PREFIX, type KernelDeps } from '../../lib/http.js'
import type { Logger } from '../../lib/log.js'

/** What the browser login asks the identity provider for: only who the user is (the session is the platform's own). */
const BROWSER_SCOPE = 'openid email profile'
/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
/** RFC 8628 §3.2: the polling interval when the provider names none. */
const DEFAULT_DEVICE_INTERVAL_S = 5
const LOGIN_STATE_TTL_MS = 10 * 60 * 1000
export const DEFAULT_RETURN_TO = `${API_PREFIX}/users/me`

/** A login in flight, kept server-side: the browser carries only the state. */
interface LoginStateRecord {
  code_verifier: string
  nonce: string
  return_to: string
  /** Asked of the provider (OIDC Core 3.1.2.1): `login` to authenticate again, and the maximum age of that authentication. */
  prompt?: 'login'
  max_age?: number
  /** A re-authentication of the session whose key this is (lib/auth/tokens.ts sessionKey): the callback updates it instead of starting another. */
  reauth_session?: string
  created: Timestamp
  expires_at: Timestamp
}

/** What the browser asked of a login besides its destination: a fresh authentication at the provider. */
export interface LoginOptions {
  prompt?: 'login'
  maxAge?: number
  /** The key of the session being re-authenticated, when the browser has one. */
  reauthSession?: string
  /** The e-mail of the person expected to sign in (OIDC Core 3.1.2.1 login_hint): a re-authentication's own. */
  loginHint?: string
  /** What the sign-in is for, shown by providers that know the parameter (the local suite's); others ignore it. */
  purpose?: string
}

/** Why a login did not go through, for the login.failed audit event and the 401 (`detail` when the caller is told more than the reason). */
export class LoginRejected extends Error {
  constructor(
    readonly reason: string,
    readonly email?: string,
    readonly detail?: string,
  ) {
    super(reason)
  }
}

/** How the CLI may log in here (GET /auth/cli): in a browser (the device authorization grant), with e-mail and password. */
export type CliLoginMethod = 'browser' | 'password'

/** A browser login of the CLI, begun (RFC 8628 §3.2): what the person opens and types, and how the CLI polls. */
export interface DeviceAuthorization {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete?: string
  expires_in: number
  interval: number
}

/** A poll of a device login: not yet (keep polling; slow_down: 5 s more between polls, RFC 8628 §3.5), or done: who signed in. */
export type DevicePoll = { status: 'authorization_pending' | 'slow_down' } | { status: 'complete'; user: UserRecord }

/** The person has not finished at the provider yet: the CLI polls again. */
class DeviceLoginPending extends Error {
  constructor(readonly status: 'authorization_pending' | 'slow_down') {
    super(status)
  }
}

/** An OAuth error answer of the provider's token endpoint (RFC 6749 §5.2), with what Entra ID adds to it. */
export interface ProviderRefusal {
  error: string
  error_codes?: unknown
  suberror?: unknown
}

/**
 * What a refusal of a device-code poll means (RFC 8628 §3.5; Entra ID says authorization_declined
 * and bad_verification_code): wait and poll again, or the login is over (the reason says why), or
 * undefined when it is not about this login (a misconfigured client): the generic handling.
 */
export function deviceRefusal(refusal: ProviderRefusal): { wait: 'authorization_pending' | 'slow_down' } | { rejected: string } | undefined {
  switch (refusal.error) {
    case 'authorization_pending':
    case 'slow_down':
      return { wait: refusal.error }
    case 'access_denied':
    case 'authorization_declined':
      return { rejected: 'access_denied: the sign-in was refused or cancelled at the identity provider' }
    case 'expired_token':
      return { rejected: 'expired_token: the code expired before the sign-in was completed; start the login again' }
    case 'invalid_grant':
    case 'bad_verification_code':
      return { rejected: 'invalid_grant: unknown or already used device code; start the login again' }
    default:
      return undefined
  }
}

/**
 * Whether the provider refused to begin a device login because the CLI's client may not use the
 * grant (not enabled for it; Entra ID answers invalid_client while the app does not allow public
 * client flows): the operator's to fix, so the CLI is told to log in another way meanwhile.
 */
export const deviceGrantNotAllowed = (refusal: ProviderRefusal) =>
  refusal.error === 'unauthorized_client' || refusal.error === 'unsupported_grant_type' || refusal.error === 'invalid_client'

/** Entra ID's codes for a password that was right but is not enough: MFA required or to register, an external challenge, conditional access. */
const ENTRA_INTERACTIVE_ONLY = new Set([50076, 50079, 50158, 53003])

/**
 * Why a password login was refused when the password is not the question: the provider does not
 * offer the grant to this client at all ('method': Google, Keycloak without direct access grants,
 * Okta without the password grant), or this account needs what only a browser can do ('interaction':
 * OIDC's interaction_required; Entra ID's MFA and conditional access codes, and any `suberror`,
 * which its libraries read as "a user interface is required"). Undefined: a plain refusal.
 */
export function passwordRefusal(refusal: ProviderRefusal): 'method' | 'interaction' | undefined {
  if (refusal.error === 'unsupported_grant_type' || refusal.error === 'unauthorized_client') return 'method'
  if (refusal.error === 'interaction_required') return 'interaction'
  const codes = Array.isArray(refusal.error_codes) ? refusal.error_codes : []
  if (refusal.error === 'invalid_grant' && (typeof refusal.suberror === 'string' || codes.some((c) => ENTRA_INTERACTIVE_ONLY.has(Number(c))))) {
    return 'interaction'
  }
  return undefined
}

const USE_BROWSER = 'log in in a browser instead (platform login --browser)'

const refusalOf = (error: oidc.ResponseBodyError): ProviderRefusal => ({ ...error.cause, error: error.error })

/**
 * `return_to` is a path on the admin service (relative to its public base address), or an
 * absolute http(s) address on one of the platform's own origins (PUBLIC_ORIGINS: the report
 * service's sign-off pages send the browser here and back). Anything else would make the login an
 * open redirect.
 */
export function safeReturnTo(value: string | undefined, platformOrigins: readonly string[] = []): string {
  if (value === undefined || value === '') return DEFAULT_RETURN_TO
  if (value.length > 2048) throw badRequest('return_to: at most 2048 characters')
  if (/^\/(?![/\\])[^\s\\]*$/.test(value)) return value
  if (/^https?:\/\//i.test(value) && !/[\s\\]/.test(value) && URL.canParse(value)) {
    const url = new URL(value)
    if (!url.username && !url.password && platformOrigins.includes(url.origin)) return url.href
  }
  throw badRequest("return_to: must be a path on this service, starting with a single /, or an address on one of the platform's own origins")
}

const isAbsolute = (returnTo: string) => /^https?:\/\//i.test(returnTo)

/** Roles at login, by scope (`org:<id>`, `project:<id>`), as the session snapshot; requests recompute them. */
export async function effectiveRoles(deps: KernelDeps, userId: string): Promise<Record<string, string[]>> {
  const { orgRoles, projectRoles } = await deps.access.rolesOf(userId)
  return {
    ...Object.fromEntries([...orgRoles].map(([id, role]) => [`org:${id}`, [role]])),
    ...Object.fromEntries([...projectRoles].map(([id, roles]) => [`project:${id}`, roles])),
  }
}

const PROVIDER_UNAVAILABLE = 'identity provider unavailable'

/**
 * Google answers a device authorization with `verification_url` (the name of an early draft of
 * RFC 8628), where the RFC and every other provider say `verification_uri`: the answer is read
 * under the RFC's name. Anything else is left as it is.
 */
export function normalizeDeviceAuthorization(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const { verification_url: url, ...rest } = body as Record<string, unknown>
  if (typeof url !== 'string' || typeof rest.verification_uri === 'string') return body
  return { ...rest, verification_uri: url }
}

/**
 * How the CLI's client authenticates with its secret: in the request body where the provider
 * lists client_secret_post (Google's own examples send it so), else HTTP Basic, which RFC 6749
 * §2.3.1 requires every provider to accept.
 */
export function cliClientAuthMethod(
  meta: Pick<oidc.ServerMetadata, 'token_endpoint_auth_methods_supported'>,
): 'client_secret_post' | 'client_secret_basic' {
  return meta.token_endpoint_auth_methods_supported?.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic'
}

/** Fetches for the provider's client, reading the device authorization answer as normalizeDeviceAuthorization says. */
function deviceAnswersNormalized(endpoint: string | undefined): oidc.CustomFetch {
  const device = endpoint && URL.canParse(endpoint) ? new URL(endpoint).href : undefined
  return async (url, options) => {
    // openid-client's body type names Uint8Array<ArrayBufferLike>, which the DOM typings' BodyInit does not list; fetch takes it.
    const res = await fetch(url, options as RequestInit)
    if (new URL(url).href !== device || !res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return res
    const body = normalizeDeviceAuthorization(await res.json())
    return new Response(JSON.stringify(body), { status: res.status, statusText: res.statusText, headers: { 'content-type': 'application/json' } })
  }
}

/**
 * The admin service's side of OpenID Connect: the browser's authorization code flow (PKCE, state,
 * nonce; the login state in Firestore, single use), and the CLI's logins, in a browser (the device
 * authorization grant) or with e-mail and password, all through the configured identity provider.
 * A CLI login needs only the provider's ID token (its signature, issuer, audience and expiry are
 * checked by openid-client's grant helpers): it says who the person is, and the platform issues
 * the CLI's credentials itself (domain/identity/cli-login-store.ts). The provider's access and
 * refresh tokens are neither checked nor kept, so any OIDC provider serves, Google's opaque access
 * tokens included. The provider's metadata is discovered once, on first use, and kept; a failed
 * discovery is retried on the next login.
 */
export class OidcLogin {
  private discovered?: Promise<oidc.Configuration>
  private cliClient?: oidc.Configuration

  constructor(private readonly deps: KernelDeps) {}

  private settings() {
    const { oidc: settings, adminPublicUrl } = this.deps.config
    if (!settings || !adminPublicUrl) {
      throw new ApiError(404, 'login is not configured on this service (OIDC_ISSUER, OIDC_CLIENT_ID and ADMIN_PUBLIC_URL)')
    }
    return { ...settings, publicUrl: adminPublicUrl.replace(/\/+$/, '') }
  }

  get redirectUri(): string {
    return `${this.settings().publicUrl}${API_PREFIX}/auth/callback`
  }

  /** Cookies are Secure whenever the service is reached over HTTPS; over plain http a browser would drop them. */
  get secureCookies(): boolean {
    return Boolean(this.deps.config.adminPublicUrl?.startsWith('https:'))
  }

  /** Where to send the browser after login: return_to resolved against the service's public address (an absolute one was checked by safeReturnTo). */
  returnUrl(returnTo: string): string {
    return isAbsolute(returnTo) ? returnTo : this.settings().publicUrl + returnTo
  }

  private configuration(log: Logger): Promise<oidc.Configuration> {
    const s = this.settings()
    this.discovered ??= oidc
      .discovery(new URL(s.issuer), s.clientId, undefined, s.clientSecret ? oidc.ClientSecretBasic(s.clientSecret) : oidc.None(), {
        timeout: 10,
        // ID tokens are checked against the provider's keys too, not only their claims.
        execute: [oidc.enableNonRepudiationChecks, ...(s.allowHttp ? [oidc.allowInsecureRequests] : [])],
      })
      .then((config) => {
        config[oidc.customFetch] = deviceAnswersNormalized(config.serverMetadata().device_authorization_endpoint)
        return config
      })
      .catch((error: unknown) => {
        this.discovered = undefined
        log.error('OIDC discovery failed', { issuer: s.issuer, error })
        throw new ApiError(500, PROVIDER_UNAVAILABLE)
      })
    return this.discovered
  }

  /**
   * The client of the CLI's logins: OIDC_CLI_CLIENT_ID, public (no secret sent: Entra ID, Okta) or
   * with OIDC_CLI_CLIENT_SECRET (Google's "TVs and Limited Input devices" clients), else the
   * platform's own client. One discovery serves both.
   */
  private async cliConfiguration(log: Logger): Promise<oidc.Configuration> {
    const web = await this.configuration(log)
    const { cli, allowHttp } = this.settings()
    if (!cli.clientId) return web
    if (!this.cliClient) {
      const meta = web.serverMetadata()
      const auth = !cli.clientSecret
        ? oidc.None()
        : cliClientAuthMethod(meta) === 'client_secret_post'
          ? oidc.ClientSecretPost(cli.clientSecret)
          : oidc.ClientSecretBasic(cli.clientSecret)
      const config = new oidc.Configuration(meta, cli.clientId, undefined, auth)
      config.timeout = 10
      config[oidc.customFetch] = deviceAnswersNormalized(meta.device_authorization_endpoint)
      oidc.enableNonRepudiationChecks(config)
      if (allowHttp) oidc.allowInsecureRequests(config)
      this.cliClient = config
    }
    return this.cliClient
  }

  /**
   * How the CLI may log in, from the provider's metadata: in a browser when it has a device
   * authorization endpoint, with a password unless its listed grant types leave the password
   * grant out (a provider that lists none may still allow it: it is tried, and a refusal says so).
   */
  async cliMethods(log: Logger): Promise<{ issuer: string; methods: CliLoginMethod[] }> {
    const meta = (await this.cliConfiguration(log)).serverMetadata()
    const grants = meta.grant_types_supported
    const offered = (grant: string) => grants === undefined || grants.includes(grant)
    const methods: CliLoginMethod[] = []
    if (meta.device_authorization_endpoint && offered(DEVICE_CODE_GRANT)) methods.push('browser')
    if (offered('password')) methods.push('password')
    return { issuer: meta.issuer, methods }
  }

  /**
   * Starts a browser login: records the PKCE verifier, nonce and return_to under a fresh state.
   * `prompt` and `maxAge` are passed to the provider (prompt=login, max_age=0: authenticate again
   * now, whatever session the provider has), and the ID token's auth_time is then checked against
   * them when the login completes.
   */
  async begin(returnTo: string, options: LoginOptions, log: Logger): Promise<{ authorizationUrl: URL; state: string }> {
    const config = await this.configuration(log)
    const state = oidc.randomState()
    const verifier = oidc.randomPKCECodeVerifier()
    const nonce = oidc.randomNonce()
    const now = this.deps.clock.now()
    const record: LoginStateRecord = {
      code_verifier: verifier,
      nonce,
      return_to: returnTo,
      ...(options.prompt ? { prompt: options.prompt } : {}),
      ...(options.maxAge !== undefined ? { max_age: options.maxAge } : {}),
      ...(options.reauthSession ? { reauth_session: options.reauthSession } : {}),
      created: Timestamp.fromDate(now),
      expires_at: Timestamp.fromDate(new Date(now.getTime() + LOGIN_STATE_TTL_MS)),
    }
    await this.deps.db.col('login_states').doc(state).create(record)
    const authorizationUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: BROWSER_SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(options.prompt ? { prompt: options.prompt } : {}),
      ...(options.maxAge !== undefined ? { max_age: String(options.maxAge) } : {}),
      ...(options.loginHint ? { login_hint: options.loginHint } : {}),
      ...(options.purpose ? { purpose: options.purpose } : {}),
    })
    return { authorizationUrl, state }
  }

  /** Takes the login state out of the store: a state works once, and only before it expires. */
  private async consumeState(state: string): Promise<LoginStateRecord> {
    const ref = this.deps.db.col('login_states').doc(state)
    const record = await this.deps.db.transaction(async (tx) => {
      const snap = await tx.get(ref)
      if (!snap.exists) return undefined
      tx.delete(ref)
      return snap.data() as LoginStateRecord
    })
    if (!record) throw badRequest('state: unknown or already used login; start again from /auth/login')
    if (record.expires_at.toMillis() <= this.deps.clock.now().getTime()) {
      throw badRequest('state: this login has expired; start again from /auth/login')
    }
    return record
  }

  /**
   * Ends a browser login: checks the state, exchanges the code (PKCE verifier, nonce, ID token
   * signature, issuer, audience, expiry) and maps the identity to a platform user.
   */
  async complete(
    query: URLSearchParams,
    boundState: string | undefined,
    log: Logger,
  ): Promise<{
    user: UserRecord
    email?: string
    returnTo: string
    authTime?: Date
    /** How and when the login asked for the authentication (its login state's prompt, max_age and creation): a re-authentication records them on the session. */
    asked: Pick<LoginOptions, 'prompt' | 'maxAge'> & { begunAt: Date }
    reauthSession?: string
  }> {
    const state = query.get('state')
    if (!state) throw badRequest('state: required')
    const login = await this.consumeState(state)
    // The state must come back to the browser that started the login, or anyone could log a victim into their own account.
    if (boundState !== state) throw badRequest('state: this login was started in another browser; start again from /auth/login')
    const config = await this.configuration(log)
    const callbackUrl = new URL(this.redirectUri)
    callbackUrl.search = query.toString()
    const tokens = await this.call(log, () =>
      oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: login.code_verifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
        // With max_age asked, the ID token must say when the user authenticated, and that recently enough (openid-client checks it).
        ...(login.max_age !== undefined ? { maxAge: login.max_age } : {}),
      }),
    )
    const claims = tokens.claims()
    if (!claims) throw new LoginRejected('the identity provider returned no ID token')
    const identity = identityOf(claims)
    const user = await this.deps.access.userForIdentity(identity, Timestamp.fromDate(this.deps.clock.now()))
    const authTime = typeof claims.auth_time === 'number' ? new Date(claims.auth_time * 1000) : undefined
    if (login.prompt === 'login' && !authTime) throw new LoginRejected('the identity provider did not say when the user authenticated (auth_time)')
    return {
      user: this.usable(user),
      email: identity.email,
      returnTo: login.return_to,
      authTime,
      asked: {
        ...(login.prompt ? { prompt: login.prompt } : {}),
        ...(login.max_age !== undefined ? { maxAge: login.max_age } : {}),
        begunAt: login.created.toDate(),
      },
      reauthSession: login.reauth_session,
    }
  }

  /**
   * The CLI's e-mail and password login: they go to the provider's token endpoint (the password
   * grant), never into the platform's records. A provider that does not offer the grant, or an
   * account that needs more than a password, is answered with the browser login to use instead.
   */
  async password(email: string, password: string, log: Logger): Promise<UserRecord> {
    const config = await this.cliConfiguration(log)
    const { scope } = this.settings().cli
    const response = await this.call(
      log,
      () => oidc.genericGrantRequest(config, 'password', { username: email, password, scope }),
      (refusal) => {
        switch (passwordRefusal(refusal)) {
          case 'method':
            return new ApiError(400, `the identity provider does not allow e-mail and password login here (${refusal.error}): ${USE_BROWSER}`)
          case 'interaction':
            return new LoginRejected(
              `the identity provider requires an interactive sign-in (${refusal.error})`,
              email,
              `the identity provider requires more than a password for this account (multi-factor authentication, or a policy that needs a browser): ${USE_BROWSER}`,
            )
          case undefined:
            return undefined
        }
      },
    )
    return this.identify(response)
  }

  /**
   * Begins the CLI's browser login, the OAuth 2.0 device authorization grant (RFC 8628) of the
   * CLI's client: the provider gives a code for the person to confirm in any browser (signing in
   * there as the provider asks: password, MFA, single sign-on) while the CLI polls pollDevice.
   */
  async beginDevice(log: Logger): Promise<DeviceAuthorization> {
    const config = await this.cliConfiguration(log)
    if (!config.serverMetadata().device_authorization_endpoint) {
      throw new ApiError(
        404,
        'the identity provider has no device authorization endpoint, so the browser login is not offered here: log in with e-mail and password, or a personal access token',
      )
    }
    const { scope } = this.settings().cli
    const response = await this.call(
      log,
      () => oidc.initiateDeviceAuthorization(config, { scope }),
      (refusal) =>
        deviceGrantNotAllowed(refusal)
          ? new ApiError(
              404,
              `the identity provider does not allow the browser login for this platform's CLI client (${refusal.error}): the operator enables the device authorization grant for it (docs/cli-login.md); meanwhile log in with e-mail and password, or a personal access token`,
            )
          : undefined,
    )
    return {
      device_code: response.device_code,
      user_code: response.user_code,
      verification_uri: response.verification_uri,
      ...(typeof response.verification_uri_complete === 'string' ? { verification_uri_complete: response.verification_uri_complete } : {}),
      expires_in: response.expires_in,
      interval: response.interval ?? DEFAULT_DEVICE_INTERVAL_S,
    }
  }

  /** One poll of a device login at the provider's token endpoint (the CLI waits the interval between polls). */
  async pollDevice(deviceCode: string, log: Logger): Promise<DevicePoll> {
    const config = await this.cliConfiguration(log)
    try {
      const response = await this.call(
        log,
        () => oidc.genericGrantRequest(config, DEVICE_CODE_GRANT, { device_code: deviceCode }),
        (refusal) => {
          const meaning = deviceRefusal(refusal)
          if (!meaning) return undefined
          return 'wait' in meaning ? new DeviceLoginPending(meaning.wait) : new LoginRejected(meaning.rejected)
        },
      )
      return { status: 'complete', user: await this.identify(response) }
    } catch (error) {
      if (error instanceof DeviceLoginPending) return { status: error.status }
      throw error
    }
  }

  /**
   * Who signed in, from the ID token of a CLI login's token response (already verified by
   * openid-client: signature with the provider's keys, issuer, audience = the CLI's client, expiry):
   * the platform user, found or created as the browser login does, and enabled.
   */
  private async identify(response: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): Promise<UserRecord> {
    const claims = response.claims()
    if (!claims) {
      throw new ApiError(500, 'the identity provider returned no ID token: OIDC_CLI_SCOPE must include openid')
    }
    const user = await this.deps.access.userForIdentity(identityOf(claims), Timestamp.fromDate(this.deps.clock.now()))
    return this.usable(user)
  }

  private usable(user: UserRecord): UserRecord {
    if (user.disabled) throw new LoginRejected('account disabled', user.email)
    return user
  }

  /**
   * Runs a request to the provider: its refusals become LoginRejected (or what `refused` makes of
   * an OAuth error answer first), its absence a 500 that says so.
   */
  private async call<T>(log: Logger, request: () => Promise<T>, refused?: (refusal: ProviderRefusal) => Error | undefined): Promise<T> {
    try {
      return await request()
    } catch (error) {
      const mapped = error instanceof oidc.ResponseBodyError && error.status < 500 ? refused?.(refusalOf(error)) : undefined
      if (mapped) throw mapped
      if (error instanceof oidc.AuthorizationResponseError) {
        throw new LoginRejected(`the identity provider answered ${error.error}${error.error_description ? `: ${error.error_description}` : ''}`)
      }
      if (error instanceof oidc.ResponseBodyError && error.status < 500 && error.error === 'invalid_grant') {
        throw new LoginRejected('invalid_grant')
      }
      if (error instanceof oidc.ClientError && JWT_CHECKS.has(error.code ?? '')) {
        throw new LoginRejected(`the ID token failed validation: ${error.message}`)
      }
      log.error('identity provider request failed', { error })
      throw new ApiError(
        500,
        error instanceof oidc.ResponseBodyError ? `identity provider refused the request: ${error.error}` : PROVIDER_UNAVAILABLE,
      )
    }
  }
}

const JWT_CHECKS = new Set(['OAUTH_JWT_CLAIM_COMPARISON_FAILED', 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED', 'OAUTH_INVALID_RESPONSE'])

const stringClaim = (v: unknown) => (typeof v === 'string' ? v : undefined)

/**
 * The identity to map to a platform user. An e-mail the provider says is unverified is left out:
 * anyone could claim it, and it would link them to the account invited under that address.
 */
export function identityOf(claims: { sub: string; email?: unknown; email_verified?: unknown; name?: unknown }) {
  return {
    sub: claims.sub,
    email: claims.email_verified === false ? undefined : stringClaim(claims.email),
    name: stringClaim(claims.name),
  }
}

/** Who did it, for audit events of a login: the user once known, else the anonymous caller of the public path. */
export function userActor(user: UserRecord, request: AuditContext['request'], method: string): AuditContext {
  return { actor: { type: user.kind, id: user.id, email: user.email, auth_method: method }, request }
}
