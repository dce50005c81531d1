import type { Context, MiddlewareHandler } from 'hono'
import { getCookie } from 'hono/cookie'
import { secureHeaders } from 'hono/secure-headers'
import { rolesFrom, type Principal } from './auth/access.js'
import type { SessionRecord } from './auth/tokens.js'
import type { Config } from './config.js'
import { API_PREFIX, attemptKeys, kernelContext, SESSION_COOKIE, type AppEnv } from './http.js'
import type { KernelDeps } from './kernel.js'

/**
 * Server-rendered HTML pages of a service (lib/service.ts `pages`): a browser with a
 * platform_session reads and acts on them with no JavaScript at all and nothing from another
 * origin. Helpers for their security headers, their text, and their session.
 */

/** Text for HTML content and attribute values. */
export const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

/** A template literal whose substitutions are escaped, unless they are `Raw` (HTML built by `html` itself). */
export class Raw {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0]!
  values.forEach((v, i) => {
    const parts = Array.isArray(v) ? v : [v]
    out +=
      parts.map((p) => (p instanceof Raw ? p.value : p === undefined || p === null || p === false ? '' : escapeHtml(p))).join('') + strings[i + 1]!
  })
  return new Raw(out)
}

/**
 * The pages' security headers: Hono's secure headers with a Content-Security-Policy that allows
 * no script at all, styles and images from the service itself only, no framing, and forms that
 * post only to the service itself or continue to the platform's login (the admin service and the
 * identity provider, which the sign-off form redirects to). Pages are never cached: they show
 * clinical data and carry single-use tokens. The console (lib/console/mount.ts) widens two of
 * them: its one script from the service itself, forms to any of the platform's services, and its
 * assets (`cached`) cacheable.
 */
export function pageHeaders(
  config: Config,
  widen: { scripts?: boolean; formsToEveryService?: boolean; cached?: (path: string) => boolean } = {},
): MiddlewareHandler {
  const origin = (url: string | undefined) => (url && URL.canParse(url) ? [new URL(url).origin] : [])
  const headers = secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      ...(widen.scripts ? { scriptSrc: ["'self'"] } : {}),
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      formAction: ["'self'", ...(widen.formsToEveryService ? config.publicOrigins : origin(config.adminPublicUrl)), ...origin(config.oidc?.issuer)],
      baseUri: ["'none'"],
      frameAncestors: ["'none'"],
    },
    strictTransportSecurity: false,
    // Not no-referrer: with it a browser sends `Origin: null` on a form's POST, and the origin is
    // what tells the platform's own forms from another site's. Same-origin sends no referrer elsewhere.
    referrerPolicy: 'same-origin',
  })
  return async (c, next) => {
    await headers(c, next)
    if (!widen.cached?.(c.req.path)) c.header('Cache-Control', 'no-store')
  }
}

export interface PageSession {
  principal: Principal
  session: SessionRecord
  /** The session's key (its document id), never the cookie's value. */
  key: string
}

/**
 * The caller of a page, from the platform_session cookie only (a page is for a browser); undefined
 * without a valid session. The account and its roles are read afresh, as on every API request, and
 * the principal is set on the context for the audit events of the request. A value that is no
 * session counts against the client's address (lib/auth/throttle.ts), as on the API.
 */
export async function pageSession<E extends AppEnv>(c: Context<E>): Promise<PageSession | undefined> {
  const deps = c.get('deps') as KernelDeps
  const value = getCookie(c, SESSION_COOKIE)
  if (!value) return undefined
  // Session values are guessed no faster here than on the API: the client address is throttled alike.
  const keys = attemptKeys(kernelContext(c))
  if (keys.length) await deps.throttle.check(keys)
  const found = await deps.tokens.getSession(value, deps.clock.now())
  if (!found.ok) {
    if (keys.length) await deps.throttle.failed(keys)
    return undefined
  }
  const user = await deps.access.getUser(found.record.user_id)
  if (!user || user.disabled) return undefined
  const principal: Principal = { user, method: 'session', credentialId: found.record.id, ...rolesFrom(user) }
  ;(c as unknown as Context<AppEnv>).set('principal', principal)
  return { principal, session: found.record, key: deps.tokens.sessionKey(value) }
}

/** The admin service's browser login, returning to `returnTo` (an address on the platform's origins), with `prompt`/`max_age` (and what it is for, `purpose`) when asked. */
export function loginUrl(config: Config, returnTo: string, fresh?: { prompt: 'login'; maxAge: number; purpose?: string }): string | undefined {
  if (!config.adminPublicUrl) return undefined
  const url = new URL(`${config.adminPublicUrl.replace(/\/+$/, '')}${API_PREFIX}/auth/login`)
  url.searchParams.set('return_to', returnTo)
  if (fresh) {
    url.searchParams.set('prompt', fresh.prompt)
    url.searchParams.set('max_age', String(fresh.maxAge))
    // What the re-authentication confirms, for the provider's page (the local suite's shows it).
    if (fresh.purpose) url.searchParams.set('purpose', fresh.purpose.slice(0, 200))
  }
  return url.href
}

/** The service's own public base address: its configured one (`publicBase`, lib/http.ts), else the request's origin (tests, a single host). */
export function publicBase(c: Context): string {
  return (c as unknown as Context<AppEnv>).get('publicBase') ?? new URL(c.req.url).origin
}
