import SwaggerParser from '@apidevtools/swagger-parser'
import { beforeAll, describe, expect, it } from 'vitest'
import { SERVICES } from '../../../functions/services.js'
import { testKernel } from '../../support/env.js'
import { call, makeWorld } from '../../support/world.js'
import { fetchDoc, label, operationsOf, type DocumentedOperation, type OpenApiDoc, type Response } from './openapi-doc.js'

const ERROR_REF = '#/components/schemas/Error'
/** The document type of the validator's own signature (its openapi-types is not a dependency of ours). */
type ValidatorInput = SwaggerParser['api']
const SOME_ID = '00000000-0000-4000-8000-000000000000'

/** A concrete address for a documented path, each path parameter replaced by a well-formed id. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, SOME_ID)
const bodyFor = (method: string) => (['post', 'put', 'patch'].includes(method) ? {} : undefined)

const isError = (status: string) => /^[45](\d\d|XX)$/.test(status) || status === 'default'

function resolveResponse(doc: OpenApiDoc, r: Response): Response {
  if (!r.$ref) return r
  const found = (doc.components as { responses?: Record<string, Response> } | undefined)?.responses?.[r.$ref.replace('#/components/responses/', '')]
  if (!found) throw new Error(`unresolved response ${r.$ref}`)
  return found
}

describe.each(SERVICES.map((s) => [s.name, s] as const))('the %s service OpenAPI document', (name, service) => {
  let doc: OpenApiDoc
  let ops: DocumentedOperation[]
  let app: ReturnType<typeof service.create>

  beforeAll(async () => {
    app = service.create(testKernel(name))
    doc = await fetchDoc(app)
    ops = operationsOf(doc)
  })

  it('is a valid OpenAPI 3 document that lists operations', async () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/)
    // validate() dereferences in place; the original stays as served for the checks below.
    const validated = await SwaggerParser.validate(structuredClone(doc) as unknown as ValidatorInput)
    expect(validated.info.title).toBe(doc.info.title)
    expect(ops.length).toBeGreaterThan(0)
  })

  it('gives every operation an operationId, unique in the document, as a client generator needs', () => {
    const ids = ops.map((o) => o.op.operationId)
    expect(ops.filter((o) => !o.op.operationId || !/^[a-z][A-Za-z0-9]*$/.test(o.op.operationId)).map(label)).toEqual([])
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([])
  })

  it("lists every tag its operations use, each with a description, in the definition's order", () => {
    const declared = (doc.tags ?? []).map((t) => t.name)
    expect(declared).toEqual(service.tags.map((t) => t.name))
    expect((doc.tags ?? []).filter((t) => !t.description)).toEqual([])
    const used = new Set(ops.flatMap((o) => o.op.tags ?? []))
    expect([...used].filter((t) => !declared.includes(t))).toEqual([])
    expect(declared.filter((t) => !used.has(t))).toEqual([])
    expect(ops.filter((o) => !o.op.tags?.length).map(label)).toEqual([])
  })

  it("names the document's own folder as its server, so the document works wherever the service is served, under a path too", () => {
    expect(doc.servers).toEqual([{ url: '.', description: expect.any(String) }])
  })

  it("has no schema with 'nullable' (an OpenAPI 3.0 keyword that 3.1 replaces with a type list)", () => {
    expect(JSON.stringify(doc)).not.toContain('"nullable"')
  })

  it('puts every path under /api/v1', () => {
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/api/v1/'))).toEqual([])
  })

  it('answers GET /healthz (and /health) without credentials, outside the document', async () => {
    for (const path of ['/healthz', '/health']) {
      const res = await call(app, 'GET', path)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ status: 'ok', service: name })
    }
    expect(Object.keys(doc.paths).filter((p) => p.includes('health'))).toEqual([])
  })

  it('gives every operation at least one 2xx response (a redirect for the public browser-login steps)', () => {
    // The OIDC login and callback answer only 302: declaring a 2xx there would document a response
    // that never comes. Only public operations may succeed with a redirect alone.
    const success = (o: DocumentedOperation, status: string) => /^2(\d\d|XX)$/.test(status) || (o.isPublic && /^3(\d\d|XX)$/.test(status))
    const without = ops.filter((o) => !Object.keys(o.op.responses).some((s) => success(o, s))).map(label)
    expect(without).toEqual([])
  })

  it('documents 401 on every operation that needs credentials', () => {
    // An operation reachable without credentials says so with `security: []`; every other one can answer 401.
    const without = ops.filter((o) => !o.isPublic && !('401' in o.op.responses)).map(label)
    expect(without).toEqual([])
  })

  it('describes every error response with the Error schema { detail }', () => {
    const offenders: string[] = []
    for (const o of ops) {
      for (const [status, raw] of Object.entries(o.op.responses)) {
        if (!isError(status)) continue
        const r = resolveResponse(doc, raw)
        const ref = r.content?.['application/json']?.schema?.$ref
        if (ref !== ERROR_REF) offenders.push(`${label(o)} ${status}: ${ref ?? 'no application/json schema'}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('defines Error as an object whose only required field is the string detail', () => {
    const error = doc.components?.schemas?.Error
    expect(error).toMatchObject({ type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] })
  })

  it('answers 401 with { detail } on every operation that needs credentials, called without any', async () => {
    const offenders: string[] = []
    for (const o of ops.filter((x) => !x.isPublic)) {
      const res = await call(app, o.method.toUpperCase(), concrete(o.path), { body: bodyFor(o.method) })
      if (res.status !== 401 || typeof res.body?.detail !== 'string') {
        offenders.push(`${label(o)} answered ${res.status} ${JSON.stringify(res.body)}; a public operation must declare security: []`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('answers 400 or 404 with { detail }, never a 500, to a path id with a slash, dots, an emoji or 5,000 characters', async () => {
    const world = await makeWorld()
    const served = service.create(world.deps)
    const BAD_IDS = ['a%2Fb', '..', '.', '%F0%9F%A7%AC', 'x'.repeat(5000), '__id__', 'a%00b']
    const offenders: string[] = []
    // '..' is removed with the segment before it by every HTTP client (RFC 3986), so /orders/../samples is a request for
    // /samples: where that is another documented operation, it is answered as that operation.
    const templates = ops.map((x) => ({ method: x.method, re: new RegExp(`^${x.path.replace(/\{[^}]+\}/g, '[^/]+')}$`) }))
    const isOtherOperation = (method: string, path: string) => {
      const resolved = new URL(path, 'http://host').pathname
      return resolved !== path && templates.some((t) => t.method === method && t.re.test(resolved))
    }
    for (const o of ops.filter((x) => !x.isPublic && x.path.includes('{'))) {
      for (const bad of BAD_IDS) {
        const path = o.path.replace(/\{[^}]+\}/g, bad)
        if (isOtherOperation(o.method, path)) continue
        const res = await call(served, o.method.toUpperCase(), path, {
          token: world.owner.token,
          project: world.project.id,
          body: bodyFor(o.method),
        })
        if (![400, 404].includes(res.status) || typeof res.body?.detail !== 'string') {
          offenders.push(`${label(o)} with ${bad.slice(0, 20)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
        }
      }
    }
    expect(offenders).toEqual([])
  })

  if (service.projectScoped) {
    it('declares the required X-Project-ID header on every operation', () => {
      const without = ops
        .filter((o) => !o.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-project-id' && p.required === true))
        .map(label)
      expect(without).toEqual([])
    })

    it('answers 400 naming X-Project-ID on every operation called without the header', async () => {
      const world = await makeWorld()
      const scoped = service.create(world.deps)
      const offenders: string[] = []
      for (const o of ops.filter((x) => !x.isPublic)) {
        const res = await call(scoped, o.method.toUpperCase(), concrete(o.path), { token: world.owner.token, body: bodyFor(o.method) })
        if (res.status !== 400 || !/X-Project-ID/i.test(String(res.body?.detail))) {
          offenders.push(`${label(o)} answered ${res.status} ${JSON.stringify(res.body)}`)
        }
      }
      expect(offenders).toEqual([])
    })
  }
})
