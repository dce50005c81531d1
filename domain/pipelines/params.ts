import type { InputType, ItemType, PipelineInput, PipelineRecord } from './model.js'

const GS_URI_RE = /^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](\/.*)?$/

/** Where params that name storage may point: the project's own bucket and the platform's shared reference buckets. */
export interface StorageScope {
  projectBucket: string
  sharedBuckets: readonly string[]
}

function checkBucket(value: string, scope: StorageScope | undefined): string | undefined {
  if (!scope) return undefined
  const bucket = value.slice('gs://'.length).split('/')[0]!
  if (bucket === scope.projectBucket || scope.sharedBuckets.includes(bucket)) return undefined
  const shared = scope.sharedBuckets.length ? ` or a shared reference bucket (${scope.sharedBuckets.join(', ')})` : ''
  return `gs://${bucket} is not this project's bucket: use gs://${scope.projectBucket}/…${shared}`
}

function checkScalar(type: ItemType | Exclude<InputType, 'array'>, value: unknown, scope?: StorageScope): string | undefined {
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
        ? checkBucket(value, scope)
        : 'expected a file (gs://<bucket>/<object>)'
    case 'storage_path':
      return typeof value === 'string' && GS_URI_RE.test(value) ? checkBucket(value, scope) : 'expected a storage path (gs://<bucket>/<path>)'
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

function checkInput(input: PipelineInput, value: unknown, scope?: StorageScope): string | undefined {
  if (input.type !== 'array') {
    const problem = checkScalar(input.type, value, scope)
    if (problem || !input.enum || input.enum.includes(value as string)) return problem
    return `expected one of ${input.enum.join(', ')}`
  }
  const expectation = arrayExpectation(input)
  if (!Array.isArray(value)) return expectation
  if (input.min_items !== undefined && value.length < input.min_items) return `${expectation}, got ${value.length}`
  if (input.max_items !== undefined && value.length > input.max_items) return `${expectation}, got ${value.length}`
  const bad = value.findIndex((v) => checkScalar(input.items ?? 'string', v, scope) !== undefined)
  return bad >= 0 ? `${expectation}; entry ${bad}: ${checkScalar(input.items ?? 'string', value[bad], scope)}` : undefined
}

/** What a declared input's own default is wrong about (its type, its enum), or undefined: checked when a pipeline is created. */
export function defaultProblem(input: PipelineInput): string | undefined {
  return input.default === undefined ? undefined : checkInput(input, input.default)
}

/**
 * Every problem with `params` for this pipeline, each with the param it is about (the API says
 * "params.case_id: required", a form shows it next to its field), in the order the inputs are
 * declared, then unknown names. Empty when the params are acceptable.
 * null counts as absent, so a client can send a full form with blanks. With a `scope`, every file
 * and storage path must be in the project's bucket or a shared reference bucket: a run never reads
 * or writes another tenant's data.
 */
export function paramProblems(
  pipeline: Pick<PipelineRecord, 'inputs' | 'additional_params'>,
  params: Record<string, unknown>,
  scope?: StorageScope,
): Array<{ param: string; problem: string }> {
  const problems: Array<{ param: string; problem: string }> = []
  for (const input of pipeline.inputs) {
    const value = params[input.name]
    if (value === undefined || value === null) {
      if (input.required) problems.push({ param: input.name, problem: 'required' })
      continue
    }
    const problem = checkInput(input, value, scope)
    if (problem) problems.push({ param: input.name, problem })
  }
  const known = new Set(pipeline.inputs.map((i) => i.name))
  for (const [name, value] of Object.entries(params)) {
    if (known.has(name)) continue
    if (!pipeline.additional_params) problems.push({ param: name, problem: 'not an input of this pipeline' })
    else if (scope) {
      // Undeclared params pass through to the pipeline: any storage URI among them is held to the same rule.
      const uri = storageUris(value).find((u) => checkBucket(u, scope))
      if (uri) problems.push({ param: name, problem: checkBucket(uri, scope)! })
    }
  }
  return problems
}

/** Every gs:// string inside a JSON value. */
function storageUris(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith('gs://') ? [value] : []
  if (value && typeof value === 'object') return Object.values(value).flatMap(storageUris)
  return []
}
