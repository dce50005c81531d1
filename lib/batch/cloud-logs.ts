import { Logging } from '@google-cloud/logging'
import { LogCursorInvalid, type JobLogReader, type JobRef, type LogFilter, type LogLine, type LogPage, type LogRead, type LogStream } from './logs.js'

/**
 * Job logs of Cloud Batch, read from Cloud Logging. A job with `logsPolicy: CLOUD_LOGGING` writes
 * what its runnables print to the log `batch_task_logs` of the job's project, one entry per line,
 * labelled with the job's uid (`labels.job_uid`) and task (`labels.task_id`); stdout lines have
 * severity INFO, stderr lines ERROR.
 */
export const TASK_LOG = 'batch_task_logs'

/** One entry as the client returns it: `metadata` is the LogEntry, `data` its payload. */
export interface CloudEntry {
  metadata: {
    timestamp?: Date | string | { seconds?: number | string | null; nanos?: number | null } | null
    insertId?: string | null
    severity?: string | number | null
    labels?: Record<string, string> | null
  }
  data?: unknown
}

/** The fields of the client's getEntries request this reader sets (entries.list: filter, order, one page). */
export interface EntriesQuery {
  resourceNames: string[]
  filter: string
  orderBy: 'timestamp asc' | 'timestamp desc'
  pageSize: number
  autoPaginate: false
}

/** The one call made, at the client's boundary: tests give recorded entries, the cloud the Logging client. */
export type ListEntries = (req: EntriesQuery) => Promise<CloudEntry[]>

/**
 * Where a read stopped: the time of the last entry read, in milliseconds (the client gives
 * timestamps as Dates), and the insert ids already read at that millisecond. The next read starts
 * at that millisecond and skips those: entries of one millisecond are neither lost nor repeated.
 */
interface Position {
  t: number
  ids: string[]
}
/** More entries than this in one millisecond are not told apart (a repeat is possible, never a loss). */
const MAX_IDS_PER_MS = 200
const ERROR_SEVERITY = 500

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify(p)).toString('base64url')
}
export function decodeCursor(cursor: string): Position {
  try {
    const p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>
    if (typeof p.t === 'number' && Number.isFinite(p.t) && Array.isArray(p.ids) && p.ids.every((i) => typeof i === 'string')) {
      return { t: p.t, ids: p.ids }
    }
  } catch {
    // reported below
  }
  throw new LogCursorInvalid('not a position in this log')
}

/** A value in a Logging query string: quoted, with backslashes and quotes escaped. */
const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`

/** The Logging query of a read: the job's task log, its stream and time window, from the position on. */
export function cloudLogFilter(gcpProject: string, job: JobRef, filter: LogFilter, from?: Position): string {
  if (!job.uid) throw new Error(`job ${job.name} has no uid: its logs cannot be told from others'`)
  // Always bounded below: without a timestamp term the client reads only the last 24 hours.
  const lower = Math.max(job.created.getTime(), filter.since?.getTime() ?? 0, from?.t ?? 0)
  const terms = [
    `logName=${quote(`projects/${gcpProject}/logs/${TASK_LOG}`)}`,
    `labels.job_uid=${quote(job.uid)}`,
    `timestamp>=${quote(new Date(lower).toISOString())}`,
  ]
  if (filter.until) terms.push(`timestamp<${quote(filter.until.toISOString())}`)
  if (filter.stream === 'stderr') terms.push('severity>=ERROR')
  if (filter.stream === 'stdout') terms.push('severity<ERROR')
  return terms.join(' AND ')
}

function timeOf(ts: CloudEntry['metadata']['timestamp']): Date | undefined {
  if (!ts) return undefined
  if (ts instanceof Date) return ts
  if (typeof ts === 'string') return new Date(ts)
  return ts.seconds === undefined || ts.seconds === null ? undefined : new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6))
}

const SEVERITY_NUMBER: Record<string, number> = {
  DEFAULT: 0,
  DEBUG: 100,
  INFO: 200,
  NOTICE: 300,
  WARNING: 400,
  ERROR: 500,
  CRITICAL: 600,
  ALERT: 700,
  EMERGENCY: 800,
}

function streamOf(severity: CloudEntry['metadata']['severity']): LogStream {
  const n = typeof severity === 'number' ? severity : (SEVERITY_NUMBER[String(severity ?? 'DEFAULT').toUpperCase()] ?? 0)
  return n >= ERROR_SEVERITY ? 'stderr' : 'stdout'
}

/** Batch's task_id label (`task/<job uid>-group0-0/0/0`, or the bare `<job uid>-group0-0`) as the task's name. */
export function taskOf(label: string | undefined, job: JobRef): string {
  const m = label ? /(?:^|\/)([a-z0-9-]+-group\d+-\d+)(?:\/|$)/.exec(label) : null
  return m?.[1] ?? label ?? job.uid ?? job.name
}

function textOf(data: unknown): string {
  if (typeof data === 'string') return data.replace(/\r?\n$/, '')
  // A runnable that prints JSON gets a structured entry: its message is the line, or else the whole object.
  if (data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string') return (data as { message: string }).message
  return JSON.stringify(data ?? '')
}

export function lineOf(entry: CloudEntry, job: JobRef): LogLine | undefined {
  const time = timeOf(entry.metadata.timestamp)
  if (!time) return undefined
  return { time, task: taskOf(entry.metadata.labels?.task_id, job), stream: streamOf(entry.metadata.severity), text: textOf(entry.data) }
}

export class CloudLogReader implements JobLogReader {
  /** Cloud Logging usually shows an entry within seconds of its writing; a minute covers its stragglers. */
  readonly lagMs = 60_000
  constructor(
    private readonly gcpProject: string,
    private readonly list: ListEntries,
  ) {}

  async read(req: LogRead): Promise<LogPage> {
    const from = req.after === undefined ? undefined : decodeCursor(req.after)
    const seen = new Set(from?.ids ?? [])
    const pageSize = Math.min(1000, req.limit + seen.size)
    const entries = await this.list({
      resourceNames: [`projects/${this.gcpProject}`],
      filter: cloudLogFilter(this.gcpProject, req.job, req, from),
      orderBy: 'timestamp asc',
      pageSize,
      autoPaginate: false,
    })
    const lines: LogLine[] = []
    let position = from
    for (const entry of entries) {
      const line = lineOf(entry, req.job)
      const id = entry.metadata.insertId ?? ''
      if (!line || (position && line.time.getTime() === position.t && position.ids.includes(id))) continue
      if (lines.length >= req.limit) return { lines, cursor: position && encodeCursor(position), atEnd: false }
      lines.push(line)
      const t = line.time.getTime()
      position = position && position.t === t ? { t, ids: [...position.ids, id].slice(-MAX_IDS_PER_MS) } : { t, ids: [id] }
    }
    return { lines, cursor: position ? encodeCursor(position) : req.after, atEnd: entries.length < pageSize }
  }

  async tail(job: JobRef, count: number, stream?: LogStream): Promise<LogLine[]> {
    const entries = await this.list({
      resourceNames: [`projects/${this.gcpProject}`],
      filter: cloudLogFilter(this.gcpProject, job, { stream }),
      orderBy: 'timestamp desc',
      pageSize: count,
      autoPaginate: false,
    })
    return entries
      .flatMap((e) => lineOf(e, job) ?? [])
      .slice(0, count)
      .reverse()
  }
}

export function createCloudLogReader(gcpProject: string): CloudLogReader {
  const logging = new Logging({ projectId: gcpProject })
  return new CloudLogReader(gcpProject, async (req) => (await logging.getEntries(req))[0] as CloudEntry[])
}
