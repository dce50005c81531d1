import { randomBytes } from 'node:crypto'

/**
 * The trace a request or a message belongs to, read from the headers Google's front ends and
 * OpenTelemetry send, so that our log lines join the request's trace in Cloud Logging. Both
 * headers come from the client: anything not of the exact shape is ignored, never logged.
 */
export interface TraceContext {
  /** 32 lowercase hex digits. */
  traceId: string
  /** 16 lowercase hex digits, as Cloud Logging's spanId wants it. */
  spanId?: string
  sampled?: boolean
}

const MAX_HEADER = 256
const ALL_ZERO = /^0+$/
/** W3C Trace Context: version-traceid-parentid-flags; later versions may append fields. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/
/** TRACE_ID/SPAN_ID;o=OPTIONS, the span id in decimal (an unsigned 64-bit number). */
const CLOUD_TRACE = /^([0-9a-fA-F]{32})(?:\/(\d{1,20}))?(?:;o=([0-9]))?$/
const MAX_SPAN = (1n << 64n) - 1n

export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  if (!value || value.length > MAX_HEADER) return undefined
  const m = TRACEPARENT.exec(value.trim())
  if (!m) return undefined
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined]
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }
}

export function parseCloudTraceContext(value: string | undefined): TraceContext | undefined {
  if (!value || value.length > MAX_HEADER) return undefined
  const m = CLOUD_TRACE.exec(value.trim())
  if (!m) return undefined
  const traceId = m[1]!.toLowerCase()
  if (ALL_ZERO.test(traceId)) return undefined
  const span = m[2] === undefined ? 0n : BigInt(m[2])
  return {
    traceId,
    ...(span > 0n && span <= MAX_SPAN ? { spanId: span.toString(16).padStart(16, '0') } : {}),
    ...(m[3] === undefined ? {} : { sampled: (Number(m[3]) & 1) === 1 }),
  }
}

/** `traceparent` when it is valid (the standard, and what Cloud Run forwards), else `X-Cloud-Trace-Context`. */
export function traceFrom(traceparent: string | undefined, cloudTraceContext: string | undefined): TraceContext | undefined {
  return parseTraceparent(traceparent) ?? parseCloudTraceContext(cloudTraceContext)
}

/** The trace as a `traceparent` value, to carry it on to a message we publish (a span id is made up when the caller sent none). */
export function toTraceparent(trace: TraceContext): string {
  const spanId = trace.spanId ?? randomBytes(8).toString('hex')
  return `00-${trace.traceId}-${spanId}-${trace.sampled ? '01' : '00'}`
}

/** Cloud Logging's special fields that attach a line to its trace. */
export function traceLogFields(trace: TraceContext | undefined, gcpProject: string): Record<string, unknown> {
  if (!trace) return {}
  return {
    'logging.googleapis.com/trace': `projects/${gcpProject}/traces/${trace.traceId}`,
    ...(trace.spanId ? { 'logging.googleapis.com/spanId': trace.spanId } : {}),
    ...(trace.sampled === undefined ? {} : { 'logging.googleapis.com/trace_sampled': trace.sampled }),
  }
}
