import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import type { SampleRecord } from '../../../domain/clinical/model.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import { CreateSample, Sample, SampleInfo, SampleListQuery, SampleVariant, SampleVariantQuery, UpdateSample } from '../schemas.js'
import { regionOf } from './variants.js'
import { projectOf, toSample } from '../views.js'

/** /samples: material from a subject and its data files; frozen while a signed order holds it. */
export const samples = resourceApp<ClinicalDeps>()

const read = requires('clinical.read')
const write = requires('clinical.write')
const tags = ['samples']
const date = (v: string | null | undefined) => (v === undefined ? undefined : v === null ? null : new Date(v))

async function loadSample(c: Context<ClinicalEnv>, id: string): Promise<SampleRecord> {
  const s = UUID_RE.test(id) ? await c.get('deps').samples.get(c.get('project').id, id) : undefined
  if (!s) throw notFound('sample')
  return s
}

samples.openapi(
  createRoute({
    operationId: 'listSamples',
    method: 'get',
    path: '/samples',
    tags,
    summary: "The project's samples, newest first; filters external_id, subject_id, type",
    middleware: [read] as const,
    request: { query: PageQuery.extend(SampleListQuery.shape) },
    responses: { 200: { ...json(z.array(Sample)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { external_id, subject_id, type, ...page } = c.req.valid('query')
    const result = await c.get('deps').samples.list(c.get('project').id, { external_id, subject_id, type }, page)
    return pageResponse(c, { items: result.items.map(toSample), nextPageToken: result.nextPageToken })
  },
)

samples.openapi(
  createRoute({
    operationId: 'createSample',
    method: 'post',
    path: '/samples',
    tags,
    summary: 'Create a sample of a subject (409 when its external_id exists in the project; data URIs must be in the project bucket)',
    middleware: [write] as const,
    request: { body: { content: { 'application/json': { schema: CreateSample } }, required: true } },
    responses: { 201: json(Sample, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const sample = await c
      .get('deps')
      .samples.create(
        auditContext(c),
        projectOf(c),
        { ...body, collected_at: date(body.collected_at) ?? undefined, received_at: date(body.received_at) ?? undefined },
        c.get('principal').user.id,
      )
    return c.json(toSample(sample), 201)
  },
)

samples.openapi(
  createRoute({
    operationId: 'getSample',
    method: 'get',
    path: '/samples/{id}',
    tags,
    summary: 'Sample details, with the orders holding it',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(Sample), ...commonErrors },
  }),
  async (c) => c.json(toSample(await loadSample(c, c.req.valid('param').id)), 200),
)

samples.openapi(
  createRoute({
    operationId: 'updateSample',
    method: 'patch',
    path: '/samples/{id}',
    tags,
    summary: 'Update a sample: only the fields sent change; null clears an optional field; 409 while a signed order holds it',
    middleware: [write] as const,
    request: { params: IdParam, body: { content: { 'application/json': { schema: UpdateSample } }, required: true } },
    responses: { 200: json(Sample), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const body = c.req.valid('json')
    if (!UUID_RE.test(id)) throw notFound('sample')
    if (!Object.values(body).some((v) => v !== undefined)) return c.json(toSample(await loadSample(c, id)), 200)
    const { fastq, collected_at, received_at, ...rest } = body
    const sample = await c.get('deps').samples.update(auditContext(c), projectOf(c), id, {
      ...rest,
      ...(fastq !== undefined ? { fastq: fastq ?? [] } : {}),
      collected_at: date(collected_at),
      received_at: date(received_at),
    })
    return c.json(toSample(sample), 200)
  },
)

samples.openapi(
  createRoute({
    operationId: 'deleteSample',
    method: 'delete',
    path: '/samples/{id}',
    tags,
    summary: 'Delete a sample (409 naming the order while a signed order holds it; it leaves unsigned orders)',
    middleware: [write] as const,
    request: { params: IdParam },
    responses: { 204: { description: 'Deleted' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    if (!UUID_RE.test(id)) throw notFound('sample')
    await c.get('deps').samples.delete(auditContext(c), projectOf(c), id)
    return c.body(null, 204)
  },
)

samples.openapi(
  createRoute({
    operationId: 'getSampleInfo',
    method: 'get',
    path: '/samples/{id}/sampleinfo',
    tags,
    summary: 'The sample as a pipeline consumes it: samplesheet keys (nf-core/raredisease), subject, HPO terms, data URIs',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(SampleInfo), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const info = UUID_RE.test(id) ? await c.get('deps').samples.sampleInfo(c.get('project').id, id) : undefined
    if (!info) throw notFound('sample')
    return c.json(info, 200)
  },
)

samples.openapi(
  createRoute({
    operationId: 'listSampleVariants',
    method: 'get',
    path: '/samples/{id}/variants',
    tags: ['variants'],
    summary: "The sample's variants: its calls carrying the ALT in the ready variant caches of the orders holding it, in genome order; filter region",
    middleware: [read] as const,
    request: { params: IdParam, query: PageQuery.extend(SampleVariantQuery.shape) },
    responses: { 200: { ...json(z.array(SampleVariant)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const sample = await loadSample(c, c.req.valid('param').id)
    const { region, ...page } = c.req.valid('query')
    const result = await c
      .get('deps')
      .variants.cache.sampleVariants(c.get('project').id, sample.id, sample.orders, { region: regionOf(region) }, page)
    return pageResponse(c, result)
  },
)
