/**
 * The one client of the platform's public HTTP API used by the CLI. Its paths, parameters and
 * bodies are typed by the services' own OpenAPI documents (cli/api/, written by `npm run generate`)
 * through openapi-fetch; this file adds what the CLI needs around it: the bearer token and its
 * renewal, timeouts, retries of what is safe to retry, paging, and errors the CLI can explain.
 * It knows nothing about the terminal.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { components as AdminComponents, paths as AdminPaths } from './api/admin.js'
import type { components as AuditComponents, paths as AuditPaths } from './api/audit.js'
import type { components as ClinicalComponents, paths as ClinicalPaths } from './api/clinical.js'
import { runStatusValues, type components as ComputeComponents, type paths as ComputePaths } from './api/compute.js'
import type { components as FilesComponents, paths as FilesPaths } from './api/files.js'
import type { components as ReportsComponents, paths as ReportsPaths } from './api/reports.js'
import type { ServiceName } from './api/services.js'
import type { components as VariantCacheComponents, operations as VariantCacheOperations, paths as VariantCachePaths } from './api/variant_cache.js'

export type { ServiceName }

type AdminSchemas = AdminComponents['schemas']
type ComputeSchemas = ComputeComponents['schemas']

export type Me = AdminSchemas['CurrentUser']
export type DefaultContext = AdminSchemas['DefaultContext']
export type Project = AdminSchemas['Project']
export type TokenResponse = AdminSchemas['LoginTokens']
export type CliLogin = AdminSchemas['CliLogin']
export type DeviceLogin = AdminSchemas['DeviceLogin']
/** One poll of a browser login: not yet (slow_down: poll less often), or the tokens. */
export type DevicePoll = AdminSchemas['DeviceLoginPending'] | { status: 'complete'; tokens: TokenResponse }
export type Pipeline = ComputeSchemas['Pipeline']
export type PipelineInput = ComputeSchemas['PipelineInput']
export type Run = ComputeSchemas['Run']
export type RunStatus = ComputeSchemas['RunStatus']
export type RunOutput = ComputeSchemas['RunOutput']
export type LogLine = ComputeSchemas['LogLine']
export type SubmitRun = ComputeSchemas['SubmitRun']
export type RelaunchRun = ComputeSchemas['RelaunchRun']
export type FileEntry = FilesComponents['schemas']['File']
export type SignedUrl = FilesComponents['schemas']['SignedUrl']
export type CreateUploadUrl = FilesComponents['schemas']['CreateUploadUrl']
export type CopyOrMoveFile = FilesComponents['schemas']['CopyOrMoveFile']
export type AuditEvent = AuditComponents['schemas']['AuditEvent']
type ClinicalSchemas = ClinicalComponents['schemas']
export type Subject = ClinicalSchemas['Subject']
export type CreateSubject = ClinicalSchemas['CreateSubject']
export type UpdateSubject = ClinicalSchemas['UpdateSubject']
export type Sample = ClinicalSchemas['Sample']
export type CreateSample = ClinicalSchemas['CreateSample']
export type UpdateSample = ClinicalSchemas['UpdateSample']
export type SampleInfo = ClinicalSchemas['SampleInfo']
export type Order = ClinicalSchemas['Order']
export type CreateOrder = ClinicalSchemas['CreateOrder']
export type UpdateOrder = ClinicalSchemas['UpdateOrder']
export type OrderStatus = ClinicalSchemas['OrderStatus']
export type OrderSample = ClinicalSchemas['OrderSample']
export type OrderLabflow = ClinicalSchemas['OrderLabflow']
export type SampleRole = ClinicalSchemas['SampleRole']

/** The filters of GET /subjects, /samples and /orders. */
export interface SubjectFilters {
  external_id?: string
  family_id?: string
  affected_status?: Subject['affected_status']
  name?: string
}
export interface SampleFilters {
  external_id?: string
  subject_id?: string
  type?: Sample['type']
}
export interface OrderFilters {
  status?: OrderStatus
  priority?: Order['priority']
  assignee?: string
}
export type AuditOutcome = AuditEvent['outcome']

type ReportsSchemas = ReportsComponents['schemas']
export type OrderVariant = VariantCacheComponents['schemas']['OrderVariant']
export type CatalogueVariant = ClinicalComponents['schemas']['CatalogueVariant']
/** The filters of an order's variants (GET /orders/{order_id}/variants), as the variant-cache service takes them. */
export type VariantFilters = Omit<
  NonNullable<VariantCacheOperations['listOrderVariants']['parameters']['query']>,
  'page_size' | 'limit' | 'page_token'
>
export type Report = ReportsSchemas['Report']
export type ReportStatus = Report['status']
export type CreateReport = ReportsSchemas['CreateReport']
export type UpdateReport = ReportsSchemas['UpdateReport']
export type ReportTransition = ReportsSchemas['ReportTransition']
export type ReportVariant = ReportsSchemas['ReportVariant']
export type AddReportVariant = ReportsSchemas['AddReportVariant']
export type Comment = ReportsSchemas['Comment']
export type CreateComment = ReportsSchemas['CreateComment']
export type CommentType = CreateComment['type']
/** The filters of GET /reports (order_id: an order's id or accession). */
export interface ReportFilters {
  order_id?: string
  status?: ReportStatus
  template_type?: Report['template_type']
}

export const REPORT_STATUSES = [
  'draft',
  'in_review',
  'signed',
  'superseded',
  'cancelled',
  'entered_in_error',
] as const satisfies readonly ReportStatus[]
/** The statuses a JSON request may move a report to: signing is the browser sign-off's (re-authentication), superseded an amendment's. */
export const REPORT_MOVES = ['draft', 'in_review', 'cancelled', 'entered_in_error'] as const satisfies readonly ReportTransition['to'][]
export const TEMPLATE_TYPES = [
  'germline_diagnostic',
  'carrier',
  'secondary_findings',
  'negative',
] as const satisfies readonly Report['template_type'][]
export const COMMENT_TYPES = ['review', 'internal', 'general'] as const satisfies readonly CommentType[]
export const ACMG_CLASSIFICATIONS = [
  'pathogenic',
  'likely_pathogenic',
  'uncertain_significance',
  'likely_benign',
  'benign',
] as const satisfies readonly NonNullable<AddReportVariant['acmg_classification']>[]

export const AUDIT_OUTCOMES = ['success', 'denied', 'failure'] as const satisfies readonly AuditOutcome[]

/** Which events a query reads: a project's (X-Project-ID), an organization's and its projects', or the platform's own. */
export type AuditScope = { project: string } | { org: string } | { platform: true }

/** The filters of GET /events (from and to are ISO 8601). */
export interface AuditFilters {
  entity?: string
  action?: string
  actor?: string
  outcome?: AuditOutcome
  from?: string
  to?: string
}

export const RUN_STATUSES: readonly RunStatus[] = runStatusValues
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['succeeded', 'failed', 'cancelled'])
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

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

/** A failure that may pass if the same request is sent again a little later: no answer, or a gateway's or an overloaded service's. */
export const isTransient = (error: unknown) =>
  error instanceof UnreachableError || (error instanceof HttpError && (error.status >= 500 || error.status === 429))

/** The caller's own abort signal fired (Ctrl-C during a watch). */
export class AbortedError extends Error {
  constructor() {
    super('aborted')
    this.name = 'AbortedError'
  }
}

export interface ClientOptions {
  /** The base address of a service (without /api/v1), perhaps found through the platform's discovery document; may throw when the profile has none. */
  baseUrl: (service: ServiceName) => string | Promise<string>
  /** Without it, requests carry no Authorization header (login, token refresh). */
  auth?: Auth
  timeoutMs?: number
  userAgent?: string
  /** Aborts every request in flight and every retry wait. */
  signal?: AbortSignal
  /** Waits between retries of a transient failure, in milliseconds. */
  retryDelaysMs?: number[]
}

/** One page of a list, and the token of the next when more items exist (X-Next-Page-Token). */
export interface Page<T> {
  items: T[]
  nextPageToken?: string
}

/** Which part of a list to read: `limit` items (every item when absent), starting at `pageToken`. */
export interface PageRequest {
  limit?: number
  pageToken?: string
}

const PAGE_SIZE_ALL = 500
const MAX_PAGE_SIZE = 1000
/**
 * Answers after which nothing was done and the same request may be sent again: a gateway's while a
 * service restarts (502, 504), and a service at capacity or Cloud Run out of instances (503, 429),
 * which say how long to wait in Retry-After.
 */
const RETRY_STATUSES = new Set([429, 502, 503, 504])
/** A longer Retry-After (a login locked for minutes) is not waited out: the error says when to come back. */
const MAX_RETRY_AFTER_MS = 10_000

const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/

/** Retry-After in milliseconds, as delay-seconds or an HTTP-date (RFC 9110, 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // The date as RFC 9110 has senders write it (IMF-fixdate), not whatever Date.parse would take ('-1' is a year).
  if (!IMF_FIXDATE.test(text)) return undefined
  return Math.max(0, Date.parse(text) - now)
}
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

/**
 * What openapi-fetch sends its requests through: adds the token, the user agent and the timeout;
 * retries 429/502/503/504 (waiting at least their Retry-After, when it is at most 10 s) and
 * transient network failures of a GET, or of a POST that carries an Idempotency-Key (the service
 * then answers a repeat with the first result); renews the token once
 * after a 401; and turns every failure into HttpError, UnreachableError or AbortedError, so that a
 * call either returns the typed body or throws.
 */
function transport(service: ServiceName, base: string, opts: ClientOptions, auth: Auth | undefined) {
  const timeoutMs = opts.timeoutMs ?? 30_000
  const retryDelaysMs = opts.retryDelaysMs ?? [300, 1000]
  return async (request: Request): Promise<Response> => {
    const body = request.body ? await request.text() : undefined
    const retryable = request.method === 'GET' || request.headers.has('idempotency-key')
    let renewed = false
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(request.headers)
      // JSON unless the request names what it accepts (platform api -H 'Accept: text/csv').
      if (!headers.has('accept')) headers.set('accept', 'application/json')
      if (opts.userAgent) headers.set('user-agent', opts.userAgent)
      if (auth) headers.set('authorization', `Bearer ${await auth.token()}`)
      const signals = [AbortSignal.timeout(timeoutMs), ...(opts.signal ? [opts.signal] : [])]
      let res: Response
      try {
        res = await fetch(request.url, { method: request.method, headers, body, signal: AbortSignal.any(signals) })
      } catch (error) {
        if (opts.signal?.aborted) throw new AbortedError()
        const { reason, code } = networkReason(error, timeoutMs)
        const delay = retryDelaysMs[attempt]
        if (retryable && code && TRANSIENT_CODES.has(code) && delay !== undefined) {
          await sleep(delay, opts.signal)
          continue
        }
        throw new UnreachableError(service, base, reason)
      }
      if (res.status === 401 && auth && !renewed) {
        renewed = true
        if (await auth.renew()) {
          await res.body?.cancel()
          continue
        }
      }
      const delay = retryDelaysMs[attempt]
      const asked = retryAfterMs(res.headers.get('retry-after'))
      if (RETRY_STATUSES.has(res.status) && retryable && delay !== undefined && (asked ?? 0) <= MAX_RETRY_AFTER_MS) {
        await res.body?.cancel()
        // At least what the service asked, and up to a fifth more at random, so that clients refused together do not come back together.
        await sleep(Math.max(asked ?? 0, delay) * (1 + Math.random() / 5), opts.signal)
        continue
      }
      if (!res.ok) {
        const detail = detailOf(await readBody(res), res)
        throw new HttpError(service, request.method, request.url, res.status, detail, res.headers.get('x-request-id') ?? undefined)
      }
      return res
    }
  }
}

/** A call's result once the transport has thrown every failure: the body is there. */
function body<T>(result: { data?: T; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.url} answered ${result.response.status} without a body`)
  return result.data
}

/** Reads pages of a list until `limit` items are collected or the list ends; the next token tells where it stopped. */
async function collect<T>(
  fetchPage: (pageSize: number, pageToken: string | undefined) => Promise<{ data?: T[]; response: Response }>,
  req: PageRequest = {},
): Promise<Page<T>> {
  const items: T[] = []
  let token = req.pageToken
  do {
    // Asking for exactly what is missing ends a limited read on a page boundary, so the service's next token is where it stopped.
    const want = req.limit === undefined ? PAGE_SIZE_ALL : Math.min(req.limit - items.length, MAX_PAGE_SIZE)
    const page = await fetchPage(want, token)
    items.push(...body(page))
    token = page.response.headers.get('x-next-page-token') ?? undefined
  } while (token && (req.limit === undefined || items.length < req.limit))
  return { items, nextPageToken: token }
}

const projectHeader = (project: string) => ({ 'x-project-id': project })

export class PlatformClient {
  private adminClient?: Promise<Client<AdminPaths>>
  private computeClient?: Promise<Client<ComputePaths>>
  private filesClient?: Promise<Client<FilesPaths>>
  private auditClient?: Promise<Client<AuditPaths>>
  private clinicalClient?: Promise<Client<ClinicalPaths>>
  private variantCacheClient?: Promise<Client<VariantCachePaths>>
  private reportsClient?: Promise<Client<ReportsPaths>>
  private anonymousAdmin?: Promise<Client<AdminPaths>>

  constructor(private readonly opts: ClientOptions) {}

  /** Made on first use: a profile without the address of a service fails only when that service is called. */
  private async make<P extends object>(service: ServiceName, auth: Auth | undefined): Promise<Client<P>> {
    // Not logged in is said before anything is looked up: finding the platform would not help.
    await auth?.token()
    const base = (await this.opts.baseUrl(service)).replace(/\/+$/, '')
    return createClient<P>({ baseUrl: base, fetch: transport(service, base, this.opts, auth) })
  }
  private get admin() {
    return (this.adminClient ??= this.make<AdminPaths>('admin', this.opts.auth))
  }
  private get compute() {
    return (this.computeClient ??= this.make<ComputePaths>('compute', this.opts.auth))
  }
  private get files() {
    return (this.filesClient ??= this.make<FilesPaths>('files', this.opts.auth))
  }
  private get audit() {
    return (this.auditClient ??= this.make<AuditPaths>('audit', this.opts.auth))
  }
  private get clinical() {
    return (this.clinicalClient ??= this.make<ClinicalPaths>('clinical', this.opts.auth))
  }
  private get variantCache() {
    return (this.variantCacheClient ??= this.make<VariantCachePaths>('variant_cache', this.opts.auth))
  }
  private get reports() {
    return (this.reportsClient ??= this.make<ReportsPaths>('reports', this.opts.auth))
  }
  /** Login and refresh carry no Authorization header. */
  private get anonymous() {
    return (this.anonymousAdmin ??= this.make<AdminPaths>('admin', undefined))
  }

  // Admin service

  async me(): Promise<Me> {
    return body(await (await this.admin).GET('/api/v1/users/me'))
  }

  async defaultContext(): Promise<DefaultContext> {
    return body(await (await this.admin).GET('/api/v1/users/me/default-context'))
  }

  async projects(): Promise<Project[]> {
    const page = await collect(async (page_size, page_token) =>
      (await this.admin).GET('/api/v1/projects', { params: { query: { page_size, page_token } } }),
    )
    return page.items
  }

  async passwordLogin(email: string, password: string): Promise<TokenResponse> {
    return body(await (await this.anonymous).POST('/api/v1/auth/password', { body: { email, password } }))
  }

  /** The next pair of a login: the refresh credential is spent. */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    return body(await (await this.anonymous).POST('/api/v1/auth/refresh', { body: { refresh_token: refreshToken } }))
  }

  /** Ends the login a credential belongs to (204 whatever the token). */
  async revokeLogin(token: string): Promise<void> {
    await (await this.anonymous).POST('/api/v1/auth/revoke', { body: { token } })
  }

  /** The platform's discovery document, as text: cli/discovery.ts reads it, and says so when it is not a platform's. */
  async serviceInfo(): Promise<string> {
    return body(await (await this.anonymous).GET('/api/v1/service-info', { parseAs: 'text' }))
  }

  /** The identity provider, and how the CLI may log in at it. */
  async cliLogin(): Promise<CliLogin> {
    return body(await (await this.anonymous).GET('/api/v1/auth/cli'))
  }

  /** Begins a browser login (the device authorization grant): the code, and where the person confirms it. */
  async beginDeviceLogin(): Promise<DeviceLogin> {
    return body(await (await this.anonymous).POST('/api/v1/auth/device'))
  }

  /** One poll of a browser login (202 while the person has not finished); a refused, expired or used code is a 401. */
  async pollDeviceLogin(deviceCode: string): Promise<DevicePoll> {
    const answer = body(await (await this.anonymous).POST('/api/v1/auth/device/token', { body: { device_code: deviceCode } }))
    return 'access_token' in answer ? { status: 'complete', tokens: answer } : answer
  }

  // Compute service (project-scoped)

  async listPipelines(project: string, filters: { type?: Pipeline['type']; tag?: string } = {}): Promise<Pipeline[]> {
    const page = await collect(async (page_size, page_token) =>
      (await this.compute).GET('/api/v1/pipelines', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
    )
    return page.items
  }

  async getPipeline(project: string, id: string): Promise<Pipeline> {
    return body(await (await this.compute).GET('/api/v1/pipelines/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  async getPipelineBySlug(project: string, slug: string, version?: string): Promise<Pipeline> {
    return body(
      await (
        await this.compute
      ).GET('/api/v1/pipelines/slug/{slug}', { params: { header: projectHeader(project), path: { slug }, query: { version } } }),
    )
  }

  /** Every version of the slug, highest first (one answer: this list is not paged). */
  async pipelineVersions(project: string, slug: string): Promise<Pipeline[]> {
    return body(
      await (await this.compute).GET('/api/v1/pipelines/slug/{slug}/versions', { params: { header: projectHeader(project), path: { slug } } }),
    )
  }

  /** The same key on a retry gets the run made the first time, never a second run. */
  async submitRun(project: string, run: SubmitRun, idempotencyKey: string): Promise<Run> {
    return body(
      await (
        await this.compute
      ).POST('/api/v1/runs', { params: { header: { ...projectHeader(project), 'idempotency-key': idempotencyKey } }, body: run }),
    )
  }

  async relaunchRun(project: string, id: string, request: RelaunchRun, idempotencyKey: string): Promise<Run> {
    return body(
      await (
        await this.compute
      ).POST('/api/v1/runs/{id}/relaunch', {
        params: { header: { ...projectHeader(project), 'idempotency-key': idempotencyKey }, path: { id } },
        body: request,
      }),
    )
  }

  /** Newest first; `limit` runs from `pageToken` on (every run when `limit` is absent), with the token of what follows. */
  async listRuns(project: string, filters: { order_id?: string; status?: RunStatus; name?: string }, req: PageRequest): Promise<Page<Run>> {
    return collect(
      async (page_size, page_token) =>
        (await this.compute).GET('/api/v1/runs', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
      req,
    )
  }

  async getRun(project: string, id: string): Promise<Run> {
    return body(await (await this.compute).GET('/api/v1/runs/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  async runOutputs(project: string, id: string): Promise<RunOutput[]> {
    const page = await collect(async (page_size, page_token) =>
      (await this.compute).GET('/api/v1/runs/{id}/outputs', {
        params: { header: projectHeader(project), path: { id }, query: { page_size, page_token } },
      }),
    )
    return page.items
  }

  /**
   * One page of the run's log from `pageToken` on; `wait` seconds of long poll when nothing is there
   * yet. No next token: the log is complete (the run has ended and every line is read).
   */
  async runLogs(
    project: string,
    id: string,
    query: { pageToken?: string; stream?: 'stdout' | 'stderr'; wait?: number; pageSize?: number },
  ): Promise<Page<LogLine>> {
    const res = await (
      await this.compute
    ).GET('/api/v1/runs/{id}/logs', {
      params: {
        header: projectHeader(project),
        path: { id },
        query: { page_token: query.pageToken, stream: query.stream, wait: query.wait, page_size: query.pageSize ?? MAX_PAGE_SIZE },
      },
    })
    // The transport asks for JSON: the event-stream form of this answer is for browsers and curl.
    const lines = body(res)
    if (typeof lines === 'string') throw new Error(`${res.response.url} answered text instead of JSON`)
    return { items: lines, nextPageToken: res.response.headers.get('x-next-page-token') ?? undefined }
  }

  /** The run, now cancelled; a finished run is a 409. */
  async cancelRun(project: string, id: string): Promise<Run> {
    return body(await (await this.compute).DELETE('/api/v1/runs/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  // File service (project-scoped)

  /** One level of the bucket under `path` (a folder, or a file alone), in name order, `limit` entries from `pageToken` on. */
  async listFiles(project: string, path: string, req: PageRequest): Promise<Page<FileEntry>> {
    return collect(
      async (page_size, page_token) =>
        (await this.files).GET('/api/v1/files', { params: { header: projectHeader(project), query: { path, page_size, page_token } } }),
      req,
    )
  }

  /** The file at `path`, or undefined when there is none (a folder is not a file). */
  async statFile(project: string, path: string): Promise<FileEntry | undefined> {
    const { items } = await this.listFiles(project, path, { limit: 1 })
    const [entry] = items
    return entry?.kind === 'object' && (entry.path === path || entry.uri === path) ? entry : undefined
  }

  async downloadUrl(project: string, path: string): Promise<SignedUrl> {
    return body(await (await this.files).GET('/api/v1/files/download-url', { params: { header: projectHeader(project), query: { path } } }))
  }

  /** A signed PUT address for `path`; a 409 when the file exists and `overwrite` is not true. */
  async uploadUrl(project: string, input: CreateUploadUrl): Promise<SignedUrl> {
    return body(await (await this.files).POST('/api/v1/files/upload-url', { params: { header: projectHeader(project) }, body: input }))
  }

  async copyFile(project: string, input: CopyOrMoveFile): Promise<FileEntry> {
    return body(await (await this.files).POST('/api/v1/files/copy', { params: { header: projectHeader(project) }, body: input }))
  }

  async moveFile(project: string, input: CopyOrMoveFile): Promise<FileEntry> {
    return body(await (await this.files).POST('/api/v1/files/move', { params: { header: projectHeader(project) }, body: input }))
  }

  async deleteFile(project: string, path: string): Promise<void> {
    await (await this.files).DELETE('/api/v1/files', { params: { header: projectHeader(project), query: { path } } })
  }

  // Clinical-data service (project-scoped). Subjects and samples are named by id in paths; orders by id or accession.

  /** Newest first; `limit` subjects from `pageToken` on (every one when `limit` is absent). */
  async listSubjects(project: string, filters: SubjectFilters, req: PageRequest): Promise<Page<Subject>> {
    return collect(
      async (page_size, page_token) =>
        (await this.clinical).GET('/api/v1/subjects', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
      req,
    )
  }

  async getSubject(project: string, id: string): Promise<Subject> {
    return body(await (await this.clinical).GET('/api/v1/subjects/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  async createSubject(project: string, input: CreateSubject): Promise<Subject> {
    return body(await (await this.clinical).POST('/api/v1/subjects', { params: { header: projectHeader(project) }, body: input }))
  }

  async updateSubject(project: string, id: string, patch: UpdateSubject): Promise<Subject> {
    return body(await (await this.clinical).PATCH('/api/v1/subjects/{id}', { params: { header: projectHeader(project), path: { id } }, body: patch }))
  }

  /** Deletes the subject and its samples in one step; a 409 while a signed order holds one of them. */
  async deleteSubject(project: string, id: string): Promise<void> {
    await (await this.clinical).DELETE('/api/v1/subjects/{id}', { params: { header: projectHeader(project), path: { id } } })
  }

  async listSamples(project: string, filters: SampleFilters, req: PageRequest): Promise<Page<Sample>> {
    return collect(
      async (page_size, page_token) =>
        (await this.clinical).GET('/api/v1/samples', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
      req,
    )
  }

  async getSample(project: string, id: string): Promise<Sample> {
    return body(await (await this.clinical).GET('/api/v1/samples/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  async sampleInfo(project: string, id: string): Promise<SampleInfo> {
    return body(await (await this.clinical).GET('/api/v1/samples/{id}/sampleinfo', { params: { header: projectHeader(project), path: { id } } }))
  }

  async createSample(project: string, input: CreateSample): Promise<Sample> {
    return body(await (await this.clinical).POST('/api/v1/samples', { params: { header: projectHeader(project) }, body: input }))
  }

  async updateSample(project: string, id: string, patch: UpdateSample): Promise<Sample> {
    return body(await (await this.clinical).PATCH('/api/v1/samples/{id}', { params: { header: projectHeader(project), path: { id } }, body: patch }))
  }

  /** A 409 while a signed order holds the sample. */
  async deleteSample(project: string, id: string): Promise<void> {
    await (await this.clinical).DELETE('/api/v1/samples/{id}', { params: { header: projectHeader(project), path: { id } } })
  }

  async listOrders(project: string, filters: OrderFilters, req: PageRequest): Promise<Page<Order>> {
    return collect(
      async (page_size, page_token) =>
        (await this.clinical).GET('/api/v1/orders', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
      req,
    )
  }

  /** By id or accession (the service resolves either). */
  async getOrder(project: string, idOrAccession: string): Promise<Order> {
    return body(await (await this.clinical).GET('/api/v1/orders/{id}', { params: { header: projectHeader(project), path: { id: idOrAccession } } }))
  }

  async createOrder(project: string, input: CreateOrder): Promise<Order> {
    return body(await (await this.clinical).POST('/api/v1/orders', { params: { header: projectHeader(project) }, body: input }))
  }

  /** The fields sent replace the stored ones (null clears one). */
  async updateOrder(project: string, idOrAccession: string, input: UpdateOrder): Promise<Order> {
    return body(
      await (
        await this.clinical
      ).PUT('/api/v1/orders/{id}', { params: { header: projectHeader(project), path: { id: idOrAccession } }, body: input }),
    )
  }

  /** Only an order never signed (409 otherwise: cancel it). */
  async deleteOrder(project: string, idOrAccession: string): Promise<void> {
    await (await this.clinical).DELETE('/api/v1/orders/{id}', { params: { header: projectHeader(project), path: { id: idOrAccession } } })
  }

  async transitionOrder(project: string, idOrAccession: string, to: OrderStatus, reason?: string): Promise<Order> {
    return body(
      await (
        await this.clinical
      ).POST('/api/v1/orders/{id}/transition', { params: { header: projectHeader(project), path: { id: idOrAccession } }, body: { to, reason } }),
    )
  }

  /** The order's samples, each with its role (one answer: an order holds at most 50). */
  async orderSamples(project: string, idOrAccession: string): Promise<OrderSample[]> {
    return body(
      await (await this.clinical).GET('/api/v1/orders/{id}/samples', { params: { header: projectHeader(project), path: { id: idOrAccession } } }),
    )
  }

  /** Adds the sample with its role, or changes the role of one already in the order (`added` false). */
  async addOrderSample(project: string, idOrAccession: string, sampleId: string, role: SampleRole): Promise<{ sample: OrderSample; added: boolean }> {
    const result = await (
      await this.clinical
    ).POST('/api/v1/orders/{id}/samples/{sample_id}', {
      params: { header: projectHeader(project), path: { id: idOrAccession, sample_id: sampleId } },
      body: { role },
    })
    return { sample: body(result), added: result.response.status === 201 }
  }

  async removeOrderSample(project: string, idOrAccession: string, sampleId: string): Promise<void> {
    await (
      await this.clinical
    ).DELETE('/api/v1/orders/{id}/samples/{sample_id}', {
      params: { header: projectHeader(project), path: { id: idOrAccession, sample_id: sampleId } },
    })
  }

  /** The nf-core/raredisease samplesheet of the order, as the CSV text the service wrote. */
  async samplesheet(project: string, idOrAccession: string): Promise<string> {
    return body(
      await (
        await this.clinical
      ).GET('/api/v1/orders/{id}/samplesheet', { params: { header: projectHeader(project), path: { id: idOrAccession } }, parseAs: 'text' }),
    )
  }

  async orderLabflow(project: string, idOrAccession: string): Promise<OrderLabflow> {
    return body(
      await (await this.clinical).GET('/api/v1/orders/{id}/labflow', { params: { header: projectHeader(project), path: { id: idOrAccession } } }),
    )
  }

  async moveOrderLabflow(
    project: string,
    idOrAccession: string,
    move: { transition: string; reason?: string; assignee?: string | null },
  ): Promise<OrderLabflow> {
    return body(
      await (
        await this.clinical
      ).POST('/api/v1/orders/{id}/labflow/transitions', { params: { header: projectHeader(project), path: { id: idOrAccession } }, body: move }),
    )
  }

  // Audit service

  /** Events of one scope, newest first, `limit` from `pageToken` on (every event when `limit` is absent). */
  async listEvents(scope: AuditScope, filters: AuditFilters, req: PageRequest): Promise<Page<AuditEvent>> {
    const where = 'project' in scope ? {} : 'org' in scope ? { org_id: scope.org } : { scope: 'platform' as const }
    const header = 'project' in scope ? projectHeader(scope.project) : {}
    return collect(
      async (page_size, page_token) =>
        (await this.audit).GET('/api/v1/events', { params: { header, query: { ...where, ...filters, page_size, page_token } } }),
      req,
    )
  }

  // Variants: an order's variant cache (variant-cache service) and the project's catalogue (clinical-data service)

  /** The order's variants (order by id or accession) in genome order, `limit` from `pageToken` on; 404 while it has no ready cache. */
  async listOrderVariants(project: string, order: string, filters: VariantFilters, req: PageRequest): Promise<Page<OrderVariant>> {
    return collect(
      async (page_size, page_token) =>
        (await this.variantCache).GET('/api/v1/orders/{order_id}/variants', {
          params: { header: projectHeader(project), path: { order_id: order }, query: { ...filters, page_size, page_token } },
        }),
      req,
    )
  }

  async getOrderVariant(project: string, order: string, variantId: string): Promise<OrderVariant> {
    return body(
      await (
        await this.variantCache
      ).GET('/api/v1/orders/{order_id}/variants/{variant_id}', {
        params: { header: projectHeader(project), path: { order_id: order, variant_id: variantId } },
      }),
    )
  }

  async getCatalogueVariant(project: string, variantId: string): Promise<CatalogueVariant> {
    return body(await (await this.clinical).GET('/api/v1/variants/{id}', { params: { header: projectHeader(project), path: { id: variantId } } }))
  }

  // Report service (project-scoped)

  /** Newest first, `limit` from `pageToken` on (every report when `limit` is absent). */
  async listReports(project: string, filters: ReportFilters, req: PageRequest): Promise<Page<Report>> {
    return collect(
      async (page_size, page_token) =>
        (await this.reports).GET('/api/v1/reports', { params: { header: projectHeader(project), query: { ...filters, page_size, page_token } } }),
      req,
    )
  }

  async getReport(project: string, id: string): Promise<Report> {
    return body(await (await this.reports).GET('/api/v1/reports/{id}', { params: { header: projectHeader(project), path: { id } } }))
  }

  async createReport(project: string, input: CreateReport): Promise<Report> {
    return body(await (await this.reports).POST('/api/v1/reports', { params: { header: projectHeader(project) }, body: input }))
  }

  async updateReport(project: string, id: string, input: UpdateReport): Promise<Report> {
    return body(await (await this.reports).PATCH('/api/v1/reports/{id}', { params: { header: projectHeader(project), path: { id } }, body: input }))
  }

  async transitionReport(project: string, id: string, input: ReportTransition): Promise<Report> {
    return body(
      await (await this.reports).POST('/api/v1/reports/{id}/transition', { params: { header: projectHeader(project), path: { id } }, body: input }),
    )
  }

  async addReportVariant(project: string, id: string, input: AddReportVariant): Promise<ReportVariant> {
    return body(
      await (await this.reports).POST('/api/v1/reports/{id}/variants', { params: { header: projectHeader(project), path: { id } }, body: input }),
    )
  }

  /** The variants on the report, in the order they were added. */
  async listReportVariants(project: string, id: string, req: PageRequest): Promise<Page<ReportVariant>> {
    return collect(
      async (page_size, page_token) =>
        (await this.reports).GET('/api/v1/reports/{id}/variants', {
          params: { header: projectHeader(project), path: { id }, query: { page_size, page_token } },
        }),
      req,
    )
  }

  /** Oldest first (a conversation), `limit` from `pageToken` on. */
  async listComments(project: string, id: string, filters: { type?: CommentType }, req: PageRequest): Promise<Page<Comment>> {
    return collect(
      async (page_size, page_token) =>
        (await this.reports).GET('/api/v1/reports/{id}/comments', {
          params: { header: projectHeader(project), path: { id }, query: { ...filters, page_size, page_token } },
        }),
      req,
    )
  }

  async addComment(project: string, id: string, input: CreateComment): Promise<Comment> {
    return body(
      await (await this.reports).POST('/api/v1/reports/{id}/comments', { params: { header: projectHeader(project), path: { id } }, body: input }),
    )
  }

  // Any service (platform api)

  /**
   * A request of the caller's own to a service (`path` from the base, /api/v1 included): the
   * token, user agent, timeout, retries and renewal of every other call; an error status throws
   * HttpError as they do, a success is the answer as it came.
   */
  async request(service: ServiceName, path: string, init: { method: string; headers: Headers; body?: string }): Promise<Response> {
    await this.opts.auth?.token()
    const base = (await this.opts.baseUrl(service)).replace(/\/+$/, '')
    return transport(service, base, this.opts, this.opts.auth)(new Request(base + path, init))
  }
}
