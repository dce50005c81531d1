/**
 * The one typed client of the platform's public HTTP API used by the CLI (admin and compute
 * services). It knows paths, headers, paging and retries; it knows nothing about the terminal.
 */

export type ServiceName = 'admin' | 'compute'

export const API_PREFIX = '/api/v1'
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['succeeded', 'failed', 'cancelled'])

export interface Me {
  id: string
  kind: 'user' | 'service_user'
  email?: string
  name: string
  platform_admin: boolean
  auth_method: string
  org_roles: Record<string, string>
  project_roles: Record<string, string[]>
}

export interface DefaultContext {
  project_id: string | null
  org_id: string | null
}

export interface Project {
  id: string
  name: string
  slug: string
  org_id: string
  org_name: string
  bucket_name: string
  credentials_configured?: boolean
}

export interface TokenResponse {
  access_token: string
  refresh_token?: string
  /** Seconds the access token stays valid. */
  expires_in?: number
  token_type?: string
}

export interface PipelineInput {
  name: string
  type: 'string' | 'integer' | 'number' | 'boolean' | 'file' | 'storage_path' | 'array'
  /** The item type of an array input: string, file or storage_path. */
  items?: string
  min_items?: number
  max_items?: number
  required: boolean
  description?: string
}

export interface Pipeline {
  id: string
  slug: string
  name: string
  version: string
  type: 'direct_nextflow' | 'direct_wdl' | 'container_entrypoint'
  container: string
  tags: string[]
  description: string
  inputs: PipelineInput[]
  required_inputs: string[]
  /** Params beyond the declared inputs are accepted and passed through. */
  additional_params: boolean
  default_profile?: string
  /** platform: pre-registered, seen by every project; project: created in this project. */
  scope?: 'platform' | 'project'
}

export interface Run {
  id: string
  /** <slug>-<UTC timestamp> */
  name: string
  status: RunStatus
  pipeline_id: string
  pipeline_slug?: string
  pipeline_version?: string
  order_id?: string
  params: Record<string, unknown>
  tags: string[]
  profile?: string
  created: string
  started?: string
  finished?: string
  /** Seconds from started to finished. */
  duration?: number
  /** gs://<bucket>/runs/<id>/, on success. */
  output?: string
  error_message?: string
  /** Why a run is still queued (quota, permissions, connectivity), when the platform knows. */
  status_reason?: string
}

export interface RunOutput {
  /** Path below the run's output folder. */
  name: string
  /** Object name in the project bucket. */
  path: string
  /** gs://<bucket>/<path> */
  uri: string
  size: number
  updated: string
  content_type?: string
}

export interface SubmitRun {
  pipeline_id: string
  params: Record<string, unknown>
  order_id?: string
  tags?: string[]
  profile?: string
}

/** Where the bearer token comes from; the client asks again after a 401 once `renew` says it has a new one. */
export interface Auth {
  token(): Promise<string>
  renew(): Promise<boolean>
}

/** The service answered with an error status; `detail` is the server's own `{ "detail": … }` when it sent one. */
export class HttpError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly detail: string,
    readonly requestId?: string,
  ) {
    super(`${method} ${url}: ${status} ${detail}`)
    this.name = 'HttpError'
  }
}

/** No HTTP answer at all: connection refused, DNS failure, reset, or no answer in time. */
export class UnreachableError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly baseUrl: string,
    readonly reason: string,
  ) {
    super(`cannot reach the ${service} service at ${baseUrl}: ${reason}`)
    this.name = 'UnreachableError'
  }
}

/** The caller's own abort signal fired (Ctrl-C during a watch). */
export class AbortedError extends Error {
  constructor() {
    super('aborted')
    this.name = 'AbortedError'
  }
}

export interface ClientOptions {
  /** The base address of a service (without /api/v1); may throw when the profile has none. */
  baseUrl: (service: ServiceName) => string
  auth?: Auth
  timeoutMs?: number
  userAgent?: string
  /** Aborts every request in flight and every retry wait. */
  signal?: AbortSignal
  /** Waits between retries of a transient failure, in milliseconds. */
  retryDelaysMs?: number[]
}

interface RequestOptions {
  query?: Record<string, string | number | undefined>
  body?: unknown
  project?: string
  headers?: Record<string, string>
  /** Login and refresh carry no Authorization header. */
  anonymous?: boolean
}

interface Answer<T> {
  status: number
  body: T
  headers: Headers
}

const PAGE_SIZE_ALL = 500
const MAX_PAGE_SIZE = 1000
/** Gateways answer these while a service restarts; they never mean the request was applied twice. */
const RETRY_STATUSES = new Set([502, 503, 504])
/** Network failures after which the request may or may not have arrived: only safe requests are retried. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'TimeoutError'])

function networkReason(error: unknown, timeoutMs: number): { reason: string; code?: string } {
  if (error instanceof DOMException && error.name === 'TimeoutError') return { reason: `no answer within ${timeoutMs / 1000}s`, code: 'TimeoutError' }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  const code = cause?.code
  const message = cause?.message ?? (error instanceof Error ? error.message : String(error))
  return { reason: code && !message.includes(code) ? `${code} ${message}` : message, code }
}

/** Waits `ms`, or rejects with AbortedError as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError())
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(new AbortedError())
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text()
  if (!text) return undefined
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}

function detailOf(body: unknown, res: Response): string {
  if (body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string') return (body as { detail: string }).detail
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 500)
  return res.statusText || `HTTP ${res.status}`
}

const seg = encodeURIComponent

export class PlatformClient {
  private readonly timeoutMs: number
  private readonly retryDelaysMs: number[]

  constructor(private readonly opts: ClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 30_000
    this.retryDelaysMs = opts.retryDelaysMs ?? [300, 1000]
  }

  private async request<T>(service: ServiceName, method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    const base = this.opts.baseUrl(service).replace(/\/+$/, '')
    const query = new URLSearchParams()
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') query.set(k, String(v))
    const url = `${base}${API_PREFIX}${path}${query.size ? `?${query}` : ''}`
    // A POST is only repeated when it carries an idempotency key: the server then answers a repeat with the first result.
    const retryable = method === 'GET' || Boolean(opts.headers?.['Idempotency-Key'])
    let renewed = false
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json', ...opts.headers }
      if (this.opts.userAgent) headers['user-agent'] = this.opts.userAgent
      if (opts.body !== undefined) headers['content-type'] = 'application/json'
      if (opts.project) headers['x-project-id'] = opts.project
      if (!opts.anonymous && this.opts.auth) headers.authorization = `Bearer ${await this.opts.auth.token()}`
      const signals = [AbortSignal.timeout(this.timeoutMs), ...(this.opts.signal ? [this.opts.signal] : [])]
      let res: Response
      try {
        res = await fetch(url, {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: AbortSignal.any(signals),
        })
      } catch (error) {
        if (this.opts.signal?.aborted) throw new AbortedError()
        const { reason, code } = networkReason(error, this.timeoutMs)
        const delay = this.retryDelaysMs[attempt]
        if (retryable && code && TRANSIENT_CODES.has(code) && delay !== undefined) {
          await sleep(delay, this.opts.signal)
          continue
        }
        throw new UnreachableError(service, base, reason)
      }
      if (res.status === 401 && !opts.anonymous && !renewed && this.opts.auth) {
        renewed = true
        if (await this.opts.auth.renew()) {
          await res.body?.cancel()
          continue
        }
      }
      const delay = this.retryDelaysMs[attempt]
      if (RETRY_STATUSES.has(res.status) && retryable && delay !== undefined) {
        await res.body?.cancel()
        await sleep(delay, this.opts.signal)
        continue
      }
      const body = await readBody(res)
      if (!res.ok) throw new HttpError(service, method, url, res.status, detailOf(body, res), res.headers.get('x-request-id') ?? undefined)
      return { status: res.status, body: body as T, headers: res.headers }
    }
  }

  /** Follows X-Next-Page-Token until `limit` items are collected or the list ends. */
  private async list<T>(service: ServiceName, path: string, opts: RequestOptions & { limit?: number } = {}): Promise<T[]> {
    const items: T[] = []
    let token: string | undefined
    do {
      const want = opts.limit === undefined ? PAGE_SIZE_ALL : Math.min(opts.limit - items.length, MAX_PAGE_SIZE)
      const page = await this.request<T[]>(service, 'GET', path, { ...opts, query: { ...opts.query, page_size: want, page_token: token } })
      if (!Array.isArray(page.body)) throw new HttpError(service, 'GET', path, page.status, 'expected a JSON array')
      items.push(...page.body)
      token = page.headers.get('x-next-page-token') ?? undefined
    } while (token && (opts.limit === undefined || items.length < opts.limit))
    return opts.limit === undefined ? items : items.slice(0, opts.limit)
  }

  // Admin service

  async me(): Promise<Me> {
    return (await this.request<Me>('admin', 'GET', '/users/me')).body
  }

  async defaultContext(): Promise<DefaultContext> {
    return (await this.request<DefaultContext>('admin', 'GET', '/users/me/default-context')).body
  }

  async projects(): Promise<Project[]> {
    return this.list<Project>('admin', '/projects')
  }

  async passwordLogin(email: string, password: string): Promise<TokenResponse> {
    return (await this.request<TokenResponse>('admin', 'POST', '/auth/password', { body: { email, password }, anonymous: true })).body
  }

  async refresh(refreshToken: string): Promise<TokenResponse> {
    return (await this.request<TokenResponse>('admin', 'POST', '/auth/refresh', { body: { refresh_token: refreshToken }, anonymous: true })).body
  }

  // Compute service (project-scoped)

  async listPipelines(project: string, filters: { type?: string; tag?: string } = {}): Promise<Pipeline[]> {
    return this.list<Pipeline>('compute', '/pipelines', { project, query: filters })
  }

  async getPipeline(project: string, id: string): Promise<Pipeline> {
    return (await this.request<Pipeline>('compute', 'GET', `/pipelines/${seg(id)}`, { project })).body
  }

  async getPipelineBySlug(project: string, slug: string, version?: string): Promise<Pipeline> {
    return (await this.request<Pipeline>('compute', 'GET', `/pipelines/slug/${seg(slug)}`, { project, query: { version } })).body
  }

  async pipelineVersions(project: string, slug: string): Promise<Pipeline[]> {
    return this.list<Pipeline>('compute', `/pipelines/slug/${seg(slug)}/versions`, { project })
  }

  /** The same key on a retry gets the run made the first time, never a second run. */
  async submitRun(project: string, body: SubmitRun, idempotencyKey: string): Promise<Run> {
    return (await this.request<Run>('compute', 'POST', '/runs', { project, body, headers: { 'Idempotency-Key': idempotencyKey } })).body
  }

  async listRuns(project: string, opts: { limit: number; order_id?: string; status?: RunStatus }): Promise<Run[]> {
    return this.list<Run>('compute', '/runs', { project, limit: opts.limit, query: { order_id: opts.order_id, status: opts.status } })
  }

  async getRun(project: string, id: string): Promise<Run> {
    return (await this.request<Run>('compute', 'GET', `/runs/${seg(id)}`, { project })).body
  }

  async runOutputs(project: string, id: string): Promise<RunOutput[]> {
    return this.list<RunOutput>('compute', `/runs/${seg(id)}/outputs`, { project })
  }

  /** The run, now cancelled; a finished run is a 409. */
  async cancelRun(project: string, id: string): Promise<Run> {
    return (await this.request<Run>('compute', 'DELETE', `/runs/${seg(id)}`, { project })).body
  }
}
