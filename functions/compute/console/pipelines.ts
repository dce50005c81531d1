import { randomUUID } from 'node:crypto'
import type { Context } from 'hono'
import { canInProject } from '../../../lib/auth/access.js'
import {
  checkForm,
  consoleProject,
  csrfField,
  formRefusal,
  html,
  pager,
  redirectWithNotice,
  renderConsole,
  withoutBlanks,
  type ConsoleProject,
} from '../../../lib/console/index.js'
import { notFound } from '../../../lib/errors.js'
import { UUID_RE } from '../../../lib/ids.js'
import { DEFAULT_PAGE_SIZE } from '../../../lib/pagination.js'
import { EXTRA_FIELD, formValuesOf, paramField, paramsFromForm, tagsFromForm } from '../../../domain/pipelines/launch-form.js'
import type { PipelineRecord } from '../../../domain/pipelines/model.js'
import { ParamsInvalid, submitRun } from '../actions.js'
import type { ComputeEnv } from '../deps.js'
import { SubmitRun } from '../schemas.js'
import { computeConsole, enter, KEY_RE, linksOf } from './app.js'
import { catalogue, launchForm, pipelinePage, type LaunchState } from './views.js'

/**
 * The catalogue (GET /pipelines), a pipeline (its inputs, its versions), and its launch form: the
 * fields come from the pipeline's declared inputs (domain/pipelines/launch-form.ts), and the form
 * submits through the same code as POST /runs, whose refusals are shown next to their fields.
 */

computeConsole.get('/p/:project/pipelines', async (c) => {
  const s = await consoleProject(c, 'pipeline.read')
  const header = enter(c, s)
  const page = await c
    .get('deps')
    .pipelines.list(s.project.id, {}, { page_size: DEFAULT_PAGE_SIZE, page_token: c.req.query('page_token') || undefined })
  return renderConsole(c, {
    title: 'Pipelines',
    section: 'runs',
    session: s,
    project: header,
    crumbs: [{ href: linksOf(c, s.project).runs(), text: 'Runs' }],
    body: catalogue({ pipelines: page.items, links: linksOf(c, s.project), pager: pager(c, page.nextPageToken) }),
  })
})

async function loadPipeline(c: Context<ComputeEnv>, projectId: string): Promise<PipelineRecord> {
  const id = c.req.param('id') ?? ''
  const pipeline = UUID_RE.test(id) ? await c.get('deps').pipelines.get(projectId, id) : undefined
  if (!pipeline) throw notFound('pipeline')
  return pipeline
}

computeConsole.get('/p/:project/pipelines/:id', async (c) => {
  const s = await consoleProject(c, 'pipeline.read')
  const header = enter(c, s)
  const pipeline = await loadPipeline(c, s.project.id)
  const versions = await c.get('deps').pipelines.versions(s.project.id, pipeline.slug)
  const links = linksOf(c, s.project)
  return renderConsole(c, {
    title: `${pipeline.slug} ${pipeline.version}`,
    section: 'runs',
    session: s,
    project: header,
    crumbs: [
      { href: links.runs(), text: 'Runs' },
      { href: links.pipelines(), text: 'Pipelines' },
    ],
    body: pipelinePage({ pipeline, versions, links, canLaunch: canInProject(s.principal, s.project, 'run.submit') }),
  })
})

function renderLaunch(
  c: Context<ComputeEnv>,
  s: ConsoleProject,
  pipeline: PipelineRecord,
  state: LaunchState & { key: string },
  status: 200 | 400 | 403 | 404 | 409 | 412 = 200,
) {
  const links = linksOf(c, s.project)
  // The key rides with the form: sending it twice (a double click, a reload of the answer) makes one run, as on the API.
  const hidden = html`${csrfField(s)}<input type="hidden" name="idempotency_key" value="${state.key}" />`
  return renderConsole(
    c,
    {
      title: `Launch ${pipeline.slug} ${pipeline.version}`,
      section: 'runs',
      session: s,
      project: { project: s.project, org: s.org },
      crumbs: [
        { href: links.runs(), text: 'Runs' },
        { href: links.pipelines(), text: 'Pipelines' },
        { href: links.pipeline(pipeline.id), text: `${pipeline.slug} ${pipeline.version}` },
      ],
      body: launchForm({ pipeline, links, state, hidden }),
    },
    status,
  )
}

computeConsole.get('/p/:project/pipelines/:id/launch', async (c) => {
  const s = await consoleProject(c, 'run.submit')
  enter(c, s)
  const pipeline = await loadPipeline(c, s.project.id)
  return renderLaunch(c, s, pipeline, { values: formValuesOf(pipeline), problems: new Map(), key: randomUUID() })
})

/** The run's own fields (not params), posted under their SubmitRun names. */
const RUN_FIELDS = ['order_id', 'tags', 'profile'] as const

computeConsole.post('/p/:project/pipelines/:id/launch', async (c) => {
  const s = await consoleProject(c, 'run.submit')
  enter(c, s)
  const pipeline = await loadPipeline(c, s.project.id)
  const { form } = s
  const values: Record<string, string> = {}
  for (const name of [...pipeline.inputs.map((i) => paramField(i.name)), EXTRA_FIELD, ...RUN_FIELDS]) {
    const v = form.get(name)
    if (v) values[name] = v
  }
  const posted = form.get('idempotency_key')
  const key = KEY_RE.test(posted) ? posted : randomUUID()
  const again = (problems: Map<string, string>, status: 400 | 403 | 404 | 409 | 412, summary?: string) =>
    renderLaunch(c, s, pipeline, { values, problems, key, ...(summary ? { summary } : {}) }, status)

  const { params, problems } = paramsFromForm(pipeline, values)
  if (problems.length) return again(new Map(problems.map((p) => [p.param, p.problem])), 400)
  const parsed = checkForm(SubmitRun, {
    pipeline_id: pipeline.id,
    params,
    tags: tagsFromForm(values.tags),
    ...withoutBlanks({ order_id: values.order_id, profile: values.profile }),
  })
  if (!parsed.ok) {
    // The run's own fields have theirs; a problem of the params as a whole (their size) is the form's.
    const { params: whole, ...fields } = parsed.errors
    return again(new Map(Object.entries(fields)), 400, whole)
  }
  try {
    const { run, replayed } = await submitRun(c, parsed.data, key)
    const notice = replayed ? `This form was already sent: run ${run.name} is the run it made.` : `Run ${run.name} submitted.`
    return redirectWithNotice(c, linksOf(c, s.project).run(run.id), notice)
  } catch (error) {
    if (error instanceof ParamsInvalid) {
      const declared = new Set(pipeline.inputs.map((i) => i.name))
      // An undeclared param's problem belongs to the field they were typed in.
      const fields = new Map(error.problems.map((p) => [declared.has(p.param) ? paramField(p.param) : EXTRA_FIELD, p.problem]))
      return again(fields, 400)
    }
    // The other refusals (no project credentials, an order that is absent or not signed) are about the whole run.
    const refused = await formRefusal(c, error)
    return again(new Map(), refused.status, refused.detail)
  }
})
