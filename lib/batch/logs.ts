import type { Logger } from '../log.js'

/**
 * A job's log: what its tasks wrote to stdout and stderr, line by line, in the order they wrote
 * it. Cloud Batch sends it to Cloud Logging (the job's `logsPolicy`), the local executor to a file
 * in the job's folder; the compute service reads either through this port.
 */
export type LogStream = 'stdout' | 'stderr'
export const LOG_STREAMS: readonly LogStream[] = ['stdout', 'stderr']

export interface LogLine {
  time: Date
  /** The Batch task that wrote it (`<job uid>-group0-0`, as Batch's `task_id` log label names it). */
  task: string
  stream: LogStream
  text: string
}

export interface LogFilter {
  stream?: LogStream
  /** Lines written at or after this time. */
  since?: Date
  /** Lines written before this time. */
  until?: Date
}

export interface JobRef {
  name: string
  uid?: string
  /** When the job was made: no line is older (a bound Cloud Logging queries need). */
  created: Date
}

export interface LogRead extends LogFilter {
  job: JobRef
  /** Where the previous read stopped (its `cursor`); from the first line without. */
  after?: string
  limit: number
}

export interface LogPage {
  lines: LogLine[]
  /** Where the next read starts: after the last line read (or skipped by the filter). Unchanged when nothing was there. */
  cursor?: string
  /** True when the read reached the end of what the log holds now: a follower waits before reading again. */
  atEnd: boolean
}

export interface JobLogReader {
  /** How long after a job ends its last lines may still arrive (the log's ingestion delay). */
  readonly lagMs: number
  read(req: LogRead, log?: Logger): Promise<LogPage>
  /** The last `count` lines of the job (of one stream, when given), oldest first: a failed run's error message ends with its stderr. */
  tail(job: JobRef, count: number, stream?: LogStream, log?: Logger): Promise<LogLine[]>
}

/** Unreadable cursors are the caller's mistake, reported as a 400 by the API. */
export class LogCursorInvalid extends Error {
  override name = 'LogCursorInvalid'
}

/** Whether a line passes a filter: the one rule both readers apply. */
export function matches(line: Pick<LogLine, 'time' | 'stream'>, f: LogFilter): boolean {
  if (f.stream && line.stream !== f.stream) return false
  if (f.since && line.time < f.since) return false
  if (f.until && line.time >= f.until) return false
  return true
}

/** The task name Batch gives the only task of a job's first task group. */
export const firstTaskOf = (jobUid: string) => `${jobUid}-group0-0`
