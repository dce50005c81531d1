import type { TraceContext } from './trace.js'

/** LOG_LEVEL's values; the lines themselves carry Cloud Logging's severity names. */
export type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent'
export type Severity = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR'
export type LogFields = Record<string, unknown>

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }
export const SEVERITY: Record<Exclude<Level, 'silent'>, Severity> = { debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR' }

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** A logger whose lines also carry `fields` (a scope's request id, trace, event ids); an undefined field adds nothing. */
  with(fields: LogFields): Logger
}

/** Where finished lines go: one JSON object, without its newline. */
export type LogSink = (line: string, severity: Severity) => void

/**
 * Cloud Functions and Cloud Run parse JSON lines from both streams; warnings and errors go to stderr.
 * The lines of one turn of the event loop leave in one write per stream, at the end of that turn:
 * standard output is a pipe there, a write to a pipe is a system call, and one per line was the
 * largest part of the cost of a request's access line. Each stream keeps its lines in order, and
 * what is pending is written before the process exits, however it exits.
 */
const pendingLines = { stdout: '', stderr: '' }
let flushScheduled = false
function flushLogLines() {
  flushScheduled = false
  const { stdout, stderr } = pendingLines
  pendingLines.stdout = pendingLines.stderr = ''
  if (stdout) process.stdout.write(stdout)
  if (stderr) process.stderr.write(stderr)
}
process.on('exit', flushLogLines)
export const stdioSink: LogSink = (line, severity) => {
  pendingLines[severity === 'WARNING' || severity === 'ERROR' ? 'stderr' : 'stdout'] += line + '\n'
  if (!flushScheduled) {
    flushScheduled = true
    setImmediate(flushLogLines)
  }
}

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

/**
 * Structured one-line JSON logs in the shape Cloud Logging parses: `severity`, `message`, the
 * logger's base fields (with those of its scopes, `with`), then the call's own. `sink` is where
 * lines go (tests capture them there). A class, so that the logger of each request's scope
 * (`with`) is one small object.
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
    let line: string
    try {
      line = JSON.stringify(entry)
    } catch (err) {
      // A circular or BigInt field must not turn a log call into a failed request.
      line = JSON.stringify({ severity, message, ...this.base, log_error: serialize(err) })
    }
    this.sink(redactSecrets(line), severity)
  }
}

export const createLogger = (level: Level, base: LogFields = {}, sink: LogSink = stdioSink): Logger => new JsonLogger(level, base, sink)
