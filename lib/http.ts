import type { ServerResponse } from 'node:http'
import { Timestamp, type DocumentReference, type DocumentSnapshot } from '@google-cloud/firestore'
import { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import type { BlankEnv } from 'hono/types'
import { bodyLimit } from 'hono/body-limit'
import { getCookie } from 'hono/cookie'
import { canInOrg, canInProject, rolesFrom, type Principal, type ProjectRecord, type UserRecord } from './auth/access.js'
import type { AuditContext } from './audit.js'
import { Refused, refusalReason, type DeniedOn } from './decision.js'
import type { OidcVerifier } from './auth/oidc.js'
import type { IssuedCredential } from './auth/tokens.js'
import { ApiError, badRequest, defaultHook, errorHandler, forbidden, notFound, unauthorized } from './errors.js'
import { TOKEN_PREFIX, UUID_RE } from './ids.js'
import type { OrgPermission, Permission } from './auth/roles.js'
import type { ThrottleKey } from './auth/throttle.js'
import { mountDocs } from './docs.js'
import { withOverloadAnswer, withProjectHeader } from './openapi.js'
import { readBatch, recordOf, RequestReads } from './reads.js'
import type { KernelDeps } from './kernel.js'
import { clientIp, healthCheck, requestLogging } from './request-log.js'
import { admission } from './overload.js'
import { firstIllFormed } from './well-formed.js'

export type { KernelDeps }

export const SESSION_COOKIE = 'platform_session'
export const API_PREFIX = '/api/v1'

/** The context of every request: who calls, in which project, and the service's dependencies. */
export type AppEnv<D extends KernelDeps = KernelDeps> = {
  Variables: {
    requestId: string
    principal: Principal
    project: ProjectRecord
    deps: D
    /** The documents read for this request before its handler ran (`Prefetch`); dropped with the request. */
    reads: RequestReads
    /**
     * The service's public base address (its <SERVICE>_PUBLIC_URL), when configured: where browsers and
     * the CLI reach it, which the request's own URL does not tell behind a front end that strips a path
     * prefix (the shared cloudfunctions.net host strips the function's name). Addresses it hands out start with it.
     */
    publicBase: string | undefined
  }
}

/** Any service's request context, seen as the kernel sees it: the kernel reads only its own part of the dependencies. */
export const kernelContext = <E extends AppEnv>(c: Context<E>) => c as unknown as Context<AppEnv>

/** The throttle keys of a login attempt: the account it names (if any) and the client's address (when known). */
export function attemptKeys<E extends AppEnv>(ctx: Context<E>, account?: string): ThrottleKey[] {
  const address = clientIp(ctx)
  return [...(account ? [{ kind: 'account' as const, value: account }] : []), ...(address ? [{ kind: 'address' as const, value: address }] : [])]
}

export function auditContext<E extends AppEnv>(ctx: Context<E>): AuditContext {
  const c = kernelContext(ctx)
  const p = c.get('principal')
  return {
    actor: p ? { type: p.user.kind, id: p.user.id, email: p.user.email, auth_method: p.method } : { type: 'system', id: 'anonymous' },
    request: {
      id: c.get('requestId'),
      ip: clientIp(c),
      user_agent: c.req.header('user-agent'),
      method: c.req.method,
      path: c.req.path,
    },
  }
}

const BEARER_RE = /^Bearer[ ]+([^\s]+)\s*$/i

type Presented = { kind: 'issued'; credential: IssuedCredential } | { kind: 'oidc'; token: string; verifier: OidcVerifier }

/** The credential the request carries, before anything is read: a Bearer token of one of its kinds, else the session cookie. */
function presentedCredential(deps: KernelDeps, c: Context<AppEnv>): Presented {
  const header = c.req.header('authorization')
  if (header === undefined) {
    const cookie = getCookie(c, SESSION_COOKIE)
    if (!cookie) throw unauthorized('authentication required: send Authorization: Bearer <token>')
    return { kind: 'issued', credential: deps.tokens.credential('session', cookie) }
  }
  const token = BEARER_RE.exec(header)?.[1]
  if (!token) throw unauthorized("the Authorization header must be 'Bearer <token>'")
  if (token.startsWith(TOKEN_PREFIX.personal)) return { kind: 'issued', credential: deps.tokens.credential('personal', token) }
  if (token.startsWith(TOKEN_PREFIX.service)) return { kind: 'issued', credential: deps.tokens.credential('service', token) }
  if (token.startsWith(TOKEN_PREFIX.cliAccess)) return { kind: 'issued', credential: deps.tokens.credential('cli', token) }
  if (token.startsWith(TOKEN_PREFIX.cliRefresh)) {
    throw unauthorized('a refresh token is not an access token: exchange it for one at POST /api/v1/auth/refresh')
  }
  if (token.split('.').length === 3 && deps.oidc) return { kind: 'oidc', token, verifier: deps.oidc }
  throw unauthorized('unrecognized token')
}

/**
 * Resolves the caller and, when `projectId` is given, reads that project, in one round trip to
 * Firestore for the credentials the platform issues, each one getAll:
 *  1. what the request itself names: the credential's document (its id is the SHA-256 of the
 *     value), the project of X-Project-ID, and what the value names (lib/ids.ts newNamingSecret):
 *     the account with its role grants, the service key a service token was obtained with (the
 *     login a CLI credential belongs to, revoked as a whole on logout or refresh token reuse), and
 *     with them the documents the route declared (`prefetch`), so that the route's own record
 *     costs no second round trip. They are handed to the route only for a valid credential.
 *  2. only for a value that names nothing (one issued before values named their account) or names
 *     records other than the credential's own: the account, the key and the route's documents.
 * An OIDC token is verified locally (the provider's keys are cached by jose); its account is found
 * by a query run beside one getAll of the project and the route's documents.
 * Nothing is kept from one request to the next: the credential, the account with its roles and
 * the project are read afresh every time, so a revoked token, a removed role or a disabled account
 * takes effect on the next request. The project is returned, not judged: the caller checks it once
 * the caller is known, so a bad credential is a 401 whatever the project.
 */
export async function resolvePrincipal(
  deps: KernelDeps,
  c: Context<AppEnv>,
  projectId?: string,
): Promise<{ principal: Principal; project: ProjectRecord | undefined }> {
  const now = deps.clock.now()
  const presented = presentedCredential(deps, c)
  const projectRef = projectId ? deps.access.projectRef(projectId) : undefined
  const wanted = c.get('reads').pending()
  let user: UserRecord | undefined
  let project: DocumentSnapshot | undefined
  let method: Principal['method']
  let credentialId: string | undefined

  if (presented.kind === 'oidc') {
    const claims = await presented.verifier.verify(presented.token)
    const [linked, snaps] = await Promise.all([
      deps.access.userForIdentity(claims, Timestamp.fromDate(now)),
      readBatch(deps.db.firestore, [projectRef, ...wanted]),
    ])
    user = linked
    project = snaps[0]
    c.get('reads').keep(snaps)
    method = 'oidc'
  } else {
    const { credential } = presented
    // Guessing tokens is throttled per client address like guessing passwords: the address's
    // count is read with the credential, and a guess (an unknown value) is counted.
    const guessKey = attemptKeys(c)
    const throttleRef = guessKey[0] ? deps.throttle.ref(guessKey[0]) : undefined
    // A value that names its account (lib/ids.ts newNamingSecret) has it read in the same batch, with
    // a service token's key and the route's documents: one round trip in all.
    const { named } = credential
    const early = named.user ? wanted : []
    const [credentialSnap, projectSnap, throttleSnap, namedUserSnap, namedKeySnap, ...earlyRecords] = await readBatch(deps.db.firestore, [
      credential.ref,
      projectRef,
      throttleRef,
      named.user,
      named.key,
      ...early,
    ])
    deps.throttle.assertOpen([throttleSnap])
    const found = credential.check(credentialSnap!, now)
    if (!found.ok) {
      if (!credentialSnap?.exists && guessKey.length) await deps.throttle.failed(guessKey)
      throw unauthorized(found.reason)
    }
    // The names are hints: used only when they are the credential's own account and key.
    const namedRight = named.user?.id === found.record.userId && (!found.record.key || named.key?.id === found.record.key.id)
    const [userSnap, keySnap, ...records] = namedRight
      ? [namedUserSnap, found.record.key ? namedKeySnap : undefined, ...earlyRecords]
      : await readBatch(deps.db.firestore, [deps.access.userRef(found.record.userId), found.record.key, ...wanted])
    if (keySnap) {
      const key = deps.tokens.keyActive(keySnap)
      if (!key.ok) throw unauthorized(key.reason)
    }
    user = recordOf<UserRecord>(userSnap)
    project = projectSnap
    c.get('reads').keep(records)
    method = credential.method
    credentialId = found.record.credentialId
  }
  if (!user) throw unauthorized('the account of this credential no longer exists')
  if (user.disabled) throw unauthorized('account disabled')
  return { principal: { user, method, credentialId, ...rolesFrom(user) }, project: recordOf<ProjectRecord>(project) }
}

/** Records an access.denied event and answers 403. */
async function deny(
  c: Context<AppEnv>,
  permission: string,
  scope: { project_id?: string; org_id?: string },
  entity: { type: string; id: string },
): Promise<never> {
  return refuse(c, { reason: `missing permission ${permission}`, detail: `permission ${permission} is required` }, scope, entity)
}

/** Records an access.denied event; a failure to write it is logged, never answered in place of the refusal. */
export async function recordDenial<E extends AppEnv>(ctx: Context<E>, reason: string, on: DeniedOn): Promise<void> {
  const c = kernelContext(ctx)
  const { audit, log } = c.get('deps')
  await audit
    .record(auditContext(c), { action: 'access.denied', outcome: 'denied', ...on.scope, entity: on.entity, change: { reason } })
    .catch((error) => log.error('audit write failed', { error }))
}

/**
 * Refuses a request that the caller's permissions would allow but a rule forbids (a grant above
 * the granter's own role, a change to one's own roles): an access.denied event, then 403.
 */
export async function refuse<E extends AppEnv>(
  ctx: Context<E>,
  why: { reason: string; detail: string },
  scope: { project_id?: string; org_id?: string },
  entity: { type: string; id: string },
): Promise<never> {
  await recordDenial(kernelContext(ctx), why.reason, { scope, entity })
  throw forbidden(why.detail)
}

/**
 * Tenancy for project-scoped services, once the caller is known (a bad credential is a 401 first):
 * X-Project-ID is required (400) and a UUID (400), naming a project that exists (404, read by
 * `resolvePrincipal`) in which the caller holds some role (403).
 */
async function enterProject(c: Context<AppEnv>, project: ProjectRecord | undefined) {
  const id = c.req.header('x-project-id')
  if (!id) throw badRequest('the X-Project-ID header is required (a project id from GET /projects)')
  if (!UUID_RE.test(id)) throw badRequest('X-Project-ID must be a project UUID')
  if (!project) throw notFound('project')
  c.set('project', project)
  if (!canInProject(c.get('principal'), project, 'project.read')) {
    await deny(c, 'project.read', { project_id: project.id, org_id: project.org_id }, { type: 'project', id: project.id })
  }
}

/** The one authorization check: the caller must hold `permission` in the request's project. */
export function requires(permission: Permission): MiddlewareHandler<BlankEnv> {
  return async (ctx, next) => {
    const c = ctx as unknown as Context<AppEnv>
    const project = c.get('project')
    if (!project) throw new Error(`requires(${permission}) used on a route without a project`)
    if (!canInProject(c.get('principal'), project, permission)) {
      await deny(c, permission, { project_id: project.id, org_id: project.org_id }, { type: 'project', id: project.id })
    }
    await next()
  }
}

export async function requireOrg<E extends AppEnv>(ctx: Context<E>, orgId: string, permission: OrgPermission): Promise<void> {
  const c = kernelContext(ctx)
  if (!canInOrg(c.get('principal'), orgId, permission)) {
    await deny(c, permission, { org_id: orgId }, { type: 'organization', id: orgId })
  }
}

/** For routes that name the project in the path (the admin service): load it, then check like `requires`. */
export async function loadProjectFor<E extends AppEnv>(ctx: Context<E>, id: string, permission: Permission): Promise<ProjectRecord> {
  const c = kernelContext(ctx)
  const project = UUID_RE.test(id) ? await c.get('deps').access.getProject(id) : undefined
  const principal = c.get('principal')
  // A project the caller cannot see at all is reported as absent, as if it did not exist.
  if (!project || !canInProject(principal, project, 'project.read')) throw notFound('project')
  c.set('project', project)
  if (!canInProject(principal, project, permission)) {
    await deny(c, permission, { project_id: project.id, org_id: project.org_id }, { type: 'project', id: project.id })
  }
  return project
}

const MIB = 1024 * 1024
/** Every request body: 1 MiB (OWASP API4). Nothing of the API takes more; files go to storage through signed addresses. */
export const MAX_BODY_BYTES = MIB
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * A state-changing request authenticated by the session cookie must come from one of the
 * platform's own origins (CSRF): browsers send Origin on every cross-site or non-GET request, so
 * one that is missing or foreign is refused. Bearer-token requests carry no ambient credential and
 * are not concerned.
 */
async function assertSameOrigin(c: Context<AppEnv>): Promise<void> {
  if (SAFE_METHODS.has(c.req.method)) return
  const origin = c.req.header('origin')
  if (origin && c.get('deps').config.publicOrigins.includes(origin)) return
  await refuse(
    c,
    {
      reason: `cross-origin request with the session cookie (Origin: ${origin?.slice(0, 200) ?? 'none'})`,
      detail: 'cross-origin request refused: a request made with the platform_session cookie must come from the platform itself',
    },
    {},
    { type: 'session', id: c.get('principal').credentialId ?? '-' },
  )
}

/** Over HTTPS: the request's own scheme, or what a trusted proxy says it was. */
function isHttps(c: Context, config: KernelDeps['config']): boolean {
  if (c.req.url.startsWith('https:')) return true
  return config.trustedProxyHops > 0 && c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
}

/** The security headers of every response (the set of Hono's `secureHeaders`); HSTS is added over HTTPS only, where it means something. */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
]
const HSTS = ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as const

/**
 * Each request's own context, before any route: the documents it reads (see Prefetch; nothing is
 * kept between requests), and the headers its response carries whichever route answers: the
 * request's id and the security headers. A route that sets one itself (a page's Referrer-Policy) keeps its own.
 * Served through Node (the local suite, and Cloud Functions, both by @hono/node-server's listener),
 * they go on Node's response before the route runs, and Node puts the route's own over them when it
 * writes the head: the route's Response keeps its few headers as a plain object, and no Headers
 * object is built, filled and sorted for every response. Served otherwise (`app.request` in tests),
 * they are added to the route's Response where it has none of its own.
 */
function requestContext(config: KernelDeps['config'], publicBase: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    kernelContext(c).set('reads', new RequestReads())
    kernelContext(c).set('publicBase', publicBase)
    const headers = [['X-Request-ID', kernelContext(c).get('requestId')] as const, ...SECURITY_HEADERS, ...(isHttps(c, config) ? [HSTS] : [])]
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
    if (outgoing) {
      for (const [name, value] of headers) outgoing.setHeader(name, value)
      return next()
    }
    await next()
    for (const [name, value] of headers) if (!c.res.headers.has(name)) c.res.headers.set(name, value)
  }
}

export interface ServiceOptions<D extends KernelDeps> {
  name: string
  title: string
  description: string
  deps: D
  /** Compute, clinical-data and files: every /api/v1 request needs X-Project-ID. */
  projectScoped: boolean
  /** Paths under /api/v1 reachable without credentials (login, token exchange). Exact, or ending in '*'. */
  publicPaths?: string[]
  /** The tags the service's operations are grouped by, in the order the docs show them. */
  tags?: ReadonlyArray<ServiceTag>
  /** The documents routes will read, read with the caller's account (see `Prefetch`). */
  prefetch?: ReadonlyArray<Prefetch<D>>
  /** Standard APIs the service also speaks beside /api/v1 (see `StandardApi`). */
  standardApis?: ReadonlyArray<StandardApi>
}

/**
 * An API a standard defines (GA4GH WES under /ga4gh/wes/v1), spoken beside the platform's own:
 * under its own prefix, authenticated and scoped to a project exactly as /api/v1 is, but outside the
 * service's OpenAPI document, since its contract is the standard's own document.
 */
export interface StandardApi {
  /** Where its paths begin ('/ga4gh/wes/v1'). */
  prefix: string
  /**
   * The fields the standard's error body has, from the platform's: every error under the prefix
   * answers them beside `detail`, which stays, so that the platform's one error shape still holds.
   */
  errorFields(detail: string, status: number): Record<string, unknown>
}

/**
 * Gives every error answered under a standard API's prefix (by a route, the kernel's checks, the
 * validation hook or the not-found handler alike) the standard's fields beside `detail`. It wraps
 * the whole chain, so an error thrown anywhere after it has already been answered `{detail}` when
 * it looks: an error body is rewritten, never a successful one.
 */
function standardErrors(api: StandardApi): MiddlewareHandler {
  return async (c, next) => {
    await next()
    if (c.res.status < 400 || !c.res.headers.get('content-type')?.includes('application/json')) return
    const body = (await c.res
      .clone()
      .json()
      .catch(() => undefined)) as { detail?: unknown } | undefined
    if (typeof body?.detail !== 'string') return
    const { status } = c.res
    const headers = new Headers(c.res.headers)
    headers.delete('content-length')
    // Cleared first: assigning over an answer would carry its headers (a stale length among them) into the new one.
    c.res = undefined
    c.res = new Response(JSON.stringify({ ...api.errorFields(body.detail, status), detail: body.detail }), { status, headers })
  }
}

/** A group of operations in the OpenAPI document (its top-level `tags` list): what the docs pages and client generators group by. */
export interface ServiceTag {
  name: string
  description: string
}

/**
 * A route's declaration of the documents it will read, named from its path parameters, so that the
 * kernel reads them in the same getAll as the caller's account (see `resolvePrincipal`) and the route's store finds them in `c.get('reads')`. They are handed to the
 * route only after authentication and tenancy have passed. A hint only: a document not declared,
 * or declared under a path that does not match, is read when the route asks for it.
 */
export interface Prefetch<D extends KernelDeps = KernelDeps> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** The routes' paths under /api/v1 as they are declared ('/runs/{id}'). */
  paths: string[]
  /** The documents to read; none when a parameter cannot name one (a malformed id). */
  docs(params: Record<string, string>, deps: D): DocumentReference[]
}

/**
 * A JSON body whose text is not well-formed Unicode is refused before any route sees it (lib/well-formed.ts).
 * Hono keeps the parsed body, so the route's validator does not parse it again; a body that is not
 * JSON at all is left to the validator, which says so.
 */
const wellFormedJson: MiddlewareHandler = async (c, next) => {
  if (!c.req.header('content-type')?.toLowerCase().includes('json')) return next()
  let body: unknown
  try {
    body = await c.req.json()
  } catch {
    return next()
  }
  const found = firstIllFormed(body)
  if (found) return c.json({ detail: `${found.path ? `${found.path}: ` : ''}not well-formed Unicode text (a lone surrogate ${found.unit})` }, 400)
  return next()
}

/**
 * The root app of a service: request ids and logging, admission (at most MAX_CONCURRENT_REQUESTS at a
 * time, lib/overload.ts), the error mapping, authentication on /api/v1
 * (but for the public paths), tenancy where the service is project-scoped, /openapi.json, /docs,
 * /redoc and /healthz.
 * Resource sub-apps are mounted on the returned app with `app.route(API_PREFIX, sub)`.
 */
export function createServiceApp<D extends KernelDeps>(opts: ServiceOptions<D>) {
  const { deps } = opts
  const app = new OpenAPIHono<AppEnv<D>>({ defaultHook })
  const isPublic = (path: string) =>
    (opts.publicPaths ?? []).some((p) => (p.endsWith('*') ? path.startsWith(API_PREFIX + p.slice(0, -1)) : path === API_PREFIX + p))

  app.use('*', requestLogging(deps))
  const publicBase = deps.config.publicUrls[opts.name]
  app.use('*', requestContext(deps.config, publicBase))
  // Unauthenticated and outside /api/v1, so not in the OpenAPI document. Cloud Run's front end
  // (Cloud Functions gen2) may answer /healthz itself, so the same check is also at /health.
  // Registered before the admission gate, which therefore never holds them: a probe of a busy
  // instance says it is up, not that it is full.
  app.get('/healthz', healthCheck(opts.name))
  app.get('/health', healthCheck(opts.name))
  // Before admission, so that even an overloaded instance answers the standard's error body.
  for (const api of opts.standardApis ?? []) app.use(`${api.prefix}/*`, standardErrors(api))
  app.use('*', admission(deps.config.admission))
  // Limited before anything reads the body (chunked bodies are counted as they arrive), for the
  // methods the routes take a body with. A GET or HEAD has none (a Request never carries one), and
  // asking for it would build the whole Request; a method no route takes is a 404 that reads nothing.
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ detail: `the request body is larger than ${MAX_BODY_BYTES / MIB} MiB` }, 413),
  })
  app.on(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], '*', limitBody)
  app.on(['POST', 'PUT', 'PATCH'], '*', wellFormedJson)
  // Registered before authentication, so that the route's documents join its round trip (see resolvePrincipal).
  for (const p of opts.prefetch ?? []) {
    for (const path of p.paths) {
      app.on(p.method.toUpperCase(), API_PREFIX + path.replaceAll(/\/{(.+?)}/g, '/:$1'), (c, next) => {
        kernelContext(c).get('reads').want(p.docs(c.req.param(), deps))
        return next()
      })
    }
  }
  const authenticate: MiddlewareHandler<AppEnv<D>> = async (c, next) => {
    if (isPublic(c.req.path)) return next()
    // The kernel's middleware reads only the kernel's part of the service's dependencies.
    const ctx = kernelContext(c)
    const header = opts.projectScoped ? ctx.req.header('x-project-id') : undefined
    const { principal, project } = await resolvePrincipal(deps, ctx, header && UUID_RE.test(header) ? header : undefined)
    ctx.set('principal', principal)
    if (principal.method === 'session') await assertSameOrigin(ctx)
    if (opts.projectScoped) await enterProject(ctx, project)
    return next()
  }
  // A standard API is authenticated and scoped like the platform's own: the same credentials, the same tenancy.
  for (const prefix of [API_PREFIX, ...(opts.standardApis ?? []).map((api) => api.prefix)]) app.use(`${prefix}/*`, authenticate)
  const answerError = errorHandler(deps.log)
  app.onError(async (err, c) => {
    // A decision's 403 leaves its access.denied event where it was refused (lib/decision.ts).
    if (err instanceof Refused && err.status === 403 && err.on) await recordDenial(kernelContext(c), refusalReason(err.refusal), err.on)
    return answerError(err, c)
  })
  app.notFound((c) => c.json({ detail: `no route for ${c.req.method} ${c.req.path}` }, 404))

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      "An OIDC access token, a personal access token (plat_pat_…), a service-user token (plat_sat_…) or the CLI's access credential (plat_cli_…, from POST /auth/device/token, /auth/password or /auth/refresh)",
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'sessionCookie', { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE })
  // OpenAPI 3.1: a nullable field is `type: [T, 'null']` and an unconstrained value `{}`, never 3.0's `nullable` without a type.
  const documentConfig: Parameters<typeof app.getOpenAPI31Document>[0] = {
    openapi: '3.1.0',
    info: { title: opts.title, version: '1.0.0', description: opts.description },
    // The service's public address where one is configured: behind the shared host the request's
    // path has lost the function's name, so "/" would resolve to the host's root. Otherwise relative
    // to the document itself ('.'), so Swagger UI's "Try it out" calls the service that served it
    // wherever that is (the local suite's port, a test's app, a path on a host).
    servers: [
      publicBase
        ? { url: publicBase, description: 'This service at its public address (its paths begin with /api/v1)' }
        : { url: '.', description: 'The service that serves this document, at the address it is served from (its paths begin with /api/v1)' },
    ],
    tags: (opts.tags ?? []).map((t) => ({ ...t })),
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  }
  // X-Project-ID is documented where it is enforced: by the kernel, on every authenticated operation of a project-scoped service.
  const needsProject = (path: string) => opts.projectScoped && path.startsWith(`${API_PREFIX}/`) && !isPublic(path)
  app.get('/openapi.json', (c) => c.json(withOverloadAnswer(withProjectHeader(app.getOpenAPI31Document(documentConfig), needsProject))))
  mountDocs(app, opts.title)
  return app
}

/**
 * A sub-app for the routes of one first path segment, declared at module level and sharing the
 * validation hook; handlers find the service's dependencies in `c.get('deps')`.
 */
export const resourceApp = <D extends KernelDeps = KernelDeps>() => new OpenAPIHono<AppEnv<D>>({ defaultHook })

export { ApiError }
