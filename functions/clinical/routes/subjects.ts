import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import type { SubjectRecord } from '../../../domain/clinical/model.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import { CreateSubject, Subject, SubjectListQuery, UpdateSubject } from '../schemas.js'
import { projectOf, toSubject } from '../views.js'

/** /subjects: the people tested, with their pedigree links and phenotypes. */
export const subjects = resourceApp<ClinicalDeps>()

const read = requires('clinical.read')
const write = requires('clinical.write')
const tags = ['subjects']

async function loadSubject(c: Context<ClinicalEnv>, id: string): Promise<SubjectRecord> {
  const s = UUID_RE.test(id) ? await c.get('deps').subjects.get(c.get('project').id, id) : undefined
  if (!s) throw notFound('subject')
  return s
}

subjects.openapi(
  createRoute({
    operationId: 'listSubjects',
    method: 'get',
    path: '/subjects',
    tags,
    summary: "The project's subjects, newest first; filters external_id, family_id, affected_status, name (a part of the display name)",
    middleware: [read] as const,
    request: { query: PageQuery.extend(SubjectListQuery.shape) },
    responses: { 200: { ...json(z.array(Subject)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { external_id, family_id, affected_status, name, ...page } = c.req.valid('query')
    const result = await c.get('deps').subjects.list(c.get('project').id, { external_id, family_id, affected_status, name }, page)
    return pageResponse(c, { items: result.items.map(toSubject), nextPageToken: result.nextPageToken })
  },
)

subjects.openapi(
  createRoute({
    operationId: 'createSubject',
    method: 'post',
    path: '/subjects',
    tags,
    summary: 'Create a subject (409 when its external_id exists in the project; parents are checked)',
    middleware: [write] as const,
    request: { body: { content: { 'application/json': { schema: CreateSubject } }, required: true } },
    responses: { 201: json(Subject, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const subject = await c.get('deps').subjects.create(auditContext(c), projectOf(c), c.req.valid('json'), c.get('principal').user.id)
    return c.json(toSubject(subject), 201)
  },
)

subjects.openapi(
  createRoute({
    operationId: 'getSubject',
    method: 'get',
    path: '/subjects/{id}',
    tags,
    summary: 'Subject details',
    middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: json(Subject), ...commonErrors },
  }),
  async (c) => c.json(toSubject(await loadSubject(c, c.req.valid('param').id)), 200),
)

subjects.openapi(
  createRoute({
    operationId: 'updateSubject',
    method: 'patch',
    path: '/subjects/{id}',
    tags,
    summary: 'Update a subject: only the fields sent change; null clears an optional field',
    description:
      "While a signed order holds one of the subject's samples (signed, in progress, in review, on hold, completed or cancelled after signing), the fields its samplesheet and pedigree are made of (external_id, sex, affected_status, family_id, mother_id, father_id) cannot change: 409 naming the order. display_name, birth_date and phenotypes stay editable; a field sent with its stored value is no change. Entering the order in error frees them (docs/clinical.md).",
    middleware: [write] as const,
    request: { params: IdParam, body: { content: { 'application/json': { schema: UpdateSubject } }, required: true } },
    responses: { 200: json(Subject), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const patch = c.req.valid('json')
    if (!UUID_RE.test(id)) throw notFound('subject')
    if (!Object.values(patch).some((v) => v !== undefined)) return c.json(toSubject(await loadSubject(c, id)), 200)
    const { phenotypes, ...rest } = patch
    const subject = await c.get('deps').subjects.update(auditContext(c), projectOf(c), id, {
      ...rest,
      ...(phenotypes !== undefined ? { phenotypes: phenotypes ?? [] } : {}),
    })
    return c.json(toSubject(subject), 200)
  },
)

subjects.openapi(
  createRoute({
    operationId: 'deleteSubject',
    method: 'delete',
    path: '/subjects/{id}',
    tags,
    summary: 'Delete a subject and its samples in one step (409 while a signed order holds one of them)',
    middleware: [write] as const,
    request: { params: IdParam },
    responses: { 204: { description: 'Deleted, with its samples' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    if (!UUID_RE.test(id)) throw notFound('subject')
    await c.get('deps').subjects.delete(auditContext(c), projectOf(c), id)
    return c.body(null, 204)
  },
)
