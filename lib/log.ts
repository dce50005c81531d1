import type { TraceContext } from './trace.js'

/** LOG_LEVEL's values; the lines themselves carry Cloud Logging's severity names. */
export type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent'
export type Severity = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR'
export type LogFields = Record<string, unknown>

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }
export const SEVERITY: Record<Exclude<Level, 'silent'>, Severity> = { debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR' }
const severityOrder: Record<Severity, number> = { DEBUG: order.debug, INFO: order.info, WARNING: order.warn, ERROR: order.error }
/** Whether a line of `severity` is kept where `level` is the lowest level kept. */
export const keeps = (level: Level, severity: Severity) => severityOrder[severity] >= order[level]
/** The lower of two levels: what a logger writing for two destinations must produce. */
export const lowerLevel = (a: Level, b: Level): Level => (order[a] <= order[b] ? a : b)

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** A logger whose lines also carry `fields` (a scope's request id, trace, event ids); an undefined field adds nothing. */
  with(fields: LogFields): Logger
}

/**
 * Where finished lines go: `line` is one JSON object, without its newline. `record` is the object
 * the line was made from, when there is one, for a sink that reads a line's fields (the local
 * suite's terminal) without parsing the line again: it holds the values before secrets were
 * redacted, so whatever such a sink prints from it goes through `redactSecrets`.
 */
export type LogSink = (line: string, severity: Severity, record?: LogRecord) => void
/** A line's fields as the logger wrote them (errors already turned into `{ name, message, stack }`). */
export type LogRecord = Readonly<LogFields> & { severity: Severity; message: string }

/**
 * Text for one destination, written at the end of the turn of the event loop it was added in:
 * the text of one turn leaves in one write, and what is pending is written before the process
 * exits, however it exits. A write to a pipe is a system call, and one per line was the largest
 * part of the cost of a request's access line.
 */
export class TurnBuffer {
  private pending = ''
  constructor(private readonly write: (text: string) => void) {
    buffers.add(this)
  }

  add(text: string) {
    this.pending += text
    if (!flushScheduled) {
      flushScheduled = true
      setImmediate(flushBuffers)
    }
  }

  flush() {
    const text = this.pending
    if (!text) return
    this.pending = ''
    this.write(text)
  }

  /** Writes what is pending; nothing is written after. */
  close() {
    this.flush()
    buffers.delete(this)
  }
}
const buffers = new Set<TurnBuffer>()
let flushScheduled = false
function flushBuffers() {
  flushScheduled = false
  for (const buffer of buffers) buffer.flush()
}
process.on('exit', flushBuffers)

const stdoutBuffer = new TurnBuffer((text) => process.stdout.write(text))
const stderrBuffer = new TurnBuffer((text) => process.stderr.write(text))
/**
 * Writes `text` (whole lines) for a line of `severity`: warnings and errors to stderr, the rest to
 * stdout (Cloud Functions and Cloud Run parse JSON lines from both streams). Each stream keeps its
 * lines in order.
 */
export const toStdio = (text: string, severity: Severity) => (severity === 'WARNING' || severity === 'ERROR' ? stderrBuffer : stdoutBuffer).add(text)
export const stdioSink: LogSink = (line, severity) => toStdio(line + '\n', severity)

/**
 * What the code serving one request (or handling one event) shares: `fields` (the request id, the
 * trace) go on every line it logs, `trace` and `requestId` on the messages it publishes. The scope
 * travels explicitly, in the dependencies the handler is given (lib/kernel.ts `inScope`), not in
 * an AsyncLocalStorage: on Node 20 a live AsyncLocalStorage runs a hook for every promise of the
 * process, which cost about 7 % of the CPU of serving GET /runs/{id}.
 */
export interface LogScope {
  fields: LogFields
  requestId?: string
  trace?: TraceContext
}

const asIs = (value: unknown) => value

/** Copies the defined fields of `fields` onto `into` (an undefined field adds nothing), as `map` makes them. */
function assignDefined(into: LogFields, fields: LogFields | undefined, map: (value: unknown) => unknown = asIs): LogFields {
  for (const key in fields) {
    const value = fields[key]
    if (value !== undefined) into[key] = map(value)
  }
  return into
}

/**
 * Credentials that must never reach a log, whatever line they slipped into (an error message
 * quoting a header, say): the platform's own tokens by their prefix, and JWTs.
 */
const SECRETS: Array<[RegExp, string]> = [
  [/plat_(pat|sat|ses)_[A-Za-z0-9_-]{16,}/g, 'plat_$1_[redacted]'],
  [/eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, '[redacted JWT]'],
]
// Each pattern begins with one of these: a line without them (nearly every line) is not scanned.
export const redactSecrets = (text: string) =>
  text.includes('plat_') || text.includes('eyJ') ? SECRETS.reduce((t, [re, by]) => t.replace(re, by), text) : text

function serialize(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value
}

/** The stack of the first error among `fields`. */
function stackOf(fields: LogFields): string | undefined {
  for (const key in fields) {
    const value = fields[key]
    if (value instanceof Error && value.stack) return value.stack
  }
  return undefined
}

/**
 * Structured one-line JSON logs in the shape Cloud Logging parses: `severity`, `message`, the
 * logger's base fields (with those of its scopes, `with`), then the call's own. An ERROR line
 * with an error among its fields also carries that error's stack as `stack_trace`, the field
 * Error Reporting reads first (it does not look inside `error`). `sink` is where lines go (tests
 * capture them there). A class, so that the logger of each request's scope (`with`) is one small
 * object.
 */
class JsonLogger implements Logger {
  constructor(
    private readonly level: Level,
    private readonly base: LogFields,
    private readonly sink: LogSink,
  ) {}

  debug(message: string, fields?: LogFields) {
    this.write('debug', message, fields)
  }
  info(message: string, fields?: LogFields) {
    this.write('info', message, fields)
  }
  warn(message: string, fields?: LogFields) {
    this.write('warn', message, fields)
  }
  error(message: string, fields?: LogFields) {
    this.write('error', message, fields)
  }

  with(fields: LogFields): Logger {
    return new JsonLogger(this.level, assignDefined({ ...this.base }, fields), this.sink)
  }

  private write(lvl: Exclude<Level, 'silent'>, message: string, fields?: LogFields) {
    if (order[lvl] < order[this.level]) return
    const severity = SEVERITY[lvl]
    const entry: LogFields = { severity, message, ...this.base }
    assignDefined(entry, fields, serialize)
    // A field of the call may not pass for the line's own severity or message.
    entry.severity = severity
    entry.message = message
    if (lvl === 'error' && fields) {
      const stack = stackOf(fields)
      if (stack) entry.stack_trace = stack
    }
    let line: string
    try {
      line = JSON.stringify(entry)
    } catch (err) {
      // A circular or BigInt field must not turn a log call into a failed request.
      this.sink(redactSecrets(JSON.stringify({ severity, message, ...this.base, log_error: serialize(err) })), severity)
      return
    }
    this.sink(redactSecrets(line), severity, entry as LogRecord)
  }
}

export const createLogger = (level: Level, base: LogFields = {}, sink: LogSink = stdioSink): Logger => new JsonLogger(level, base, sink)
