import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { streamSSE } from 'hono/streaming'
import { iso } from '../../../lib/db.js'
import { badRequest, notFound } from '../../../lib/errors.js'
import { requires, resourceApp, type Prefetch } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, pageSizeOf } from '../../../lib/pagination.js'
import type { RunRecord } from '../../../domain/runs/store.js'
import { cancelRun, relaunchRun, runOutputs, submitRun } from '../actions.js'
import { followRunLog, LogLine, readRunLog, RunLogQuery, waitRunLog } from '../logs.js'
import type { ComputeDeps, ComputeEnv } from '../deps.js'
import { OrderParam, RelaunchRun, Run, RunListQuery, RunOutput, SubmitRun } from '../schemas.js'

/** /runs: submit, list, read, list outputs, relaunch, cancel. */
export const runs = resourceApp<ComputeDeps>()

export function toRun(r: RunRecord): z.infer<typeof Run> {
  const started = r.started?.toMillis()
  const finished = r.finished?.toMillis()
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    project_id: r.project_id,
    pipeline_id: r.pipeline_id,
    pipeline_slug: r.pipeline_slug,
    pipeline_version: r.pipeline_version,
    pipeline_type: r.pipeline_type,
    order_id: r.order_id,
    order_accession: r.order_accession,
    params: r.params,
    tags: r.tags,
    profile: r.profile,
    created: iso(r.created)!,
    started: iso(r.started),
    finished: iso(r.finished),
    duration: started !== undefined && finished !== undefined ? Math.max(0, finished - started) / 1000 : undefined,
    output: r.output,
    error_message: r.error_message,
    status_reason: r.status_reason,
    created_by: r.created_by,
    work_session: r.work_session,
    relaunched_from: r.relaunched_from,
    relaunches: r.relaunches ?? [],
  }
}

const IdempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, '1 to 255 visible ASCII characters')
    .optional()
    .openapi({ description: 'A retried submission with the same key and body returns the first run instead of making another (kept 24 hours)' }),
})

/**
 * Reading one run and its outputs declare the run, so the kernel reads it in the same round trip as
 * the caller's account and these routes take it from `c.get('reads')` (lib/http.ts, `Prefetch`).
 */
export const runPrefetch: Prefetch<ComputeDeps> = {
  method: 'get',
  paths: ['/runs/{id}', '/runs/{id}/outputs'],
  docs: ({ id }, deps) => (id && UUID_RE.test(id) ? [deps.runs.ref(id)] : []),
}

async function loadRun(c: Context<ComputeEnv>, id: string): Promise<RunRecord> {
  const run = UUID_RE.test(id) ? await c.get('deps').runs.get(c.get('project').id, id, c.get('reads')) : undefined
  if (!run) throw notFound('run')
  return run
}

async function listRuns(c: Context<ComputeEnv>, filters: z.infer<typeof RunListQuery>, page: z.infer<typeof PageQuery>) {
  const result = await c.get('deps').runs.list(c.get('project').id, filters, page)
  return pageResponse(c, { items: result.items.map(toRun), nextPageToken: result.nextPageToken })
}

const read = requires('run.read')

runs.openapi(
  createRoute({
    operationId: 'createRun',
    method: 'post',
    path: '/runs',
    tags: ['runs'],
    summary: 'Submit a run (queued at once; the orchestrator starts it)',
    middleware: [requires('run.submit')] as const,
    request: { headers: IdempotencyHeader, body: { content: { 'application/json': { schema: SubmitRun } }, required: true } },
    responses: {
      201: {
        ...json(Run, 'Queued'),
        headers: { 'Idempotent-Replayed': { description: 'true when this answers a retried request', schema: { type: 'string' } } },
      },
      ...commonErrors,
      ...conflictError,
    },
  }),
  async (c) => {
    const { run, replayed } = await submitRun(c, c.req.valid('json'), c.req.valid('header')['idempotency-key'])
    if (replayed) c.header('Idempotent-Replayed', 'true')
    return c.json(toRun(run), 201)
  },
)

runs.openapi(
  createRoute({
    operationId: 'listRuns',
    method: 'get',
    path: '/runs',
    tags: ['runs'],
    summary: "The project's runs, newest first; filters order_id and status, or name",
    middleware: [read] as const,
    request: { query: PageQuery.extend(RunListQuery.shape) },
    responses: { 200: { ...json(z.array(Run)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { order_id, status, name, ...page } = c.req.valid('query')
    // A name picks (almost always) one run: combining it would only need more composite indexes for nothing.
    if (name !== undefined && (order_id !== undefined || status !== undefined))
      throw badRequest('query.name: cannot be combined with order_id or status')
    // An order filter names the order by id or accession; a string that is neither matches runs that stored it as given.
    const order = order_id ? await c.get('deps').orders.resolve(c.get('project').id, order_id) : undefined
    return listRuns(c, { order_id: order?.id ?? order_id, status, name }, page)
  },
)

runs.openapi(
  createRoute({
    operationId: 'listRunsByOrder',
    method: 'get',
    path: '/runs/by-order/{order_id}',
    tags: ['runs'],
    summary: 'Runs linked to an order, newest first (404 for an order the project does not have)',
    middleware: [read] as const,
    request: { params: OrderParam, query: PageQuery.extend({ status: RunListQuery.shape.status }) },
    responses: { 200: { ...json(z.array(Run)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { status, ...page } = c.req.valid('query')
    const { order_id } = c.req.valid('param')
    // The path names an order: one the project does not have is absent, as every record of another project is.
    const order = await c.get('deps').orders.resolve(c.get('project').id, order_id)
    if (!order) throw notFound(`order '${order_id}'`)
    return listRuns(c, { order_id: order.id, status }, page)
  },
)

runs.openapi(
  createRoute({
    operationId: 'getRun',
    method: 'get',
    path: '/runs/{id}',
    tags: ['runs'],
    summary: 'Run details; duration in seconds once started and finished are known',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(Run), ...commonErrors },
  }),
  async (c) => c.json(toRun(await loadRun(c, c.req.valid('param').id)), 200),
)

runs.openapi(
  createRoute({
    operationId: 'listRunOutputs',
    method: 'get',
    path: '/runs/{id}/outputs',
    tags: ['runs'],
    summary: "Files under the run's output location (gs://<bucket>/runs/<id>/); empty until the run has ended",
    middleware: [read, requires('file.read')] as const,
    request: { params: IdParam, query: PageQuery },
    responses: { 200: { ...json(z.array(RunOutput)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const run = await loadRun(c, c.req.valid('param').id)
    const query = c.req.valid('query')
    return pageResponse(c, await runOutputs(c.get('deps'), run, { pageSize: pageSizeOf(query), pageToken: query.page_token }))
  },
)

runs.openapi(
  createRoute({
    operationId: 'cancelRun',
    method: 'delete',
    path: '/runs/{id}',
    tags: ['runs'],
    summary: 'Cancel a queued or running run (its Batch job is deleted); a finished run is a 409',
    middleware: [requires('run.cancel')] as const,
    request: { params: IdParam },
    responses: { 200: json(Run, 'Cancelled'), ...commonErrors, ...conflictError },
  }),
  async (c) => c.json(toRun(await cancelRun(c, c.req.valid('param').id)), 200),
)

runs.openapi(
  createRoute({
    operationId: 'relaunchRun',
    method: 'post',
    path: '/runs/{id}/relaunch',
    tags: ['runs'],
    summary:
      "Relaunch a run: a new run of the same pipeline version with every setting of the first (params, tags, profile, order), changed as the body says; resume: true continues the first run's work session",
    middleware: [requires('run.submit')] as const,
    request: {
      params: IdParam,
      headers: IdempotencyHeader,
      body: { content: { 'application/json': { schema: RelaunchRun } }, required: true },
    },
    responses: {
      201: {
        ...json(Run, 'The new run, queued; relaunched_from names the first'),
        headers: { 'Idempotent-Replayed': { description: 'true when this answers a retried request', schema: { type: 'string' } } },
      },
      ...commonErrors,
      ...conflictError,
    },
  }),
  async (c) => {
    const { run, replayed } = await relaunchRun(c, c.req.valid('param').id, c.req.valid('json'), c.req.valid('header')['idempotency-key'])
    if (replayed) c.header('Idempotent-Replayed', 'true')
    return c.json(toRun(run), 201)
  },
)

/** A stream lasts at most this long; the client reconnects with Last-Event-ID (EventSource does by itself) and goes on. */
export const MAX_STREAM_SECONDS = 300
/**
 * A stream with nothing to say for this long gets a comment line (`: keep-alive`), which clients
 * ignore: proxies and load balancers close a connection idle for a minute or so (Google's front
 * end, nginx's 60 s default), and a silent step of a pipeline often prints nothing for longer.
 */
export const SSE_KEEPALIVE_SECONDS = 15

runs.openapi(
  createRoute({
    operationId: 'getRunLogs',
    method: 'get',
    path: '/runs/{id}/logs',
    tags: ['runs'],
    summary: "The run's log: its tasks' stdout and stderr lines, oldest first; followed by a long poll (wait) or server-sent events",
    description: [
      "Each line has its time, task and stream. Pages follow the platform's scheme (page_size, page_token, X-Next-Page-Token); a",
      'page without X-Next-Page-Token is the end: the run has ended and every line is read. While the run can still write, every',
      'page has a next token (an empty page too): read again with it to follow. `wait=N` holds an empty answer up to N seconds',
      'until a line comes. With `Accept: text/event-stream` the answer is a stream of server-sent events: `lines` events (data: a',
      'JSON array of lines; id: the page token after them, so a reconnection with Last-Event-ID goes on from there), then one',
      `\`end\` event (data: {"status": <the run's status>}) when the log is complete. A stream is closed after ${MAX_STREAM_SECONDS} s without \`end\`:`,
      `reconnect with Last-Event-ID. A stream with no line for ${SSE_KEEPALIVE_SECONDS} s gets a comment line (': keep-alive'), which clients ignore.`,
    ].join(' '),
    middleware: [read] as const,
    request: {
      params: IdParam,
      query: RunLogQuery,
      headers: z.object({
        'last-event-id': z.string().optional().openapi({ description: 'Server-sent events: the id of the last event received (a page token)' }),
      }),
    },
    responses: {
      200: {
        description: 'Log lines (JSON), or a stream of server-sent events (Accept: text/event-stream)',
        headers: pageHeaders,
        content: {
          'application/json': { schema: z.array(LogLine) },
          'text/event-stream': { schema: z.string().openapi({ description: 'event: lines | end; id: page token; data: JSON' }) },
        },
      },
      ...commonErrors,
    },
  }),
  async (c) => {
    const run = await loadRun(c, c.req.valid('param').id)
    const { wait, ...query } = c.req.valid('query')
    const deps = c.get('deps')
    if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
      const selection = { ...query, page_token: query.page_token ?? c.req.valid('header')['last-event-id'] }
      // A bad token is a 400 before the stream starts, not an error event inside it.
      const first = await readRunLog(deps, run, selection)
      return streamSSE(c, async (stream) => {
        const stop = new AbortController()
        stream.onAbort(() => stop.abort())
        const deadline = performance.now() + MAX_STREAM_SECONDS * 1000
        const head = { ...first, run }
        const pages = (async function* () {
          yield head
          if (first.nextPageToken)
            yield* followRunLog(
              deps,
              run,
              { ...selection, page_token: first.nextPageToken },
              {
                signal: stop.signal,
                deadline,
                idleMs: SSE_KEEPALIVE_SECONDS * 1000,
              },
            )
        })()
        try {
          for await (const page of pages) {
            if (page.lines.length) await stream.writeSSE({ event: 'lines', id: page.nextPageToken ?? '', data: JSON.stringify(page.lines) })
            // An empty page of the follower: nothing written for SSE_KEEPALIVE_SECONDS (or the deadline).
            else if (page.nextPageToken && page !== head) await stream.write(': keep-alive\n\n')
            if (!page.nextPageToken) await stream.writeSSE({ event: 'end', data: JSON.stringify({ status: page.run.status }) })
          }
        } catch (error) {
          // The 200 is sent: a failure on the way (the log unreadable) is the stream's last event, in the error shape, its
          // cause in our log only (Hono's own error handling would send the exception's message to the client).
          deps.log.error('run log stream failed', { run_id: run.id, error })
          await stream.writeSSE({ event: 'error', data: JSON.stringify({ detail: 'the log could not be read; reconnect to go on' }) })
        }
      })
    }
    const page = wait ? await waitRunLog(deps, run, query, wait, c.req.raw.signal) : await readRunLog(deps, run, query)
    return pageResponse(c, { items: page.lines, nextPageToken: page.nextPageToken })
  },
)
