import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { badRequest, notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import { availableLabflowTransitions, type LabflowVersion } from '../../../domain/clinical/labflows.js'
import type { OrderRecord } from '../../../domain/clinical/model.js'
import { samplesheetCsv } from '../../../domain/clinical/samplesheet.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import {
  AddOrderSample,
  CreateOrder,
  LabflowMove,
  Order,
  OrderIdParam,
  OrderLabflow,
  OrderListQuery,
  OrderSample,
  OrderSampleParams,
  SamplesheetColumns,
  TransitionBody,
  UpdateOrder,
} from '../schemas.js'
import { canFor, checkAssignee, projectOf, toOrder, toSample } from '../views.js'

/** /orders: clinical orders, their lifecycle, samples, samplesheet and labflow state. */
export const orders = resourceApp<ClinicalDeps>()

const read = requires('clinical.read')
const write = requires('clinical.write')
const tags = ['orders']
/** The runs shown on an order's page. */
const ORDER_RUNS = 20

async function loadOrder(c: Context<ClinicalEnv>, idOrAccession: string): Promise<OrderRecord> {
  const order = await c.get('deps').orders.resolve(c.get('project').id, idOrAccession)
  if (!order) throw notFound('order')
  return order
}

async function checkLabflow(c: Context<ClinicalEnv>, labflowId: string | null | undefined) {
  if (!labflowId) return
  if (!(await c.get('deps').labflows.head(c.get('project').id, labflowId))) throw badRequest(`labflow_id: no labflow ${labflowId} in this project`)
}

orders.openapi(
  createRoute({
    operationId: 'listOrders',
    method: 'get',
    path: '/orders',
    tags,
    summary: "The project's orders, newest first; filters status, priority, assignee",
    middleware: [read] as const,
    request: { query: PageQuery.extend(OrderListQuery.shape) },
    responses: { 200: { ...json(z.array(Order)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { status, priority, assignee, ...page } = c.req.valid('query')
    const result = await c.get('deps').orders.list(c.get('project').id, { status, priority, assignee }, page)
    return pageResponse(c, { items: result.items.map((o) => toOrder(c, o)), nextPageToken: result.nextPageToken })
  },
)

orders.openapi(
  createRoute({
    operationId: 'createOrder',
    method: 'post',
    path: '/orders',
    tags,
    summary: 'Create a draft order; an accession ORD-<year>-<6 digits> is assigned',
    middleware: [write] as const,
    request: { body: { content: { 'application/json': { schema: CreateOrder } }, required: true } },
    responses: { 201: json(Order, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const body = c.req.valid('json')
    await checkAssignee(c, body.assignee)
    await checkLabflow(c, body.labflow_id)
    const order = await c.get('deps').orders.create(auditContext(c), projectOf(c), body, c.get('principal').user.id)
    return c.json(toOrder(c, order), 201)
  },
)

orders.openapi(
  createRoute({
    operationId: 'getOrder',
    method: 'get',
    path: '/orders/{id}',
    tags,
    summary: 'Order details (by id or accession), with its runs and the transitions this caller may take',
    middleware: [read] as const,
    request: { params: OrderIdParam },
    responses: { 200: json(Order), ...commonErrors },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const runs = await c.get('deps').runs.listForOrder(order.project_id, order.id, ORDER_RUNS)
    return c.json(
      toOrder(
        c,
        order,
        runs.map((r) => ({ id: r.id, name: r.name, status: r.status })),
      ),
      200,
    )
  },
)

orders.openapi(
  createRoute({
    operationId: 'updateOrder',
    method: 'put',
    path: '/orders/{id}',
    tags,
    summary: 'Update an order: any field of a draft; once signed only assignee and due_date (409 otherwise)',
    middleware: [write] as const,
    request: { params: OrderIdParam, body: { content: { 'application/json': { schema: UpdateOrder } }, required: true } },
    responses: { 200: json(Order), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const body = c.req.valid('json')
    await checkAssignee(c, body.assignee)
    await checkLabflow(c, body.labflow_id)
    const result = await c.get('deps').orders.update(auditContext(c), projectOf(c), order.id, body, canFor(c))
    return c.json(toOrder(c, result), 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'deleteOrder',
    method: 'delete',
    path: '/orders/{id}',
    tags,
    summary: 'Delete an order that was never signed (409 otherwise: cancel it instead)',
    middleware: [write] as const,
    request: { params: OrderIdParam },
    responses: { 204: { description: 'Deleted' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    await c.get('deps').orders.delete(auditContext(c), projectOf(c), order.id)
    return c.body(null, 204)
  },
)

orders.openapi(
  createRoute({
    operationId: 'transitionOrder',
    method: 'post',
    path: '/orders/{id}/transition',
    tags,
    summary: 'Move the order to the status `to` along the allowed edges (409 naming the allowed targets otherwise)',
    description:
      'Edges and the permission each needs: draft→signed (clinical.write; at least one sample, family roles consistent); signed→in_progress and in_progress→in_review (run.submit); in_review→completed (report.sign); signed|in_progress|in_review→on_hold (clinical.write, reason) and back to the status it left; draft…in_review, on_hold→cancelled (order.cancel, reason); any→entered_in_error (order.cancel, reason).',
    middleware: [write] as const,
    request: { params: OrderIdParam, body: { content: { 'application/json': { schema: TransitionBody } }, required: true } },
    responses: { 200: json(Order), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const result = await c
      .get('deps')
      .orders.transition(auditContext(c), projectOf(c), order.id, c.req.valid('json'), canFor(c), c.get('principal').user.id)
    return c.json(toOrder(c, result), 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'getOrderSamplesheet',
    method: 'get',
    path: '/orders/{id}/samplesheet',
    tags,
    summary: 'The order as an nf-core/raredisease samplesheet (text/csv; 409 for a sample without FASTQ files)',
    middleware: [read] as const,
    request: { params: OrderIdParam },
    responses: {
      200: {
        description: `CSV with the columns ${SamplesheetColumns}; one row per FASTQ pair; case_id is the accession`,
        content: {
          'text/csv': {
            schema: z.string().openapi({
              example: `${SamplesheetColumns}\nS-DEMO-PROBAND,1,gs://demo-lab-demo/fastq/S-DEMO-PROBAND_R1.fastq.gz,gs://demo-lab-demo/fastq/S-DEMO-PROBAND_R2.fastq.gz,1,2,S-DEMO-FATHER,S-DEMO-MOTHER,ORD-2026-000001\n`,
            }),
          },
        },
      },
      ...commonErrors,
      ...conflictError,
    },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const csv = samplesheetCsv(await c.get('deps').orders.samplesheet(order))
    return c.body(csv, 200, { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${order.accession}.csv"` })
  },
)

orders.openapi(
  createRoute({
    operationId: 'listOrderSamples',
    method: 'get',
    path: '/orders/{id}/samples',
    tags,
    summary: 'The samples in the order, each with its role',
    middleware: [read] as const,
    request: { params: OrderIdParam },
    responses: { 200: json(z.array(OrderSample)), ...commonErrors },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const views = await c.get('deps').orders.samplesOf(order)
    return c.json(
      views.map((v) => ({ ...toSample(v.sample), role: v.entry.role })),
      200,
    )
  },
)

orders.openapi(
  createRoute({
    operationId: 'addOrderSample',
    method: 'post',
    path: '/orders/{id}/samples/{sample_id}',
    tags,
    summary: 'Add a sample with its role to a draft order (201), or change the role of one already in it (200)',
    middleware: [write] as const,
    request: {
      params: OrderSampleParams,
      body: { content: { 'application/json': { schema: AddOrderSample } }, required: true },
    },
    responses: { 201: json(OrderSample, 'Added'), 200: json(OrderSample, 'Already in the order (role as sent)'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id, sample_id } = c.req.valid('param')
    const order = await loadOrder(c, id)
    const { role } = c.req.valid('json')
    const result = await c.get('deps').orders.addSample(auditContext(c), projectOf(c), order.id, sample_id, role, c.get('principal').user.id)
    return c.json({ ...toSample(result.sample), role }, result.added ? 201 : 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'removeOrderSample',
    method: 'delete',
    path: '/orders/{id}/samples/{sample_id}',
    tags,
    summary: 'Remove a sample from a draft order',
    middleware: [write] as const,
    request: { params: OrderSampleParams },
    responses: { 204: { description: 'Removed' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id, sample_id } = c.req.valid('param')
    const order = await loadOrder(c, id)
    await c.get('deps').orders.removeSample(auditContext(c), projectOf(c), order.id, sample_id)
    return c.body(null, 204)
  },
)

function toOrderLabflow(c: Context<ClinicalEnv>, order: OrderRecord, labflow: LabflowVersion): z.infer<typeof OrderLabflow> {
  const state = order.labflow_state
  const stage = state ? labflow.stages.find((s) => s.key === state.stage) : undefined
  return {
    order_id: order.id,
    accession: order.accession,
    labflow: { id: labflow.id, key: labflow.key, name: labflow.name, version: state ? labflow.version : null },
    status: state?.status ?? 'not_started',
    stage: stage ? { key: stage.key, name: stage.name } : null,
    assignee: state?.assignee ?? null,
    history: (state?.history ?? []).map((h) => ({ ...h, at: h.at.toDate().toISOString() })),
    available_transitions:
      state && ['signed', 'in_progress', 'in_review'].includes(order.status) ? availableLabflowTransitions(labflow, state, canFor(c)) : [],
  }
}

async function labflowOf(c: Context<ClinicalEnv>, order: OrderRecord): Promise<LabflowVersion> {
  const { labflows } = c.get('deps')
  const state = order.labflow_state
  const found = state ? await labflows.version(state.labflow_id, state.version) : await labflows.get(order.project_id, order.labflow.id)
  if (!found) throw notFound('labflow')
  return found
}

orders.openapi(
  createRoute({
    operationId: 'getOrderLabflow',
    method: 'get',
    path: '/orders/{id}/labflow',
    tags,
    summary: "The order's labflow state: stage, assignee, history and the transitions this caller may take now",
    middleware: [read] as const,
    request: { params: OrderIdParam },
    responses: { 200: json(OrderLabflow), ...commonErrors },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    return c.json(toOrderLabflow(c, order, await labflowOf(c, order)), 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'moveOrderLabflow',
    method: 'post',
    path: '/orders/{id}/labflow/transitions',
    tags,
    summary: 'Take a labflow transition for the order (its permission and, where the definition asks, a reason are checked)',
    middleware: [requires('labflow.move')] as const,
    request: { params: OrderIdParam, body: { content: { 'application/json': { schema: LabflowMove } }, required: true } },
    responses: { 200: json(OrderLabflow), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').id)
    const body = c.req.valid('json')
    await checkAssignee(c, body.assignee)
    const result = await c.get('deps').orders.moveLabflow(auditContext(c), projectOf(c), order.id, body, canFor(c), c.get('principal').user.id)
    return c.json(toOrderLabflow(c, result.order, result.labflow), 200)
  },
)
