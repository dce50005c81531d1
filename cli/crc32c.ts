import { crc32c as simdCrc32c } from '@node-rs/crc32'

/**
 * CRC32C (Castagnoli), the checksum Cloud Storage keeps for every object and answers in
 * `x-goog-hash: crc32c=<base64 of the 4 bytes, big-endian>`. Node's crypto has no CRC32C;
 * @node-rs/crc32 computes it with the CPU's CRC instructions (about 8 GB/s on one core here, where
 * a table-driven JavaScript loop makes 1 GB/s), so checking a transfer costs nothing beside moving
 * its bytes. The CLI's copy of lib/storage/crc32c.ts (cli/ imports nothing outside cli/ but packages);
 * test/unit/lib/storage/crc32c.test.ts checks both with the same vectors.
 */
export function crc32c(data: Uint8Array, crc = 0): number {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  return simdCrc32c(bytes, crc) >>> 0
}

/** A running CRC32C, fed chunk by chunk; `base64()` is what x-goog-hash carries. */
export class Crc32c {
  private value = 0
  update(data: Uint8Array): this {
    this.value = crc32c(data, this.value)
    return this
  }
  digest(): number {
    return this.value
  }
  base64(): string {
    return crc32cBase64(this.value)
  }
}

/** Castagnoli's polynomial, bit-reversed (as the running CRC uses it). */
const POLY = 0x82f63b78

function gf2Times(matrix: Uint32Array, vector: number): number {
  let sum = 0
  for (let i = 0; vector !== 0; i++, vector >>>= 1) if (vector & 1) sum ^= matrix[i]!
  return sum >>> 0
}

const gf2Square = (matrix: Uint32Array): Uint32Array => Uint32Array.from(matrix, (row) => gf2Times(matrix, row))

/**
 * The CRC32C of A followed by B, from the CRC32C of A, that of B and B's length (zlib's
 * crc32_combine, with Castagnoli's polynomial): the parts of a parallel download are checksummed
 * as they arrive, each on its own, and the whole file's checksum comes from theirs without reading
 * it again, as gsutil's sliced downloads do.
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB <= 0) return crcA >>> 0
  // The operator for one zero bit, then squared into two, four, eight... zero bits.
  let odd: Uint32Array = new Uint32Array(32)
  odd[0] = POLY
  for (let n = 1; n < 32; n++) odd[n] = 1 << (n - 1)
  let even = gf2Square(odd)
  odd = gf2Square(even)
  let crc = crcA >>> 0
  let length = lengthB
  // Each pass applies the operator for the length's next bit of zero bytes (lengths above 2^32 included).
  for (;;) {
    even = gf2Square(odd)
    if (length % 2 === 1) crc = gf2Times(even, crc)
    length = Math.floor(length / 2)
    if (length === 0) break
    odd = gf2Square(even)
    if (length % 2 === 1) crc = gf2Times(odd, crc)
    length = Math.floor(length / 2)
    if (length === 0) break
  }
  return (crc ^ crcB) >>> 0
}

/** A CRC32C as x-goog-hash carries it: base64 of the 4 bytes, big-endian. */
export function crc32cBase64(value: number): string {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(value >>> 0)
  return bytes.toString('base64')
}
