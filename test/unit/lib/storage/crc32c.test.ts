import { randomBytes } from 'node:crypto'
import { CRC32C } from '@google-cloud/storage'
import { describe, expect, it } from 'vitest'
import * as cli from '../../../../cli/crc32c.js'
import * as lib from '../../../../lib/storage/crc32c.js'

/** RFC 3720 (iSCSI), appendix B.4, and the classic check value of "123456789". */
const VECTORS: Array<[string, Buffer, number]> = [
  ['123456789', Buffer.from('123456789'), 0xe3069283],
  ['32 bytes of zeros', Buffer.alloc(32, 0), 0x8a9136aa],
  ['32 bytes of ones', Buffer.alloc(32, 0xff), 0x62a8ab43],
  ['32 incrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
  ['32 decrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
  ['nothing', Buffer.alloc(0), 0],
]

describe.each([
  ['lib/storage/crc32c.ts', lib],
  ['cli/crc32c.ts', cli],
])('CRC32C of %s', (_name, impl) => {
  it.each(VECTORS)('of %s is the published value', (_label, data, expected) => {
    expect(impl.crc32c(data)).toBe(expected)
  })

  it("is the value Google's own client computes, whatever the chunks it is fed in", () => {
    const data = randomBytes(1_000_003)
    const google = new CRC32C()
    google.update(data)
    const whole = new impl.Crc32c().update(data)
    expect(whole.base64()).toBe(google.toString())
    const chunked = new impl.Crc32c()
    for (let at = 0; at < data.length;) {
      const size = 1 + ((at * 7919) % 70_001)
      chunked.update(data.subarray(at, at + size))
      at += size
    }
    expect(chunked.digest()).toBe(whole.digest())
  })
})
