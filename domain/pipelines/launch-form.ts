import type { PipelineInput, PipelineRecord } from './model.js'

/**
 * A pipeline's launch form, as Seqera's is generated from nextflow_schema.json: one field per
 * declared input, whose text becomes the run's params. Pure: the console renders the fields and
 * posts them here, and the params go to the same submission as POST /runs, whose validation
 * (./params.ts) says what is wrong with each. So a field's text is converted only where it reads
 * as its type, and is otherwise kept as the text it is: "12x" for an integer input is refused by
 * that validation, next to its field, in the API's own words.
 *
 * Fields: strings, files and storage paths are one line of text (trimmed; empty is "not given");
 * an enum is a choice; integers and numbers are text; a boolean is a choice of true, false or not
 * given (an optional boolean left unset is not false); an array is one entry per line. A pipeline
 * that passes undeclared params through takes them as one JSON object.
 */

/** The form field of an input (the `param.` prefix keeps params apart from the form's own fields). */
export const paramField = (name: string) => `param.${name}`
/** The JSON object of undeclared params, for a pipeline that passes them through. */
export const EXTRA_FIELD = 'extra_params'

/** The text each field shows: the given params (a form shown again after a refusal), else each input's declared default. */
export function formValuesOf(
  pipeline: Pick<PipelineRecord, 'inputs' | 'additional_params'>,
  params?: Record<string, unknown>,
): Record<string, string> {
  const values: Record<string, string> = {}
  for (const input of pipeline.inputs) {
    const value = params ? params[input.name] : input.default
    if (value !== undefined && value !== null) values[paramField(input.name)] = textOf(value)
  }
  if (pipeline.additional_params && params) {
    const declared = new Set(pipeline.inputs.map((i) => i.name))
    const extra = Object.fromEntries(Object.entries(params).filter(([name]) => !declared.has(name)))
    if (Object.keys(extra).length) values[EXTRA_FIELD] = JSON.stringify(extra, null, 2)
  }
  return values
}

function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n')
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function valueOf(input: PipelineInput, text: string): unknown {
  switch (input.type) {
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : text
    case 'number': {
      const n = Number(text)
      return Number.isFinite(n) ? n : text
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text
    case 'array':
      return text
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter(Boolean)
    default:
      return text
  }
}

export interface FormParams {
  params: Record<string, unknown>
  /** What the form's own text says wrong before any param is checked: only the JSON of undeclared params. */
  problems: Array<{ param: string; problem: string }>
}

/** The run's params from the posted fields: an input whose field is empty (or absent) is not given. */
export function paramsFromForm(pipeline: Pick<PipelineRecord, 'inputs' | 'additional_params'>, fields: Readonly<Record<string, string>>): FormParams {
  const params: Record<string, unknown> = {}
  const problems: FormParams['problems'] = []
  if (pipeline.additional_params) {
    const text = fields[EXTRA_FIELD]?.trim()
    if (text) {
      let extra: unknown
      try {
        extra = JSON.parse(text)
      } catch {
        extra = undefined
      }
      if (extra && typeof extra === 'object' && !Array.isArray(extra)) Object.assign(params, extra)
      else problems.push({ param: EXTRA_FIELD, problem: 'expected a JSON object of params, like {"outdir": "gs://bucket/out/"}' })
    }
  }
  for (const input of pipeline.inputs) {
    const text = fields[paramField(input.name)]?.trim()
    if (!text) continue
    const value = valueOf(input, text)
    if (!Array.isArray(value) || value.length) params[input.name] = value
  }
  return { params, problems }
}

/** Tags as a form takes them: separated by commas, blanks dropped. */
export const tagsFromForm = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
