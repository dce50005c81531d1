import { csrfField, field, html, redirectWithNotice, type Raw } from '../../../lib/console/index.js'
import { auditContext } from '../../../lib/http.js'
import type { PageSession } from '../../../lib/pages.js'
import { ACMG_CLASSIFICATIONS, CLASSIFICATION_LABELS } from '../../../domain/reports/acmg.js'
import { INHERITANCE } from '../../../domain/reports/model.js'
import type { ReportVariantRecord } from '../../../domain/reports/model.js'
import { AddReportVariant, UpdateReportVariant } from '../schemas.js'
import { callerOf, linksOf, parseForm, problemOf, reportOr404, reportsConsole, type Problem } from './app.js'
import { reportPage } from './report.js'

/** A report's variants from the console: add one of the order's cache with its classification and criteria, change it, take it off. */

const CLASSIFICATION_OPTIONS = [
  { value: '', label: 'not classified' },
  ...ACMG_CLASSIFICATIONS.map((c) => ({ value: c, label: CLASSIFICATION_LABELS[c] })),
]
const INHERITANCE_OPTIONS = [{ value: '', label: 'not stated' }, ...INHERITANCE.map((i) => ({ value: i, label: i.replaceAll('_', ' ') }))]

/**
 * The form of a variant's classification on a report: to add (`variantId` of the order's cache) or
 * to change (`current`). Its element ids carry `key`, so that one page holds a form per variant.
 */
export function variantForm(opts: {
  session: PageSession
  action: string
  variantId?: string
  /** Ask for the variant's id (adding one by its id, not from the variants page). */
  askId?: boolean
  current?: ReportVariantRecord
  key?: string
  submit: string
  /** Why the form was refused: next to its fields, or above them when it is about none. */
  error?: Problem
  values?: Record<string, string>
}): Raw {
  const k = opts.key ?? 'new'
  const v = opts.values
  const cur = opts.current
  const errorOf = (name: string) => opts.error?.errors[name]
  const include = v ? v.include_in_report === 'yes' : (cur?.include_in_report ?? true)
  return html`<form method="post" action="${opts.action}" class="stack variant-form" id="variant-form-${k}">
    ${csrfField(opts.session)} ${opts.variantId ? html`<input type="hidden" name="variant_id" value="${opts.variantId}" />` : ''}
    ${
      opts.askId
        ? field({
            id: `${k}-variant-id`,
            name: 'variant_id',
            label: 'Variant id',
            value: v?.variant_id ?? '',
            hint: 'As the variants page shows it: ga4gh:VA.…',
            error: errorOf('variant_id'),
          })
        : ''
    }
    ${opts.error && !Object.keys(opts.error.errors).length ? html`<p class="notice warn" role="alert">${opts.error.detail}</p>` : ''}
    ${field({
      id: `${k}-classification`,
      name: 'acmg_classification',
      label: 'ACMG classification',
      value: v?.acmg_classification ?? cur?.acmg_classification ?? '',
      options: CLASSIFICATION_OPTIONS,
      error: errorOf('acmg_classification'),
    })}
    ${field({
      id: `${k}-criteria`,
      name: 'acmg_criteria',
      label: 'ACMG criteria',
      value: v?.acmg_criteria ?? cur?.acmg_criteria.join(' ') ?? '',
      hint: 'Separated by spaces or commas, with a ClinGen strength if not the default: PS2 PM2_Supporting PP3',
      error: errorOf('acmg_criteria'),
    })}
    ${field({
      id: `${k}-inheritance`,
      name: 'inheritance',
      label: 'Inheritance',
      value: v?.inheritance ?? cur?.inheritance ?? '',
      options: INHERITANCE_OPTIONS,
      error: errorOf('inheritance'),
    })}
    ${field({
      id: `${k}-interpretation`,
      name: 'interpretation',
      label: 'Interpretation',
      value: v?.interpretation ?? cur?.interpretation ?? '',
      multiline: true,
      error: errorOf('interpretation'),
    })}
    <div class="field check">
      <input type="checkbox" id="${k}-include" name="include_in_report" value="yes" ${include ? html`checked` : ''} />
      <label for="${k}-include">Include in the report</label>
    </div>
    <p class="actions"><button type="submit">${opts.submit}</button></p>
  </form>`
}

/** The form's fields as the API's overrides: empty selects and texts are "none" (null on a change, absent on an add). */
function overridesOf(form: { get(name: string): string }, blank: null | undefined) {
  const text = (name: string) => form.get(name) || blank
  const criteria = form
    .get('acmg_criteria')
    .split(/[\s,;]+/)
    .filter(Boolean)
  return {
    acmg_classification: text('acmg_classification'),
    acmg_criteria: criteria,
    inheritance: text('inheritance'),
    interpretation: text('interpretation'),
    include_in_report: form.get('include_in_report') === 'yes',
  }
}

const valuesOf = (form: { get(name: string): string }) =>
  Object.fromEntries(['acmg_classification', 'acmg_criteria', 'inheritance', 'interpretation', 'include_in_report'].map((n) => [n, form.get(n)]))

const strip = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

reportsConsole.post('/p/:project/reports/:id/variants', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const { form } = caller
  try {
    const { variant_id, ...overrides } = parseForm(AddReportVariant, strip({ variant_id: form.get('variant_id'), ...overridesOf(form, undefined) }))
    await c.get('deps').reports.addVariant(auditContext(c), caller.scope, report, variant_id, overrides, caller.user.id)
    return redirectWithNotice(c, linksOf(c, caller).report(report.id), 'Variant added to the report.')
  } catch (error) {
    return reportPage(c, caller, report, {
      form: 'new',
      error: await problemOf(c, error),
      values: { ...valuesOf(form), variant_id: form.get('variant_id') },
    })
  }
})

reportsConsole.post('/p/:project/reports/:id/variants/:variant', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const variantId = c.req.param('variant')
  const { form } = caller
  try {
    const overrides = parseForm(UpdateReportVariant, overridesOf(form, null))
    await c.get('deps').reports.updateVariant(auditContext(c), caller.scope, report, variantId, overrides, caller.user.id)
    return redirectWithNotice(c, `${linksOf(c, caller).report(report.id)}#variant-${encodeURIComponent(variantId)}`, 'Variant changed.')
  } catch (error) {
    return reportPage(c, caller, report, { form: variantId, error: await problemOf(c, error), values: valuesOf(form) })
  }
})

reportsConsole.post('/p/:project/reports/:id/variants/:variant/remove', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const variantId = c.req.param('variant')
  try {
    await c.get('deps').reports.removeVariant(auditContext(c), caller.scope, report, variantId, caller.user.id)
    return redirectWithNotice(c, linksOf(c, caller).report(report.id), 'Variant taken off the report (the variant cache is unchanged).')
  } catch (error) {
    return reportPage(c, caller, report, { form: variantId, error: await problemOf(c, error) })
  }
})
