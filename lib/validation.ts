import type { z } from '@hono/zod-openapi'

/**
 * Bounds for free-form JSON that the platform stores (run params, definitions): Firestore refuses
 * a document over 1 MiB, maps and arrays nested deeper than 20 levels, an array directly inside
 * an array, and field names of the form __x__. These limits are checked when a request is
 * validated, so that a client gets a 400 naming the field, never a database error.
 */
export interface StorableLimits {
  /** Levels of nesting below the field itself (Firestore allows 20 in the whole document). */
  maxDepth: number
  /** Size of the field as JSON, in bytes. */
  maxBytes: number
  /** Keys and values in all, which bounds the document's index entries. */
  maxValues: number
}

export const PARAMS_LIMITS: StorableLimits = { maxDepth: 10, maxBytes: 256 * 1024, maxValues: 5000 }
export const DEFINITION_LIMITS: StorableLimits = { maxDepth: 10, maxBytes: 512 * 1024, maxValues: 20_000 }

const RESERVED_KEY = /^__.*__$/

export interface StorableProblem {
  /** Below the checked field; empty for the field itself. */
  path: Array<string | number>
  message: string
}

/** The first reason `value` cannot be stored within `limits`; undefined when it can. */
export function storableProblem(value: unknown, limits: StorableLimits): StorableProblem | undefined {
  let values = 0
  // Iterative, so that a value nested 100,000 levels deep cannot exhaust the stack; the size is
  // measured only once the depth is known to be bounded.
  const stack: Array<{ v: unknown; path: Array<string | number>; inArray: boolean }> = [{ v: value, path: [], inArray: false }]
  while (stack.length) {
    const { v, path, inArray } = stack.pop()!
    values += 1
    if (values > limits.maxValues) return { path: [], message: `more than ${limits.maxValues} keys and values` }
    if (v === null || typeof v !== 'object') continue
    if (path.length >= limits.maxDepth) return { path, message: `nested deeper than ${limits.maxDepth} levels` }
    if (Array.isArray(v)) {
      if (inArray) return { path, message: 'an array directly inside an array cannot be stored; put it in an object' }
      v.forEach((item, i) => stack.push({ v: item, path: [...path, i], inArray: true }))
      continue
    }
    for (const [key, item] of Object.entries(v)) {
      if (!key || RESERVED_KEY.test(key) || Buffer.byteLength(key) > 1500) return { path, message: `'${key.slice(0, 40)}' is not a usable key` }
      stack.push({ v: item, path: [...path, key], inArray: false })
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '')
  if (bytes > limits.maxBytes) {
    return {
      path: [],
      message: `${Math.ceil(bytes / 1024)} KiB is more than the ${Math.floor(limits.maxBytes / 1024)} KiB that can be stored; pass large values as files`,
    }
  }
  return undefined
}

/** A zod refinement: the field must be storable within `limits` (a 400 naming the field, or the part of it, otherwise). */
export const storable =
  (limits: StorableLimits) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    const problem = storableProblem(value, limits)
    if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path })
  }
