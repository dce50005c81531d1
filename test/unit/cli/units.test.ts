import { describe, expect, it } from 'vitest'
import { HttpError, UnreachableError, type PipelineInput } from '../../../cli/client.js'
import { CliError, explain } from '../../../cli/errors.js'
import { fields, table } from '../../../cli/format.js'
import { CLEAR_LINE, formatDuration, Output } from '../../../cli/output.js'
import { paramsFromFlags, parseParamsFile } from '../../../cli/params.js'
import { BUILTIN_PROFILES, normalizeUrl, SETTING_KEYS } from '../../../cli/settings.js'
import { SERVICES } from '../../../functions/services.js'
import { inputType } from '../../../cli/views.js'

const inputs: PipelineInput[] = [
  { name: 'sample_id', type: 'string', required: true },
  { name: 'threads', type: 'integer', required: false },
  { name: 'min_af', type: 'number', required: false },
  { name: 'dry_run', type: 'boolean', required: false },
  { name: 'fastq', type: 'array', items: 'storage_path', min_items: 2, max_items: 2, required: true },
]

describe('--param parsing', () => {
  it.each([
    [['sample_id=S1'], { sample_id: 'S1' }],
    [['sample_id=a=b'], { sample_id: 'a=b' }],
    [['threads=8', 'min_af=0.05', 'dry_run=yes'], { threads: 8, min_af: 0.05, dry_run: true }],
    [['fastq=gs://b/r1.fq, gs://b/r2.fq'], { fastq: ['gs://b/r1.fq', 'gs://b/r2.fq'] }],
    [['fastq=gs://b/r1.fq', 'fastq=gs://b/r2.fq'], { fastq: ['gs://b/r1.fq', 'gs://b/r2.fq'] }],
    [['fastq:=["x","y"]'], { fastq: ['x', 'y'] }],
    [['meta:={"sex":"female"}', 'undeclared=text'], { meta: { sex: 'female' }, undeclared: 'text' }],
  ])('%j gives %j', (flags, expected) => {
    expect(paramsFromFlags(inputs, flags)).toEqual(expected)
  })

  it.each([
    [['threads=eight'], "--param threads: expected an integer, got 'eight'"],
    [['min_af=lots'], "--param min_af: expected a number, got 'lots'"],
    [['dry_run=maybe'], "--param dry_run: expected true or false, got 'maybe'"],
    [['sample_id=a', 'sample_id=b'], '--param sample_id is given twice'],
    [['nothing'], "--param 'nothing': expected key=value or key:=JSON"],
    [['=x'], "--param '=x': expected key=value or key:=JSON"],
    [['bad key=x'], "'bad key' is not a parameter name"],
    [['meta:={'], '--param meta:= is not valid JSON'],
  ])('refuses %j as a usage error', (flags, message) => {
    let thrown: unknown
    try {
      paramsFromFlags(inputs, flags)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(CliError)
    expect((thrown as CliError).code).toBe(3)
    expect((thrown as CliError).message).toContain(message)
  })

  it('takes a params file only when it holds a JSON object', () => {
    expect(parseParamsFile('p.json', '{"case_id":"C1","child_fastq":["a","b"]}')).toEqual({ case_id: 'C1', child_fastq: ['a', 'b'] })
    expect(() => parseParamsFile('p.json', '["a"]')).toThrow('p.json must hold a JSON object')
    expect(() => parseParamsFile('p.json', '{oops')).toThrow('p.json is not valid JSON')
  })
})

describe('output', () => {
  it('aligns table columns without trailing spaces, showing empty cells as -', () => {
    const text = table(
      [
        { slug: 'wdl-minimal', tags: ['wdl', 'smoke-test'], name: 'WDL minimal' },
        { slug: 'x', tags: [], name: undefined },
      ],
      [
        { header: 'SLUG', value: (r) => r.slug },
        { header: 'TAGS', value: (r) => r.tags },
        { header: 'NAME', value: (r) => r.name },
      ],
    )
    expect(text).toBe(
      ['SLUG         TAGS             NAME', 'wdl-minimal  wdl, smoke-test  WDL minimal', 'x            -                -'].join('\n'),
    )
  })

  it('keeps the continuation lines of a multi-line value in the value column', () => {
    expect(
      fields([
        ['status', 'failed'],
        ['error', 'job failed\nstderr: boom'],
      ]),
    ).toBe('status  failed\nerror   job failed\n        stderr: boom')
  })

  it.each([
    [0, '0s'],
    [4.4, '4s'],
    [65, '1m 05s'],
    [3725, '1h 02m 05s'],
    [undefined, undefined],
  ])('formats a duration of %s seconds as %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text)
  })

  it('describes array inputs with their item type and count', () => {
    expect(inputType({ name: 'f', type: 'array', items: 'file', min_items: 2, max_items: 2, required: true })).toBe('array<file>[2]')
    expect(inputType({ name: 'f', type: 'array', items: 'string', min_items: 1, required: true })).toBe('array<string>[1..]')
    expect(inputType({ name: 'f', type: 'array', items: 'string', required: true })).toBe('array<string>')
    expect(inputType({ name: 'f', type: 'integer', required: true })).toBe('integer')
  })
})

describe('addresses and error messages', () => {
  it('keeps a service base address without trailing slashes or /api/v1', () => {
    expect(normalizeUrl('admin_url', 'https://admin.example.org/api/v1/')).toBe('https://admin.example.org')
    expect(normalizeUrl('admin_url', 'https://gw.example.org/admin/')).toBe('https://gw.example.org/admin')
    expect(() => normalizeUrl('admin_url', 'admin.example.org')).toThrow('admin_url must be an http(s) address')
  })

  it.each([
    [new HttpError('compute', 'GET', '/x', 401, 'token expired'), 4, 'not logged in or token expired: run platform login'],
    [new HttpError('compute', 'POST', '/x', 403, 'permission run.submit is required'), 5, 'permission denied: permission run.submit is required'],
    [new HttpError('compute', 'GET', '/x', 404, 'run not found'), 6, 'not found: run not found'],
    [new HttpError('compute', 'POST', '/x', 400, 'params.case_id: required'), 7, 'params.case_id: required'],
    [new HttpError('compute', 'DELETE', '/x', 409, 'the run has already finished'), 7, 'the run has already finished'],
    [new HttpError('compute', 'GET', '/x', 500, 'internal error', 'req-1'), 8, 'the compute service answered 500: internal error (request id req-1)'],
    [
      new UnreachableError('compute', 'http://127.0.0.1:8102', 'ECONNREFUSED'),
      8,
      'cannot reach the compute service at http://127.0.0.1:8102: is the local suite running? (npm start) (ECONNREFUSED)',
    ],
    [
      new UnreachableError('admin', 'https://admin.example.org', 'ENOTFOUND'),
      8,
      "cannot reach the admin service at https://admin.example.org: check the profile's address (platform config set url <admin address>) and your network (ENOTFOUND)",
    ],
  ])('explains %s with exit code %i', (error, code, message) => {
    expect(explain(error)).toEqual({ code, message })
  })

  it('explains a 401 to a request with PLATFORM_TOKEN as a bad PLATFORM_TOKEN, since logging in would not help', () => {
    expect(explain(new HttpError('admin', 'GET', '/x', 401, 'token revoked'), { tokenFromEnvironment: true })).toEqual({
      code: 4,
      message:
        'PLATFORM_TOKEN is invalid or expired (token revoked): set it to a valid personal access token, or unset it to use the credentials of platform login',
    })
  })
})

describe('profiles', () => {
  it("has the platform's address, an override for every service of the platform's registry, and the local profile at the default admin port", () => {
    expect(SETTING_KEYS).toEqual(['url', ...SERVICES.map((s) => `${s.name}_url`), 'project'])
    expect(BUILTIN_PROFILES.local).toEqual({ url: `http://127.0.0.1:${SERVICES.find((s) => s.name === 'admin')!.port}` })
  })
})

describe('the status line', () => {
  const streams = () => {
    const written = { out: '', err: '' }
    return { written, out: { write: (t: string) => (written.out += t) }, err: { write: (t: string) => (written.err += t) } }
  }

  it('is redrawn in place on a terminal and erased before the next line or note', () => {
    const { written, out, err } = streams()
    const output = new Output({ name: 'table' }, out, err, true)
    output.status('run  queued for 1s')
    output.status('run  queued for 2s')
    output.line('12:00:00Z  run  running')
    output.note('a note')
    output.clearStatus()
    expect(written.out).toBe(`${CLEAR_LINE}run  queued for 1s${CLEAR_LINE}run  queued for 2s${CLEAR_LINE}12:00:00Z  run  running\n`)
    expect(written.err).toBe('a note\n')
  })

  it('shows nothing without a terminal, or with --json', () => {
    for (const output of [
      new Output({ name: 'table' }, streams().out, streams().err, false),
      new Output({ name: 'json' }, streams().out, streams().err, true),
    ]) {
      expect(output.live).toBe(false)
    }
    const { written, out, err } = streams()
    new Output({ name: 'json' }, out, err, true).status('run  queued for 1s')
    expect(written.out).toBe('')
  })
})
