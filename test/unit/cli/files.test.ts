import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { duration, instant } from '../../../cli/commands/audit/events.js'
import { crc32c } from '../../../cli/crc32c.js'
import { EXIT, explain } from '../../../cli/errors.js'
import { contentTypeOf, intoFolder, remoteBasename } from '../../../cli/files.js'
import { formatBytes, formatTransfer } from '../../../cli/output.js'
import { progressLine } from '../../../cli/progress.js'
import {
  CHUNK_BYTES,
  ChecksumMismatchError,
  downloadFile,
  eachChunk,
  parseGoogHash,
  StorageHttpError,
  StorageUnreachableError,
  uploadFile,
  verify,
} from '../../../cli/transfer.js'
import { md5Wanted } from '../../../cli/upload.js'

const b64crc = (data: Buffer) => {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(crc32c(data))
  return out.toString('base64')
}
const b64md5 = (data: Buffer) => createHash('md5').update(data).digest('base64')

describe('files: names, sizes, types', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KiB'],
    [5 * 1024 * 1024, '5.0 MiB'],
    [1024 ** 3, '1.0 GiB'],
    [3.25 * 1024 ** 4, '3.3 TiB'],
  ])('%d bytes read %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text))

  it('says how long a transfer took and at what rate', () => {
    expect(formatTransfer(1024 ** 3, 2.5)).toBe('1.0 GiB in 2.5s (409.6 MiB/s)')
    expect(formatTransfer(1024, 0)).toBe('1.0 KiB in 0.0s')
    expect(formatTransfer(10 * 1024 ** 3, 125)).toBe('10.0 GiB in 2m 05s (81.9 MiB/s)')
  })

  it('draws a progress bar with the bytes, the percentage, the rate and the time left', () => {
    expect(progressLine(512 * 1024 ** 2, 1024 ** 3, 2)).toBe('[############------------]   50%  512.0 MiB / 1.0 GiB  256.0 MiB/s  ETA 2s')
    expect(progressLine(1024 ** 3, 1024 ** 3, 4)).toBe('[########################]  100%  1.0 GiB / 1.0 GiB  256.0 MiB/s')
    expect(progressLine(0, 0, 0)).toBe('[########################]  100%  0 B / 0 B')
  })

  it('names a remote file by its last segment, and refuses a folder', () => {
    expect(remoteBasename('fastq/S1_R1.fastq.gz')).toBe('S1_R1.fastq.gz')
    expect(remoteBasename('gs://demo-lab-demo/fastq/S1_R1.fastq.gz')).toBe('S1_R1.fastq.gz')
    expect(remoteBasename('top.txt')).toBe('top.txt')
    for (const folder of ['fastq/', 'gs://demo-lab-demo/', 'gs://demo-lab-demo']) expect(() => remoteBasename(folder)).toThrow(/names a folder/)
    expect(intoFolder('fastq/', 'a.gz')).toBe('fastq/a.gz')
    expect(intoFolder('fastq/b.gz', 'a.gz')).toBe('fastq/b.gz')
  })

  it.each([
    ['S1_R1.fastq.gz', 'application/gzip'],
    ['calls.vcf.bgz', 'application/gzip'],
    ['reads.FASTQ', 'text/plain'],
    ['panel.bed', 'text/plain'],
    ['sheet.csv', 'text/csv'],
    ['sample.bam', 'application/octet-stream'],
    ['README', 'application/octet-stream'],
    ['.bashrc', 'application/octet-stream'],
  ])('declares %s as %s', (name, type) => expect(contentTypeOf(name)).toBe(type))
})

describe('audit events: --since and --from', () => {
  it.each([
    ['30m', 30 * 60_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['2w', 14 * 86_400_000],
  ])('%s is %d ms', (text, ms) => expect(duration(text)).toBe(ms))

  it.each(['2', 'h', '2 h', '-1h', '1.5h', '2y', ''])('refuses %j as a duration', (text) =>
    expect(() => duration(text)).toThrow(/expected a duration/),
  )

  it('takes a date or a time with its offset, and nothing else', () => {
    for (const ok of ['2026-11-22', '2026-11-22T06:00:00Z', '2026-11-22T06:00+01:00', '2026-11-22T06:00:00.123Z']) expect(instant(ok)).toBe(ok)
    for (const bad of ['yesterday', '2026-11-22T06:00', '2026-13-45', '22/11/2026']) expect(() => instant(bad)).toThrow(/ISO 8601/)
  })
})

describe('checksums', () => {
  it("reads x-goog-hash as one header, several, or Node's joined form", () => {
    expect(parseGoogHash('crc32c=n03x6A==, md5=Ojk9c3dhfxgoKVVHYwFbHQ==')).toEqual({ crc32c: 'n03x6A==', md5: 'Ojk9c3dhfxgoKVVHYwFbHQ==' })
    expect(parseGoogHash(['crc32c=n03x6A==', 'md5=Ojk9c3dhfxgoKVVHYwFbHQ=='])).toEqual({ crc32c: 'n03x6A==', md5: 'Ojk9c3dhfxgoKVVHYwFbHQ==' })
    expect(parseGoogHash('crc32c=n03x6A==')).toEqual({ crc32c: 'n03x6A==' })
    expect(parseGoogHash(undefined)).toEqual({})
  })

  it('verifies every checksum both sides have (CRC32C and MD5 where the storage gives both), and says when none could be', () => {
    expect(verify({ crc32c: 'a', md5: 'x' }, { crc32c: 'a', md5: 'x' })).toBe('crc32c+md5')
    expect(verify({ crc32c: 'a', md5: 'x' }, { crc32c: 'a' })).toBe('crc32c')
    expect(verify({ md5: 'x' }, { crc32c: 'a', md5: 'x' })).toBe('md5')
    expect(verify({ crc32c: 'a' }, {})).toBe('none')
    expect(() => verify({ crc32c: 'a' }, { crc32c: 'b' })).toThrow(ChecksumMismatchError)
    // A matching CRC32C does not excuse a differing MD5.
    expect(() => verify({ crc32c: 'a', md5: 'x' }, { crc32c: 'a', md5: 'y' })).toThrow(expect.objectContaining({ algorithm: 'md5' }))
  })

  it('explains a mismatch with exit code 10, and the storage refusing a signed address by its status', () => {
    expect(explain(new ChecksumMismatchError('crc32c', 'AAAAAA==', 'BBBBBB=='))).toEqual({
      message: 'checksum mismatch: crc32c AAAAAA== here, BBBBBB== in the storage',
      code: EXIT.checksum,
    })
    expect(explain(new StorageHttpError('GET', 400, 'ExpiredToken', 'Invalid argument.')).code).toBe(EXIT.rejected)
    expect(explain(new StorageHttpError('PUT', 403, 'SignatureDoesNotMatch', 'no')).code).toBe(EXIT.forbidden)
    expect(explain(new StorageHttpError('GET', 503, 'ServiceUnavailable', 'later')).code).toBe(EXIT.unavailable)
    expect(explain(new StorageUnreachableError('http://127.0.0.1:1', 'ECONNREFUSED')).code).toBe(EXIT.unavailable)
  })
})

/** A stand-in for the storage answering signed addresses as the test says: what it received, and what it answers. */
describe('reading a local file for a transfer', () => {
  it('gives any range of a file in order, in chunks of at most CHUNK_BYTES, and the bytes read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-each-chunk-'))
    try {
      const data = randomBytes(2 * CHUNK_BYTES + 7)
      const file = join(dir, 'reads.bin')
      await writeFile(file, data)
      const size = data.length
      const cases: Array<{ start?: number; end?: number }> = [
        {},
        { start: 0, end: 0 },
        { start: CHUNK_BYTES - 1, end: CHUNK_BYTES },
        { start: 5, end: 2 * CHUNK_BYTES + 2 },
        { start: CHUNK_BYTES, end: 2 * CHUNK_BYTES - 1 },
        { start: size - 1 },
        { start: size },
        { start: 10, end: 9 },
        { end: size + 100 },
      ]
      for (const range of cases) {
        const chunks: Buffer[] = []
        // Copied: the buffer is read into again once this returns.
        const read = await eachChunk(file, range, (chunk) => void chunks.push(Buffer.from(chunk)))
        const expected = data.subarray(range.start ?? 0, range.end === undefined ? size : range.end + 1)
        expect(Buffer.concat(chunks).equals(expected), JSON.stringify(range)).toBe(true)
        expect(read).toBe(expected.length)
        expect(chunks.every((c) => c.length > 0 && c.length <= CHUNK_BYTES)).toBe(true)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('takes PLATFORM_UPLOAD_MD5 as auto (the default: the MD5 where it is cheap), on or off, and names anything else', () => {
    const large = (cores: number) => ({ resumable: true, cores })
    const small = (cores: number) => ({ resumable: false, cores })
    // auto: a file of at most 8 MiB always; a larger one with more than two cores.
    expect([undefined, 'auto', ' AUTO '].map((v) => md5Wanted(v, large(2)))).toEqual([false, false, false])
    expect([md5Wanted(undefined, large(3)), md5Wanted('auto', small(1)), md5Wanted(undefined, small(2))]).toEqual([true, true, true])
    expect([md5Wanted('on', large(1)), md5Wanted('ON', large(2)), md5Wanted('off', small(64)), md5Wanted('off', large(64))]).toEqual([
      true,
      true,
      false,
      false,
    ])
    expect(md5Wanted('yes', large(8))).toEqual({ error: 'PLATFORM_UPLOAD_MD5 must be auto, on or off, not "yes"' })
  })
})

describe('transfers through a signed address', () => {
  let answer: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void = () => {}
  let received: { method?: string; headers?: IncomingMessage['headers']; body?: Buffer } = {}
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received = { method: req.method, headers: req.headers, body: Buffer.concat(chunks) }
      answer(req, received.body!, res)
    })
  })
  let url = ''
  let dir = ''
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket/object?X-Goog-Signature=abc`
    dir = await mkdtemp(join(tmpdir(), 'cli-transfer-'))
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await rm(dir, { recursive: true, force: true })
  })

  it('uploads a file with the signed headers and its length, in large chunks, and reports both checksums', async () => {
    const data = randomBytes(9 * 1024 * 1024 + 3)
    const file = join(dir, 'up.bin')
    await writeFile(file, data)
    answer = (_req, body, res) => {
      res.writeHead(200, { 'x-goog-hash': [`crc32c=${b64crc(body)}`, `md5=${b64md5(body)}`], 'x-goog-stored-content-length': body.length })
      res.end()
    }
    const seen: number[] = []
    const sent = await uploadFile({ url, headers: { 'Content-Type': 'application/octet-stream' } }, file, data.length, {
      onProgress: (n) => seen.push(n),
    })
    expect(received.method).toBe('PUT')
    expect(received.headers).toMatchObject({ 'content-type': 'application/octet-stream', 'content-length': String(data.length) })
    expect(received.headers!.authorization).toBeUndefined()
    expect(received.body!.equals(data)).toBe(true)
    expect(sent).toEqual({
      local: { crc32c: b64crc(data), md5: b64md5(data) },
      remote: { crc32c: b64crc(data), md5: b64md5(data) },
      storedSize: data.length,
    })
    expect(seen).toEqual([4 * 1024 * 1024, 8 * 1024 * 1024, data.length])
  })

  it("answers the storage's own error (Cloud Storage's XML), not the broken connection after it", async () => {
    const file = join(dir, 'refused.bin')
    await writeFile(file, randomBytes(1024))
    answer = (_req, _body, res) => {
      res.writeHead(403, { 'content-type': 'application/xml' })
      res.end("<?xml version='1.0' encoding='UTF-8'?><Error><Code>SignatureDoesNotMatch</Code><Message>Nope.</Message></Error>")
    }
    await expect(uploadFile({ url }, file, 1024)).rejects.toMatchObject({
      name: 'StorageHttpError',
      status: 403,
      code: 'SignatureDoesNotMatch',
      detail: 'Nope.',
    })
  })

  it('stops sending when the storage refuses before reading the body, answering the refusal and leaving the file closed', async () => {
    // Cloud Storage answers a bad signature as soon as it has the headers, and closes the connection.
    const refusing = createServer((req, res) => {
      res.writeHead(403, { 'content-type': 'application/xml', connection: 'close' })
      res.end('<Error><Code>SignatureDoesNotMatch</Code><Message>Refused early.</Message></Error>', () => req.socket.destroy())
    })
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve))
    try {
      const file = join(dir, 'refused-early.bin')
      await writeFile(file, randomBytes(32 * 1024 * 1024))
      const address = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/bucket/object`
      await expect(uploadFile({ url: address }, file, 32 * 1024 * 1024)).rejects.toMatchObject({ name: 'StorageHttpError', status: 403 })
      // The file's descriptor is closed once the request is over, not left to a write that is never called back.
      const open = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`) === file
          } catch {
            return false
          }
        })
      await expect.poll(open, { timeout: 5_000 }).toEqual([])
    } finally {
      refusing.closeAllConnections()
      await new Promise((resolve) => refusing.close(resolve))
    }
  })

  it('downloads into a temporary file, then into place once the checksum the storage announces matches', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17)
    answer = (_req, _body, res) => {
      res.writeHead(200, {
        'content-length': data.length,
        'x-goog-hash': `crc32c=${b64crc(data)}, md5=${b64md5(data)}`,
        'content-type': 'application/gzip',
      })
      res.end(data)
    }
    const dest = join(dir, 'down.bin')
    const got = await downloadFile({ url }, dest)
    expect(received.headers!['accept-encoding']).toBe('gzip')
    expect(got).toMatchObject({ bytes: data.length, verified: 'crc32c', contentType: 'application/gzip' })
    expect((await readFile(dest)).equals(data)).toBe(true)

    // Only an MD5 announced: the MD5 is computed instead.
    answer = (_req, _body, res) => {
      res.writeHead(200, { 'content-length': data.length, 'x-goog-hash': `md5=${b64md5(data)}` })
      res.end(data)
    }
    expect((await downloadFile({ url }, join(dir, 'md5.bin'))).verified).toBe('md5')
    expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([])
  })

  it('leaves nothing when the bytes do not have the announced checksum, and never replaces a file without overwrite', async () => {
    const data = randomBytes(100_000)
    answer = (_req, _body, res) => {
      res.writeHead(200, { 'content-length': data.length, 'x-goog-hash': `crc32c=${b64crc(Buffer.from('other'))}` })
      res.end(data)
    }
    const dest = join(dir, 'corrupt.bin')
    await expect(downloadFile({ url }, dest)).rejects.toBeInstanceOf(ChecksumMismatchError)
    expect(existsSync(dest)).toBe(false)

    answer = (_req, _body, res) => {
      res.writeHead(200, { 'content-length': data.length, 'x-goog-hash': `crc32c=${b64crc(data)}` })
      res.end(data)
    }
    await writeFile(dest, 'mine')
    await expect(downloadFile({ url }, dest)).rejects.toMatchObject({ code: 'EEXIST' })
    expect(await readFile(dest, 'utf8')).toBe('mine')
    await downloadFile({ url }, dest, { overwrite: true })
    expect((await readFile(dest)).equals(data)).toBe(true)
    expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([])
  })
})
