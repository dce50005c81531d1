import type { Context } from 'hono'
import { canonicalJson } from '../../lib/canonical.js'
import { ApiError, badRequest, notFound } from '../../lib/errors.js'
import { auditContext } from '../../lib/http.js'
import { sha256, UUID_RE } from '../../lib/ids.js'
import { gsUri, parseGsUri } from '../../lib/storage.js'
import { paramProblems } from '../../domain/pipelines/params.js'
import { applyParamsPatch } from '../../domain/runs/relaunch.js'
import { dispatchRun, releaseJob } from '../../domain/runs/lifecycle.js'
import { TERMINAL } from '../../domain/runs/status.js'
import { outputLocation, type RunRecord } from '../../domain/runs/store.js'
import type { ComputeDeps, ComputeEnv } from './deps.js'
import type { RelaunchRun, SubmitRun } from './schemas.js'

/**
 * Submitting, relaunching and cancelling a run and listing its outputs, written once for the API (POST /runs, DELETE /runs/{id}) and
 * the console's pages: the request's project and caller (`project`, `principal`) are already
 * checked, by `requires` on the API and by the console's page checks, for the same permissions.
 */

/** The run's params do not fit the pipeline: a 400 with every problem, and each problem with its param for a form. */
export class ParamsInvalid extends ApiError {
  constructor(readonly problems: ReadonlyArray<{ param: string; problem: string }>) {
    super(400, problems.map(({ param, problem }) => `params.${param}: ${problem}`).join('; '))
    this.name = 'ParamsInvalid'
  }
}

const noCredentials = (slug: string) =>
  `project '${slug}' has no cloud credentials configured; a project admin must set its service account (admin service: project credentials) before runs can be submitted`

/** The project as a run records it, with the service account its job runs as: a 400 until a project admin has set one. */
function runnerOf(project: ComputeEnv['Variables']['project']) {
  if (!project.credentials) throw badRequest(noCredentials(project.slug))
  return {
    id: project.id,
    org_id: project.org_id,
    bucket_name: project.bucket_name,
    service_account_email: project.credentials.service_account_email,
  }
}

/**
 * Records a queued run and dispatches it. With an idempotency key, a repeat of the same request
 * answers the first run (`replayed`), and is dispatched again only if the first never was.
 */
export async function submitRun(c: Context<ComputeEnv>, body: SubmitRun, idempotencyKey?: string): Promise<{ run: RunRecord; replayed: boolean }> {
  const deps = c.get('deps')
  const project = c.get('project')
  const pipeline = await deps.pipelines.get(project.id, body.pipeline_id)
  if (!pipeline) throw notFound('pipeline')
  const runner = runnerOf(project)
  const problems = paramProblems(pipeline, body.params, { projectBucket: project.bucket_name, sharedBuckets: deps.config.storage.sharedBuckets })
  if (problems.length) throw new ParamsInvalid(problems)
  // An order is named by id or accession; the link re-reads it in the run's transaction.
  const order = body.order_id ? await deps.orders.resolve(project.id, body.order_id) : undefined
  if (body.order_id && !order) throw notFound(`order '${body.order_id}'`)
  const { run, replayed } = await deps.runs.submit(auditContext(c), {
    project: runner,
    pipeline,
    params: body.params,
    tags: body.tags,
    profile: body.profile,
    link: order ? deps.orders.runLink(project, order) : undefined,
    created_by: c.get('principal').user.id,
    idempotency: idempotencyKey ? { key: idempotencyKey, requestHash: sha256(canonicalJson(body)) } : undefined,
  })
  if (!replayed || !run.dispatch.published) await dispatchRun(deps, run)
  return { run, replayed }
}

/**
 * Relaunches a run of the project (404 for another's): a new run of the same pipeline version with
 * the first run's settings, changed as the body says (domain/runs/relaunch.ts). Changed params are
 * checked against the pipeline as a submission's are; unchanged ones are the first run's, which
 * were checked when it was submitted (a later forced overwrite of the version does not block them).
 * Idempotent like a submission, the key shared with POST /runs (another request under it is a 409).
 */
export async function relaunchRun(
  c: Context<ComputeEnv>,
  id: string,
  body: RelaunchRun,
  idempotencyKey?: string,
): Promise<{ run: RunRecord; replayed: boolean }> {
  const deps = c.get('deps')
  const project = c.get('project')
  const first = UUID_RE.test(id) ? await deps.runs.get(project.id, id) : undefined
  if (!first) throw notFound('run')
  const pipeline = await deps.pipelines.get(project.id, first.pipeline_id)
  if (!pipeline) throw notFound('pipeline')
  const runner = runnerOf(project)
  if (body.params && Object.keys(body.params).length) {
    const params = applyParamsPatch(first.params, body.params)
    const problems = paramProblems(pipeline, params, { projectBucket: project.bucket_name, sharedBuckets: deps.config.storage.sharedBuckets })
    if (problems.length) throw new ParamsInvalid(problems)
  }
  // The order is the first run's: its link re-reads it in the run's transaction (a completed order takes no more runs).
  const order = first.order_id ? await deps.orders.resolve(project.id, first.order_id) : undefined
  const { run, replayed } = await deps.runs.submit(auditContext(c), {
    project: runner,
    pipeline,
    params: {},
    tags: [],
    link: order ? deps.orders.runLink(project, order) : undefined,
    created_by: c.get('principal').user.id,
    idempotency: idempotencyKey ? { key: idempotencyKey, requestHash: sha256(canonicalJson({ relaunch: first.id, ...body })) } : undefined,
    relaunch: { of: first.id, resume: body.resume, params: body.params, tags: body.tags, profile: body.profile },
  })
  if (!replayed || !run.dispatch.published) await dispatchRun(deps, run)
  return { run, replayed }
}

/** The files under a run's output location, one page; none until the run has ended (a running job's files are not its outputs yet). */
export async function runOutputs(deps: ComputeDeps, run: RunRecord, page: { pageSize: number; pageToken?: string }) {
  if (!TERMINAL.has(run.status)) return { items: [] }
  const { bucket, path: prefix } = parseGsUri(run.output ?? outputLocation(run.bucket_name, run.id))
  const listed = await deps.storage.list(bucket, prefix, page)
  const items = listed.items.map((o) => ({
    name: o.path.slice(prefix.length),
    path: o.path,
    uri: gsUri(bucket, o.path),
    size: o.size,
    updated: o.updated,
    content_type: o.content_type,
  }))
  return { items, nextPageToken: listed.nextPageToken }
}

/** Cancels a queued or running run (409 for a finished one; a cancelled one is answered as it is), then deletes its Batch job. */
export async function cancelRun(c: Context<ComputeEnv>, id: string): Promise<RunRecord> {
  const deps = c.get('deps')
  if (!UUID_RE.test(id)) throw notFound('run')
  const { run } = await deps.runs.cancel(auditContext(c), c.get('project').id, id, c.get('principal').user.id)
  if (run.job && run.job_cleanup_pending) {
    // The run is cancelled either way; the reconciler retries a failed deletion (listCancelledWithLiveJob).
    await releaseJob(deps, run).catch((error: unknown) =>
      deps.log.warn('Batch job deletion failed; left for the reconciler', { run_id: run.id, job: run.job?.name, error }),
    )
  }
  return run
}
