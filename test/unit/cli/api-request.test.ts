import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SERVICES } from '../../../cli/api/services.js'
import {
  addToQuery,
  bodyOf,
  defaultMethod,
  fit,
  joinPages,
  nextPageQuery,
  parseHeader,
  route,
  splitField,
  typedValue,
  type Field,
  type ServiceApi,
} from '../../../cli/api-request.js'
import type { Report } from '../../../cli/client.js'
import { CliError } from '../../../cli/errors.js'
import { currentReport } from '../../../cli/names.js'

/** The services' documents as the CLI ships them. */
const apis: ServiceApi[] = SERVICES.map(({ name }) => ({
  name,
  paths: Object.keys(
    (JSON.parse(readFileSync(new URL(`../../../cli/api/${name}.openapi.json`, import.meta.url), 'utf8')) as { paths: object }).paths,
  ),
}))

const usage = (f: () => unknown) => {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(CliError)
    return (error as CliError).message
  }
  throw new Error('no error')
}

describe('which service owns a path (platform api)', () => {
  it.each([
    ['/runs', 'compute', '/api/v1/runs'],
    ['runs?status=running', 'compute', '/api/v1/runs'],
    ['/api/v1/runs/hello-local-20261122T171710Z', 'compute', '/api/v1/runs/hello-local-20261122T171710Z'],
    ['/orders/ORD-2026-000123', 'clinical', '/api/v1/orders/ORD-2026-000123'],
    ['/orders/ORD-2026-000123/variants', 'variant_cache', '/api/v1/orders/ORD-2026-000123/variants'],
    ['/orders/ORD-2026-000123/status', 'variant_cache', '/api/v1/orders/ORD-2026-000123/status'],
    ['/orders/ORD-2026-000123/samplesheet', 'clinical', '/api/v1/orders/ORD-2026-000123/samplesheet'],
    ['/variants', 'clinical', '/api/v1/variants'],
    ['/reports/6a1f0c3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b/comments', 'reports', '/api/v1/reports/6a1f0c3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b/comments'],
    ['/files/upload-url', 'files', '/api/v1/files/upload-url'],
    ['/events', 'audit', '/api/v1/events'],
    ['/projects', 'admin', '/api/v1/projects'],
    ['/users/me', 'admin', '/api/v1/users/me'],
  ])('%s goes to the %s service as %s', (input, service, path) => {
    expect(route(apis, input)).toMatchObject({ service, path })
  })

  it('names the template the path fits, the one with most literal segments', () => {
    expect(route(apis, '/pipelines/slug/hello-local').template).toBe('/api/v1/pipelines/slug/{slug}')
    expect(route(apis, '/orders/ORD-1/variants/ga4gh:VA.x').template).toBe('/api/v1/orders/{order_id}/variants/{variant_id}')
    expect(route(apis, '/openapi.json', 'files').template).toBeUndefined()
  })

  it('keeps the query written in the path', () => {
    expect(route(apis, '/runs?status=running&page_size=5').query.toString()).toBe('status=running&page_size=5')
  })

  it('asks for --service when no document has the path', () => {
    expect(usage(() => route(apis, '/openapi.json'))).toMatch(/no service documents the path \/openapi\.json: pass --service/)
    expect(usage(() => route(apis, '/runs/a/b/c/d'))).toMatch(/pass --service/)
  })

  it('sends a path the named service does not document as written, and one it does under /api/v1', () => {
    expect(route(apis, '/openapi.json', 'files')).toMatchObject({ service: 'files', path: '/openapi.json' })
    expect(route(apis, '/files', 'files')).toMatchObject({ service: 'files', path: '/api/v1/files' })
    expect(usage(() => route(apis, '/files', 'nowhere'))).toMatch(/no service 'nowhere'/)
  })

  it('asks for --service when two services fit a path equally, and takes the one with more literal segments', () => {
    const both: ServiceApi[] = [
      { name: 'a', paths: ['/api/v1/things/{id}'] },
      { name: 'b', paths: ['/api/v1/things/{thing_id}', '/api/v1/things/special'] },
    ]
    expect(usage(() => route(both, '/things/1'))).toMatch(/\/api\/v1\/things\/1 is in the APIs of a and b: pass --service/)
    expect(route(both, '/things/special').service).toBe('b')
    expect(route(both, '/things/1', 'a').service).toBe('a')
  })

  it('routes every documented path, its parameters filled with ids, to the service that documents it (no two documents overlap)', () => {
    const templates = apis.flatMap((api) => api.paths.map((path) => ({ service: api.name, path })))
    fc.assert(
      fc.property(fc.constantFrom(...templates), fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,30}$/), ({ service, path }, id) => {
        const filled = path.replace(/\{[^}]+\}/g, `x${id}`)
        expect(route(apis, filled)).toMatchObject({ service, path: filled })
        // Without the prefix, with a query: the same service and path.
        expect(route(apis, filled.slice('/api/v1'.length) + '?a=1')).toMatchObject({ service, path: filled })
      }),
    )
  })

  it('fits a template segment by segment: parameters take any one segment, literals only themselves', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('{id}', '{x}'), fc.stringMatching(/^[a-z]{1,6}$/)), { minLength: 1, maxLength: 6 }),
        (segments) => {
          const template = '/' + segments.join('/')
          const path = '/' + segments.map((s, i) => (s.startsWith('{') ? `v${i}` : s)).join('/')
          expect(fit(template, path)).toBe(segments.filter((s) => !s.startsWith('{')).length)
          expect(fit(template, path + '/extra')).toBeUndefined()
        },
      ),
    )
  })
})

describe('fields (gh api)', () => {
  const read = (file: string) => `<${file}>`
  it.each([
    ['true', true],
    ['false', false],
    ['null', null],
    ['42', 42],
    ['-3.5', -3.5],
    ['1e3', 1000],
    ['007', '007'],
    ['12abc', '12abc'],
    ['@notes.txt', '<notes.txt>'],
    ['@-', '<->'],
    ['HP:0001250', 'HP:0001250'],
    ['', ''],
  ])('-F k=%j is %j', (raw, value) => {
    expect(typedValue(raw, read)).toEqual(value)
  })

  it.each([
    ['a=1', ['a'], false, '1'],
    ['a[]=1', ['a'], true, '1'],
    ['requester[name]=Dr. Ada', ['requester', 'name'], false, 'Dr. Ada'],
    ['a[b][]=x=y', ['a', 'b'], true, 'x=y'],
  ])('%s is keys %j, append %s, value %j', (flag, keys, append, raw) => {
    expect(splitField(flag, '--field')).toEqual({ keys, append, raw })
  })

  it.each(['novalue', '=1', 'a[=1', 'a[]b=1', 'a[][]=1'])('refuses the flag %j with a usage error', (flag) => {
    expect(usage(() => splitField(flag, '--field'))).toMatch(/--field/)
  })

  const f = (keys: string[], value: unknown, append = false): Field => ({ keys, value, append })

  it('nests and appends into a JSON body', () => {
    expect(
      bodyOf([
        f(['to'], 'signed'),
        f(['requester', 'name'], 'Ada'),
        f(['requester', 'organization'], 'CH'),
        f(['tags'], 'a', true),
        f(['tags'], 2, true),
      ]),
    ).toEqual({ to: 'signed', requester: { name: 'Ada', organization: 'CH' }, tags: ['a', 2] })
  })

  it('refuses a key given twice or both as a value and an object', () => {
    expect(usage(() => bodyOf([f(['a'], 1), f(['a'], 2)]))).toMatch(/field a is given twice/)
    expect(usage(() => bodyOf([f(['a'], 1), f(['a', 'b'], 2)]))).toMatch(/already given a value/)
    expect(usage(() => bodyOf([f(['a'], 1), f(['a'], 2, true)]))).toMatch(/already given a value/)
  })

  it('puts fields into the query after those of the path, repeating appended keys; nested ones have no place there', () => {
    const query = addToQuery(new URLSearchParams('status=running'), [
      f(['gene'], 'SCN2A'),
      f(['min_qual'], 30),
      f(['role'], 'a', true),
      f(['role'], 'b', true),
      f(['x'], null),
    ])
    expect(query.toString()).toBe('status=running&gene=SCN2A&min_qual=30&role=a&role=b&x=')
    expect(usage(() => addToQuery(new URLSearchParams(), [f(['a', 'b'], 1)]))).toMatch(/a query has no nested fields/)
  })

  it('keeps every flat field whatever its order (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z_]{1,8}$/), { maxLength: 8 }),
        fc.array(fc.string(), { minLength: 8, maxLength: 8 }),
        (keys, values) => {
          const fields = keys.map((k, i) => f([k], values[i]))
          expect(bodyOf(fields)).toEqual(Object.fromEntries(keys.map((k, i) => [k, values[i]])))
          expect([...addToQuery(new URLSearchParams(), fields).entries()]).toEqual(keys.map((k, i) => [k, values[i]]))
        },
      ),
    )
  })

  it.each([
    ['Accept: text/csv', ['Accept', 'text/csv']],
    ['Idempotency-Key:abc', ['Idempotency-Key', 'abc']],
    ['X-Project-ID: a:b', ['X-Project-ID', 'a:b']],
  ])('-H %j is the header %j', (flag, header) => {
    expect(parseHeader(flag)).toEqual(header)
  })

  it.each(['no colon', ': v', 'Bad Name: v'])('refuses the header %j', (flag) => {
    expect(usage(() => parseHeader(flag))).toMatch(/expected 'Name: value'/)
  })
})

describe('the method when none is named', () => {
  it.each([
    [false, false, 'GET'],
    [true, false, 'POST'],
    [false, true, 'GET'],
    [true, true, 'GET'],
  ])('with a body %s and --paginate %s is %s', (hasBody, paginate, method) => {
    expect(defaultMethod(hasBody, paginate)).toBe(method)
  })
})

describe('--paginate', () => {
  it('asks for the next page with the same query and the page token', () => {
    expect(nextPageQuery(new URLSearchParams('status=failed&page_token=old'), 'next').toString()).toBe('status=failed&page_token=next')
  })

  it.each([
    [
      [[1, 2], [3], []],
      [1, 2, 3],
    ],
    [[{ a: 1 }], { a: 1 }],
    [
      [[1], { a: 1 }],
      [[1], { a: 1 }],
    ],
  ])('joins the pages %j into %j', (pages, joined) => {
    expect(joinPages(pages)).toEqual(joined)
  })
})

describe("a report named by its order's accession", () => {
  type Candidate = Pick<Report, 'id' | 'revision' | 'status' | 'template_type'>
  const r = (
    id: string,
    revision: number,
    status: Candidate['status'],
    template_type: Candidate['template_type'] = 'germline_diagnostic',
  ): Candidate => ({
    id,
    revision,
    status,
    template_type,
  })
  it.each<[string, Candidate[], string]>([
    ['the only draft', [r('a', 1, 'draft')], 'a'],
    ['the amendment in draft over the signed revision', [r('a', 1, 'signed'), r('b', 2, 'draft')], 'b'],
    ['the signed revision once its amendment is cancelled', [r('a', 1, 'signed'), r('b', 2, 'cancelled')], 'a'],
    ['the signed amendment, not the superseded one', [r('a', 1, 'superseded'), r('b', 2, 'signed')], 'b'],
    ['the live report beside one entered in error', [r('a', 1, 'entered_in_error'), r('b', 1, 'in_review')], 'b'],
  ])('is %s', (_, reports, id) => {
    expect(currentReport('ORD-2026-000001', reports).id).toBe(id)
  })

  it('is not found when none is live, and ambiguous when two of one revision are', () => {
    expect(() => currentReport('ORD-1', [])).toThrow(/not found: order ORD-1 has no current report$/)
    expect(() => currentReport('ORD-1', [r('a', 1, 'cancelled')])).toThrow(/its 1 report has ended: pass a report id/)
    expect(() => currentReport('ORD-1', [r('a', 1, 'draft'), r('b', 1, 'draft', 'secondary_findings')])).toThrow(
      /order ORD-1 has 2 current reports: a \(germline_diagnostic, draft\), b \(secondary_findings, draft\); pass the report's id/,
    )
  })
})
