import { AsyncLocalStorage } from 'node:async_hooks'
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
 * What the code serving one request (or handling one event) shares with every line it logs:
 * `fields` (the request id, the trace) are merged into each line by any logger, however deep the
 * call, without being passed down; `trace` and `requestId` travel on with the messages it publishes.
 */
export interface LogScope {
  fields: LogFields
  requestId?: string
  trace?: TraceContext
}

const scopes = new AsyncLocalStorage<LogScope>()

const defined = (fields: LogFields | undefined) => Object.entries(fields ?? {}).filter(([, v]) => v !== undefined)

/** Runs `fn` in a scope nested in the current one (its fields added to the outer ones; an undefined field adds nothing). */
export function inLogScope<T>(scope: LogScope, fn: () => T): T {
  const outer = scopes.getStore()
  const fields = { ...outer?.fields, ...Object.fromEntries(defined(scope.fields)) }
  return scopes.run({ requestId: scope.requestId ?? outer?.requestId, trace: scope.trace ?? outer?.trace, fields }, fn)
}

export const currentLogScope = (): LogScope | undefined => scopes.getStore()

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
 * logger's base fields, the current scope's fields, then the call's own. `sink` is where lines go
 * (tests capture them there).
 */
export function createLogger(level: Level, base: LogFields = {}, sink: LogSink = stdioSink): Logger {
  const write = (lvl: Exclude<Level, 'silent'>, message: string, fields?: LogFields) => {
    if (order[lvl] < order[level]) return
    const severity = SEVERITY[lvl]
    const entry: LogFields = { severity, message, ...base, ...scopes.getStore()?.fields }
    for (const [k, v] of defined(fields)) entry[k] = serialize(v)
    // A field of the call may not pass for the line's own severity or message.
    Object.assign(entry, { severity, message })
    let line: string
    try {
      line = JSON.stringify(entry)
    } catch (err) {
      // A circular or BigInt field must not turn a log call into a failed request.
      line = JSON.stringify({ severity, message, ...base, ...scopes.getStore()?.fields, log_error: serialize(err) })
    }
    sink(redactSecrets(line), severity)
  }
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  }
}
