import { describe, expect, it } from 'vitest'
import { PLATFORM_PIPELINES } from '../../../../domain/pipelines/catalogue.js'
import { compareSemver, latestVersion, versionKey } from '../../../../domain/pipelines/versions.js'
import { defaultProblem, paramProblems } from '../../../../domain/pipelines/params.js'
import { type PipelineDefinition } from '../../../../domain/pipelines/model.js'

const pipeline = (slug: string, version?: string): PipelineDefinition => {
  const p = PLATFORM_PIPELINES.filter((d) => d.slug === slug && (!version || d.version === version)).at(-1)
  if (!p) throw new Error(`no seeded pipeline ${slug}`)
  return p
}

/** The problems as the API words them. */
const validateParams = (...args: Parameters<typeof paramProblems>) =>
  paramProblems(...args).map(({ param, problem }) => `params.${param}: ${problem}`)

const R1 = 'gs://demo-lab-demo/fastq/child_R1.fastq.gz'
const R2 = 'gs://demo-lab-demo/fastq/child_R2.fastq.gz'
const hereditaryOk = { case_id: 'CASE-1', child_fastq: [R1, R2] }
const nextflowOk = {
  nf_profile_name: 'google',
  analysis_name: 'a1',
  sample_id: 'S1',
  fastq_tumor: ['gs://tumor-bkt/t_R1.fq.gz', 'gs://tumor-bkt/t_R2.fq.gz'],
}

describe('paramProblems: params against the pipeline inputs', () => {
  const cases: Array<[what: string, slug: string, params: Record<string, unknown>, problems: string[]]> = [
    ['accepts the required hereditary-mock inputs', 'hereditary-mock', hereditaryOk, []],
    [
      'accepts every optional hereditary-mock input',
      'hereditary-mock',
      { ...hereditaryOk, mother_fastq: [R1, R2], father_fastq: [R1, R2], patient_sex: 'female', patient_age_years: 7, hpo_terms: ['HP:0001250'] },
      [],
    ],
    ['names each missing required input', 'hereditary-mock', {}, ['params.case_id: required', 'params.child_fastq: required']],
    ['treats null as missing', 'hereditary-mock', { case_id: null, child_fastq: [R1, R2] }, ['params.case_id: required']],
    [
      'refuses a single FASTQ where a pair is needed',
      'hereditary-mock',
      { case_id: 'C', child_fastq: [R1] },
      ['params.child_fastq: expected an array of 2 files, got 1'],
    ],
    [
      'refuses a string where an array is needed',
      'hereditary-mock',
      { case_id: 'C', child_fastq: R1 },
      ['params.child_fastq: expected an array of 2 files'],
    ],
    [
      'refuses a folder or a local path as a file',
      'hereditary-mock',
      { case_id: 'C', child_fastq: [R1, '/tmp/r2.fq'] },
      ['params.child_fastq: expected an array of 2 files; entry 1: expected a file (gs://<bucket>/<object>)'],
    ],
    ['refuses a number as a string', 'hereditary-mock', { case_id: 12, child_fastq: [R1, R2] }, ['params.case_id: expected a string']],
    [
      'refuses a fractional integer',
      'hereditary-mock',
      { ...hereditaryOk, patient_age_years: 7.5 },
      ['params.patient_age_years: expected an integer'],
    ],
    [
      'refuses a non-string HPO term',
      'hereditary-mock',
      { ...hereditaryOk, hpo_terms: ['HP:1', 2] },
      ['params.hpo_terms: expected an array of strings; entry 1: expected a string'],
    ],
    ['refuses an undeclared param', 'hereditary-mock', { ...hereditaryOk, caseid: 'x' }, ['params.caseid: not an input of this pipeline']],
    [
      'reports every problem at once, in declaration order',
      'hereditary-mock',
      { child_fastq: [R1], patient_sex: 1 },
      ['params.case_id: required', 'params.child_fastq: expected an array of 2 files, got 1', 'params.patient_sex: expected a string'],
    ],
    ['accepts the nextflow-minimal inputs', 'nextflow-minimal', nextflowOk, []],
    [
      'accepts a storage folder as a storage path',
      'nextflow-minimal',
      { ...nextflowOk, fastq_tumor: ['gs://tumor-bkt/run1/', 'gs://tumor-bkt/run2/'] },
      [],
    ],
    [
      'refuses three tumor FASTQ paths',
      'nextflow-minimal',
      { ...nextflowOk, fastq_tumor: ['gs://tumor-bkt/1', 'gs://tumor-bkt/2', 'gs://tumor-bkt/3'] },
      ['params.fastq_tumor: expected an array of 2 storage paths, got 3'],
    ],
    [
      'refuses a path that is not a gs:// URI',
      'nextflow-minimal',
      { ...nextflowOk, fastq_tumor: ['s3://b1/1', 'gs://tumor-bkt/2'] },
      ['params.fastq_tumor: expected an array of 2 storage paths; entry 0: expected a storage path (gs://<bucket>/<path>)'],
    ],
    [
      "refuses a value outside a string input's enum",
      'hereditary-mock',
      { ...hereditaryOk, patient_sex: 'F' },
      ['params.patient_sex: expected one of female, male, unknown'],
    ],
    ['accepts no params for wdl-minimal', 'wdl-minimal', {}, []],
    ['refuses any param for wdl-minimal', 'wdl-minimal', { x: 1 }, ['params.x: not an input of this pipeline']],
    [
      'passes any params through for nfcore-demo',
      'nfcore-demo',
      { input: 'gs://demo-lab-demo/samplesheet.csv', outdir: 'gs://demo-lab-demo/out/', max_cpus: 2 },
      [],
    ],
  ]
  it.each(cases)('%s', (_what, slug, params, problems) => {
    expect(validateParams(pipeline(slug), params)).toEqual(problems)
  })
})

describe('semantic versions', () => {
  it.each([
    ['1.10.0', '1.2.0', 1],
    ['1.2.0', '1.10.0', -1],
    ['2.0.0', '1.99.99', 1],
    ['1.0.0', '1.0.0-rc.1', 1],
    ['1.0.0-rc.2', '1.0.0-rc.10', -1],
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.beta', '1.0.0-alpha.1', 1],
    ['1.0.0+build.5', '1.0.0', 0],
  ])('orders %s against %s as %i', (a, b, sign) => {
    expect(Math.sign(compareSemver(a, b))).toBe(sign)
  })

  it('sorts version keys lexically in semantic-version order', () => {
    const versions = ['1.10.0', '1.2.0', '1.0.0-rc.1', '1.0.0', '10.0.0', '2.0.0']
    const byKey = [...versions].sort((a, b) => (versionKey(a) < versionKey(b) ? -1 : 1))
    expect(byKey).toEqual(['1.0.0-rc.1', '1.0.0', '1.2.0', '1.10.0', '2.0.0', '10.0.0'])
  })

  it('picks the highest version as latest', () => {
    expect(latestVersion([{ version: '1.2.0' }, { version: '1.10.0' }, { version: '1.9.9' }])?.version).toBe('1.10.0')
    expect(latestVersion([])).toBeUndefined()
  })
})

describe('params that name storage', () => {
  const pipeline = {
    inputs: [
      { name: 'fastq', type: 'array' as const, items: 'file' as const, required: true },
      { name: 'outdir', type: 'storage_path' as const, required: false },
    ],
    additional_params: true,
  }
  const scope = { projectBucket: 'lab-a', sharedBuckets: ['genomes'] }

  it("accepts the project's bucket and a shared reference bucket", () => {
    expect(
      validateParams(pipeline, { fastq: ['gs://lab-a/r1.fq.gz'], outdir: 'gs://genomes/GRCh38/', extra: { ref: 'gs://genomes/x.fa' } }, scope),
    ).toEqual([])
  })

  it("refuses another tenant's bucket in a declared input, an array entry and a pass-through param", () => {
    expect(
      validateParams(pipeline, { fastq: ['gs://lab-a/r1.fq.gz', 'gs://lab-b/r2.fq.gz'], outdir: 'gs://lab-b/out/', extra: ['gs://lab-b/x'] }, scope),
    ).toEqual([
      "params.fastq: expected an array of files; entry 1: gs://lab-b is not this project's bucket: use gs://lab-a/… or a shared reference bucket (genomes)",
      "params.outdir: gs://lab-b is not this project's bucket: use gs://lab-a/… or a shared reference bucket (genomes)",
      "params.extra: gs://lab-b is not this project's bucket: use gs://lab-a/… or a shared reference bucket (genomes)",
    ])
  })
})

describe("an input's declared default", () => {
  it.each([
    ['a string default of a string input', { name: 'g', type: 'string' as const, required: false, default: 'hello' }, undefined],
    ['an enum value', { name: 's', type: 'string' as const, required: false, enum: ['a', 'b'], default: 'b' }, undefined],
    ['a value outside the enum', { name: 's', type: 'string' as const, required: false, enum: ['a', 'b'], default: 'c' }, 'expected one of a, b'],
    ['a string for an integer', { name: 'n', type: 'integer' as const, required: false, default: '3' }, 'expected an integer'],
    [
      'an array shorter than its minimum',
      { name: 'f', type: 'array' as const, items: 'string' as const, min_items: 2, required: false, default: ['x'] },
      'expected an array of at least 2 strings, got 1',
    ],
    ['no default at all', { name: 'n', type: 'integer' as const, required: false }, undefined],
  ])('judges %s', (_what, input, problem) => {
    expect(defaultProblem(input)).toBe(problem)
  })

  it('is valid for every pipeline the platform registers', () => {
    for (const p of PLATFORM_PIPELINES) for (const input of p.inputs) expect(defaultProblem(input), `${p.slug} ${input.name}`).toBeUndefined()
  })
})
