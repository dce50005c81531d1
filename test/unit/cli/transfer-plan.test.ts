import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { crc32c, crc32cCombine } from '../../../cli/crc32c.js'
import { addressesOf } from '../../../cli/download.js'
import {
  decideResume,
  decideSync,
  needsChecksums,
  partLength,
  planParts,
  relativeTo,
  remainingParts,
  remoteUnder,
  wholeCrc32c,
  type DownloadState,
  type Fingerprint,
  type RemoteObject,
} from '../../../cli/transfer-plan.js'

const MiB = 1024 * 1024

describe('crc32cCombine', () => {
  it('gives the CRC32C of two buffers joined, from theirs and the second one’s length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        expect(crc32cCombine(crc32c(a), crc32c(b), b.length)).toBe(crc32c(Buffer.concat([a, b])))
      }),
    )
  })

  it('combines across lengths above 2^32 bytes as the running CRC does over zero bytes', () => {
    // The CRC32C of n zero bytes continued by the running CRC, against the combine of two halves.
    const zeros = Buffer.alloc(MiB)
    let running = crc32c(Buffer.from('head'))
    const head = running
    for (let i = 0; i < 5; i++) running = crc32c(zeros, running)
    expect(crc32cCombine(head, crc32c(Buffer.alloc(5 * MiB)), 5 * MiB)).toBe(running)
    expect(() => crc32cCombine(head, 0, 2 ** 33 + 7)).not.toThrow()
  })

  it('leaves the first CRC as it is for an empty second part', () => {
    expect(crc32cCombine(0x1234abcd, 0, 0)).toBe(0x1234abcd)
  })
})

describe('planParts', () => {
  it.each([
    [0, 10, []],
    [1, 10, [[0, 0]]],
    [10, 10, [[0, 9]]],
    [
      11,
      10,
      [
        [0, 9],
        [10, 10],
      ],
    ],
    [
      25,
      10,
      [
        [0, 9],
        [10, 19],
        [20, 24],
      ],
    ],
  ])('cuts %i bytes in parts of %i: %j', (size, partBytes, ranges) => {
    expect(planParts(size, partBytes).map((p) => [p.start, p.end])).toEqual(ranges)
  })

  it('covers every byte once, in order, each part full but the last', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10 ** 12 }), fc.integer({ min: 1, max: 10 ** 11 }), (size, partBytes) => {
        fc.pre(size / partBytes < 10_000)
        const parts = planParts(size, partBytes)
        expect(parts.reduce((n, p) => n + partLength(p), 0)).toBe(size)
        parts.forEach((p, i) => {
          expect(p.index).toBe(i)
          expect(p.start).toBe(i * partBytes)
          if (i < parts.length - 1) expect(partLength(p)).toBe(partBytes)
          else expect(partLength(p)).toBeGreaterThan(0)
        })
      }),
    )
  })

  it.each([-1, 1.5, Number.NaN])('refuses a size of %s', (size) => {
    expect(() => planParts(size, 10)).toThrow(RangeError)
  })
})

describe('remainingParts and wholeCrc32c', () => {
  it('keeps the parts not done, in order', () => {
    const parts = planParts(50, 10)
    expect(
      remainingParts(
        parts,
        new Map([
          [1, 0],
          [3, 0],
        ]),
      ).map((p) => p.index),
    ).toEqual([0, 2, 4])
    expect(remainingParts(parts, new Map())).toEqual(parts)
  })

  it('gives the whole file’s CRC32C from its parts’, whatever the part size', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 5000 }), fc.integer({ min: 1, max: 700 }), (data, partBytes) => {
        const parts = planParts(data.length, partBytes)
        const done = new Map(parts.map((p) => [p.index, crc32c(data.subarray(p.start, p.end + 1))]))
        expect(wholeCrc32c(parts, done, crc32cCombine)).toBe(crc32c(data))
      }),
    )
  })

  it('refuses to give a whole CRC32C while a part is missing', () => {
    expect(() => wholeCrc32c(planParts(20, 10), new Map([[0, 1]]), crc32cCombine)).toThrow('part 1 is missing')
  })
})

describe('decideResume', () => {
  const object: RemoteObject = { uri: 'gs://b/big.bam', size: 100, etag: '"abc"', generation: '17' }
  const state = (over: Partial<DownloadState> = {}): DownloadState => ({
    ...object,
    part_bytes: 10,
    parts: [
      [0, 11],
      [3, 33],
    ],
    ...over,
  })

  it('continues a partial download of the same object, version and part size with its complete parts', () => {
    expect(decideResume(state(), object, 10)).toEqual({
      resume: true,
      done: new Map([
        [0, 11],
        [3, 33],
      ]),
    })
  })

  it.each<[string, Partial<DownloadState> | undefined, RemoteObject, string | undefined]>([
    ['no partial download', undefined, object, undefined],
    ['another object', { uri: 'gs://b/other.bam' }, object, 'the partial download is of gs://b/other.bam'],
    ['a new generation', { generation: '16' }, object, 'gs://b/big.bam changed since the partial download'],
    ['a new ETag', { etag: '"old"' }, object, 'gs://b/big.bam changed since the partial download'],
    ['a new size', { size: 90 }, object, 'gs://b/big.bam changed since the partial download'],
    ['another part size', { part_bytes: 20 }, object, 'the partial download was made in parts of another size'],
    [
      'a storage that names no version',
      { etag: undefined, generation: undefined },
      { uri: object.uri, size: 100 },
      'the storage names no version of the file to compare with',
    ],
  ])('starts afresh after %s', (_, over, remote, reason) => {
    expect(decideResume(over === undefined ? undefined : state(over), remote, 10)).toEqual({ resume: false, reason })
  })

  it('ignores recorded parts the object does not have', () => {
    expect(
      decideResume(
        state({
          parts: [
            [0, 1],
            [10, 2],
            [-1, 3],
            [9, 4],
          ],
        }),
        object,
        10,
      ),
    ).toEqual({
      resume: true,
      done: new Map([
        [0, 1],
        [9, 4],
      ]),
    })
  })
})

describe('decideSync', () => {
  const src: Fingerprint = { size: 10, crc32c: 'AAAAAQ==' }
  it.each<[string, Fingerprint | undefined, boolean, string]>([
    ['an absent destination is sent', undefined, false, 'send'],
    ['an identical destination is skipped', { size: 10, crc32c: 'AAAAAQ==' }, false, 'skip'],
    ['an identical destination is skipped with --overwrite too', { size: 10, crc32c: 'AAAAAQ==' }, true, 'skip'],
    ['a destination of another size is refused', { size: 11 }, false, 'refuse'],
    ['a destination of another checksum is refused', { size: 10, crc32c: 'AAAAAg==' }, false, 'refuse'],
    ['a destination without a known checksum is refused', { size: 10 }, false, 'refuse'],
    ['a different destination is replaced with --overwrite', { size: 10, crc32c: 'AAAAAg==' }, true, 'send'],
  ])('%s', (_, dest, overwrite, action) => {
    expect(decideSync(src, dest, overwrite).action).toBe(action)
  })

  it('never skips a file whose checksum is unknown on either side', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        (size, a, b, ow) => {
          fc.pre(a === undefined || b === undefined)
          expect(decideSync({ size, crc32c: a }, { size, crc32c: b }, ow).action).not.toBe('skip')
        },
      ),
    )
  })

  it('reads checksums only for a destination of the same size', () => {
    expect(needsChecksums(src, undefined)).toBe(false)
    expect(needsChecksums(src, { size: 9 })).toBe(false)
    expect(needsChecksums(src, { size: 10 })).toBe(true)
  })
})

describe('relativeTo and remoteUnder', () => {
  it.each([
    ['', 'a/b.txt', 'a/b.txt'],
    ['runs', 'runs/x/y.vcf', 'x/y.vcf'],
    ['runs/', 'runs/x/y.vcf', 'x/y.vcf'],
  ])('the path of %s’s %s below it is %s', (root, path, rel) => {
    expect(relativeTo(root, path)).toBe(rel)
  })

  it('refuses a path outside the root, even one sharing its first letters', () => {
    expect(() => relativeTo('runs', 'runsx/a')).toThrow('not under runs/')
  })

  it.each([
    ['', 'a.txt', 'a.txt'],
    ['fastq', 'a/b.fq', 'fastq/a/b.fq'],
    ['fastq/', 'b.fq', 'fastq/b.fq'],
  ])('under %s, %s is %s', (prefix, rel, remote) => {
    expect(remoteUnder(prefix, rel)).toBe(remote)
  })
})

describe('addressesOf', () => {
  afterEach(() => vi.useRealTimers())

  it('keeps a signed address while it has more than a minute left, and asks for a new one after', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00Z') })
    let signed = 0
    const address = addressesOf(async () => {
      signed++
      return { url: `http://storage/b/o?n=${signed}`, expires_at: new Date(Date.now() + 900_000).toISOString() }
    })
    expect((await address()).url).toBe('http://storage/b/o?n=1')
    vi.setSystemTime(Date.parse('2026-11-26T10:13:59Z'))
    expect((await address()).url).toBe('http://storage/b/o?n=1')
    vi.setSystemTime(Date.parse('2026-11-26T10:14:01Z'))
    expect((await address()).url).toBe('http://storage/b/o?n=2')
    expect(signed).toBe(2)
  })
})
