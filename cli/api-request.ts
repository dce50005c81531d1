/**
 * The rules of `platform api`, as gh api has them: which service owns a path (from the services'
 * OpenAPI documents), how `--field`/`--raw-field` flags become a query or a JSON body, and how
 * pages are joined. Pure: the command reads files and the network, these decide.
 */
import { usageError } from './errors.js'

/** The API of one service: its name and the path templates of its OpenAPI document (`/api/v1/runs/{id}`). */
export interface ServiceApi {
  name: string
  paths: readonly string[]
}

/** The prefix every documented path of the platform starts with; `platform api /runs` means `/api/v1/runs`. */
export const API_PREFIX = '/api/v1'

/** What `platform api` sends a request to: the service, the path from its base, the query written in the path, and the template of its document the path fits (none for a path sent as written). */
export interface Route {
  service: string
  path: string
  query: URLSearchParams
  template?: string
}

const segmentsOf = (path: string) => path.split('/').filter(Boolean)

/**
 * How closely `path` fits `template`: the number of literal segments when every segment fits
 * (`{id}` takes any one segment), undefined when it does not fit.
 */
export function fit(template: string, path: string): number | undefined {
  const want = segmentsOf(template)
  const got = segmentsOf(path)
  if (want.length !== got.length) return undefined
  let literal = 0
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    if (/^\{[^}]+\}$/.test(w)) continue
    if (w !== got[i]) return undefined
    literal++
  }
  return literal
}

/** `runs?status=running`, `/runs`, `/api/v1/runs`: the path with one leading slash, and its query. */
export function splitPath(input: string): { path: string; query: URLSearchParams } {
  const at = input.indexOf('?')
  const raw = at < 0 ? input : input.slice(0, at)
  const query = new URLSearchParams(at < 0 ? '' : input.slice(at + 1))
  const path = '/' + raw.replace(/^\/+/, '')
  return { path, query }
}

/** The ways a path may be meant: as written when it begins with /api/, else under /api/v1 first and then as written. */
const readings = (path: string) => (path.startsWith('/api/') ? [path] : [API_PREFIX + (path === '/' ? '' : path), path])

/** The template of `api` that fits `path` best (most literal segments, as a router's static routes beat its parameters), and how closely. */
function bestTemplate(api: ServiceApi, path: string): { template: string; score: number } | undefined {
  let best: { template: string; score: number } | undefined
  for (const template of api.paths) {
    const score = fit(template, path)
    if (score !== undefined && (!best || score > best.score)) best = { template, score }
  }
  return best
}

/** The services whose documents fit `path` best, each with its template. */
function bestFits(apis: readonly ServiceApi[], path: string): Array<{ service: string; template: string }> {
  let best = -1
  let found: Array<{ service: string; template: string }> = []
  for (const api of apis) {
    const match = bestTemplate(api, path)
    if (!match || match.score < best) continue
    if (match.score > best) found = []
    best = match.score
    found.push({ service: api.name, template: match.template })
  }
  return found
}

/**
 * The service and path a request goes to. With `service` named, its document only says whether
 * /api/v1 is meant (a path it does not document is sent as written: `/openapi.json`); without,
 * the one service whose document fits the path best owns it, and none or a tie is a usage error
 * asking for --service.
 */
export function route(apis: readonly ServiceApi[], input: string, service?: string): Route {
  const { path, query } = splitPath(input)
  if (service !== undefined) {
    const api = apis.find((a) => a.name === service)
    if (!api) throw usageError(`no service '${service}': one of ${apis.map((a) => a.name).join(', ')}`)
    for (const reading of readings(path)) {
      const match = bestTemplate(api, reading)
      if (match) return { service, path: reading, query, template: match.template }
    }
    return { service, path, query }
  }
  for (const reading of readings(path)) {
    const found = bestFits(apis, reading)
    const [only] = found
    if (only && found.length === 1) return { service: only.service, path: reading, query, template: only.template }
    if (found.length > 1)
      throw usageError(
        `${reading} is in the APIs of ${found.map((f) => f.service).join(' and ')}: pass --service <name> to choose (platform api --help)`,
      )
  }
  throw usageError(`no service documents the path ${path}: pass --service <${apis.map((a) => a.name).join('|')}> to send it anyway`)
}

// ---------------------------------------------------------------------------------------------
// Fields

/** One `--field`/`--raw-field` flag: where its value goes (`labels[]`, `requester[name]`) and the value. */
export interface Field {
  /** The keys from the top: `requester[name]` is ['requester', 'name']. */
  keys: string[]
  /** `key[]=v`: the value is appended to an array. */
  append: boolean
  value: unknown
}

const KEY = /^([^[\]=]+)((?:\[[^[\]]+\])*)(\[\])?$/

/** Splits `key=value` and reads the key (`a`, `a[]`, `a[b]`, `a[b][]`); a flag without `=` or with a malformed key is a usage error. */
export function splitField(flag: string, option: string): { keys: string[]; append: boolean; raw: string } {
  const eq = flag.indexOf('=')
  if (eq <= 0) throw usageError(`${option} '${flag}': expected key=value`)
  const key = flag.slice(0, eq)
  const match = KEY.exec(key)
  if (!match) throw usageError(`${option} '${flag}': '${key}' is not a field name (write key, key[], key[sub] or key[sub][])`)
  const nested = [...match[2]!.matchAll(/\[([^[\]]+)\]/g)].map((m) => m[1]!)
  return { keys: [match[1]!, ...nested], append: match[3] !== undefined, raw: flag.slice(eq + 1) }
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

/**
 * A `--field` value typed as gh api types it: true, false and null are JSON's, a number is a
 * number, `@file` is the file's text (`@-` standard input, read by `read`); anything else a string.
 */
export function typedValue(raw: string, read: (file: string) => string): unknown {
  if (raw === 'true') return true
  if (raw === 'false') return false
  if (raw === 'null') return null
  if (JSON_NUMBER.test(raw) && Number.isFinite(Number(raw))) return Number(raw)
  if (raw.startsWith('@')) return read(raw.slice(1))
  return raw
}

/** The JSON body the fields make: nested keys nest, `key[]` appends; a key given twice, or as a value and an object, is a usage error. */
export function bodyOf(fields: readonly Field[]): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const field of fields) {
    let at = body
    const name = field.keys.join('.')
    for (const key of field.keys.slice(0, -1)) {
      const next = at[key] ?? (at[key] = {})
      if (typeof next !== 'object' || next === null || Array.isArray(next)) throw usageError(`field ${name}: ${key} is already given a value`)
      at = next as Record<string, unknown>
    }
    const last = field.keys.at(-1)!
    const current = at[last]
    if (field.append) {
      if (current !== undefined && !Array.isArray(current)) throw usageError(`field ${name}[]: ${name} is already given a value`)
      at[last] = [...((current as unknown[] | undefined) ?? []), field.value]
    } else {
      if (current !== undefined) throw usageError(`field ${name} is given twice (write ${name}[]=… for a list)`)
      at[last] = field.value
    }
  }
  return body
}

/** A query value as text: JSON's null is an empty value, numbers and booleans as written. */
const queryText = (value: unknown) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value))

/** The fields as query parameters (after those written in the path): `key[]` repeats the key; nested keys have no place in a query. */
export function addToQuery(query: URLSearchParams, fields: readonly Field[]): URLSearchParams {
  const out = new URLSearchParams(query)
  for (const field of fields) {
    if (field.keys.length > 1)
      throw usageError(`field ${field.keys[0]}[${field.keys.slice(1).join('][')}]: a query has no nested fields (send a body: -X POST, or --input)`)
    out.append(field.keys[0]!, queryText(field.value))
  }
  return out
}

/** The method when none is named: GET, or POST when there is a body to send (fields or --input), as gh api does; GET with --paginate, which only a GET takes. */
export const defaultMethod = (hasBody: boolean, paginate = false) => (hasBody && !paginate ? 'POST' : 'GET')

/** Methods whose fields go into the query, never into a body. */
export const QUERY_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD'])

/** `Name: value` of -H (`Name:` alone: send no such header); anything else is a usage error. */
export function parseHeader(flag: string): [name: string, value: string] {
  const colon = flag.indexOf(':')
  const name = colon > 0 ? flag.slice(0, colon).trim() : ''
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw usageError(`-H '${flag}': expected 'Name: value'`)
  return [name, flag.slice(colon + 1).trim()]
}

/** The query of the next page: the same query with the page token the last answer named. */
export function nextPageQuery(query: URLSearchParams, token: string): URLSearchParams {
  const next = new URLSearchParams(query)
  next.set('page_token', token)
  return next
}

/**
 * The pages of a --paginate, joined: arrays are concatenated into one (every list of the platform
 * is an array); pages that are not all arrays are kept as a list of pages.
 */
export function joinPages(pages: readonly unknown[]): unknown {
  if (pages.length === 1) return pages[0]
  return pages.every(Array.isArray) ? (pages as unknown[][]).flat() : pages
}
