import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import {
  checkForm,
  consoleProject,
  ownConsoleUrl,
  formRefusal,
  html,
  renderConsole,
  stopWithPage,
  withoutBlanks,
  type ConsoleProject,
  type ConsoleView,
  type Raw,
} from '../../../lib/console/index.js'
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

/**
 * A list page's filters, read with the API's own query schema (blank fields of the filter form are
 * absent): a bad value is a 400 page naming the field, as the API answers it.
 */
export function listQuery<T extends z.ZodType>(c: Context<ClinicalEnv>, schema: T, names: readonly string[]): z.infer<T> {
  const given = Object.fromEntries(names.map((n) => [n, c.req.query(n)?.trim()]))
  const checked = checkForm(schema, withoutBlanks(given))
  if (!checked.ok)
    return stopWithPage(
      c,
      400,
      Object.entries(checked.errors)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; '),
    )
  return checked.data
}

/** The field messages of a form, by field name; `_` holds what names no field (as the kernel's `checkForm`). */
export type FieldErrors = Record<string, string>
export type FormStatus = 400 | 403 | 404 | 409 | 412

/**
 * A store's refusal of a form (the kernel's `formRefusal`: a decision's 403 records its
 * access.denied) as field messages: the API's details name their field first (`mother_id: no such
 * subject`, `phenotypes.2: …`), so the message goes beside that field; a detail about the record as
 * a whole stays above the form.
 */
export async function refusedForm(
  c: Context<ClinicalEnv>,
  err: unknown,
  fields: readonly string[],
): Promise<{ status: FormStatus; errors: FieldErrors }> {
  const { status, detail } = await formRefusal(c, err)
  const named = /^([a-z_]+)[.:]/.exec(detail)?.[1]
  return { status, errors: { [named && fields.includes(named) ? named : '_']: detail } }
}

/** The form's message about the record as a whole, above the fields. */
export const formAlert = (errors: FieldErrors): Raw | '' =>
  errors._ ? html`<p class="notice warn" role="alert" id="form-error">${errors._}</p>` : ''

/** A multi-line text field (the kernel's `field` has inputs and selects), labelled and described alike. */
export function textArea(opts: { name: string; label: string; value?: string; hint?: string; error?: string; rows?: number; id?: string }): Raw {
  // `id` where one page has several forms with a field of the same name (each label must name its own field).
  const id = opts.id ?? `f-${opts.name}`
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

/** Where the project's pages live on this service: `{clinical}/console/p/<project id>`. */
export const projectBase = (c: Context<ClinicalEnv>, page: ConsoleProject) => ownConsoleUrl(c, `/p/${page.project.id}`)

/** A page of one form: its title as the heading above the form; `status` when it comes back with a refusal beside its fields. */
export const formPage = (
  c: Context<ClinicalEnv>,
  view: Omit<ConsoleView, 'title' | 'body'>,
  title: string,
  form: Raw,
  status: 200 | FormStatus = 200,
): Response =>
  renderConsole(
    c,
    {
      ...view,
      title,
      body: html`<h1>${title}</h1>
        ${form}`,
    },
    status,
  )
