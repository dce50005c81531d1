import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Context, Handler, MiddlewareHandler } from 'hono'
import type { AppEnv } from './http.js'
import { newId } from './ids.js'
import { inScope, type KernelDeps } from './kernel.js'
import type { Logger, LogScope } from './log.js'
import { traceFrom, traceLogFields } from './trace.js'

/**
 * What a service logs about each request: the scope every line written while serving it shares
 * (the request id, the trace), and one access line when the response is ready.
 */

/** A client's X-Request-ID is kept only if it is at most 128 of [A-Za-z0-9._-]; otherwise the request gets a new one (never echo markup back). */
const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,128}$/
export const isRequestId = (value: string | undefined): value is string => value !== undefined && REQUEST_ID_RE.test(value)
export const requestIdFrom = (header: string | undefined) => (isRequestId(header) ? header : newId())

/**
 * The log scope of an HTTP request, a service's or an orchestrator function's: its id (the
 * client's X-Request-ID, or a new one) and its trace (`traceparent`, else `X-Cloud-Trace-Context`).
 */
export function requestScope(req: { header(name: string): string | undefined }, gcpProject: string): LogScope & { requestId: string } {
  const requestId = requestIdFrom(req.header('x-request-id'))
  const trace = traceFrom(req.header('traceparent'), req.header('x-cloud-trace-context'))
  return { requestId, trace, fields: { request_id: requestId, ...traceLogFields(trace, gcpProject) } }
}

const incomingOf = (c: Context) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming

/**
 * The client's address. With TRUSTED_PROXY_HOPS=n (1 behind Google's front end, 2 behind an
 * external Application Load Balancer: infra/deploy.sh sets it for the browser host it configures),
 * the n-th X-Forwarded-For entry from the right: what the trusted proxies saw. With 0 (the local suite),
 * the socket's peer, and the header is ignored, so a client cannot choose the address it is
 * throttled, logged and audited by. Anything that is not an IP address is not recorded.
 */
export function clientIp(c: Context): string | undefined {
  const hops = (c.get('deps') as KernelDeps | undefined)?.config.trustedProxyHops ?? 0
  const address =
    hops > 0
      ? (c.req.header('x-forwarded-for') ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .at(-hops)
      : incomingOf(c)?.socket?.remoteAddress
  return address && isIP(address) ? address : undefined
}

const URL_MAX = 2048
const PATH_MAX = 256
const USER_AGENT_MAX = 512
/** Query parameters that carry a credential (the OIDC callback's code and state, signed URLs): their values are not logged. */
const SECRET_QUERY = /^(code|state|password|assertion|client_secret|sig|signature|x-goog-signature|token|access_token|id_token|refresh_token)$/i

/**
 * The URL as an access line shows it: credentials in the query replaced, and no longer than 2048
 * characters. An absolute URL, or a request target as a server receives it (`/bucket/object?…`):
 * the query is read on its own, so whatever precedes it, even something no URL parser takes, never
 * lets a credential through.
 */
export function loggableUrl(raw: string): string {
  const q = raw.indexOf('?')
  // Without a query there is nothing to redact, and no need to parse.
  if (q < 0) return raw.slice(0, URL_MAX)
  const query = new URLSearchParams(raw.slice(q + 1))
  for (const name of new Set(query.keys())) if (SECRET_QUERY.test(name)) query.set(name, 'REDACTED')
  return `${raw.slice(0, q)}?${query}`.slice(0, URL_MAX)
}

/** Client errors are WARNING (as Cloud Run's own request log has them), server errors ERROR, the rest INFO. */
export const accessLevel = (status: number): 'info' | 'warn' | 'error' => (status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info')

function logAccess(log: Logger, c: Context<AppEnv>, started: number, status: number) {
  const principal = c.get('principal') as AppEnv['Variables']['principal'] | undefined
  const project = c.get('project') as AppEnv['Variables']['project'] | undefined
  const incoming = incomingOf(c)
  const httpRequest = {
    requestMethod: c.req.method,
    requestUrl: loggableUrl(c.req.url),
    status,
    latency: `${((performance.now() - started) / 1000).toFixed(3)}s`,
    userAgent: c.req.header('user-agent')?.slice(0, USER_AGENT_MAX),
    remoteIp: clientIp(c),
    protocol: incoming ? `HTTP/${incoming.httpVersion}` : undefined,
  }
  // The caller by id only: never a header, a cookie or a token.
  log[accessLevel(status)](`${c.req.method} ${c.req.path.slice(0, PATH_MAX)} ${status}`, {
    httpRequest,
    principal: principal?.user.id,
    auth_method: principal?.method,
    project_id: project?.id,
  })
}

/**
 * The first middleware of every service: gives the request its id (the client's X-Request-ID, or a
 * new one) and its dependencies in the request's scope (lib/kernel.ts `inScope`: every line they
 * log carries that id and the trace), then writes the access line, whatever the outcome (404, 401,
 * 500 included).
 */
export function requestLogging<D extends KernelDeps>(deps: D): MiddlewareHandler<AppEnv<D>> {
  return async (c, next) => {
    const started = performance.now()
    const scope = requestScope(c.req, deps.config.gcpProject)
    const scoped = inScope(deps, scope)
    c.set('requestId', scope.requestId)
    c.set('deps', scoped)
    const kc = c as unknown as Context<AppEnv>
    try {
      await next()
    } catch (err) {
      logAccess(scoped.log, kc, started, 500)
      throw err
    }
    logAccess(scoped.log, kc, started, c.res.status)
  }
}

/**
 * GET /healthz: the instance is up and serving. It reads nothing, so a probe costs no Firestore
 * read and a Firestore outage shows in the requests that need it, not as a dead instance.
 */
export const healthCheck =
  (service: string): Handler =>
  (c) => {
    c.header('Cache-Control', 'no-store')
    return c.json({ status: 'ok', service })
  }
