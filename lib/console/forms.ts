import type { z } from '@hono/zod-openapi'

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
