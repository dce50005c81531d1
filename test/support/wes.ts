import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Ajv, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'

/**
 * The GA4GH WES 1.1 contract, from the official documents in ../shared/fixtures/wes/ (read there,
 * never copied): each response of the platform's WES interface is checked against the schema the
 * document gives its operation and status, by Ajv, not by code of ours. The WES document refers to
 * the service-info schema by its public address; that reference is read from the local copy, so no
 * test reaches the network.
 */
export const WES_FIXTURES = resolve(import.meta.dirname, '../../../shared/fixtures/wes')
const SERVICE_INFO_URL = 'https://raw.githubusercontent.com/ga4gh-discovery/ga4gh-service-info/v1.0.0/service-info.yaml'

type Schema = Record<string, unknown>
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>
}
type Paths = Record<string, Record<string, Operation>>

export interface Conformance {
  /** Whether the document lists this status for the operation (else the body was checked as an ErrorResponse). */
  documented: boolean
  /** Ajv's messages; empty when the body conforms. */
  errors: string[]
}

export async function wesContract() {
  const doc = (await SwaggerParser.dereference(resolve(WES_FIXTURES, 'workflow_execution_service.openapi.yaml'), {
    resolve: {
      http: false,
      serviceInfo: {
        order: 1,
        canRead: (file: { url: string }) => file.url.startsWith(SERVICE_INFO_URL),
        read: () => readFileSync(resolve(WES_FIXTURES, 'service-info.yaml'), 'utf8'),
      },
    },
  } as never)) as unknown as { paths: Paths; components: { schemas: Record<string, Schema> } }
  // OpenAPI 3.0 schemas: `nullable` is Ajv's own OpenAPI keyword; `example`, `deprecated` and x- fields are annotations.
  const ajv = new Ajv({ strict: false, allErrors: true })
  // A CommonJS module: under NodeNext its function is the default export's `default`.
  ajvFormats.default(ajv)
  const compiled = new Map<string, ValidateFunction>()
  const validator = (key: string, schema: Schema) => {
    let fn = compiled.get(key)
    if (!fn) compiled.set(key, (fn = ajv.compile(schema)))
    return fn
  }

  return {
    /** Checks a response of `method path` (the document's path template, e.g. /runs/{run_id}) against the document. */
    check(method: string, path: string, status: number, body: unknown): Conformance {
      const op = doc.paths[path]?.[method.toLowerCase()]
      if (!op) throw new Error(`the WES document has no operation ${method} ${path}`)
      const response = op.responses[String(status)]
      const schema = response?.content?.['application/json']?.schema ?? (status >= 400 ? doc.components.schemas.ErrorResponse : undefined)
      if (!schema) return { documented: !!response, errors: [`no schema for ${status}`] }
      const validate = validator(`${method} ${path} ${response ? status : 'error'}`, schema)
      const ok = validate(body)
      return {
        documented: !!response,
        errors: ok ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`),
      }
    },
    /** Every state the document's State enum names. */
    states: doc.components.schemas.State!.enum as string[],
  }
}
