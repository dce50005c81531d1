import { z } from '@hono/zod-openapi'
import { Hono, type Context } from 'hono'
import { orRefuse } from '../../../lib/decision.js'
import { badRequest, describeZodError, notFound } from '../../../lib/errors.js'
import { requires, type StandardApi } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { MAX_PAGE_SIZE, paginateArray } from '../../../lib/pagination.js'
import { PIPELINE_TYPES } from '../../../domain/pipelines/model.js'
import type { RunRecord } from '../../../domain/runs/store.js'
import {
  decideWesSubmission,
  engineVersionOf,
  parseWorkflowUrl,
  WES_WORKFLOW_TYPES,
  type WesRunRequest,
  type WesState,
} from '../../../domain/runs/wes.js'
import { cancelRun, ParamsInvalid, submitRun } from '../actions.js'
import type { ComputeEnv } from '../deps.js'
import { SubmitRun } from '../schemas.js'
import { runLog, runStatus, runSummary, taskLogs, WES_PREFIX } from './views.js'

/**
 * GA4GH WES 1.1 (the Workflow Execution Service) under /ga4gh/wes/v1, onto the platform's runs:
 * the same credentials, X-Project-ID and permissions as /api/v1 (the kernel checks them for the
 * prefix, lib/http.ts `StandardApi`), and the same code to submit and cancel as POST /runs and
 * DELETE /runs/{id} (../actions.ts), so a run is audited the same whichever door it came by. The
 * contract is GA4GH's document (docs/wes.md), so these routes are not in the service's
 * /openapi.json. Errors keep the platform's `detail` and add WES's ErrorResponse fields.
 */
const wesRoutes = new Hono<ComputeEnv>()

/** The service's public address, which the addresses WES hands out start with. */
const baseOf = (c: Context<ComputeEnv>) => c.get('publicBase') ?? new URL(c.req.url).origin

async function loadRun(c: Context<ComputeEnv>): Promise<RunRecord> {
  const id = c.req.param('run_id') ?? ''
  const run = UUID_RE.test(id) ? await c.get('deps').runs.get(c.get('project').id, id) : undefined
  if (!run) throw notFound('run')
  return run
}

/** WES's page_size is a preferred size: one above the platform's largest page gets the largest page. */
const PageQuery = z.object({
  page_size: z.coerce.number().int().min(1).optional(),
  page_token: z.string().min(1).optional(),
})

function pageOf(c: Context<ComputeEnv>): { page_size?: number; page_token?: string } {
  const parsed = PageQuery.safeParse(c.req.query())
  if (!parsed.success) throw badRequest(describeZodError(parsed.error, 'query'))
  const { page_size, page_token } = parsed.data
  return { page_size: page_size === undefined ? undefined : Math.min(page_size, MAX_PAGE_SIZE), page_token }
}

const read = requires('run.read')

wesRoutes.get('/service-info', read, async (c) => {
  const deps = c.get('deps')
  const project = c.get('project')
  const base = baseOf(c)
  // The engines' versions are the tags of the images the project's catalogue runs them with.
  const catalogue = await deps.pipelines.list(project.id, {}, { page_size: MAX_PAGE_SIZE })
  const engines = new Map<string, Set<string>>()
  for (const p of catalogue.items) {
    const { engine } = WES_WORKFLOW_TYPES[p.type]
    engines.set(engine, (engines.get(engine) ?? new Set()).add(engineVersionOf(p.container)))
  }
  const counted: Array<[WesState, Parameters<typeof deps.runs.count>[1]]> = [
    ['QUEUED', { status: 'queued' }],
    ['RUNNING', { status: 'running' }],
    ['COMPLETE', { status: 'succeeded' }],
    ['SYSTEM_ERROR', { status: 'failed', 'failure.kind': 'system' }],
    ['CANCELING', { status: 'cancelled', job_cleanup_pending: true }],
    ['CANCELED', { status: 'cancelled', job_cleanup_pending: false }],
  ]
  const [failed, ...counts] = await Promise.all([
    deps.runs.count(project.id, { status: 'failed' }),
    ...counted.map(([, where]) => deps.runs.count(project.id, where)),
  ])
  const system_state_counts: Partial<Record<WesState, number>> = Object.fromEntries(counted.map(([state], i) => [state, counts[i]!]))
  // Counted as what is left: a run that failed before failures were recorded reads as the pipeline's.
  system_state_counts.EXECUTOR_ERROR = failed! - system_state_counts.SYSTEM_ERROR!
  const host = new URL(base).hostname
  return c.json(
    {
      id: `${host.split('.').reverse().join('.')}.wes`,
      name: 'Pipeline platform WES',
      type: { group: 'org.ga4gh', artifact: 'wes', version: '1.1.0' },
      description: `GA4GH WES 1.1 onto the pipeline platform's runs, for the project ${project.slug}: workflow_url names a pipeline of the project catalogue as <slug>@<version>; every request sends X-Project-ID.`,
      organization: { name: 'Pipeline platform', url: base },
      documentationUrl: `${base}/docs`,
      // service-info's version is a string: 'development' where the platform's is not set (the discovery document's null).
      version: deps.config.version ?? 'development',
      environment: deps.config.environment,
      workflow_type_versions: Object.fromEntries(
        PIPELINE_TYPES.map((t) => [WES_WORKFLOW_TYPES[t].type, { workflow_type_version: [...WES_WORKFLOW_TYPES[t].versions] }]),
      ),
      supported_wes_versions: ['1.1.0'],
      supported_filesystem_protocols: ['gs'],
      workflow_engine_versions: Object.fromEntries(
        [...engines].map(([engine, versions]) => [engine, { workflow_engine_version: [...versions].sort() }]),
      ),
      default_workflow_engine_parameters: [{ name: 'profile', type: 'string' }],
      system_state_counts,
      auth_instructions_url: `${base}/docs`,
      tags: { project_header: 'X-Project-ID', workflow_url: '<slug>@<version> of a pipeline of the project catalogue' },
    },
    200,
  )
})

wesRoutes.get('/runs', read, async (c) => {
  const page = await c.get('deps').runs.list(c.get('project').id, {}, pageOf(c))
  return c.json({ runs: page.items.map(runSummary), next_page_token: page.nextPageToken ?? '' }, 200)
})

/** RunRequest as JSON (the body's fields already objects), the shape both bodies are checked in. */
const RunRequestBody = z.object({
  workflow_url: z.string().min(1),
  workflow_type: z.string().min(1),
  workflow_type_version: z.string().min(1),
  workflow_params: z.record(z.string(), z.unknown()).default({}),
  tags: z.record(z.string(), z.string()).default({}),
  workflow_engine: z.string().min(1).optional(),
  workflow_engine_version: z.string().min(1).optional(),
  workflow_engine_parameters: z.record(z.string(), z.string()).default({}),
})

/** The form fields WES sends as JSON text. */
const JSON_FIELDS = new Set(['workflow_params', 'tags', 'workflow_engine_parameters'])
const FORM_FIELDS = new Set([...Object.keys(RunRequestBody.shape), 'workflow_attachment'])

/**
 * The run request, from multipart/form-data as WES 1.1 sends it (each field a part; the JSON ones
 * as text; files as workflow_attachment parts) or from a JSON RunRequest, which clients also send.
 */
async function readRunRequest(c: Context<ComputeEnv>): Promise<WesRunRequest> {
  const type = c.req.header('content-type')?.toLowerCase() ?? ''
  let fields: Record<string, unknown>
  let attachments = 0
  if (type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form-urlencoded')) {
    const form = await c.req.parseBody({ all: true }).catch(() => {
      throw badRequest('the body is not a readable multipart/form-data form')
    })
    fields = {}
    for (const [name, value] of Object.entries(form)) {
      if (name === 'workflow_attachment') {
        attachments = Array.isArray(value) ? value.length : 1
        continue
      }
      if (!FORM_FIELDS.has(name)) throw badRequest(`${name}: not a field of a WES run request`)
      if (Array.isArray(value) || typeof value !== 'string') throw badRequest(`${name}: send it once, as text`)
      if (!JSON_FIELDS.has(name)) {
        fields[name] = value
        continue
      }
      try {
        fields[name] = JSON.parse(value) as unknown
      } catch {
        throw badRequest(`${name}: not JSON (WES sends it as a JSON-encoded string)`)
      }
    }
  } else if (type.startsWith('application/json')) {
    const body: unknown = await c.req.json().catch(() => {
      throw badRequest('the body is not JSON')
    })
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a RunRequest object')
    fields = body as Record<string, unknown>
  } else {
    throw badRequest('send the run request as multipart/form-data (as WES 1.1 says) or as a JSON RunRequest')
  }
  const parsed = RunRequestBody.safeParse(fields)
  if (!parsed.success) throw badRequest(describeZodError(parsed.error))
  return { ...parsed.data, attachments }
}

wesRoutes.post('/runs', requires('run.submit'), async (c) => {
  const req = await readRunRequest(c)
  const named = parseWorkflowUrl(req.workflow_url)
  if (!named)
    throw badRequest(`workflow_url: name a pipeline of the project catalogue as <slug>@<version> (e.g. hello-local@1.0.0), not '${req.workflow_url}'`)
  const versions = await c.get('deps').pipelines.versions(c.get('project').id, named.slug)
  const pipeline = versions.find((p) => p.version === named.version)
  if (!pipeline) throw badRequest(`workflow_url: the project catalogue has no pipeline ${named.slug} version ${named.version}`)
  const { changes } = orRefuse(decideWesSubmission(pipeline, req))
  // The same limits as POST /runs (params' size and depth, tags' count and length), named as WES names the fields.
  const body = SubmitRun.safeParse({ pipeline_id: pipeline.id, ...changes })
  if (!body.success) throw badRequest(describeZodError(body.error).replace(/^params\b/, 'workflow_params'))
  try {
    const { run } = await submitRun(c, body.data, c.req.header('idempotency-key'))
    return c.json({ run_id: run.id }, 200)
  } catch (err) {
    if (err instanceof ParamsInvalid) throw badRequest(err.problems.map(({ param, problem }) => `workflow_params.${param}: ${problem}`).join('; '))
    throw err
  }
})

wesRoutes.get('/runs/:run_id', read, async (c) => c.json(runLog(await loadRun(c), baseOf(c)), 200))

wesRoutes.get('/runs/:run_id/status', read, async (c) => c.json(runStatus(await loadRun(c)), 200))

wesRoutes.get('/runs/:run_id/tasks', read, async (c) => {
  const run = await loadRun(c)
  const page = paginateArray(taskLogs(run, baseOf(c)), (t) => t.id, { filters: { run: run.id }, query: pageOf(c) })
  return c.json({ task_logs: page.items, next_page_token: page.nextPageToken ?? '' }, 200)
})

wesRoutes.get('/runs/:run_id/tasks/:task_id', read, async (c) => {
  const task = taskLogs(await loadRun(c), baseOf(c)).find((t) => t.id === c.req.param('task_id'))
  if (!task) throw notFound('task')
  return c.json(task, 200)
})

wesRoutes.post('/runs/:run_id/cancel', requires('run.cancel'), async (c) => {
  const run = await cancelRun(c, c.req.param('run_id'))
  return c.json({ run_id: run.id }, 200)
})

/** WES as the compute service speaks it: its prefix, its error body (ErrorResponse {msg, status_code}) and its routes. */
export const wes: StandardApi & { routes: typeof wesRoutes } = {
  prefix: WES_PREFIX,
  errorFields: (detail, status) => ({ msg: detail, status_code: status }),
  routes: wesRoutes,
}
