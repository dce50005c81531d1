import { createRoute, z } from '@hono/zod-openapi'
import { iso } from '../../../lib/db.js'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { UUID_RE } from '../../../lib/ids.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import { compareSemver, latestVersion } from '../../../domain/pipelines/versions.js'
import { PLATFORM_SCOPE, requiredInputs, type PipelineRecord } from '../../../domain/pipelines/model.js'
import type { ComputeDeps } from '../deps.js'
import { CreatePipeline, ForceQuery, Pipeline, PipelineListQuery, SlugParam } from '../schemas.js'

/** /pipelines: the catalogue the project sees, and the project's own pipelines. */
export const pipelines = resourceApp<ComputeDeps>()

export function toPipeline(p: PipelineRecord): z.infer<typeof Pipeline> {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    type: p.type,
    container: p.container,
    tags: p.tags,
    description: p.description,
    version: p.version,
    inputs: p.inputs,
    required_inputs: requiredInputs(p),
    additional_params: p.additional_params,
    entrypoint: p.entrypoint,
    commands: p.commands,
    workflow: p.workflow,
    default_profile: p.default_profile,
    resources: p.resources,
    scope: p.scope === PLATFORM_SCOPE ? 'platform' : 'project',
    created: iso(p.created)!,
    updated: iso(p.updated)!,
  }
}

const read = requires('pipeline.read')

pipelines.openapi(
  createRoute({
    operationId: 'listPipelines',
    method: 'get',
    path: '/pipelines',
    tags: ['pipelines'],
    summary: 'List the pipelines the project can see (platform-wide and its own), by slug, newest version first',
    middleware: [read] as const,
    request: { query: PageQuery.extend(PipelineListQuery.shape) },
    responses: { 200: { ...json(z.array(Pipeline)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { type, tag, slug, ...page } = c.req.valid('query')
    const result = await c.get('deps').pipelines.list(c.get('project').id, { type, tag, slug }, page)
    return pageResponse(c, { items: result.items.map(toPipeline), nextPageToken: result.nextPageToken })
  },
)

pipelines.openapi(
  createRoute({
    operationId: 'createPipeline',
    method: 'post',
    path: '/pipelines',
    tags: ['pipelines'],
    summary: 'Create a pipeline in the project (409 when the slug and version exist; ?force=true overwrites)',
    middleware: [requires('pipeline.create')] as const,
    request: {
      query: ForceQuery,
      body: { content: { 'application/json': { schema: CreatePipeline } }, required: true },
    },
    responses: { 201: json(Pipeline, 'Created'), 200: json(Pipeline, 'Overwritten (force)'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const project = c.get('project')
    const { pipeline, overwritten } = await c.get('deps').pipelines.create(auditContext(c), {
      scope: project.id,
      org_id: project.org_id,
      definition: c.req.valid('json'),
      force: c.req.valid('query').force === 'true',
      createdBy: c.get('principal').user.id,
    })
    return overwritten ? c.json(toPipeline(pipeline), 200) : c.json(toPipeline(pipeline), 201)
  },
)

pipelines.openapi(
  createRoute({
    operationId: 'getPipeline',
    method: 'get',
    path: '/pipelines/{id}',
    tags: ['pipelines'],
    summary: 'Pipeline by id',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(Pipeline), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const pipeline = UUID_RE.test(id) ? await c.get('deps').pipelines.get(c.get('project').id, id) : undefined
    if (!pipeline) throw notFound('pipeline')
    return c.json(toPipeline(pipeline), 200)
  },
)

pipelines.openapi(
  createRoute({
    operationId: 'getPipelineBySlug',
    method: 'get',
    path: '/pipelines/slug/{slug}',
    tags: ['pipelines'],
    summary: 'The latest version of a pipeline by slug (highest semantic version), or the one named by ?version=',
    middleware: [read] as const,
    request: { params: SlugParam, query: z.object({ version: z.string().min(1).optional() }) },
    responses: { 200: json(Pipeline), ...commonErrors },
  }),
  async (c) => {
    const { slug } = c.req.valid('param')
    const { version } = c.req.valid('query')
    const versions = await c.get('deps').pipelines.versions(c.get('project').id, slug)
    const pipeline = version ? versions.find((p) => p.version === version) : latestVersion(versions)
    if (!pipeline) throw notFound(version ? `pipeline '${slug}' version ${version}` : `pipeline '${slug}'`)
    return c.json(toPipeline(pipeline), 200)
  },
)

pipelines.openapi(
  createRoute({
    operationId: 'listPipelineVersions',
    method: 'get',
    path: '/pipelines/slug/{slug}/versions',
    tags: ['pipelines'],
    summary: 'Every version of a pipeline, highest semantic version first',
    middleware: [read] as const,
    request: { params: SlugParam, query: PageQuery },
    responses: { 200: { ...json(z.array(Pipeline)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { slug } = c.req.valid('param')
    const versions = await c.get('deps').pipelines.versions(c.get('project').id, slug)
    if (!versions.length) throw notFound(`pipeline '${slug}'`)
    const page = paginateArray(
      versions,
      (p) => p.version,
      { filters: { slug }, query: c.req.valid('query') },
      (a, b) => compareSemver(b, a),
    )
    return pageResponse(c, { items: page.items.map(toPipeline), nextPageToken: page.nextPageToken })
  },
)
