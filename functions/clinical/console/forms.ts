import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { consoleProject, html, stopWithPage, type ConsoleProject, type Raw } from '../../../lib/console/index.js'
import { ApiError } from '../../../lib/errors.js'
import type { Permission } from '../../../lib/auth/roles.js'
import type { ClinicalEnv } from '../deps.js'

/**
 * What the clinical console's pages share: the project of the page set on the request as the API's
 * kernel sets it (so the API's own helpers, `projectOf`, `canFor`, `checkAssignee`, `toOrder`,
 * serve the pages unchanged), form values read into the API's own zod schemas, and a refusal turned
 * into the message shown beside the field it names.
 */

/** The page's caller and project (lib/console `consoleProject`), with the project set on the context for the API's helpers. */
export async function clinicalPage(c: Context<ClinicalEnv>, permission: Permission): Promise<ConsoleProject> {
  const page = await consoleProject(c, permission)
  c.set('project', page.project)
  return page
}

/** The field messages of a form, by field name; `''` holds what names no field. */
export type FieldErrors = Record<string, string>

/**
 * A list page's filters, read with the API's own query schema (blank fields of the filter form are
 * absent): a bad value is a 400 page naming the field, as the API answers it.
 */
export function listQuery<T extends z.ZodTypeAny>(c: Context<ClinicalEnv>, schema: T, names: readonly string[]): z.infer<T> {
  const given = Object.fromEntries(names.flatMap((n) => (c.req.query(n)?.trim() ? [[n, c.req.query(n)!.trim()]] : [])))
  const parsed = schema.safeParse(given)
  if (!parsed.success) return stopWithPage(c, 400, Object.values(schemaErrors(parsed.error)).join('; '))
  return parsed.data
}

/** The first message per top-level field of a schema's refusal, worded as the API words it (`field: message`). */
export function schemaErrors(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {}
  for (const issue of error.issues) {
    const name = String(issue.path[0] ?? '')
    out[name] ??= issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message
  }
  return out
}

/**
 * A store's refusal of a form (400, 404, 409) as field messages: the API's details name their field
 * first (`mother_id: no such subject`, `phenotypes.2: …`), so the message goes beside that field;
 * a detail about the record as a whole stays at the top of the form. A 403 and anything else is
 * not a form error: it is thrown on to the console's error page (which records the denial).
 */
export function refusalErrors(err: unknown, fields: readonly string[]): { status: 400 | 404 | 409; errors: FieldErrors } {
  if (!(err instanceof ApiError) || (err.status !== 400 && err.status !== 404 && err.status !== 409)) throw err
  const named = /^([a-z_]+)[.:]/.exec(err.detail)?.[1]
  const field = named && fields.includes(named) ? named : ''
  return { status: err.status, errors: { [field]: err.detail } }
}

/** The form's message about the record as a whole, above the fields. */
export const formAlert = (errors: FieldErrors): Raw | '' =>
  errors[''] ? html`<p class="notice warn" role="alert" id="form-error">${errors['']}</p>` : ''

/** A multi-line text field (the kernel's `field` has inputs and selects), labelled and described alike. */
export function textArea(opts: { name: string; label: string; value?: string; hint?: string; error?: string; rows?: number }): Raw {
  const id = `f-${opts.name}`
  const described = [opts.hint ? `${id}-hint` : '', opts.error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return html`<div class="field">
    <label for="${id}">${opts.label}</label>
    ${opts.hint ? html`<span class="hint" id="${id}-hint">${opts.hint}</span>` : ''}
    <textarea
      id="${id}"
      name="${opts.name}"
      rows="${opts.rows ?? 3}"
      ${described ? html` aria-describedby="${described}"` : ''}${opts.error ? html` aria-invalid="true"` : ''}
    >
${opts.value ?? ''}</textarea>
    ${opts.error ? html`<span class="error" id="${id}-error">${opts.error}</span>` : ''}
  </div>`
}

/** A value shown where a field would be, because it cannot change now; `why` when the page does not say it once above. */
export function frozenField(label: string, value: string, why?: string): Raw {
  return html`<div class="field frozen">
    <span class="label">${label}</span>
    <span><strong>${value || '—'}</strong> <span class="badge info">frozen</span></span>
    ${why ? html`<span class="hint">${why}</span>` : ''}
  </div>`
}

/** Options of a select from a value set, the current value selected by the kernel's `field`. */
export const optionsOf = (values: readonly string[], blank?: string) => [
  ...(blank !== undefined ? [{ value: '', label: blank }] : []),
  ...values.map((v) => ({ value: v, label: v.replaceAll('_', ' ') })),
]

/** Where a page of the project lives on this service. */
export const projectPath = (base: string, project: { id: string }, path: string) => `${base}/console/p/${project.id}/${path}`
