import { describe, expect, it } from 'vitest'
import { CloudLogReader, cloudLogFilter, decodeCursor, lineOf, taskOf, type CloudEntry, type EntriesQuery } from '../../../../lib/batch/cloud-logs.js'
import { LogCursorInvalid } from '../../../../lib/batch/logs.js'

const job = { name: 'projects/p/locations/europe-west1/jobs/run-1', uid: 'run-1-0a1b2c3d-4e5f', created: new Date('2026-11-26T10:00:00Z') }

/** Entries as the Logging client returns batch_task_logs entries: textPayload as data, severity INFO or ERROR. */
const entry = (at: string, insertId: string, text: string, severity: 'INFO' | 'ERROR' = 'INFO'): CloudEntry => ({
  metadata: { timestamp: new Date(at), insertId, severity, labels: { job_uid: job.uid, task_id: `task/${job.uid}-group0-0/0/0` } },
  data: text,
})

/** A Logging stand-in that answers from recorded entries and records the queries it got. */
function recorded(entries: CloudEntry[]) {
  const queries: EntriesQuery[] = []
  const reader = new CloudLogReader('p', async (q) => {
    queries.push(q)
    const from = /timestamp>="([^"]+)"/.exec(q.filter)![1]!
    const sorted = entries.filter((e) => (e.metadata.timestamp as Date) >= new Date(from))
    return (q.orderBy === 'timestamp desc' ? [...sorted].reverse() : sorted).slice(0, q.pageSize)
  })
  return { reader, queries }
}

describe('the Cloud Logging reader of Batch job logs', () => {
  it.each([
    [{}, 'logName="projects/p/logs/batch_task_logs" AND labels.job_uid="run-1-0a1b2c3d-4e5f" AND timestamp>="2026-11-26T10:00:00.000Z"'],
    [{ stream: 'stderr' as const }, '… AND severity>=ERROR'],
    [{ stream: 'stdout' as const }, '… AND severity<ERROR'],
    [
      { since: new Date('2026-11-26T11:00:00Z'), until: new Date('2026-11-26T12:00:00Z') },
      'logName="projects/p/logs/batch_task_logs" AND labels.job_uid="run-1-0a1b2c3d-4e5f" AND timestamp>="2026-11-26T11:00:00.000Z" AND timestamp<"2026-11-26T12:00:00.000Z"',
    ],
    // A since before the job was made is bounded by the job's creation: Logging is never asked for all of time.
    [
      { since: new Date('2020-01-01T00:00:00Z') },
      'logName="projects/p/logs/batch_task_logs" AND labels.job_uid="run-1-0a1b2c3d-4e5f" AND timestamp>="2026-11-26T10:00:00.000Z"',
    ],
  ])('filters on the job uid, its task log and the window %j', (filter, expected) => {
    const built = cloudLogFilter('p', job, filter)
    if (expected.startsWith('…')) expect(built.endsWith(expected.slice(2))).toBe(true)
    else expect(built).toBe(expected)
  })

  it('quotes what it puts in the query', () => {
    expect(cloudLogFilter('p', { ...job, uid: 'a"b\\c' }, {})).toContain('labels.job_uid="a\\"b\\\\c"')
  })

  it.each([
    [
      entry('2026-11-26T10:00:01.250Z', 'i1', 'aligned 10 reads\n'),
      { time: new Date('2026-11-26T10:00:01.250Z'), task: `${job.uid}-group0-0`, stream: 'stdout', text: 'aligned 10 reads' },
    ],
    [entry('2026-11-26T10:00:02Z', 'i2', 'no such file', 'ERROR'), { stream: 'stderr', text: 'no such file' }],
    [
      { metadata: { timestamp: { seconds: 1795000000, nanos: 5e8 }, severity: 500, labels: { task_id: `${job.uid}-group0-0` } }, data: 'x' },
      { time: new Date(1795000000500), stream: 'stderr', task: `${job.uid}-group0-0` },
    ],
    [
      { metadata: { timestamp: '2026-11-26T10:00:03Z', severity: 'WARNING' }, data: { message: 'structured', level: 'w' } },
      { stream: 'stdout', text: 'structured', task: job.uid },
    ],
    [{ metadata: { timestamp: '2026-11-26T10:00:03Z' }, data: { a: 1 } }, { text: '{"a":1}' }],
  ])('maps the entry %j to a log line', (e, expected) => {
    expect(lineOf(e, job)).toMatchObject(expected)
  })

  it('names the task from either form of the task_id label', () => {
    expect(taskOf(`task/${job.uid}-group0-0/0/0`, job)).toBe(`${job.uid}-group0-0`)
    expect(taskOf(`${job.uid}-group1-12`, job)).toBe(`${job.uid}-group1-12`)
  })

  it('pages through entries with a cursor, neither losing nor repeating entries of the same millisecond', async () => {
    const entries = [
      entry('2026-11-26T10:00:01.000Z', 'a', '1'),
      entry('2026-11-26T10:00:01.000Z', 'b', '2'),
      entry('2026-11-26T10:00:01.000Z', 'c', '3'),
      entry('2026-11-26T10:00:02.000Z', 'd', '4'),
    ]
    const { reader, queries } = recorded(entries)
    const seen: string[] = []
    let cursor: string | undefined
    for (let i = 0; i < 10; i++) {
      const page = await reader.read({ job, after: cursor, limit: 2 })
      seen.push(...page.lines.map((l) => l.text))
      cursor = page.cursor
      if (page.atEnd) break
    }
    expect(seen).toEqual(['1', '2', '3', '4'])
    expect(queries[0]).toMatchObject({ resourceNames: ['projects/p'], orderBy: 'timestamp asc', autoPaginate: false })
    // A follower asking again at the end gets nothing new, and keeps its place.
    const again = await reader.read({ job, after: cursor, limit: 2 })
    expect(again).toEqual({ lines: [], cursor, atEnd: true })
  })

  it("reads a failed job's last stderr lines newest-first from Logging and gives them oldest first", async () => {
    const { reader, queries } = recorded([
      entry('2026-11-26T10:00:01Z', 'a', 'first', 'ERROR'),
      entry('2026-11-26T10:00:02Z', 'b', 'second', 'ERROR'),
    ])
    expect((await reader.tail(job, 20, 'stderr')).map((l) => l.text)).toEqual(['first', 'second'])
    expect(queries[0]).toMatchObject({ orderBy: 'timestamp desc', pageSize: 20 })
    expect(queries[0]!.filter).toContain('severity>=ERROR')
  })

  it('refuses a cursor it did not make', () => {
    expect(() => decodeCursor('not-a-cursor')).toThrow(LogCursorInvalid)
  })
})
