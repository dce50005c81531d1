import { createRoute, z } from '@hono/zod-openapi'
import { iso } from '../../../lib/db.js'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import { PLATFORM_SCOPE, type LabflowContent, type LabflowVersion } from '../../../domain/clinical/labflows.js'
import type { ClinicalDeps } from '../deps.js'
import { CreateLabflow, Labflow, LabflowVersionQuery, NewLabflowVersion } from '../schemas.js'
import { projectOf } from '../views.js'

/** /labflows: the platform's default germline flow and the project's own, versioned. */
export const labflows = resourceApp<ClinicalDeps>()

const read = requires('clinical.read')
const define = requires('labflow.define')
const tags = ['labflows']

const toLabflow = (v: LabflowVersion, latest: number): z.infer<typeof Labflow> => ({
  id: v.id,
  key: v.key,
  name: v.name,
  description: v.description,
  version: v.version,
  latest_version: latest,
  scope: v.scope === PLATFORM_SCOPE ? 'platform' : 'project',
  stages: v.stages,
  transitions: v.transitions,
  created: iso(v.created)!,
  created_by: v.created_by,
})

labflows.openapi(
  createRoute({
    operationId: 'listLabflows',
    method: 'get',
    path: '/labflows',
    tags,
    summary: "Labflow definitions the project sees (latest versions): the platform's default germline flow and the project's own",
    middleware: [read] as const,
    request: { query: PageQuery },
    responses: { 200: { ...json(z.array(Labflow)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const project = c.get('project')
    const heads = await deps.labflows.list(project.id)
    const versions = await Promise.all(heads.map(async (h) => ({ h, v: await deps.labflows.version(h.id, h.latest_version) })))
    const items = versions.flatMap(({ h, v }) => (v ? [toLabflow(v, h.latest_version)] : []))
    const page = paginateArray(items, (l) => `${l.scope === 'platform' ? 0 : 1}~${l.key}`, { filters: {}, query: c.req.valid('query') })
    return pageResponse(c, page)
  },
)

labflows.openapi(
  createRoute({
    operationId: 'createLabflow',
    method: 'post',
    path: '/labflows',
    tags,
    summary: 'Define a labflow of the project (version 1; 409 when its key exists)',
    middleware: [define] as const,
    request: { body: { content: { 'application/json': { schema: CreateLabflow } }, required: true } },
    responses: { 201: json(Labflow, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { key, ...content } = c.req.valid('json')
    const v = await c.get('deps').labflows.create(auditContext(c), projectOf(c), key, content as LabflowContent, c.get('principal').user.id)
    return c.json(toLabflow(v, 1), 201)
  },
)

labflows.openapi(
  createRoute({
    operationId: 'getLabflow',
    method: 'get',
    path: '/labflows/{id}',
    tags,
    summary: 'A labflow definition with its stages and transitions (the latest version, or ?version=n)',
    middleware: [read] as const,
    request: { params: IdParam, query: LabflowVersionQuery },
    responses: { 200: json(Labflow), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const { version } = c.req.valid('query')
    const head = UUID_RE.test(id) ? await c.get('deps').labflows.head(c.get('project').id, id) : undefined
    const v = head ? await c.get('deps').labflows.version(id, version ?? head.latest_version) : undefined
    if (!head || !v) throw notFound(version ? `labflow version ${version}` : 'labflow')
    return c.json(toLabflow(v, head.latest_version), 200)
  },
)

labflows.openapi(
  createRoute({
    operationId: 'listLabflowVersions',
    method: 'get',
    path: '/labflows/{id}/versions',
    tags,
    summary: 'Every version of a labflow, oldest first',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(z.array(Labflow)), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const versions = UUID_RE.test(id) ? await c.get('deps').labflows.versions(c.get('project').id, id) : []
    if (!versions.length) throw notFound('labflow')
    const latest = versions.at(-1)!.version
    return c.json(
      versions.map((v) => toLabflow(v, latest)),
      200,
    )
  },
)

labflows.openapi(
  createRoute({
    operationId: 'createLabflowVersion',
    method: 'post',
    path: '/labflows/{id}/versions',
    tags,
    summary: "A new version of one of the project's labflows (orders already signed keep theirs)",
    middleware: [define] as const,
    request: { params: IdParam, body: { content: { 'application/json': { schema: NewLabflowVersion } }, required: true } },
    responses: { 201: json(Labflow, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    if (!UUID_RE.test(id)) throw notFound('labflow')
    const v = await c
      .get('deps')
      .labflows.addVersion(auditContext(c), projectOf(c), id, c.req.valid('json') as LabflowContent, c.get('principal').user.id)
    return c.json(toLabflow(v, v.version), 201)
  },
)
