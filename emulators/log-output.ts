import { closeSync, openSync, writeSync } from 'node:fs'
import { inspect } from 'node:util'
import {
  keeps,
  lowerLevel,
  redactSecrets,
  stdioSink,
  toStdio,
  TurnBuffer,
  type Level,
  type LogRecord,
  type LogSink,
  type Severity,
} from '../lib/log.js'
import { RECONCILE_DONE } from '../orchestrator/reconcile.js'

/**
 * Where the local suite's services write their log lines (docs/logs.md). Every line of info and
 * above (debug too at --log-level debug) goes to the log file in the data folder as a JSON line,
 * as Cloud Logging reads them, with its time. Standard output gets the lines of the chosen level:
 * on a terminal as short lines for a person, without the routine ones (below debug); anywhere else
 * (a pipe, a file) as the same JSON lines as in the cloud.
 */
export interface SuiteLogOptions {
  /** The lowest level shown on standard output and error (--log-level, LOG_LEVEL; warn with --quiet). */
  level: Level
  /** Standard output is a terminal. */
  terminal: boolean
  /** Colour on the terminal (not when NO_COLOR is set). */
  color: boolean
  /** The JSON log file. */
  file: string
}

/**
 * The level the services' loggers are created with: the file keeps info whatever the terminal
 * shows (a --quiet suite still has its history), and debug when the terminal shows it.
 */
export const suiteLogLevel = (level: Level): Level => lowerLevel(level, 'info')

/**
 * Lines a person at the terminal does not need while nothing goes wrong: the access line of a
 * request that succeeded (the CLI's own output says it did) and a reconcile pass that found
 * nothing to do (one every 30 s). Both stay in the log file.
 */
export function isRoutine(record: LogRecord): boolean {
  const http = record.httpRequest
  if (http && typeof http === 'object' && 'status' in http && typeof http.status === 'number') return http.status < 400
  if (record.message === RECONCILE_DONE) {
    const counts = [
      record.republished,
      record.settled,
      record.jobs_deleted,
      record.runs_ingested,
      record.ingestions_resumed,
      record.deliveries_published,
      record.errors,
    ]
    const remaining = record.remaining && typeof record.remaining === 'object' ? Object.values(record.remaining) : []
    return [...counts, ...remaining].every((n) => n === 0)
  }
  return false
}

/** The ids a person follows a request or a run by, as the terminal labels them, in this order. */
const IDS: Array<[field: string, label: string]> = [
  ['run_id', 'run'],
  ['order_id', 'order'],
  ['report_id', 'report'],
  ['ingestion_id', 'ingestion'],
  ['request_id', 'request'],
]

type Color = 'gray' | 'green' | 'yellow' | 'red' | 'cyan'
/**
 * `text` in `color`, by the escape codes util.inspect colours with. Not util.styleText: from some
 * Node versions on it checks process.stdout itself, and in the functions' thread that is not the
 * terminal (the main thread decides, SuiteLogOptions.color).
 */
function paintWith(color: Color, text: string): string {
  const [open, close] = inspect.colors[color] ?? [39, 39]
  return `\u001b[${open}m${text}\u001b[${close}m`
}

const LEVEL: Record<Severity, { label: string; color: Color }> = {
  DEBUG: { label: 'DEBUG', color: 'gray' },
  INFO: { label: 'INFO ', color: 'green' },
  WARNING: { label: 'WARN ', color: 'yellow' },
  ERROR: { label: 'ERROR', color: 'red' },
}

/** Wide enough for every service's name, so that the messages line up. */
const SERVICE_WIDTH = 12

const pad2 = (n: number) => String(n).padStart(2, '0')
const clockTime = (t: Date) => `${pad2(t.getHours())}:${pad2(t.getMinutes())}:${pad2(t.getSeconds())}.${String(t.getMilliseconds()).padStart(3, '0')}`

/**
 * Text from a line's fields as the terminal may show it: control characters (a newline, an escape
 * sequence in a message that quotes a client's input) written as escapes (`\n`, `\u001b`), so that one
 * record is one line and nothing a client sent can move the cursor or recolour the terminal.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }
const printable = (text: string) => text.replace(CONTROL, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** An error field as the logger serialized it (`{ name, message, stack }`), or whatever else was given. */
function errorOf(value: unknown): { message: string; stack?: string } | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'object' && 'message' in value && typeof value.message === 'string') {
    return { message: value.message, stack: 'stack' in value && typeof value.stack === 'string' ? value.stack : undefined }
  }
  return { message: typeof value === 'string' ? value : JSON.stringify(value) }
}

/** "0.012s", an access line's latency, in milliseconds. */
function latencyOf(record: LogRecord): string | undefined {
  const latency = (record.httpRequest as { latency?: unknown } | undefined)?.latency
  const seconds = typeof latency === 'string' ? Number.parseFloat(latency) : NaN
  return Number.isFinite(seconds) ? `${Math.round(seconds * 1000)}ms` : undefined
}

/**
 * One log line as the terminal shows it: local time, level, service, message, then the access
 * line's latency, the ids that matter and the error's message; an ERROR line's stack follows on
 * indented lines. Secrets are redacted as in the JSON lines.
 */
export function formatLine(record: LogRecord, opts: { time: Date; color: boolean }): string {
  const paint = (color: Color, text: string) => (opts.color ? paintWith(color, text) : text)
  const level = LEVEL[record.severity]
  const service = typeof record.service === 'string' ? printable(record.service) : ''
  const parts = [
    paint('gray', clockTime(opts.time)),
    paint(level.color, level.label),
    paint('cyan', service.padEnd(SERVICE_WIDTH)),
    printable(record.message),
  ]
  const latency = latencyOf(record)
  if (latency) parts.push(latency)
  for (const [field, label] of IDS) {
    const id = record[field]
    if (typeof id === 'string' || typeof id === 'number') parts.push(paint('gray', `${label}=${printable(String(id))}`))
  }
  const error = errorOf(record.error)
  if (error) parts.push(paint(level.color, `error: ${printable(error.message)}`))
  let text = parts.join(' ')
  const stack = typeof record.stack_trace === 'string' ? record.stack_trace : error?.stack
  if (record.severity === 'ERROR' && stack) {
    // The stack's first line repeats the error's message, already on the line.
    text += stack
      .split('\n')
      .slice(1)
      .map((frame) => `\n    ${printable(frame.trim())}`)
      .join('')
  }
  return redactSecrets(text)
}

/**
 * A JSON line with its time first. The cloud's lines carry none (Cloud Logging stamps each entry
 * as it receives it); a file read later needs it. `time` is one of the timestamp fields Cloud
 * Logging's structured logging reads.
 */
const stamped = (line: string, time: Date) => `{"time":"${time.toISOString()}",${line.slice(1)}`

export interface SuiteLogOutput {
  sink: LogSink
  /** Writes what is pending and closes the file; lines logged after are shown but not kept. */
  close(): void
}

/** The sink of one thread of the suite (each thread opens the file for appending: a turn's lines leave in one write). */
export function suiteLogOutput(opts: SuiteLogOptions): SuiteLogOutput {
  const fd = openSync(opts.file, 'a')
  let open = true
  const file = new TurnBuffer((text) => writeSync(fd, text))
  const showRoutine = opts.level === 'debug'
  const sink: LogSink = (line, severity, record) => {
    const time = new Date()
    // The loggers are created at suiteLogLevel, so every line they write belongs in the file.
    if (open) file.add(stamped(line, time) + '\n')
    if (!keeps(opts.level, severity)) return
    // A line the logger could not make whole (an unserializable field) has no record: shown as written.
    if (!opts.terminal || !record) return stdioSink(line, severity)
    if (!showRoutine && isRoutine(record)) return
    toStdio(formatLine(record, { time, color: opts.color }) + '\n', severity)
  }
  return {
    sink,
    close() {
      if (!open) return
      open = false
      file.close()
      closeSync(fd)
    },
  }
}
