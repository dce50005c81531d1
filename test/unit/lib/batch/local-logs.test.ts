import { mkdtemp, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { JobLogWriter, LocalLogReader, MAX_LINE_CHARS } from '../../../../lib/batch/local-logs.js'
import { LogCursorInvalid } from '../../../../lib/batch/logs.js'

let tick = 0
const clock = { now: () => new Date(Date.UTC(2026, 10, 26, 10, 0, 0, tick++)) }

async function jobWith(write: (w: JobLogWriter) => Promise<void>) {
  const root = await mkdtemp(join(tmpdir(), 'logs-'))
  await mkdir(join(root, 'run-1'))
  const writer = new JobLogWriter(join(root, 'run-1'), clock)
  await write(writer)
  await writer.close()
  return { reader: new LocalLogReader(root), job: { name: 'projects/p/locations/r/jobs/run-1', uid: 'run-1-x', created: new Date(0) } }
}

async function feed(writer: JobLogWriter, chunks: Array<string | Buffer>, stream: 'stdout' | 'stderr' = 'stdout', keep = 0) {
  const source = new PassThrough()
  const done = writer.capture(source, 't', stream, keep)
  for (const c of chunks) source.write(c)
  source.end()
  return done
}

describe("the local executor's job log", () => {
  it('cuts what a task writes into lines however the chunks fall, multi-byte characters and a last line without newline included', async () => {
    const euro = Buffer.from('€')
    const { reader, job } = await jobWith(async (w) => {
      await feed(w, ['a\r\nb', 'c\n', euro.subarray(0, 1), Buffer.concat([euro.subarray(1), Buffer.from('\nend')])])
    })
    const { lines } = await reader.read({ job, limit: 10 })
    expect(lines.map((l) => l.text)).toEqual(['a', 'bc', '€', 'end'])
  })

  it('cuts an endless line into pieces of at most MAX_LINE_CHARS', async () => {
    const { reader, job } = await jobWith(async (w) => {
      await feed(w, ['x'.repeat(MAX_LINE_CHARS * 2 + 5)])
    })
    const { lines } = await reader.read({ job, limit: 10 })
    expect(lines.map((l) => l.text.length)).toEqual([MAX_LINE_CHARS, MAX_LINE_CHARS, 5])
  })

  it("gives the last lines of a failing process's stderr", async () => {
    await jobWith(async (w) => {
      expect(await feed(w, ['1\n2\n3\n4\n'], 'stderr', 2)).toEqual(['3', '4'])
    })
  })

  it('pages by cursor through every line once, filtered by stream and time', async () => {
    tick = 0
    const { reader, job } = await jobWith(async (w) => {
      for (let i = 0; i < 25; i++) w.write('t', i % 2 ? 'stderr' : 'stdout', `line ${i}`)
    })
    const read = async (filter: object) => {
      const texts: string[] = []
      let cursor: string | undefined
      for (;;) {
        const page = await reader.read({ job, after: cursor, limit: 4, ...filter })
        texts.push(...page.lines.map((l) => l.text))
        expect(page.lines.length).toBeLessThanOrEqual(4)
        cursor = page.cursor
        if (page.atEnd) return texts
      }
    }
    expect(await read({})).toEqual(Array.from({ length: 25 }, (_, i) => `line ${i}`))
    expect(await read({ stream: 'stderr' })).toEqual(Array.from({ length: 12 }, (_, i) => `line ${2 * i + 1}`))
    // Lines 0..24 were written 1 ms apart from 10:00:00.000.
    expect(await read({ since: new Date(Date.UTC(2026, 10, 26, 10, 0, 0, 20)), until: new Date(Date.UTC(2026, 10, 26, 10, 0, 0, 22)) })).toEqual([
      'line 20',
      'line 21',
    ])
    expect((await reader.tail(job, 2, 'stdout')).map((l) => l.text)).toEqual(['line 22', 'line 24'])
  })

  it('has nothing, at its end, for a job that wrote nothing (yet)', async () => {
    const reader = new LocalLogReader(await mkdtemp(join(tmpdir(), 'logs-')))
    const job = { name: 'projects/p/locations/r/jobs/run-2', created: new Date(0) }
    expect(await reader.read({ job, limit: 5 })).toEqual({ lines: [], cursor: undefined, atEnd: true })
    expect(await reader.read({ job, after: '0', limit: 5 })).toEqual({ lines: [], cursor: '0', atEnd: true })
  })

  it('refuses a cursor that is no position of a line in this log', async () => {
    const { reader, job } = await jobWith(async (w) => {
      w.write('t', 'stdout', 'hello')
    })
    await expect(reader.read({ job, after: '3', limit: 5 })).rejects.toThrow(LogCursorInvalid)
    await expect(reader.read({ job, after: 'abc', limit: 5 })).rejects.toThrow(LogCursorInvalid)
  })
})
