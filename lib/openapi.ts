import { z } from '@hono/zod-openapi'

/**
 * The pieces every service's OpenAPI document is built from: the error body and the responses
 * that carry it, the X-Project-ID header, the 503 of an instance at capacity, and the one schema
 * for ids in paths.
 */
export const ErrorBody = z.object({ detail: z.string().openapi({ example: 'params.case_id: required' }) }).openapi('Error')

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } })

/** The error responses every authenticated operation can give, for createRoute's `responses`. */
export const commonErrors = {
  400: errorResponse('Invalid parameters'),
  401: errorResponse('Missing, invalid or expired credentials'),
  403: errorResponse('Valid credentials, insufficient permissions'),
  404: errorResponse('Not found'),
} as const
export const conflictError = { 409: errorResponse('Conflict') } as const

/**
 * X-Project-ID as a project-scoped service's document declares it, on every operation the kernel
 * asks it of (lib/http.ts `createServiceApp`). The kernel checks it before any route runs (400, then
 * 404 or 403), so routes neither declare nor validate it again.
 */
export const PROJECT_ID_HEADER = {
  schema: { type: 'string', description: 'Project UUID, from GET /projects', example: '3f0e1c52-7d1a-4c36-9f0e-2b8d5a6c1e77' },
  required: true,
  description: 'Project UUID, from GET /projects',
  name: 'x-project-id',
  in: 'header',
} as const

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const
type Parameter = { name?: string; in?: string; [field: string]: unknown }

/**
 * The document with X-Project-ID declared on each operation of the paths `needsProject` names,
 * before the operation's other headers. A route that declared it too would show it twice, which
 * the OpenAPI lint refuses (operation-parameters-unique).
 */
export function withProjectHeader<D extends { paths?: Record<string, object> }>(doc: D, needsProject: (path: string) => boolean): D {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!needsProject(path)) continue
    for (const method of METHODS) {
      const operation = (item as Partial<Record<(typeof METHODS)[number], { parameters?: Parameter[] }>>)[method]
      if (!operation) continue
      const parameters = (operation.parameters ??= [])
      const firstHeader = parameters.findIndex((p) => p.in === 'header')
      parameters.splice(firstHeader < 0 ? parameters.length : firstHeader, 0, PROJECT_ID_HEADER)
    }
  }
  return doc
}

/**
 * The document with the 503 of an instance at capacity (lib/overload.ts) declared on every
 * operation, as the response component `Overloaded`: the kernel answers it before any route runs,
 * so it is documented where it is enforced, as X-Project-ID is.
 */
export function withOverloadAnswer<D extends { paths?: Record<string, object>; components?: { responses?: Record<string, unknown> } }>(doc: D): D {
  const responses = ((doc.components ??= {}).responses ??= {})
  responses.Overloaded = {
    description: 'The service is at capacity: nothing was done; send the same request again after Retry-After seconds',
    headers: { 'Retry-After': { description: 'Seconds to wait before sending the request again', schema: { type: 'integer', minimum: 0 } } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  }
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Partial<Record<(typeof METHODS)[number], { responses?: Record<string, unknown> }>>)[method]
      if (operation) (operation.responses ??= {})['503'] ??= { $ref: '#/components/responses/Overloaded' }
    }
  }
  return doc
}

export const json = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
})

/**
 * An id in a path: what the platform makes (UUIDs) and what people name things by (slugs, run
 * names, accessions). Never a path of its own: no '/', no '..' alone, no control characters or
 * emoji, at most 128 characters; anything else is a 400 before any store is asked.
 */
export const PATH_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
export const pathId = (name: string, example = '5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11') =>
  z
    .string()
    .regex(PATH_ID_RE, 'an id of letters, digits, ".", "_" and "-" (at most 128 characters)')
    .openapi({ param: { name, in: 'path' }, example })

export const IdParam = z.object({ id: pathId('id') })
