import { createRoute, z } from '@hono/zod-openapi'
import { badRequest, conflict, notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import { gsUri, parseGsUri } from '../../../lib/storage.js'
import { dispatchIngestion, pickVcf } from '../../../domain/variants/dispatch.js'
import type { VariantCacheDeps } from '../deps.js'
import {
  CacheStatus,
  CreateIngestion,
  Ingestion,
  OrderIngestionParams,
  OrderParams,
  OrderVariant,
  OrderVariantParams,
  VariantListQuery,
} from '../schemas.js'
import { cacheFilters, loadOrder, toIngestion, toStatus } from '../views.js'

/** /orders/{order_id}/…: an order's variant cache (its variants, one variant, its status) and its ingestions. */
export const orders = resourceApp<VariantCacheDeps>()

const read = requires('clinical.read')
const ingest = requires('variant.ingest')
const variantsTag = ['variants']
const ingestionsTag = ['ingestions']
const VCF_NAME = /\.vcf(\.b?gz)?$/i

orders.openapi(
  createRoute({
    operationId: 'listOrderVariants',
    method: 'get',
    path: '/orders/{order_id}/variants',
    tags: variantsTag,
    summary:
      "The order's variants in genome order, each with every sample's call under its role; filters gene, region, consequence, min_qual, filter, zygosity",
    description:
      'Pages in genome order (1–22, X, Y, MT, then other contigs; position; id) with keyset tokens that stay valid across a rebuild of the cache. Without filters, X-Total-Count gives the number of variants. A page may hold fewer than page_size variants (even none) when a filter checked on the variants read skips many (min_qual, filter=PASS, the zygosities of tumor and normal beside those of the proband and parents, lists that make more than 30 alternatives together; with a gene, every other filter): at most 2,000 variants are read beyond a page, so follow X-Next-Page-Token until it is absent. 404 when the order has no ready cache (see its status).',
    middleware: [read] as const,
    request: { params: OrderParams, query: PageQuery.extend(VariantListQuery.shape) },
    responses: {
      200: {
        ...json(z.array(OrderVariant)),
        headers: {
          ...pageHeaders,
          'X-Total-Count': { description: 'Variants in the cache (without filters)', schema: { type: 'integer' as const } },
        },
      },
      ...commonErrors,
    },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').order_id)
    const { gene, region, consequence, min_qual, filter, zygosity, ...page } = c.req.valid('query')
    const filters = cacheFilters({ gene, region, consequence, min_qual, filter, zygosity })
    const result = await c.get('deps').cache.listVariants(c.get('project').id, order.id, filters, page)
    if (!result) throw notFound(`a ready variant cache of order ${order.accession} (see GET /orders/${order.accession}/status)`)
    const unfiltered = [gene, region, consequence, min_qual, filter, zygosity].every((v) => v === undefined)
    if (unfiltered) c.header('X-Total-Count', String(result.active.variant_count))
    return pageResponse(c, result.page)
  },
)

orders.openapi(
  createRoute({
    operationId: 'getOrderVariant',
    method: 'get',
    path: '/orders/{order_id}/variants/{variant_id}',
    tags: variantsTag,
    summary: "One variant of the order's cache, with every sample's call and every transcript annotation",
    middleware: [read] as const,
    request: { params: OrderVariantParams },
    responses: { 200: json(OrderVariant), ...commonErrors },
  }),
  async (c) => {
    const { order_id, variant_id } = c.req.valid('param')
    const order = await loadOrder(c, order_id)
    const variant = await c.get('deps').cache.getVariant(c.get('project').id, order.id, variant_id)
    if (!variant) throw notFound(`variant ${variant_id} in the variant cache of order ${order.accession}`)
    return c.json(variant, 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'getOrderCacheStatus',
    method: 'get',
    path: '/orders/{order_id}/status',
    tags: variantsTag,
    summary:
      "The order's variant cache: its newest ingestion (queued → building → ready | failed, counts, source, run, times, the samples matched, what was wrong) and the cache readers see",
    middleware: [read] as const,
    request: { params: OrderParams },
    responses: { 200: json(CacheStatus), ...commonErrors },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').order_id)
    const head = await c.get('deps').cache.head(c.get('project').id, order.id)
    const latest = head?.latest_ingestion ? await c.get('deps').ingestions.getInProject(c.get('project').id, head.latest_ingestion.id) : undefined
    return c.json(toStatus(order, head, latest), 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'listOrderIngestions',
    method: 'get',
    path: '/orders/{order_id}/ingestions',
    tags: ingestionsTag,
    summary: "The order's ingestions, newest first",
    middleware: [read] as const,
    request: { params: OrderParams, query: PageQuery },
    responses: { 200: { ...json(z.array(Ingestion)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const order = await loadOrder(c, c.req.valid('param').order_id)
    const page = await c.get('deps').ingestions.listForOrder(c.get('project').id, order.id, c.req.valid('query'))
    return pageResponse(c, { items: page.items.map(toIngestion), nextPageToken: page.nextPageToken })
  },
)

orders.openapi(
  createRoute({
    operationId: 'getOrderIngestion',
    method: 'get',
    path: '/orders/{order_id}/ingestions/{ingestion_id}',
    tags: ingestionsTag,
    summary: 'One ingestion of the order, with its steps',
    middleware: [read] as const,
    request: { params: OrderIngestionParams },
    responses: { 200: json(Ingestion), ...commonErrors },
  }),
  async (c) => {
    const { order_id, ingestion_id } = c.req.valid('param')
    const order = await loadOrder(c, order_id)
    const ingestion = await c.get('deps').ingestions.getInProject(c.get('project').id, ingestion_id)
    if (!ingestion || ingestion.order_id !== order.id) throw notFound('ingestion')
    return c.json(toIngestion(ingestion), 200)
  },
)

orders.openapi(
  createRoute({
    operationId: 'createOrderIngestion',
    method: 'post',
    path: '/orders/{order_id}/ingestions',
    tags: ingestionsTag,
    summary:
      "Build the order's variant cache from a run's VCF output (run_id) or a VCF in the project bucket (source_uri); pipeline service users and admins",
    description:
      'Answers 202 with the queued ingestion; follow it at GET /orders/{order_id}/status. The cache readers see is replaced only once the new one is ready. A run linked to the order that succeeds with a VCF is ingested without this call.',
    middleware: [ingest] as const,
    request: {
      params: OrderParams,
      body: { content: { 'application/json': { schema: CreateIngestion } }, required: true },
    },
    responses: { 202: json(Ingestion, 'Accepted: queued'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const deps = c.get('deps')
    const project = c.get('project')
    const order = await loadOrder(c, c.req.valid('param').order_id)
    const body = c.req.valid('json')
    if ((body.run_id === undefined) === (body.source_uri === undefined)) throw badRequest('send exactly one of run_id and source_uri')
    let source: string
    let runId: string | undefined
    if (body.run_id !== undefined) {
      const run = UUID_RE.test(body.run_id) ? await deps.runs.get(project.id, body.run_id) : undefined
      if (!run) throw notFound('run')
      if (run.order_id !== order.id) throw conflict(`run ${run.name} is not linked to order ${order.accession}`)
      if (run.status !== 'succeeded') throw conflict(`run ${run.name} is ${run.status}; only a succeeded run's VCF is ingested`)
      const outputs = await deps.storage.list(run.bucket_name, `runs/${run.id}/`, { pageSize: 1000 })
      const vcf = pickVcf(outputs.items)
      if (!vcf) throw conflict(`run ${run.name} has no VCF among its outputs (*.vcf, *.vcf.gz)`)
      source = gsUri(run.bucket_name, vcf.path)
      runId = run.id
    } else {
      let parsed
      try {
        parsed = parseGsUri(body.source_uri!)
      } catch {
        throw badRequest(`source_uri: '${body.source_uri}' is not a gs:// URI`)
      }
      if (parsed.bucket !== project.bucket_name) throw badRequest(`source_uri: must be in the project bucket gs://${project.bucket_name}/`)
      if (!VCF_NAME.test(parsed.path)) throw badRequest('source_uri: must name a VCF (.vcf, .vcf.gz or .vcf.bgz)')
      if (!(await deps.storage.stat(parsed.bucket, parsed.path))) throw badRequest(`source_uri: ${body.source_uri} does not exist`)
      source = body.source_uri!
    }
    const { ingestion } = await deps.ingestions.request(auditContext(c), {
      project: { id: project.id, org_id: project.org_id },
      order,
      source_uri: source,
      run_id: runId,
      trigger: 'request',
      requested_by: c.get('principal').user.id,
    })
    await dispatchIngestion(deps, ingestion)
    return c.json(toIngestion(ingestion), 202)
  },
)
