import type { Context, Hono } from 'hono'
import {
  badge,
  checkForm,
  confirmView,
  csrfField,
  field,
  html,
  pager,
  redirectWithNotice,
  renderConsole,
  time,
  type ConsoleProject,
  type Raw,
  type Tone,
} from '../../../lib/console/index.js'
import { auditContext, type AppEnv } from '../../../lib/http.js'
import type { UserRecord } from '../../../lib/auth/access.js'
import { availableLabflowTransitions, type LabflowVersion } from '../../../domain/clinical/labflows.js'
import { OUTCOMES, PRIORITIES, SAMPLE_ROLES, type OrderRecord, type SampleRecord } from '../../../domain/clinical/model.js'
import { edgeBetween, LAB_ACTIVE, ORDER_STATUSES, type OrderStatus } from '../../../domain/clinical/order-status.js'
import { samplesheetCsv } from '../../../domain/clinical/samplesheet.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import { CreateOrder, OrderListQuery, RoleSchema, TransitionBody, UpdateOrder } from '../schemas.js'
import { canFor, checkAssignee, projectOf, toOrder } from '../views.js'
import {
  formPage,
  clinicalPage,
  projectBase,
  formAlert,
  frozenField,
  listQuery,
  optionsOf,
  refusedForm,
  textArea,
  type FieldErrors,
  type FormStatus,
} from './forms.js'
import { orderLinks } from './links.js'

/**
 * The orders pages: the list by status, priority and assignee; create; an order with its samples
 * and roles, the status moves this caller may take (the order-status table, as the API's
 * `available_transitions`), the labflow stage and its moves, the samplesheet, and links to its runs,
 * variants, reports and history. Every change goes through the OrderStore as the API's routes do.
 */

const FIELDS = [
  'test_code',
  'priority',
  'indication',
  'requester_name',
  'requester_organization',
  'due_date',
  'notes',
  'assignee',
  'outcome',
] as const
type OrderValues = Partial<Record<(typeof FIELDS)[number], string>>
/** Fields that may change once an order is signed (decide-order.ts); the others are shown as frozen from signing on. */
const MUTABLE_AFTER_SIGNING: ReadonlySet<string> = new Set(['assignee', 'due_date', 'outcome'])
const SAMPLE_CHOICES = 200
const ORDER_RUNS = 20
/** Moves that end or void the order: asked again before they are taken. */
const CONFIRMED: ReadonlySet<OrderStatus> = new Set(['cancelled', 'entered_in_error'])

const base = projectBase
const view = (page: ConsoleProject) => ({ session: page, project: { project: page.project, org: page.org }, section: 'orders' as const })
const words = (s: string) => s.replaceAll('_', ' ')

const STATUS_TONE: Record<OrderStatus, Tone> = {
  draft: 'neutral',
  signed: 'info',
  in_progress: 'pending',
  in_review: 'pending',
  on_hold: 'warn',
  completed: 'ok',
  cancelled: 'neutral',
  entered_in_error: 'warn',
}
export const statusBadge = (status: OrderStatus) => badge(words(status), STATUS_TONE[status])

/** What the buttons of the moves say. */
const MOVE_LABEL: Record<OrderStatus, string> = {
  draft: 'Back to draft',
  signed: 'Sign the order',
  in_progress: 'Start: in progress',
  in_review: 'Send to review',
  on_hold: 'Put on hold',
  completed: 'Complete',
  cancelled: 'Cancel the order',
  entered_in_error: 'Enter in error',
}

async function loadOrder(c: Context<ClinicalEnv>, page: ConsoleProject, ref: string): Promise<OrderRecord | undefined> {
  return c.get('deps').orders.resolve(page.project.id, ref)
}

const notFound = (c: Context<ClinicalEnv>, page: ConsoleProject) =>
  renderConsole(
    c,
    {
      ...view(page),
      title: 'Not found',
      body: html`<h1>Not found</h1>
        <p class="notice warn" role="alert" id="error">There is no such order in this project.</p>`,
    },
    404,
  )

/** How the console names a person in a choice or a table: their name, else their e-mail. */
const personName = (user: Pick<UserRecord, 'id' | 'name' | 'email'>) => user.name || user.email || user.id

function orderForm(
  page: ConsoleProject,
  opts: {
    action: string
    values: OrderValues
    errors: FieldErrors
    members: readonly UserRecord[]
    submit?: string
    signed?: { accession: string; outcome?: boolean }
  },
): Raw {
  const { values: v, errors: e } = opts
  const me = page.principal.user
  // Once signed only the assignee and due date change (and the outcome in review, by a reviewer): the rest is shown, not sent.
  const frozen = (name: string, label: string, control: Raw) =>
    opts.signed && !MUTABLE_AFTER_SIGNING.has(name)
      ? frozenField(label, v[name as keyof OrderValues] ?? '', `Frozen since order ${opts.signed.accession} was signed.`)
      : control
  return html`<form method="post" action="${opts.action}" class="stack" id="order-form" novalidate>
    ${csrfField(page)} ${formAlert(e)}
    ${frozen('test_code', 'Test code', field({ name: 'test_code', label: 'Test code', value: v.test_code, error: e.test_code, required: true, hint: 'What is ordered: a test or panel code, e.g. WGS-trio' }))}
    ${frozen('priority', 'Priority', field({ name: 'priority', label: 'Priority', value: v.priority ?? 'routine', error: e.priority, options: optionsOf(PRIORITIES) }))}
    ${frozen('indication', 'Indication', textArea({ name: 'indication', label: 'Indication', value: v.indication, error: e.indication, hint: 'The clinical question' }))}
    ${frozen('requester_name', 'Requesting clinician', field({ name: 'requester_name', label: 'Requesting clinician', value: v.requester_name, error: e.requester_name ?? e.requester }))}
    ${frozen('requester_organization', "Requester's organization", field({ name: 'requester_organization', label: "Requester's organization", value: v.requester_organization }))}
    ${field({ name: 'due_date', label: 'Due date', type: 'date', value: v.due_date, error: e.due_date, hint: 'Optional' })}
    ${field({
      name: 'assignee',
      label: 'Assignee',
      value: v.assignee ?? '',
      error: e.assignee,
      options: [
        { value: '', label: '— nobody yet —' },
        { value: me.id, label: `me (${personName(me)})` },
        ...opts.members.filter((m) => m.id !== me.id).map((m) => ({ value: m.id, label: personName(m) })),
        // An assignee who has since left the project stays shown as what the order holds.
        ...(v.assignee && v.assignee !== me.id && !opts.members.some((m) => m.id === v.assignee) ? [{ value: v.assignee, label: v.assignee }] : []),
      ],
    })}
    ${frozen('notes', 'Notes', textArea({ name: 'notes', label: 'Notes', value: v.notes, error: e.notes }))}
    ${opts.signed?.outcome ? field({ name: 'outcome', label: 'Outcome', value: v.outcome ?? 'pending', error: e.outcome, options: optionsOf(OUTCOMES) }) : ''}
    <div class="actions"><button type="submit" id="save-order">${opts.submit ?? 'Create draft order'}</button></div>
  </form>`
}

function orderBody(page: ConsoleProject): Record<string, unknown> {
  const get = (name: string) => page.form.get(name) || undefined
  const requester = get('requester_name')
    ? { name: get('requester_name'), ...(get('requester_organization') ? { organization: get('requester_organization') } : {}) }
    : undefined
  return {
    test_code: get('test_code'),
    priority: get('priority'),
    indication: get('indication'),
    requester,
    due_date: get('due_date'),
    notes: get('notes'),
    assignee: get('assignee'),
  }
}

export function orderPages(app: Hono<AppEnv<ClinicalDeps>>) {
  app.get('/p/:project/orders', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const b = base(c, page)
    const me = page.principal.user.id
    const assigneeQuery = c.req.query('assignee')
    // "me" is the console's own value of the assignee filter: the signed-in person.
    const {
      status,
      priority,
      assignee: other,
    } = listQuery(c, OrderListQuery, ['status', 'priority', ...(assigneeQuery === 'me' ? [] : ['assignee'])])
    const assignee = assigneeQuery === 'me' ? me : other
    const [result, members] = await Promise.all([
      c.get('deps').orders.list(page.project.id, { status, priority, assignee }, { page_token: c.req.query('page_token'), page_size: 50 }),
      c.get('deps').access.assignableMembers(page.project),
    ])
    const nameOf = new Map(members.map((m) => [m.id, personName(m)]))
    const rows = result.items.map(
      (o) =>
        html`<tr>
          <td><a href="${b}/orders/${o.id}">${o.accession}</a></td>
          <td>${statusBadge(o.status)}</td>
          <td>${words(o.priority)}</td>
          <td>${o.test_code}</td>
          <td>${o.samples.length}</td>
          <td>${o.assignee === me ? 'me' : o.assignee ? (nameOf.get(o.assignee) ?? html`<code>${o.assignee}</code>`) : '—'}</td>
          <td>${o.due_date ?? '—'}</td>
        </tr>`,
    )
    const body = html`<h1>Orders</h1>
      <p><a class="button" href="${b}/orders/new" id="new-order">New order</a></p>
      <form method="get" action="${b}/orders" class="stack" role="search" aria-label="Filter the orders">
        ${field({ name: 'status', label: 'Status', value: status ?? '', options: optionsOf(ORDER_STATUSES, 'any') })}
        ${field({ name: 'priority', label: 'Priority', value: priority ?? '', options: optionsOf(PRIORITIES, 'any') })}
        ${field({
          name: 'assignee',
          label: 'Assignee',
          value: assigneeQuery ?? '',
          options: [
            { value: '', label: 'anyone' },
            { value: 'me', label: 'assigned to me' },
            ...members.filter((m) => m.id !== me).map((m) => ({ value: m.id, label: personName(m) })),
          ],
        })}
        <div class="actions"><button type="submit" class="secondary" id="filter-orders">Filter</button></div>
      </form>
      <div class="table-wrap">
        <table id="orders">
          <caption>
            Orders, newest
            first${status ? `, ${words(status)}` : ''}${priority ? `, ${priority}` : ''}${assignee ? `, assigned to ${assignee === me ? 'me' : (nameOf.get(assignee) ?? assignee)}` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Accession</th>
              <th scope="col">Status</th>
              <th scope="col">Priority</th>
              <th scope="col">Test</th>
              <th scope="col">Samples</th>
              <th scope="col">Assignee</th>
              <th scope="col">Due</th>
            </tr>
          </thead>
          <tbody>
            ${
              rows.length
                ? rows
                : html`<tr>
                    <td colspan="7">No orders.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${pager(c, result.nextPageToken)}`
    return renderConsole(c, { ...view(page), title: 'Orders', body })
  })

  app.get('/p/:project/orders/new', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const members = await c.get('deps').access.assignableMembers(page.project)
    return formPage(
      c,
      { ...view(page), crumbs: [{ href: `${b}/orders`, text: 'Orders' }] },
      'New order',
      orderForm(page, { action: `${b}/orders`, values: {}, errors: {}, members }),
    )
  })

  app.post('/p/:project/orders', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const values = Object.fromEntries(FIELDS.map((f) => [f, page.form.get(f)])) as OrderValues
    const members = await c.get('deps').access.assignableMembers(page.project)
    const again = (errors: FieldErrors, status: FormStatus) =>
      formPage(
        c,
        { ...view(page), crumbs: [{ href: `${b}/orders`, text: 'Orders' }] },
        'New order',
        orderForm(page, { action: `${b}/orders`, values, errors, members }),
        status,
      )
    const parsed = checkForm(CreateOrder, orderBody(page))
    if (!parsed.ok) return again(parsed.errors, 400)
    try {
      await checkAssignee(c, parsed.data.assignee)
      const order = await c.get('deps').orders.create(auditContext(c), projectOf(c), parsed.data, page.principal.user.id)
      return redirectWithNotice(
        c,
        `${b}/orders/${order.id}`,
        `Draft order ${order.accession} created: add its samples with their roles, then sign it.`,
      )
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [...FIELDS, 'requester'])
      return again(errors, status)
    }
  })

  app.get('/p/:project/orders/:id', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    return orderPage(c, page, order)
  })

  app.get('/p/:project/orders/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    return editPage(c, page, order, { values: valuesOf(order), errors: {} })
  })

  app.post('/p/:project/orders/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    // The fields the form sent (a frozen one is shown, not sent; if it is sent anyway, the decision refuses a change to it).
    const sent = FIELDS.filter((f) => page.form.all(f).length > 0)
    const values = { ...valuesOf(order), ...Object.fromEntries(sent.map((f) => [f, page.form.get(f)])) } as OrderValues
    const get = (name: string) => (sent.includes(name as (typeof FIELDS)[number]) ? page.form.get(name) || null : undefined)
    const name = get('requester_name')
    const organization = get('requester_organization')
    const body = {
      test_code: get('test_code') ?? undefined,
      priority: get('priority') ?? undefined,
      indication: get('indication'),
      requester: name === undefined ? undefined : name === null ? null : { name, ...(organization ? { organization } : {}) },
      due_date: get('due_date'),
      notes: get('notes'),
      assignee: get('assignee'),
      outcome: get('outcome') ?? undefined,
    }
    const parsed = checkForm(UpdateOrder, body)
    if (!parsed.ok) return editPage(c, page, order, { values, errors: parsed.errors, status: 400 })
    try {
      await checkAssignee(c, parsed.data.assignee)
      const updated = await c.get('deps').orders.update(auditContext(c), projectOf(c), order.id, parsed.data, canFor(c))
      return redirectWithNotice(c, `${base(c, page)}/orders/${updated.id}`, `Order ${updated.accession} saved.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [...FIELDS, 'requester'])
      return editPage(c, page, order, { values, errors, status })
    }
  })

  app.get('/p/:project/orders/:id/samplesheet.csv', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    // The API's own code (GET /orders/{id}/samplesheet): a 409 for a sample without FASTQ is the console's error page.
    const csv = samplesheetCsv(await c.get('deps').orders.samplesheet(order))
    return c.body(csv, 200, { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${order.accession}.csv"` })
  })

  app.post('/p/:project/orders/:id/samples', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    const sampleId = page.form.get('sample_id')
    const role = RoleSchema.safeParse(page.form.get('role'))
    if (!sampleId || !role.success) return orderPage(c, page, order, { errors: { sample: 'Choose a sample and its role.' }, status: 400 })
    try {
      const result = await c.get('deps').orders.addSample(auditContext(c), projectOf(c), order.id, sampleId, role.data, page.principal.user.id)
      return redirectWithNotice(
        c,
        `${base(c, page)}/orders/${order.id}`,
        `Sample ${result.sample.external_id} ${result.added ? 'added as' : 'now has the role'} ${role.data}.`,
      )
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [])
      return orderPage(c, page, order, { errors: { sample: errors._ ?? '' }, status })
    }
  })

  app.post('/p/:project/orders/:id/samples/:sample/remove', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    try {
      await c.get('deps').orders.removeSample(auditContext(c), projectOf(c), order.id, c.req.param('sample'))
      return redirectWithNotice(c, `${base(c, page)}/orders/${order.id}`, 'Sample removed from the order.')
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [])
      return orderPage(c, page, order, { errors: { sample: errors._ ?? '' }, status })
    }
  })

  app.post('/p/:project/orders/:id/transition', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    const parsed = checkForm(TransitionBody, { to: page.form.get('to'), reason: page.form.get('reason') || undefined })
    if (!parsed.ok)
      return orderPage(c, page, order, {
        errors: {
          transition: Object.entries(parsed.errors)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; '),
        },
        status: 400,
      })
    const { to, reason } = parsed.data
    if (CONFIRMED.has(to) && !page.form.confirmed) {
      const confirm = confirmView({
        session: page,
        title: `${MOVE_LABEL[to]}: ${order.accession}`,
        question: `Move order ${order.accession} from ${words(order.status)} to ${words(to)}${reason ? ` (reason: ${reason})` : ''}? This cannot be undone.`,
        action: `${b}/orders/${order.id}/transition`,
        fields: { to, ...(reason ? { reason } : {}) },
        submit: MOVE_LABEL[to],
        cancel: `${b}/orders/${order.id}`,
      })
      return renderConsole(c, { ...view(page), ...confirm })
    }
    try {
      const moved = await c.get('deps').orders.transition(auditContext(c), projectOf(c), order.id, { to, reason }, canFor(c), page.principal.user.id)
      return redirectWithNotice(c, `${b}/orders/${moved.id}`, `Order ${moved.accession} is now ${words(moved.status)}.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [])
      return orderPage(c, page, order, { errors: { transition: errors._ ?? '' }, status })
    }
  })

  app.post('/p/:project/orders/:id/labflow', async (c) => {
    const page = await clinicalPage(c, 'labflow.move')
    const order = await loadOrder(c, page, c.req.param('id'))
    if (!order) return notFound(c, page)
    const transition = page.form.get('transition')
    const reason = page.form.get('reason') || undefined
    if (!transition) return orderPage(c, page, order, { errors: { labflow: 'Choose a labflow move.' }, status: 400 })
    try {
      const moved = await c
        .get('deps')
        .orders.moveLabflow(auditContext(c), projectOf(c), order.id, { transition, reason }, canFor(c), page.principal.user.id)
      const stage = moved.labflow.stages.find((s) => s.key === moved.order.labflow_state?.stage)
      return redirectWithNotice(
        c,
        `${base(c, page)}/orders/${order.id}`,
        `Labflow: ${transition} taken; the order is at ${stage?.name ?? moved.order.labflow_state?.stage}.`,
      )
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, [])
      return orderPage(c, page, order, { errors: { labflow: errors._ ?? '' }, status })
    }
  })
}

/** The labflow version the order follows: the pinned one once signed, else the latest of its labflow (as GET /orders/{id}/labflow). */
async function labflowOf(c: Context<ClinicalEnv>, order: OrderRecord): Promise<LabflowVersion | undefined> {
  const { labflows } = c.get('deps')
  const state = order.labflow_state
  return state ? labflows.version(state.labflow_id, state.version) : labflows.get(order.project_id, order.labflow.id)
}

async function orderPage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  order: OrderRecord,
  again?: { errors: FieldErrors; status: FormStatus },
): Promise<Response> {
  const b = base(c, page)
  const deps = c.get('deps')
  const e = again?.errors ?? {}
  const runs = await deps.runs.listForOrder(order.project_id, order.id, ORDER_RUNS)
  const api = toOrder(c, order)
  const views = await deps.orders.samplesOf(order)
  const labflow = await labflowOf(c, order)
  const can = canFor(c)
  const draft = order.status === 'draft'
  const frozenMark = (name: string) => (!draft && !MUTABLE_AFTER_SIGNING.has(name) ? html` ${badge('frozen', 'info')}` : '')
  const me = page.principal.user.id

  const sampleRows = views.map(
    (v) =>
      html`<tr>
        <td><a href="${b}/samples/${v.sample.id}">${v.sample.external_id}</a></td>
        <td><strong>${v.entry.role}</strong></td>
        <td>${v.subject ? html`<a href="${b}/subjects/${v.subject.id}">${v.subject.external_id}</a>` : '—'}</td>
        <td>${v.subject?.sex ?? '—'}</td>
        <td>${v.subject?.affected_status ?? '—'}</td>
        <td>${v.sample.fastq.length}</td>
        <td>
          ${
            draft && can('clinical.write')
              ? html`<form method="post" action="${b}/orders/${order.id}/samples/${v.sample.id}/remove" class="inline">
                  ${csrfField(page)}<button type="submit" class="secondary" aria-label="Remove ${v.sample.external_id} from the order">Remove</button>
                </form>`
              : order.frozen
                ? badge('frozen', 'info')
                : ''
          }
        </td>
      </tr>`,
  )
  const choices: SampleRecord[] =
    draft && can('clinical.write') ? (await deps.samples.list(page.project.id, {}, { page_size: SAMPLE_CHOICES })).items : []
  const addForm =
    draft && can('clinical.write')
      ? html`<h3>Add a sample</h3>
          <form method="post" action="${b}/orders/${order.id}/samples" class="stack" id="add-order-sample">
            ${csrfField(page)}
            ${field({
              name: 'sample_id',
              label: 'Sample',
              options: [
                { value: '', label: '— choose a sample —' },
                ...choices.filter((s) => !order.sample_ids.includes(s.id)).map((s) => ({ value: s.id, label: s.external_id })),
              ],
              error: e.sample,
            })}
            ${field({ name: 'role', label: 'Role', value: 'proband', options: optionsOf(SAMPLE_ROLES) })}
            <div class="actions"><button type="submit" id="add-sample">Add to the order</button></div>
          </form>`
      : e.sample
        ? html`<p class="notice warn" role="alert">${e.sample}</p>`
        : ''

  const moves = api.available_transitions.map((to) => {
    const edge = edgeBetween(order.status, to)
    const needsReason = edge?.reasonRequired ?? false
    return html`<form
      method="post"
      action="${b}/orders/${order.id}/transition"
      class="stack move"
      ${CONFIRMED.has(to) ? html` data-confirm="${MOVE_LABEL[to]} ${order.accession}? This cannot be undone."` : ''}
    >
      ${csrfField(page)}<input type="hidden" name="to" value="${to}" />
      ${needsReason ? textArea({ name: 'reason', label: `Reason to ${words(to)}`, rows: 2, id: `reason-${to}` }) : ''}
      ${
        to === 'signed'
          ? html`<p class="hint" id="sign-means">
              Signing accepts the requisition for these ${order.samples.length} sample(s) with their roles: from then on the samples, their roles, the
              order's fields and the subjects' pedigree fields are frozen, and the labflow starts.
            </p>`
          : ''
      }
      <div class="actions"><button type="submit" id="move-${to}" class="${CONFIRMED.has(to) ? 'danger' : ''}">${MOVE_LABEL[to]}</button></div>
    </form>`
  })

  const state = order.labflow_state
  const stage = state && labflow ? labflow.stages.find((s) => s.key === state.stage) : undefined
  const labMoves = state && labflow && LAB_ACTIVE.has(order.status) ? availableLabflowTransitions(labflow, state, can) : []
  const labflowSection = html`<h2>Labflow</h2>
    ${
      state
        ? html`<p id="labflow-stage">
            ${labflow?.name ?? 'Labflow'} (version ${state.version}): stage <strong>${stage?.name ?? state.stage}</strong>
            ${badge(words(state.status), state.status === 'active' ? 'pending' : state.status === 'completed' ? 'ok' : 'warn')}
          </p>`
        : html`<p class="muted">${labflow?.name ?? 'The labflow'} starts at its first stage when the order is signed.</p>`
    }
    ${e.labflow ? html`<p class="notice warn" role="alert" id="labflow-error">${e.labflow}</p>` : ''}
    ${
      labMoves.length && can('labflow.move')
        ? html`<form method="post" action="${b}/orders/${order.id}/labflow" class="stack" id="labflow-move">
            ${csrfField(page)}
            ${field({ name: 'transition', label: 'Move', options: labMoves.map((t) => ({ value: t.id, label: `${words(t.kind)}: ${t.from} → ${t.to ?? 'removed'}${t.requires_reason ? ' (reason required)' : ''}` })) })}
            ${textArea({ name: 'reason', label: 'Reason', rows: 2, hint: 'Required for repeats, reworks and removals', id: 'labflow-reason' })}
            <div class="actions"><button type="submit" id="take-labflow-move">Take the move</button></div>
          </form>`
        : ''
    }
    ${
      state?.history.length
        ? html`<div class="table-wrap">
            <table>
              <caption>
                Labflow history
              </caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Move</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                ${state.history.map(
                  (h) =>
                    html`<tr>
                      <td>${time(h.at)}</td>
                      <td>${h.transition}</td>
                      <td>${h.from}</td>
                      <td>${h.to ?? 'removed'}</td>
                      <td>${h.reason ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : ''
    }`

  const links = orderLinks(c, page, order.id)
  const body = html`<h1>Order ${order.accession} ${statusBadge(order.status)}</h1>
    ${order.frozen ? html`<p class="notice info" id="frozen">Signed: its samples, their roles and the order's fields are frozen (only the assignee and due date change).</p>` : ''}
    <p class="actions">
      ${can('clinical.write') ? html`<a class="button" href="${b}/orders/${order.id}/edit" id="edit-order">Edit</a>` : ''}
      ${order.samples.length ? html`<a class="button secondary" href="${b}/orders/${order.id}/samplesheet.csv" id="samplesheet" download>Download the samplesheet (CSV)</a>` : ''}
      ${links}
    </p>
    <div class="table-wrap">
      <table class="fields">
        <caption class="visually-hidden">
          The order's record
        </caption>
        <tr>
          <th scope="row">Accession</th>
          <td><code id="accession">${order.accession}</code></td>
        </tr>
        <tr>
          <th scope="row">Status</th>
          <td>${statusBadge(order.status)}${order.held_from ? ` (held from ${words(order.held_from)})` : ''}</td>
        </tr>
        <tr>
          <th scope="row">Test code${frozenMark('test_code')}</th>
          <td>${order.test_code}</td>
        </tr>
        <tr>
          <th scope="row">Priority${frozenMark('priority')}</th>
          <td>${order.priority}</td>
        </tr>
        <tr>
          <th scope="row">Indication${frozenMark('indication')}</th>
          <td>${order.indication ?? '—'}</td>
        </tr>
        <tr>
          <th scope="row">Requester${frozenMark('requester')}</th>
          <td>${order.requester ? `${order.requester.name}${order.requester.organization ? `, ${order.requester.organization}` : ''}` : '—'}</td>
        </tr>
        <tr>
          <th scope="row">Assignee</th>
          <td>${order.assignee === me ? 'me' : (order.assignee ?? '—')}</td>
        </tr>
        <tr>
          <th scope="row">Due date</th>
          <td>${order.due_date ?? '—'}</td>
        </tr>
        <tr>
          <th scope="row">Outcome</th>
          <td>${order.outcome}</td>
        </tr>
        <tr>
          <th scope="row">Signed</th>
          <td>${order.signed ? html`by ${order.signed.by === me ? 'me' : order.signed.by} at ${time(order.signed.at)}` : 'not yet'}</td>
        </tr>
        <tr>
          <th scope="row">Notes${frozenMark('notes')}</th>
          <td>${order.notes ?? '—'}</td>
        </tr>
      </table>
    </div>

    <h2>Samples and roles</h2>
    <div class="table-wrap">
      <table id="order-samples">
        <caption>
          The order's samples, each with its role
        </caption>
        <thead>
          <tr>
            <th scope="col">Sample</th>
            <th scope="col">Role</th>
            <th scope="col">Subject</th>
            <th scope="col">Sex</th>
            <th scope="col">Affected</th>
            <th scope="col">FASTQ files</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          ${
            sampleRows.length
              ? sampleRows
              : html`<tr>
                  <td colspan="7">No samples yet: add them with their roles.</td>
                </tr>`
          }
        </tbody>
      </table>
    </div>
    ${addForm}

    <h2>Status</h2>
    ${e.transition ? html`<p class="notice warn" role="alert" id="transition-error">${e.transition}</p>` : ''}
    ${moves.length ? html`<div class="moves" id="moves">${moves}</div>` : html`<p class="muted" id="no-moves">No status move is open to you now.</p>`}
    ${
      order.status_history.length
        ? html`<div class="table-wrap">
            <table>
              <caption>
                Status history
              </caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                ${order.status_history.map(
                  (h) =>
                    html`<tr>
                      <td>${time(h.at)}</td>
                      <td>${words(h.from)}</td>
                      <td>${words(h.to)}</td>
                      <td>${h.reason ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : ''
    }
    ${labflowSection}
    <h2>Runs</h2>
    ${
      runs.length
        ? html`<ul id="order-run-list">
            ${runs.map((r) => html`<li>${r.name}: ${words(r.status)}</li>`)}
          </ul>`
        : html`<p class="muted">No runs yet.</p>`
    }`
  return renderConsole(
    c,
    { ...view(page), title: `Order ${order.accession}`, crumbs: [{ href: `${b}/orders`, text: 'Orders' }], body },
    again?.status ?? 200,
  )
}

const valuesOf = (o: OrderRecord): OrderValues => ({
  test_code: o.test_code,
  priority: o.priority,
  indication: o.indication,
  requester_name: o.requester?.name,
  requester_organization: o.requester?.organization,
  due_date: o.due_date,
  notes: o.notes,
  assignee: o.assignee,
  outcome: o.outcome,
})

/** The order's edit form: a draft's every field; a signed order's assignee and due date (and its outcome in review, for a reviewer), the rest shown as frozen. */
async function editPage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  order: OrderRecord,
  form: { values: OrderValues; errors: FieldErrors; status?: FormStatus },
): Promise<Response> {
  const members = await c.get('deps').access.assignableMembers(page.project)
  const b = base(c, page)
  const outcome = (order.status === 'in_review' || order.status === 'completed') && canFor(c)('report.sign')
  const signed = order.status === 'draft' ? undefined : { accession: order.accession, outcome }
  const crumbs = [
    { href: `${b}/orders`, text: 'Orders' },
    { href: `${b}/orders/${order.id}`, text: order.accession },
  ]
  const fields = orderForm(page, {
    action: `${b}/orders/${order.id}/edit`,
    values: form.values,
    errors: form.errors,
    members,
    submit: 'Save',
    signed,
  })
  return formPage(c, { ...view(page), crumbs }, `Edit order ${order.accession}`, fields, form.status)
}
