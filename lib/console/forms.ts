import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { Refused, refusalReason } from '../decision.js'
import { ApiError } from '../errors.js'
import { recordDenial, type AppEnv } from '../http.js'

/**
 * A console form checked with the API's own request schema (the same rules, the same words), its
 * problems keyed by the field they are about, so each is shown next to its field.
 */
export type FormCheck<T> = { ok: true; data: T } | { ok: false; errors: Record<string, string> }

export function checkForm<S extends z.ZodType>(schema: S, values: unknown): FormCheck<z.infer<S>> {
  const result = schema.safeParse(values)
  if (result.success) return { ok: true, data: result.data }
  const errors: Record<string, string> = {}
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? '_')
    errors[key] ??= issue.message
  }
  return { ok: false, errors }
}

/** Empty fields as absent: a form sends '' for a field left blank, the API's schemas mean "not given" by leaving it out. */
export const withoutBlanks = (values: Record<string, string | string[] | undefined>) =>
  Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== ''))

/**
 * What a refused form shows: the refusal's status and text (to put next to the field it is
 * about), its access.denied event recorded first when it is a decision's 403 with a place to
 * record it, as the API's error handler does. Anything that is not a client error is thrown on.
 */
export async function formRefusal<E extends AppEnv>(c: Context<E>, error: unknown): Promise<{ status: 400 | 403 | 404 | 409 | 412; detail: string }> {
  if (!(error instanceof ApiError) || !FORM_STATUSES.has(error.status)) throw error
  if (error instanceof Refused && error.status === 403 && error.on) await recordDenial(c, refusalReason(error.refusal), error.on)
  return { status: error.status as 400 | 403 | 404 | 409 | 412, detail: error.detail }
}
const FORM_STATUSES = new Set<number>([400, 403, 404, 409, 412])
