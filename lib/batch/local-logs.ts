import { createWriteStream, type WriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { Clock } from '../clock.js'
import { LogCursorInvalid, matches, type JobLogReader, type JobRef, type LogLine, type LogPage, type LogRead, type LogStream } from './logs.js'

/**
 * The local executor's job log: <job folder>/logs.jsonl, one JSON object per line written by a
 * task, `{time, task, stream, text}`, in the order the executor received them. Append-only, so a
 * byte offset is a stable cursor and a follower reads only what is new.
 */
export const LOG_FILE = 'logs.jsonl'

/** A line longer than this is cut into pieces of this size, so that one endless line cannot hold the executor's memory. */
export const MAX_LINE_CHARS = 64 * 1024
const CHUNK_BYTES = 256 * 1024
/** How far back from the end `tail` looks: a job that ends with a flood of stdout costs at most this much to search. */
const TAIL_SCAN_BYTES = 4 * 1024 * 1024

interface Record {
  time: string
  task: string
  stream: LogStream
  text: string
}

/** Splits what a task writes into lines and appends each, stamped with the time it arrived, to the job's log. */
export class JobLogWriter {
  private readonly out: WriteStream

  constructor(
    dir: string,
    private readonly clock: Clock,
  ) {
    this.out = createWriteStream(join(dir, LOG_FILE), { flags: 'a' })
  }

  /** Captures one stream of a task's process until it ends; resolves to its last `keep` lines (a failure's stderr tail). */
  capture(source: Readable, task: string, stream: LogStream, keep = 0): Promise<string[]> {
    const decoder = new StringDecoder('utf8')
    let partial = ''
    const last: string[] = []
    const emit = (text: string) => {
      this.write(task, stream, text)
      if (keep > 0) {
        last.push(text)
        if (last.length > keep) last.shift()
      }
    }
    const take = (text: string) => {
      partial += text
      let nl: number
      while ((nl = partial.indexOf('\n')) >= 0) {
        emit(partial.slice(0, nl).replace(/\r$/, ''))
        partial = partial.slice(nl + 1)
      }
      while (partial.length >= MAX_LINE_CHARS) {
        emit(partial.slice(0, MAX_LINE_CHARS))
        partial = partial.slice(MAX_LINE_CHARS)
      }
    }
    return new Promise((resolve) => {
      source.on('data', (chunk: Buffer) => take(decoder.write(chunk)))
      source.once('close', () => {
        take(decoder.end())
        // A last line without a newline is a line all the same.
        if (partial) emit(partial)
        partial = ''
        resolve(last)
      })
    })
  }

  /** Appends one line (the executor's own word on a task, like a program that could not be started). */
  write(task: string, stream: LogStream, text: string) {
    const record: Record = { time: this.clock.now().toISOString(), task, stream, text }
    this.out.write(`${JSON.stringify(record)}\n`)
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve))
  }
}

function parse(text: string): LogLine {
  const r = JSON.parse(text) as Record
  return { time: new Date(r.time), task: r.task, stream: r.stream, text: r.text }
}

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  if (!/^\d{1,15}$/.test(cursor)) throw new LogCursorInvalid('not a position in this log')
  return Number(cursor)
}

/** Reads the job logs the local executor writes under `workRoot` (the same folder its jobs run in). */
export class LocalLogReader implements JobLogReader {
  /** The executor has written every line once it reports the job's end. */
  readonly lagMs = 0
  constructor(readonly workRoot: string) {}

  private fileOf(job: JobRef): string | undefined {
    const id = job.name.split('/').pop()
    return id && /^[a-z][a-z0-9-]*$/.test(id) ? join(this.workRoot, id, LOG_FILE) : undefined
  }

  async read(req: LogRead): Promise<LogPage> {
    let offset = offsetOf(req.after)
    const path = this.fileOf(req.job)
    const handle = path ? await open(path, 'r').catch(notFound) : undefined
    if (!handle) return { lines: [], cursor: req.after, atEnd: true }
    try {
      // A cursor points just after a newline (or at the start): anything else was not made by this log.
      if (offset > 0) {
        const before = Buffer.alloc(1)
        const { bytesRead } = await handle.read(before, 0, 1, offset - 1)
        if (bytesRead !== 1 || before[0] !== 0x0a) throw new LogCursorInvalid('not a position in this log')
      }
      const lines: LogLine[] = []
      let pending = Buffer.alloc(0)
      let position = offset
      for (;;) {
        const chunk = Buffer.alloc(CHUNK_BYTES)
        const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position)
        if (bytesRead === 0) return { lines, cursor: String(offset), atEnd: true }
        position += bytesRead
        pending = pending.length ? Buffer.concat([pending, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead)
        let start = 0
        let nl: number
        while ((nl = pending.indexOf(0x0a, start)) >= 0) {
          const line = parse(pending.toString('utf8', start, nl))
          start = nl + 1
          offset = position - pending.length + start
          if (matches(line, req)) {
            lines.push(line)
            if (lines.length >= req.limit) return { lines, cursor: String(offset), atEnd: false }
          }
        }
        // What follows the last newline is a line still being written: it is read next time, whole.
        pending = pending.subarray(start)
      }
    } finally {
      await handle.close()
    }
  }

  async tail(job: JobRef, count: number, stream?: LogStream): Promise<LogLine[]> {
    const path = this.fileOf(job)
    const handle = path ? await open(path, 'r').catch(notFound) : undefined
    if (!handle) return []
    try {
      const size = (await handle.stat()).size
      const from = Math.max(0, size - TAIL_SCAN_BYTES)
      const buffer = Buffer.alloc(size - from)
      await handle.read(buffer, 0, buffer.length, from)
      const rows = buffer.toString('utf8').split('\n')
      // The first row may be a line cut by the scan's start, the last one a line still being written.
      const whole = rows.slice(from === 0 ? 0 : 1, -1)
      const found: LogLine[] = []
      for (let i = whole.length - 1; i >= 0 && found.length < count; i--) {
        const line = parse(whole[i]!)
        if (!stream || line.stream === stream) found.push(line)
      }
      return found.reverse()
    } finally {
      await handle.close()
    }
  }
}

function notFound(err: NodeJS.ErrnoException): undefined {
  if (err.code === 'ENOENT') return undefined
  throw err
}
