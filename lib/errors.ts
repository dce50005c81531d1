import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ZodError } from 'zod'
import { isEmulatorAbort, LostRace } from './db.js'
import type { Logger } from './log.js'

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 412 | 413 | 429 | 500

/** The one error type of the platform. Its status is chosen where it is thrown, never from its text. */
export class ApiError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly detail: string,
    /** Headers the answer carries, e.g. Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
    this.name = 'ApiError'
  }
}

export const badRequest = (detail: string) => new ApiError(400, detail)
export const unauthorized = (detail = 'authentication required') => new ApiError(401, detail)
export const forbidden = (detail = 'insufficient permissions') => new ApiError(403, detail)
export const notFound = (what: string) => new ApiError(404, `${what} not found`)
export const conflict = (detail: string) => new ApiError(409, detail)

/** "params.case_id: required; tags.0: expected string" */
export function describeZodError(error: ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.')
      const message = issue.code === 'invalid_type' && issue.input === undefined ? 'required' : issue.message
      return path ? `${path}: ${message}` : message
    })
    .join('; ')
}

/** The shared validation hook of every OpenAPIHono app: a zod failure is a 400 naming the field. */
export function defaultHook(result: { success: true } | { success: false; error: ZodError; target?: string }, c: Context) {
  if (!result.success) {
    const where = result.target === 'json' ? '' : result.target === 'param' ? 'path' : (result.target ?? '')
    return c.json({ detail: describeZodError(result.error, where) }, 400)
  }
  return undefined
}

/** A create that found its document there already (gRPC ALREADY_EXISTS). */
export function isAlreadyExists(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 6
}

/**
 * A Firestore transaction that lost to concurrent ones: still losing when Db.transaction stopped
 * running it again (LostRace), aborted (gRPC ABORTED), or beaten to a document it meant to create
 * (ALREADY_EXISTS). Nothing was
 * written; the request may be sent again. The Firestore emulator reports a transaction it aborted
 * for a concurrent one as INVALID_ARGUMENT "Transaction is invalid or closed" on the next read,
 * which the client library does not retry: the same loss, so the same answer.
 */
export function isContention(err: unknown): boolean {
  if (err instanceof LostRace) return true
  if (typeof err !== 'object' || err === null) return false
  const { code } = err as { code?: unknown }
  return code === 10 || isAlreadyExists(err) || isEmulatorAbort(err)
}

export function errorHandler(fallback: Logger) {
  return (err: Error, c: Context) => {
    // The request's own logger (its id and trace on the line), unless the error came before it had one.
    const log = (c.get('deps' as never) as { log?: Logger } | undefined)?.log ?? fallback
    if (err instanceof ApiError) {
      if (err.status === 401) c.header('WWW-Authenticate', 'Bearer')
      for (const [name, value] of Object.entries(err.headers)) c.header(name, value)
      return c.json({ detail: err.detail }, err.status)
    }
    if (err instanceof HTTPException && err.status < 500) {
      // Hono's own rejections (a malformed JSON body, for one) are client errors.
      const detail = err.message || 'bad request'
      return c.json({ detail }, err.status)
    }
    if (isContention(err)) {
      log.warn('transaction contention', { path: c.req.path, method: c.req.method, error: err })
      return c.json({ detail: 'the record was changed by concurrent requests; nothing was saved, send the request again' }, 409)
    }
    log.error('unhandled error', { path: c.req.path, method: c.req.method, error: err })
    return c.json({ detail: 'internal error' }, 500)
  }
}
