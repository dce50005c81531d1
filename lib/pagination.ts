import { FieldPath, Timestamp, type DocumentSnapshot, type Query } from '@google-cloud/firestore'
import type { Context } from 'hono'
import { z } from '@hono/zod-openapi'
import { badRequest } from './errors.js'
import type { AppEnv } from './http.js'
import { sha256 } from './ids.js'

/**
 * One pagination scheme for every list endpoint (Google AIP-158 with GitHub-style headers):
 * the body is a JSON array; `page_size` (default 50, max 1000; `limit` is a synonym) and
 * `page_token` select a page; `X-Next-Page-Token` and `Link: <…>; rel="next"` point at the next.
 * Tokens are opaque keyset cursors bound to the filters they were made with.
 */
export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 1000

const size = z.coerce.number().int().min(1).max(MAX_PAGE_SIZE)
export const PageQuery = z.object({
  page_size: size.optional().openapi({ description: `Items per page (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})` }),
  limit: size.optional().openapi({ description: 'Synonym of page_size' }),
  page_token: z.string().optional().openapi({ description: 'X-Next-Page-Token of the previous page' }),
})
export type PageQuery = z.infer<typeof PageQuery>

export const pageHeaders = {
  'X-Next-Page-Token': { description: 'Present when more items exist', schema: { type: 'string' as const } },
  Link: { description: 'RFC 8288 link to the next page (rel="next")', schema: { type: 'string' as const } },
}

type Encoded = { t: number; n: number } | string | number | boolean | null

function encodeValue(v: unknown): Encoded {
  if (v instanceof Timestamp) return { t: v.seconds, n: v.nanoseconds }
  if (v === undefined) return null
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) return v
  throw new Error(`cannot page on a value of type ${typeof v}`)
}
function decodeValue(v: Encoded): unknown {
  return v && typeof v === 'object' ? new Timestamp(v.t, v.n) : v
}

export interface PageRequest {
  /** Fields to order by, most significant first; the document id breaks ties. */
  orderBy: Array<[field: string, direction: 'asc' | 'desc']>
  /** Anything that changes the result set (filters); a token made with other filters is refused. */
  filters: Record<string, unknown>
  query: PageQuery
  /**
   * A condition the query cannot say (no index of its own serves it), checked on each document
   * read. Then at most SCAN_BUDGET documents beyond the page are read, so a page can be short (even
   * empty) and still carry a token, and a page costs the same however rare the matches.
   */
  post?: (doc: DocumentSnapshot) => boolean
}

export interface Page<T> {
  items: T[]
  nextPageToken?: string
}

/** Documents read per page at most, beyond the page itself, for conditions checked in memory. */
export const SCAN_BUDGET = 2000

export function pageSizeOf(query: PageQuery): number {
  if (query.page_size !== undefined && query.limit !== undefined && query.page_size !== query.limit) {
    throw badRequest('page_size and limit disagree; send one of them')
  }
  return query.page_size ?? query.limit ?? DEFAULT_PAGE_SIZE
}

export async function paginate<T>(base: Query, req: PageRequest, map: (doc: DocumentSnapshot) => T): Promise<Page<T>> {
  const pageSize = pageSizeOf(req.query)
  const filterKey = sha256(JSON.stringify(req.filters, Object.keys(req.filters).sort())).slice(0, 16)
  let q = base
  for (const [field, dir] of req.orderBy) q = q.orderBy(field, dir)
  const lastDir = req.orderBy.at(-1)?.[1] ?? 'asc'
  q = q.orderBy(FieldPath.documentId(), lastDir)
  let after: unknown[] | undefined
  if (req.query.page_token) {
    const cursor = decodeToken(req.query.page_token)
    if (cursor.f !== filterKey) throw badRequest('page_token was made for other filters; start again without it')
    if (cursor.v.length !== req.orderBy.length) throw badRequest('page_token is not valid here')
    after = [...cursor.v.map(decodeValue), cursor.id]
  }
  const tokenAt = (doc: DocumentSnapshot) => encodeToken({ v: req.orderBy.map(([field]) => encodeValue(doc.get(field))), id: doc.id, f: filterKey })
  const items: T[] = []
  const limit = pageSize + SCAN_BUDGET
  let read = 0
  let last: DocumentSnapshot | undefined
  // Without a condition in memory this is one read of a page and one more document (is there a next page?).
  for (;;) {
    const chunk = req.post ? Math.min(Math.max(pageSize * 2, 200), limit - read) : pageSize + 1
    const snap = await (after ? q.startAfter(...after) : q).limit(chunk).get()
    for (const doc of snap.docs) {
      read++
      if (!req.post || req.post(doc)) {
        // A match beyond a full page: there is a next page, which starts after the document before it.
        if (items.length === pageSize) return { items, nextPageToken: tokenAt(last!) }
        items.push(map(doc))
      }
      last = doc
    }
    if (snap.docs.length < chunk) return { items }
    if (read >= limit) return { items, nextPageToken: tokenAt(last!) }
    after = [...req.orderBy.map(([field]) => last!.get(field)), last!.id]
  }
}

interface Cursor {
  v: Encoded[]
  id: string
  f: string
}

function encodeToken(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url')
}

function decodeToken(token: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Cursor
    if (!Array.isArray(c.v) || typeof c.id !== 'string' || typeof c.f !== 'string') throw new Error('shape')
    return c
  } catch {
    throw badRequest('page_token is not valid')
  }
}

/**
 * Sets X-Next-Page-Token and the Link header, and returns the items as the JSON array body. The
 * link starts with the service's public base address where one is configured (`publicBase`, lib/http.ts):
 * the request's path has lost the prefix a front end strips (the function's name on the shared
 * cloudfunctions.net host), so a link relative to the host's root would reach another service.
 */
export function pageResponse<T>(c: Context, page: Page<T>, status: 200 = 200) {
  if (page.nextPageToken) {
    const url = new URL(c.req.url)
    url.searchParams.set('page_token', page.nextPageToken)
    const base = (c as unknown as Context<AppEnv>).get('publicBase') ?? ''
    c.header('X-Next-Page-Token', page.nextPageToken)
    c.header('Link', `<${base}${url.pathname}${url.search}>; rel="next"`)
  }
  return c.json(page.items, status)
}

/**
 * The same scheme over a list already in memory (a union of several queries, small by nature,
 * such as the projects a user can see, or the versions of a pipeline). Items are ordered by `key`,
 * which must be unique, with `compare` (lexical by default); the cursor is the last key seen.
 */
export function paginateArray<T>(
  items: T[],
  key: (item: T) => string,
  req: Omit<PageRequest, 'orderBy'>,
  compare: (a: string, b: string) => number = (a, b) => (a < b ? -1 : a > b ? 1 : 0),
): Page<T> {
  const pageSize = pageSizeOf(req.query)
  const filterKey = sha256(JSON.stringify(req.filters, Object.keys(req.filters).sort())).slice(0, 16)
  const sorted = [...items].sort((a, b) => compare(key(a), key(b)))
  let start = 0
  if (req.query.page_token) {
    const cursor = decodeToken(req.query.page_token)
    if (cursor.f !== filterKey) throw badRequest('page_token was made for other filters; start again without it')
    start = sorted.findIndex((item) => compare(key(item), cursor.id) > 0)
    if (start < 0) start = sorted.length
  }
  const page = sorted.slice(start, start + pageSize)
  const last = page.at(-1)
  const more = start + pageSize < sorted.length
  return { items: page, nextPageToken: more && last ? encodeToken({ v: [], id: key(last), f: filterKey }) : undefined }
}
