import { setTimeout as sleep } from 'node:timers/promises'
import { z } from '@hono/zod-openapi'
import { LOG_STREAMS, LogCursorInvalid, type LogLine as JobLogLine } from '../../lib/batch/logs.js'
import { badRequest } from '../../lib/errors.js'
import { PageQuery, pageSizeOf } from '../../lib/pagination.js'
import { logComplete } from '../../domain/runs/logs.js'
import type { RunRecord } from '../../domain/runs/store.js'
import type { ComputeDeps } from './deps.js'

/**
 * A run's log, read for the API and the console: the lines of its Batch job's tasks, paged by the
 * platform's one page-token scheme, and followed (a long poll, or a stream of server-sent events)
 * until the run has ended and every line is read. The token is where the last read stopped in the
 * job's log; a page without a next token is the log's end.
 */

export const LogLine = z
  .object({
    time: z.string().openapi({ description: 'When the line was written (RFC 3339)', example: '2026-11-26T10:00:01.250Z' }),
    task: z.string().openapi({ description: "The Batch task that wrote it (Batch's task_id: <job uid>-group0-0)" }),
    stream: z.enum(LOG_STREAMS as [string, ...string[]]).openapi({ description: 'stdout or stderr' }),
    text: z.string().openapi({ description: 'The line, without its newline (a line over 64 KiB comes in pieces)' }),
  })
  .openapi('LogLine')
export type LogLine = z.infer<typeof LogLine>

const instant = (what: string) =>
  z
    .string()
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .optional()
    .openapi({ description: what, example: '2026-11-26T10:00:00Z' })

export const MAX_WAIT_SECONDS = 60

export const RunLogQuery = PageQuery.extend({
  stream: z.enum(['stdout', 'stderr']).optional().openapi({ description: 'Only the lines of this stream' }),
  since: instant('Only lines written at or after this time (RFC 3339)'),
  until: instant('Only lines written before this time (RFC 3339)'),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .openapi({
      description: `Long poll: when no line is there yet and the log can still grow, wait up to this many seconds (at most ${MAX_WAIT_SECONDS}) for one`,
    }),
})
export type RunLogQuery = z.infer<typeof RunLogQuery>

export interface RunLogPage {
  lines: LogLine[]
  /** Absent once the log is complete: the run has ended and every line is read. */
  nextPageToken?: string
}

/** How often a waiting reader looks at the log again, and at the run's status. */
const POLL_MS = 250

interface Token {
  /** The job whose log the cursor belongs to ('' before the run had one). */
  j: string
  c?: string
}
const jobKeyOf = (run: RunRecord) => run.job?.uid ?? run.job?.name ?? ''

function encode(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url')
}

function decode(token: string | undefined, run: RunRecord): Token {
  const none = { j: jobKeyOf(run) }
  if (token === undefined) return none
  let t: Partial<Token> | undefined
  try {
    t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Token>
  } catch {
    t = undefined
  }
  if (!t || typeof t.j !== 'string' || (t.c !== undefined && typeof t.c !== 'string')) throw badRequest('query.page_token: not a token of a run log')
  // A token made before the run had a job starts at the job's first line.
  if (t.j === '' && none.j !== '') return none
  if (t.j !== none.j) throw badRequest("query.page_token: a token of another run's log")
  return { j: t.j, c: t.c }
}

const toLine = (l: JobLogLine): LogLine => ({ time: l.time.toISOString(), task: l.task, stream: l.stream, text: l.text })

export type LogSelection = Pick<RunLogQuery, 'stream' | 'since' | 'until' | 'page_size' | 'limit' | 'page_token'>

/** One page of the run's log from the token on (at once, whatever is there). */
export async function readRunLog(deps: ComputeDeps, run: RunRecord, q: LogSelection): Promise<RunLogPage> {
  const token = decode(q.page_token, run)
  const now = deps.clock.now()
  if (!run.job) {
    const complete = logComplete({ status: run.status, atEnd: true, now, lagMs: 0 })
    return { lines: [], nextPageToken: complete ? undefined : encode(token) }
  }
  let page
  try {
    page = await deps.logs.read(
      {
        job: { name: run.job.name, uid: run.job.uid, created: run.job.created_at.toDate() },
        after: token.c,
        limit: pageSizeOf(q),
        stream: q.stream as JobLogLine['stream'] | undefined,
        since: q.since,
        until: q.until,
      },
      deps.log,
    )
  } catch (err) {
    if (err instanceof LogCursorInvalid) throw badRequest(`query.page_token: ${err.message}`)
    throw err
  }
  const complete = logComplete({ status: run.status, finished: run.finished?.toDate(), atEnd: page.atEnd, now, lagMs: deps.logs.lagMs })
  return { lines: page.lines.map(toLine), nextPageToken: complete ? undefined : encode({ j: token.j, c: page.cursor }) }
}

/**
 * Pages of the run's log as they come, until it is complete, `signal` aborts or the `deadline`
 * (performance.now()) passes: each page with lines, and a last one (perhaps empty) at the end or
 * the deadline; with `idleMs`, also an empty page (with its token) whenever nothing was yielded
 * for that long, so that a stream can show it is alive. The run is read again between polls, for
 * its status.
 */
export async function* followRunLog(
  deps: ComputeDeps,
  run: RunRecord,
  q: LogSelection,
  opts: { signal?: AbortSignal; deadline?: number; idleMs?: number } = {},
): AsyncGenerator<RunLogPage & { run: RunRecord }> {
  let current = run
  let token = q.page_token
  let yielded = performance.now()
  for (;;) {
    const page = await readRunLog(deps, current, { ...q, page_token: token })
    token = page.nextPageToken
    const now = performance.now()
    const past = opts.deadline !== undefined && now >= opts.deadline
    const idle = opts.idleMs !== undefined && now - yielded >= opts.idleMs
    if (page.lines.length || !token || past || idle) {
      yield { ...page, run: current }
      yielded = performance.now()
    }
    if (!token || past || opts.signal?.aborted) return
    // A full page: the next is there already.
    if (page.lines.length >= pageSizeOf(q)) continue
    try {
      await sleep(POLL_MS, undefined, { signal: opts.signal })
    } catch {
      return
    }
    current = (await deps.runs.get(current.project_id, current.id)) ?? current
  }
}

/** The long poll: the first page with lines, or the log's end, or (after `waitSeconds`) an empty page with the same token. */
export async function waitRunLog(deps: ComputeDeps, run: RunRecord, q: LogSelection, waitSeconds: number, signal?: AbortSignal): Promise<RunLogPage> {
  // Wall time (not the deps' clock, which tests may stop): the caller waits in real seconds.
  const deadline = performance.now() + waitSeconds * 1000
  for await (const page of followRunLog(deps, run, q, { signal, deadline })) return { lines: page.lines, nextPageToken: page.nextPageToken }
  // Aborted (the client went away) before anything came: what is answered no longer matters.
  return { lines: [], nextPageToken: q.page_token }
}
