import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  WHOLE_FILE,
  CHUNK_GRANULARITY,
  chunkBytesOf,
  chunkPlan,
  isResumable,
  nextChunk,
  RESUMABLE_THRESHOLD,
  sessionKey,
  storedFromRange,
  type UploadIdentity,
} from '../../../cli/resumable.js'

const MiB = 1024 * 1024

describe('which uploads go through a resumable session', () => {
  it.each([
    [0, false],
    [RESUMABLE_THRESHOLD - 1, false],
    [RESUMABLE_THRESHOLD, false],
    [RESUMABLE_THRESHOLD + 1, true],
    [100 * 1024 * MiB, true],
  ])('a file of %d bytes: %s', (size, resumable) => {
    expect(isResumable(size)).toBe(resumable)
  })

  it('sends the rest of the file in one request by default, as Google recommends', () => {
    expect(chunkPlan(0, 1024 * MiB)).toEqual([{ first: 0, last: 1024 * MiB - 1, final: true }])
    expect(chunkPlan(517 * MiB, 1024 * MiB)).toEqual([{ first: 517 * MiB, last: 1024 * MiB - 1, final: true }])
    expect(nextChunk(1024 * MiB, 1024 * MiB)).toBeUndefined()
  })

  it.each([
    [undefined, WHOLE_FILE],
    ['16', 16 * MiB],
    ['1', MiB],
    ['1024', 1024 * MiB],
    ['0', 'error'],
    ['1025', 'error'],
    ['16.5', 'error'],
    ['16MiB', 'error'],
    ['-16', 'error'],
  ])('PLATFORM_UPLOAD_CHUNK_MIB=%s: %s', (setting, expected) => {
    const chunk = chunkBytesOf(setting)
    if (expected === 'error')
      expect(chunk).toEqual({ error: expect.stringContaining('PLATFORM_UPLOAD_CHUNK_MIB must be a whole number of MiB from 1 to 1024') })
    else expect(chunk).toBe(expected)
  })
})

describe('what a 308 Resume Incomplete says is stored', () => {
  it.each([
    [undefined, 0],
    ['bytes=0-0', 1],
    ['bytes=0-42', 43],
    ['bytes=0-524287', 524_288],
    [' bytes=0-16777215 ', 16 * MiB],
    ['bytes=1-42', undefined],
    ['bytes=0-', undefined],
    ['0-42', undefined],
    ['bytes 0-42/100', undefined],
  ])('Range %s: %s bytes', (header, stored) => {
    expect(storedFromRange(header)).toBe(stored)
  })
})

describe('the next chunk to send', () => {
  it.each([
    ['a new session', 0, 40 * MiB, { first: 0, last: 16 * MiB - 1, final: false }],
    ['after one chunk', 16 * MiB, 40 * MiB, { first: 16 * MiB, last: 32 * MiB - 1, final: false }],
    ['the last, shorter one', 32 * MiB, 40 * MiB, { first: 32 * MiB, last: 40 * MiB - 1, final: true }],
    ['after a chunk cut at 21 MiB', 21 * MiB, 40 * MiB, { first: 21 * MiB, last: 37 * MiB - 1, final: false }],
    ['a file of exactly one chunk', 0, 16 * MiB, { first: 0, last: 16 * MiB - 1, final: true }],
    ['nothing left', 40 * MiB, 40 * MiB, undefined],
    ['an empty file: one empty final chunk', 0, 0, { first: 0, last: -1, final: true }],
  ])('%s (16 MiB chunks)', (_name, stored, size, chunk) => {
    expect(nextChunk(stored, size, 16 * MiB)).toEqual(chunk)
  })

  it.each([
    [0, 10, 1000],
    [11, 10, WHOLE_FILE],
    [-1, 10, WHOLE_FILE],
  ])(
    'refuses a chunk size that is not a multiple of 256 KiB, or a session holding more than the file (%d of %d, chunks of %d)',
    (stored, size, chunk) => {
      expect(() => nextChunk(stored, size, chunk)).toThrow()
    },
  )

  const plans = fc.record({
    size: fc.integer({ min: 1, max: 2 ** 30 }),
    chunkBytes: fc.oneof(
      fc.constant(WHOLE_FILE),
      fc.integer({ min: 1, max: 64 }).map((n) => n * CHUNK_GRANULARITY),
    ),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
  })

  it('covers every byte from what is stored to the end exactly once, in order, the last chunk alone final', () => {
    fc.assert(
      fc.property(plans, ({ size, chunkBytes, at }) => {
        const stored = Math.min(size - 1, Math.floor(size * at))
        const plan = chunkPlan(stored, size, chunkBytes)
        expect(plan[0]!.first).toBe(stored)
        expect(plan.at(-1)!.last).toBe(size - 1)
        plan.forEach((c, i) => {
          if (i > 0) expect(c.first).toBe(plan[i - 1]!.last + 1)
          expect(c.final).toBe(i === plan.length - 1)
          expect(c.last - c.first + 1).toBeLessThanOrEqual(chunkBytes)
          // Every chunk but the last is a whole multiple of 256 KiB, as Cloud Storage asks.
          if (!c.final) expect((c.last - c.first + 1) % CHUNK_GRANULARITY).toBe(0)
        })
      }),
      { numRuns: 200 },
    )
  })
})

describe('which saved session belongs to an upload', () => {
  const id: UploadIdentity = {
    local: '/data/NA12878.cram',
    size: 40 * MiB,
    mtimeMs: 1_700_000_000_000.5,
    filesUrl: 'http://127.0.0.1:9304',
    project: 'p1',
    remote: 'cram/',
    contentType: 'application/octet-stream',
  }

  it('is the same for the same file, unchanged, to the same place', () => {
    expect(sessionKey({ ...id })).toBe(sessionKey(id))
    expect(sessionKey(id)).toMatch(/^[0-9a-f]{32}$/)
  })

  it.each<[string, Partial<UploadIdentity>]>([
    ['another file', { local: '/data/NA12878.bam' }],
    ['a file that grew', { size: 40 * MiB + 1 }],
    ['a file written again', { mtimeMs: 1_700_000_000_001 }],
    ['another platform', { filesUrl: 'https://files.example.org' }],
    ['another project', { project: 'p2' }],
    ['another destination', { remote: 'cram/NA12878.cram' }],
    ['another content type', { contentType: 'text/plain' }],
  ])('differs for %s', (_name, change) => {
    expect(sessionKey({ ...id, ...change })).not.toBe(sessionKey(id))
  })
})
