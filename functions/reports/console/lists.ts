import type { Context } from 'hono'
import {
  badge,
  csrfField,
  field,
  html,
  pager,
  redirectToDefaultProject,
  redirectWithNotice,
  renderConsole,
  time,
  type Raw,
  type Tone,
} from '../../../lib/console/index.js'
import { auditContext } from '../../../lib/http.js'
import { TEMPLATE_TYPES, type ReportRecord } from '../../../domain/reports/model.js'
import { REPORT_STATUSES, type ReportStatus } from '../../../domain/reports/status.js'
import { REPORT_TEMPLATES } from '../../../domain/reports/template.js'
import type { ReportsEnv } from '../deps.js'
import { CreateReport } from '../schemas.js'
import { callerOf, errorPage, linksOf, parseForm, problemOf, reportsConsole, type Caller, type Problem } from './app.js'
import { variantForm } from './variants.js'

/** The project's reports (filtered by status), and an order's reports with the form of a new draft. */

const PAGE_SIZE = 50
const words = (s: string) => s.replaceAll('_', ' ')
export const STATUS_TONE: Record<ReportStatus, Tone> = {
  draft: 'neutral',
  in_review: 'pending',
  signed: 'ok',
  superseded: 'info',
  cancelled: 'warn',
  entered_in_error: 'warn',
}
export const statusBadge = (s: ReportStatus) => badge(words(s), STATUS_TONE[s])
export const TEMPLATE_OPTIONS = TEMPLATE_TYPES.map((t) => ({ value: t, label: REPORT_TEMPLATES[t].title }))

function reportsTable(caller: Caller, c: Context<ReportsEnv>, items: ReportRecord[], caption: string): Raw {
  const links = linksOf(c, caller)
  return html`<div class="table-wrap">
    <table id="reports">
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">Report</th>
          <th scope="col">Order</th>
          <th scope="col">Status</th>
          <th scope="col">Template</th>
          <th scope="col">Variants</th>
          <th scope="col">Open review comments</th>
          <th scope="col">Updated</th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (r) =>
            html`<tr>
              <td><a href="${links.report(r.id)}">Revision ${r.revision}</a></td>
              <td><a href="${links.orderReports(r.order_id)}">${r.order_accession}</a></td>
              <td>${statusBadge(r.status)}</td>
              <td>${words(r.template_type)}</td>
              <td>${r.variant_count}${r.unclassified_count ? html` <span class="muted">(${r.unclassified_count} unclassified)</span>` : ''}</td>
              <td>${r.open_review_comments}</td>
              <td>${time(r.updated)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`
}

reportsConsole.get('/', (c) => redirectToDefaultProject(c, 'reports'))

reportsConsole.get('/p/:project/reports', async (c) => {
  const caller = await callerOf(c, 'report.read')
  const statusParam = c.req.query('status')
  const status = REPORT_STATUSES.find((s) => s === statusParam)
  const pageToken = c.req.query('page_token')
  const page = await c
    .get('deps')
    .reports.list(caller.project.id, status ? { status } : {}, { page_size: PAGE_SIZE, ...(pageToken ? { page_token: pageToken } : {}) })
  const body = html`<h1>Reports</h1>
    <form method="get" action="" class="filters" aria-label="Filter the reports">
      ${field({
        name: 'status',
        label: 'Status',
        value: status ?? '',
        options: [{ value: '', label: 'any' }, ...REPORT_STATUSES.map((s) => ({ value: s, label: words(s) }))],
      })}
      <p class="actions"><button type="submit">Filter</button></p>
    </form>
    ${
      page.items.length
        ? reportsTable(caller, c, page.items, `The project's reports${status ? `, ${words(status)}` : ''}, newest first`)
        : html`<p id="empty">No report${status ? ` is ${words(status)}` : ' yet'}. Reports are drafted from an order's page.</p>`
    }
    ${pager(c, page.nextPageToken)}`
  return renderConsole(c, { ...caller.view, title: 'Reports', body })
})

/** The order's reports; with `?variant=<id>` (from the variants page's "Add to report"), the forms that add that variant to one of its drafts. */
async function orderReportsPage(c: Context<ReportsEnv>, caller: Caller, form?: { error: Problem; values: Record<string, string> }) {
  const deps = c.get('deps')
  const ref = c.req.param('order') ?? ''
  const order = ref.length <= 128 ? await deps.reports.resolveOrder(caller.project.id, ref) : undefined
  if (!order)
    return renderConsole(
      c,
      {
        ...caller.view,
        title: 'Not found',
        body: html`<h1>Not found</h1>
          <p class="notice warn" role="alert" id="error">There is no such order in this project.</p>`,
      },
      404,
    )
  const links = linksOf(c, caller)
  const page = await deps.reports.list(caller.project.id, { order_id: order.id }, { page_size: PAGE_SIZE })
  const variantId = c.req.query('variant')
  const variant = variantId ? await deps.variants.getVariant(caller.project.id, order.id, variantId) : undefined
  const drafts = page.items.filter((r) => r.status === 'draft')
  const canDraft = caller.can('report.draft')
  const title = `Reports of order ${order.accession}`
  const adding =
    variantId && canDraft
      ? variant
        ? html`<section aria-labelledby="add-title" id="add-variant">
            <h2 id="add-title">
              Add ${variant.genes.join(', ') || 'the variant'} ${variant.hgvs_c ?? `${variant.chrom}:${variant.pos} ${variant.ref}>${variant.alt}`} to
              a draft
            </h2>
            ${
              drafts.length
                ? drafts.map(
                    (r) =>
                      html`<h3>Revision ${r.revision}, ${words(r.template_type)}</h3>
                        ${variantForm({ session: caller, action: `${links.report(r.id)}/variants`, variantId: variant.id, submit: 'Add to this report' })}`,
                  )
                : html`<p>This order has no draft report: create one below, then add the variant from its page or from the variants again.</p>`
            }
          </section>`
        : html`<p class="notice warn" role="alert" id="no-variant">
            The variant <code>${variantId}</code> is not in this order's current variant cache.
          </p>`
      : ''
  const error = form?.error
  const body = html`<h1>${title}</h1>
    <p>
      ${links.order(order.id) ? html`<a href="${links.order(order.id)}">The order</a> · ` : ''}
      ${links.variants(order.id) ? html`<a href="${links.variants(order.id)}">Its variants</a> · ` : ''}
      ${links.history('order', order.id) ? html`<a href="${links.history('order', order.id)}">Its history</a>` : ''}
    </p>
    ${adding}
    ${page.items.length ? reportsTable(caller, c, page.items, `Reports of order ${order.accession}, newest first`) : html`<p id="empty">This order has no report yet.</p>`}
    ${
      canDraft
        ? html`<section aria-labelledby="new-title">
            <h2 id="new-title">New draft report</h2>
            <form method="post" action="${links.orderReports(order.id)}" class="stack" id="new-report">
              ${csrfField(caller)} ${error && !error.errors.summary ? html`<p class="notice warn" role="alert" id="error">${error.detail}</p>` : ''}
              ${field({ name: 'template_type', label: 'Template', value: form?.values.template_type ?? 'germline_diagnostic', options: TEMPLATE_OPTIONS })}
              ${field({
                name: 'summary',
                label: 'Summary',
                value: form?.values.summary,
                hint: 'One line: the test and the indication',
                error: error?.errors.summary,
              })}
              <p class="actions"><button type="submit" id="create-report">Create the draft</button></p>
            </form>
          </section>`
        : ''
    }`
  return renderConsole(c, { ...caller.view, title, body }, (error?.status ?? 200) as 200 | 400 | 403 | 404 | 409)
}

reportsConsole.get('/p/:project/orders/:order/reports', async (c) => orderReportsPage(c, await callerOf(c, 'report.read')))

reportsConsole.post('/p/:project/orders/:order/reports', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const values = { template_type: caller.form.get('template_type'), summary: caller.form.get('summary') }
  try {
    const fields = parseForm(CreateReport, {
      order_id: c.req.param('order'),
      template_type: values.template_type || undefined,
      ...(values.summary ? { summary: values.summary } : {}),
    })
    const { order_id, ...rest } = fields
    const report = await c.get('deps').reports.create(auditContext(c), caller.scope, order_id, rest, caller.user)
    return redirectWithNotice(c, linksOf(c, caller).report(report.id), `Draft report of order ${report.order_accession} created.`)
  } catch (error) {
    const problem = await problemOf(c, error)
    if (problem.status === 404) return errorPage(c, caller, problem)
    return orderReportsPage(c, caller, { error: problem, values })
  }
})
