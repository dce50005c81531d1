import { describe, expect, it } from 'vitest'
import { parseCloudTraceContext, parseTraceparent, toTraceparent, traceFrom, traceLogFields } from '../../../lib/trace.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'

describe('trace headers', () => {
  it('reads a W3C traceparent: trace id, span id and the sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true })
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: false })
  })

  it('accepts a later traceparent version with extra fields, as the W3C spec asks', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true })
  })

  it.each([
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['a long span id', `00-${TRACE}-${SPAN}0-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['the forbidden version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with extra fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['a huge value', `00-${TRACE}-${SPAN}-01-${'x'.repeat(10_000)}`],
    ['an injection attempt', `00-${TRACE}-${SPAN}-01"}\n{"severity":"ERROR`],
  ])('ignores a traceparent with %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined()
  })

  it('reads X-Cloud-Trace-Context, turning its decimal span id into the 16 hex digits Cloud Logging wants', () => {
    expect(parseCloudTraceContext(`${TRACE.toUpperCase()}/1;o=1`)).toEqual({ traceId: TRACE, spanId: '0000000000000001', sampled: true })
    expect(parseCloudTraceContext(`${TRACE}/18446744073709551615;o=0`)).toEqual({ traceId: TRACE, spanId: 'ffffffffffffffff', sampled: false })
    expect(parseCloudTraceContext(TRACE)).toEqual({ traceId: TRACE })
  })

  it('keeps the trace but drops a span id beyond 64 bits', () => {
    expect(parseCloudTraceContext(`${TRACE}/18446744073709551616;o=1`)).toEqual({ traceId: TRACE, sampled: true })
  })

  it.each([
    ['a short trace id', `${TRACE.slice(2)}/1;o=1`],
    ['a non-decimal span id', `${TRACE}/abc;o=1`],
    ['a span id of 21 digits', `${TRACE}/${'1'.repeat(21)};o=1`],
    ['trailing garbage', `${TRACE}/1;o=1 and more`],
    ['a huge value', `${TRACE}/${'9'.repeat(5000)}`],
  ])('ignores X-Cloud-Trace-Context with %s', (_what, value) => {
    expect(parseCloudTraceContext(value)).toBeUndefined()
  })

  it('prefers traceparent, falling back to X-Cloud-Trace-Context when traceparent is missing or invalid', () => {
    const other = 'a'.repeat(32)
    expect(traceFrom(`00-${TRACE}-${SPAN}-01`, `${other}/1;o=1`)?.traceId).toBe(TRACE)
    expect(traceFrom('garbage', `${other}/1;o=1`)?.traceId).toBe(other)
    expect(traceFrom(undefined, undefined)).toBeUndefined()
  })

  it("names the trace in Cloud Logging's fields with the Google Cloud project id", () => {
    expect(traceLogFields({ traceId: TRACE, spanId: SPAN, sampled: true }, 'lab-prod')).toEqual({
      'logging.googleapis.com/trace': `projects/lab-prod/traces/${TRACE}`,
      'logging.googleapis.com/spanId': SPAN,
      'logging.googleapis.com/trace_sampled': true,
    })
    expect(traceLogFields({ traceId: TRACE }, 'lab-prod')).toEqual({ 'logging.googleapis.com/trace': `projects/lab-prod/traces/${TRACE}` })
    expect(traceLogFields(undefined, 'lab-prod')).toEqual({})
  })

  it('writes a trace back as a traceparent that parses to the same trace, making up a span id when there was none', () => {
    expect(parseTraceparent(toTraceparent({ traceId: TRACE, spanId: SPAN, sampled: true }))).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true })
    const made = parseTraceparent(toTraceparent({ traceId: TRACE }))
    expect(made).toMatchObject({ traceId: TRACE, sampled: false })
    expect(made?.spanId).toMatch(/^[0-9a-f]{16}$/)
  })
})
