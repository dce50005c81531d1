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
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32BE(this.value)
    return bytes.toString('base64')
  }
}
