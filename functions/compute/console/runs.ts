import { randomUUID } from 'node:crypto'
import type { Context } from 'hono'
import { canInProject } from '../../../lib/auth/access.js'
import {
  consoleProject,
  confirmView,
  ownConsoleUrl,
  pager,
  redirectToDefaultProject,
  redirectWithNotice,
  renderConsole,
  stopWithPage,
} from '../../../lib/console/index.js'
import { missingPermission, Refused } from '../../../lib/decision.js'
import { badRequest, notFound } from '../../../lib/errors.js'
import { auditContext } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { DEFAULT_PAGE_SIZE } from '../../../lib/pagination.js'
import { ProjectFiles } from '../../../domain/files/files.js'
import { objectPath } from '../../../domain/files/paths.js'
import { signedAddress, validity } from '../../../domain/files/signed.js'
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../../domain/runs/status.js'
import { outputLocation, type RunRecord } from '../../../domain/runs/store.js'
import { cancelRun, relaunchRun, runOutputs } from '../actions.js'
import type { ComputeEnv } from '../deps.js'
import { computeConsole, enter, KEY_RE, linksOf } from './app.js'
import { readRunLog } from '../logs.js'
import { cancelQuestion, RUN_PAGE_LOG_LINES, runLogPage, runPage, runsList, type LogLine } from './views.js'

/**
 * Runs: the project's list (filters, pages, refreshed while a listed run is active), a run's page
 * (its outputs with download links through signed addresses), and cancelling one. Each reads and
 * writes through the same stores and shared actions as the API, with the same permissions.
 */

/** How often a page showing an active run reloads itself (console.js). */
const REFRESH_SECONDS = 10

computeConsole.get('/', (c) => redirectToDefaultProject(c, 'runs'))

computeConsole.get('/p/:project', (c) => c.redirect(ownConsoleUrl(c, `/p/${encodeURIComponent(c.req.param('project'))}/runs`), 302))

computeConsole.get('/p/:project/runs', async (c) => {
  const s = await consoleProject(c, 'run.read')
  const header = enter(c, s)
  const deps = c.get('deps')
  const status = c.req.query('status') || undefined
  if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) throw badRequest(`status: one of ${RUN_STATUSES.join(', ')}`)
  const orderText = c.req.query('order')?.trim() || undefined
  // The API's filter: an order by id or accession; a string that is neither matches runs that stored it as given.
  const order = orderText ? await deps.orders.resolve(s.project.id, orderText) : undefined
  const filter = { status: status as RunStatus | undefined, order: orderText }
  const page = await deps.runs.list(
    s.project.id,
    { order_id: order?.id ?? orderText, status: filter.status },
    { page_size: DEFAULT_PAGE_SIZE, page_token: c.req.query('page_token') || undefined },
  )
  const links = linksOf(c, s.project)
  return renderConsole(c, {
    title: 'Runs',
    section: 'runs',
    session: s,
    project: header,
    refresh: page.items.some((r) => !TERMINAL.has(r.status)) ? REFRESH_SECONDS : undefined,
    body: runsList({
      runs: page.items,
      filter,
      links,
      pager: pager(c, page.nextPageToken),
      canLaunch: canInProject(s.principal, s.project, 'run.submit'),
    }),
  })
})

async function loadRun(c: Context<ComputeEnv>, projectId: string, id: string): Promise<RunRecord> {
  const run = UUID_RE.test(id) ? await c.get('deps').runs.get(projectId, id) : undefined
  if (!run) throw notFound('run')
  return run
}

computeConsole.get('/p/:project/runs/:id', async (c) => {
  const s = await consoleProject(c, 'run.read')
  const header = enter(c, s)
  const run = await loadRun(c, s.project.id, c.req.param('id'))
  const links = linksOf(c, s.project, s.principal)
  const canReadFiles = canInProject(s.principal, s.project, 'file.read')
  const logTail = await lastLines(c, run)
  const listed =
    canReadFiles && TERMINAL.has(run.status)
      ? await runOutputs(c.get('deps'), run, { pageSize: DEFAULT_PAGE_SIZE, pageToken: c.req.query('page_token') || undefined })
      : undefined
  return renderConsole(c, {
    title: `Run ${run.name}`,
    section: 'runs',
    session: s,
    project: header,
    crumbs: [{ href: links.runs(), text: 'Runs' }],
    refresh: TERMINAL.has(run.status) ? undefined : REFRESH_SECONDS,
    body: runPage({
      run,
      links,
      logTail,
      session: s,
      canCancel: canInProject(s.principal, s.project, 'run.cancel'),
      relaunchKey: canInProject(s.principal, s.project, 'run.submit') ? randomUUID() : undefined,
      canReadFiles,
      outputs: listed && { items: listed.items, pager: pager(c, listed.nextPageToken) },
    }),
  })
})

/** The end of the run's log for its page; a log that cannot be read now (Cloud Logging down) leaves the page without it. */
async function lastLines(c: Context<ComputeEnv>, run: RunRecord): Promise<LogLine[]> {
  if (!run.job) return []
  const deps = c.get('deps')
  try {
    const lines = await deps.logs.tail(
      { name: run.job.name, uid: run.job.uid, created: run.job.created_at.toDate() },
      RUN_PAGE_LOG_LINES,
      undefined,
      deps.log,
    )
    return lines.map((l) => ({ time: l.time.toISOString(), task: l.task, stream: l.stream, text: l.text }))
  } catch (error) {
    deps.log.warn("could not read the end of a run's log for its page", { run_id: run.id, error })
    return []
  }
}

/** The run's whole log, LOG_PAGE_LINES lines a page, as GET /runs/{id}/logs pages it; reloaded while the run goes on. */
const LOG_PAGE_LINES = 1000
computeConsole.get('/p/:project/runs/:id/log', async (c) => {
  const s = await consoleProject(c, 'run.read')
  const header = enter(c, s)
  const run = await loadRun(c, s.project.id, c.req.param('id'))
  const links = linksOf(c, s.project, s.principal)
  const asked = c.req.query('stream')
  if (asked !== undefined && asked !== 'stdout' && asked !== 'stderr') throw badRequest('stream: stdout or stderr')
  const page = await readRunLog(c.get('deps'), run, { stream: asked, page_size: LOG_PAGE_LINES, page_token: c.req.query('page_token') || undefined })
  return renderConsole(c, {
    title: `Log of run ${run.name}`,
    section: 'runs',
    session: s,
    project: header,
    crumbs: [
      { href: links.runs(), text: 'Runs' },
      { href: links.run(run.id), text: run.name },
    ],
    refresh: page.nextPageToken ? REFRESH_SECONDS : undefined,
    body: runLogPage({ run, links, lines: page.lines, stream: asked, pager: pager(c, page.nextPageToken), complete: !page.nextPageToken }),
  })
})

/**
 * Cancelling: the run page's form asks first (console.js's dialog, which sends `confirmed=yes`);
 * without JavaScript, this answers with the confirmation page, whose form posts here again
 * confirmed. Then the API's cancel: its rules (409 for a finished run), its audit event, its job deletion.
 */
computeConsole.post('/p/:project/runs/:id/cancel', async (c) => {
  const s = await consoleProject(c, 'run.cancel')
  const header = enter(c, s)
  const links = linksOf(c, s.project)
  const run = await loadRun(c, s.project.id, c.req.param('id'))
  if (!s.form.confirmed) {
    return renderConsole(c, {
      section: 'runs',
      session: s,
      project: header,
      crumbs: [
        { href: links.runs(), text: 'Runs' },
        { href: links.run(run.id), text: run.name },
      ],
      ...confirmView({
        session: s,
        title: `Cancel run ${run.name}?`,
        question: cancelQuestion(run),
        action: links.cancel(run.id),
        submit: 'Cancel the run',
        cancel: links.run(run.id),
      }),
    })
  }
  const cancelled = await cancelRun(c, run.id)
  const notice = run.status === 'cancelled' ? `Run ${run.name} was already cancelled.` : `Run ${run.name} cancelled.`
  return redirectWithNotice(c, links.run(cancelled.id), notice)
})

/**
 * Relaunching (the Relaunch button) or resuming (Resume): the API's relaunch with the run's own
 * settings, its rules (a resume waits for the run's end: 409), its audit events and its idempotency,
 * keyed by the page's form so that a form sent twice makes one run.
 */
computeConsole.post('/p/:project/runs/:id/relaunch', async (c) => {
  const s = await consoleProject(c, 'run.submit')
  enter(c, s)
  const run = await loadRun(c, s.project.id, c.req.param('id'))
  const posted = s.form.get('idempotency_key')
  const resume = s.form.get('resume') === 'yes'
  const { run: next, replayed } = await relaunchRun(c, run.id, { resume }, KEY_RE.test(posted) ? posted : randomUUID())
  const notice = replayed
    ? `This form was already sent: run ${next.name} is the run it made.`
    : `Run ${next.name} ${resume ? 'resumes' : 'relaunches'} run ${run.name}.`
  return redirectWithNotice(c, linksOf(c, s.project).run(next.id), notice)
})

/**
 * A run output's download: a V4 address signed as the project's service account, valid 900 s,
 * as the file service's GET /files/download-url makes it and with its audit event; the browser is
 * sent on to it. Only files under the run's own output location, of a run that has ended.
 */
computeConsole.get('/p/:project/runs/:id/download', async (c) => {
  const s = await consoleProject(c, 'run.read')
  enter(c, s)
  const { project } = s
  if (!canInProject(s.principal, project, 'file.read')) {
    throw new Refused(missingPermission('file.read'), {
      scope: { project_id: project.id, org_id: project.org_id },
      entity: { type: 'project', id: project.id },
    })
  }
  const deps = c.get('deps')
  const run = await loadRun(c, project.id, c.req.param('id'))
  if (!TERMINAL.has(run.status)) return stopWithPage(c, 409, `Run ${run.name} has not ended: its outputs are downloadable once it has.`)
  const path = objectPath('path', c.req.query('path') ?? '', project.bucket_name)
  const prefix = outputLocation(project.bucket_name, run.id).slice(`gs://${project.bucket_name}/`.length)
  if (!path.startsWith(prefix) || !(await deps.storage.stat(project.bucket_name, path))) throw notFound(`output ${path} of run ${run.name}`)
  if (!project.credentials) {
    throw badRequest(
      `project '${project.slug}' has no cloud credentials configured; a project admin must set its service account (admin service: project credentials) before its files can be reached`,
    )
  }
  const valid = validity(deps.clock.now())
  const signed = await signedAddress(
    deps.projectStorage,
    { account: project.credentials.service_account_email, bucket: project.bucket_name, method: 'GET', path },
    valid,
  )
  await new ProjectFiles(deps.storage, deps.audit, deps.db, project).recordDownloadAddress(auditContext(c), path, valid.expiresAt)
  return c.redirect(signed.url, 303)
})
