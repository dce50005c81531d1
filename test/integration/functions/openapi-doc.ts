import type { Hono } from 'hono'

/** The parts of an OpenAPI 3 document the docs tests read; the validator checks the rest. */
export interface Parameter {
  name: string
  in: string
  required?: boolean
  $ref?: string
}
export interface Response {
  description?: string
  content?: Record<string, { schema?: { $ref?: string } }>
  $ref?: string
}
export interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  parameters?: Parameter[]
  responses: Record<string, Response>
  security?: Array<Record<string, string[]>>
}
export interface OpenApiDoc {
  openapi: string
  info: { title: string; version: string }
  servers?: Array<{ url: string; description?: string }>
  tags?: Array<{ name: string; description?: string }>
  paths: Record<string, Record<string, unknown> & { parameters?: Parameter[] }>
  components?: { schemas?: Record<string, any>; parameters?: Record<string, Parameter> }
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

export interface DocumentedOperation {
  method: string
  path: string
  op: Operation
  /** Path-item and operation parameters together, $refs to components resolved. */
  parameters: Parameter[]
  /** Declares `security: []`: reachable without credentials (login, token exchange). */
  isPublic: boolean
}

export async function fetchDoc(app: Hono<any>): Promise<OpenApiDoc> {
  const res = await app.request('/openapi.json')
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as OpenApiDoc
}

export function operationsOf(doc: OpenApiDoc): DocumentedOperation[] {
  const resolve = (p: Parameter): Parameter => {
    if (!p.$ref) return p
    const found = doc.components?.parameters?.[p.$ref.replace('#/components/parameters/', '')]
    if (!found) throw new Error(`unresolved parameter ${p.$ref}`)
    return found
  }
  const out: DocumentedOperation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined
      if (!op) continue
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve)
      out.push({ method, path, op, parameters, isPublic: Array.isArray(op.security) && op.security.length === 0 })
    }
  }
  return out
}

export const label = (o: { method: string; path: string }) => `${o.method.toUpperCase()} ${o.path}`
