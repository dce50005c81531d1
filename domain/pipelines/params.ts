import type { InputType, ItemType, PipelineInput, PipelineRecord } from './model.js'

const GS_URI_RE = /^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](\/.*)?$/

function checkScalar(type: ItemType | Exclude<InputType, 'array'>, value: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'expected a string'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : 'expected an integer'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number'
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected a boolean'
    case 'file':
      return typeof value === 'string' && GS_URI_RE.test(value) && !value.endsWith('/') && /^gs:\/\/[^/]+\/./.test(value)
        ? undefined
        : 'expected a file (gs://<bucket>/<object>)'
    case 'storage_path':
      return typeof value === 'string' && GS_URI_RE.test(value) ? undefined : 'expected a storage path (gs://<bucket>/<path>)'
  }
}

const NOUN: Record<ItemType, [string, string]> = {
  string: ['string', 'strings'],
  file: ['file', 'files'],
  storage_path: ['storage path', 'storage paths'],
}

function arrayExpectation(input: PipelineInput): string {
  const [one, many] = NOUN[input.items ?? 'string']
  const { min_items: min, max_items: max } = input
  if (min !== undefined && min === max) return `expected an array of ${min} ${min === 1 ? one : many}`
  if (min !== undefined && max !== undefined) return `expected an array of ${min} to ${max} ${many}`
  if (min !== undefined) return `expected an array of at least ${min} ${many}`
  if (max !== undefined) return `expected an array of at most ${max} ${many}`
  return `expected an array of ${many}`
}

function checkInput(input: PipelineInput, value: unknown): string | undefined {
  if (input.type !== 'array') return checkScalar(input.type, value)
  const expectation = arrayExpectation(input)
  if (!Array.isArray(value)) return expectation
  if (input.min_items !== undefined && value.length < input.min_items) return `${expectation}, got ${value.length}`
  if (input.max_items !== undefined && value.length > input.max_items) return `${expectation}, got ${value.length}`
  const bad = value.findIndex((v) => checkScalar(input.items ?? 'string', v) !== undefined)
  return bad >= 0 ? `${expectation}; entry ${bad}: ${checkScalar(input.items ?? 'string', value[bad])}` : undefined
}

/**
 * Every problem with `params` for this pipeline, each naming its param ("params.case_id: required"),
 * in the order the inputs are declared, then unknown names. Empty when the params are acceptable.
 * null counts as absent, so a client can send a full form with blanks.
 */
export function validateParams(pipeline: Pick<PipelineRecord, 'inputs' | 'additional_params'>, params: Record<string, unknown>): string[] {
  const problems: string[] = []
  for (const input of pipeline.inputs) {
    const value = params[input.name]
    if (value === undefined || value === null) {
      if (input.required) problems.push(`params.${input.name}: required`)
      continue
    }
    const problem = checkInput(input, value)
    if (problem) problems.push(`params.${input.name}: ${problem}`)
  }
  if (!pipeline.additional_params) {
    const known = new Set(pipeline.inputs.map((i) => i.name))
    for (const name of Object.keys(params)) {
      if (!known.has(name)) problems.push(`params.${name}: not an input of this pipeline`)
    }
  }
  return problems
}
