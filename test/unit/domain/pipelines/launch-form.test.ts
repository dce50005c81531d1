import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PLATFORM_PIPELINES } from '../../../../domain/pipelines/catalogue.js'
import { EXTRA_FIELD, formValuesOf, paramField, paramsFromForm, tagsFromForm } from '../../../../domain/pipelines/launch-form.js'
import type { PipelineInput } from '../../../../domain/pipelines/model.js'
import { paramProblems } from '../../../../domain/pipelines/params.js'

const INPUTS: PipelineInput[] = [
  { name: 'case_id', type: 'string', required: true },
  { name: 'sex', type: 'string', required: false, enum: ['female', 'male', 'unknown'] },
  { name: 'age', type: 'integer', required: false },
  { name: 'score', type: 'number', required: false },
  { name: 'joint', type: 'boolean', required: false },
  { name: 'reads', type: 'array', items: 'file', min_items: 2, max_items: 2, required: true },
  { name: 'outdir', type: 'storage_path', required: false },
]
const pipeline = { inputs: INPUTS, additional_params: false }
const fields = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [paramField(k), v]))

describe('paramsFromForm: the fields of a launch form as a run’s params', () => {
  it.each<[string, Record<string, string>, Record<string, unknown>]>([
    ['trims text and leaves empty fields out', { case_id: '  C1 ', outdir: '', sex: '' }, { case_id: 'C1' }],
    ['reads an integer, a number and a boolean', { age: '7', score: '0.25', joint: 'false' }, { age: 7, score: 0.25, joint: false }],
    ['keeps a boolean left unset out (it is not false)', { joint: '' }, {}],
    [
      'takes one array entry per line, blank lines dropped',
      { reads: 'gs://b/r1.fq\r\n\n  gs://b/r2.fq \n' },
      { reads: ['gs://b/r1.fq', 'gs://b/r2.fq'] },
    ],
    ['keeps text that is not its type as text, for the validation to name', { age: '7.5', score: 'lots' }, { age: '7.5', score: 'lots' }],
  ])('%s', (_what, values, params) => {
    expect(paramsFromForm(pipeline, fields(values))).toEqual({ params, problems: [] })
  })

  it('leaves the wrong text to the same validation as POST /runs, next to its field', () => {
    const { params } = paramsFromForm(pipeline, fields({ age: 'seven', reads: 'gs://b/r1.fq', sex: 'F' }))
    expect(paramProblems(pipeline, params)).toEqual([
      { param: 'case_id', problem: 'required' },
      { param: 'sex', problem: 'expected one of female, male, unknown' },
      { param: 'age', problem: 'expected an integer' },
      { param: 'reads', problem: 'expected an array of 2 files, got 1' },
    ])
  })

  it('ignores fields that are no input of the pipeline', () => {
    expect(paramsFromForm(pipeline, { ...fields({ case_id: 'C' }), 'param.other': 'x', csrf_token: 't' }).params).toEqual({ case_id: 'C' })
  })

  it('takes undeclared params as one JSON object where the pipeline passes them through, and says when it is not one', () => {
    const open = { inputs: [], additional_params: true }
    expect(paramsFromForm(open, { [EXTRA_FIELD]: '{"outdir": "gs://b/out/", "max_cpus": 2}' })).toEqual({
      params: { outdir: 'gs://b/out/', max_cpus: 2 },
      problems: [],
    })
    for (const text of ['[1]', 'outdir=x', '"x"']) {
      expect(paramsFromForm(open, { [EXTRA_FIELD]: text }).problems).toEqual([
        { param: EXTRA_FIELD, problem: expect.stringContaining('JSON object') },
      ])
    }
    // A pipeline that takes only its declared inputs never reads the field.
    expect(paramsFromForm(pipeline, { [EXTRA_FIELD]: '{"x": 1}' }).params).toEqual({})
  })

  it('reads tags separated by commas', () => {
    expect(tagsFromForm(' trio, urgent ,,')).toEqual(['trio', 'urgent'])
    expect(tagsFromForm(undefined)).toEqual([])
  })
})

describe('formValuesOf: what the fields show', () => {
  it("starts from each input's declared default", () => {
    const hello = PLATFORM_PIPELINES.find((p) => p.slug === 'hello-local')!
    expect(formValuesOf(hello)).toEqual({ [paramField('greeting')]: 'hello' })
    const trio = PLATFORM_PIPELINES.find((p) => p.slug === 'trio-local')!
    expect(formValuesOf(trio)).toEqual({ [paramField('records')]: '300' })
  })

  it('shows the params given, undeclared ones as JSON', () => {
    expect(formValuesOf({ inputs: [], additional_params: true }, { outdir: 'gs://b/o/' })).toEqual({ [EXTRA_FIELD]: '{\n  "outdir": "gs://b/o/"\n}' })
  })
})

/** Valid params of INPUTS as a person can type them: text trimmed, array entries on one line each. */
const line = fc
  .string({ minLength: 1, maxLength: 30 })
  .map((s) => s.replace(/[\r\n]/g, ' ').trim())
  .filter(Boolean)
const validParams = fc.record(
  {
    case_id: line,
    sex: fc.constantFrom('female', 'male', 'unknown'),
    age: fc.integer(),
    score: fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 ? 0 : x)),
    joint: fc.boolean(),
    reads: fc.tuple(line, line).map(([a, b]) => [`gs://bucket/${a}`, `gs://bucket/${b}`]),
    outdir: line.map((s) => `gs://bucket/${s}/`),
  },
  { requiredKeys: ['case_id', 'reads'] },
)

describe('the launch form, as properties', () => {
  it('gives back exactly the params it shows (any valid params survive the form unchanged)', () => {
    fc.assert(
      fc.property(validParams, (params) => {
        expect(paramsFromForm(pipeline, formValuesOf(pipeline, params))).toEqual({ params, problems: [] })
      }),
    )
  })

  it('reads any posted fields without throwing, and only into declared inputs', () => {
    const names = INPUTS.map((i) => paramField(i.name))
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string()), fc.string()), (posted) => {
        const { params, problems } = paramsFromForm(pipeline, posted)
        expect(problems).toEqual([])
        for (const name of Object.keys(params)) expect(INPUTS.map((i) => i.name)).toContain(name)
      }),
    )
  })
})
