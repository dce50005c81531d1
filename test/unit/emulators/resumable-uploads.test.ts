import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseContentRange, SESSION_LIFETIME_MS, startStorageServer, type RunningStorageServer } from '../../../emulators/storage-server.js'
import { LocalObjectStorage } from '../../../lib/storage.js'
import { crc32c } from '../../../lib/storage/crc32c.js'
import { RESUMABLE_GRANULARITY } from '../../../lib/storage/local.js'
import { PrivateKeySigner } from '../../../lib/storage/signers.js'
import { signUrl } from '../../../lib/storage/v4.js'

interface Answer {
  status: number
  message: string
  headers: Record<string, string | string[] | undefined>
  body: string
  code?: string
}

/** One request over real HTTP: `body` sent with its Content-Length, or `partial` bytes of a longer declared body and then the connection cut. */
function send(url: string, opts: { method: string; headers?: Record<string, string | number>; body?: Buffer; cutAfter?: Buffer }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method, headers: opts.headers }, (res) => {
      let body = ''
      res.on('data', (c: Buffer) => (body += c.toString()))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          message: res.statusMessage ?? '',
          headers: res.headers,
          body,
          code: /<Code>([^<]+)<\/Code>/.exec(body)?.[1],
        }),
      )
    })
    if (opts.cutAfter) {
      req.on('error', () => resolve({ status: 0, message: 'cut', headers: {}, body: '' }))
      req.write(opts.cutAfter, () => setTimeout(() => req.destroy(), 100))
      return
    }
    req.on('error', reject)
    req.end(opts.body)
  })
}

const crcOf = (data: Buffer) => {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(crc32c(data))
  return out.toString('base64')
}
const md5Of = (data: Buffer) => createHash('md5').update(data).digest('base64')

/**
 * The local storage server's resumable uploads, as Cloud Storage's XML API documents them, each
 * request and answer written as the documentation shows it:
 * https://cloud.google.com/storage/docs/performing-resumable-uploads (the XML API tabs),
 * https://cloud.google.com/storage/docs/xml-api/post-object-resumable,
 * https://cloud.google.com/storage/docs/resumable-uploads.
 */
describe('resumable uploads on the local storage server', async () => {
  const root = await mkdtemp(join(tmpdir(), 'resumable-'))
  const storage = new LocalObjectStorage(root)
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const account = 'storage-signer@platform-local.iam.gserviceaccount.com'
  const signer = new PrivateKeySigner(account, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  let now = new Date()
  let server: RunningStorageServer
  beforeAll(async () => {
    server = await startStorageServer({ storage, clock: { now: () => now }, keys: { [account]: keys.publicKey } })
  })
  afterAll(async () => {
    await server?.stop()
    await rm(root, { recursive: true, force: true })
  })

  const startAddress = (object: string, headers: Record<string, string> = {}) =>
    signUrl(
      {
        method: 'POST',
        bucket: 'lab-bucket',
        object,
        expiresSeconds: 900,
        now,
        origin: server.url,
        headers: { 'x-goog-resumable': 'start', 'Content-Type': 'application/gzip', ...headers },
      },
      signer,
    )

  /** POST /OBJECT_NAME, Content-Length: 0, Content-Type, x-goog-resumable: start → 201 Created, Location: the session URI. */
  async function start(object: string, headers: Record<string, string> = {}) {
    const answer = await send(await startAddress(object, headers), {
      method: 'POST',
      headers: { 'Content-Length': 0, 'Content-Type': 'application/gzip', 'x-goog-resumable': 'start', ...headers },
    })
    expect(answer.status, answer.body).toBe(201)
    return String(answer.headers.location)
  }
  const status = (session: string, total: number | '*') =>
    send(session, { method: 'PUT', headers: { 'Content-Length': 0, 'Content-Range': `bytes */${total}` } })
  const chunk = (session: string, data: Buffer, first: number, total: number | '*') =>
    send(session, {
      method: 'PUT',
      headers: { 'Content-Length': data.length, 'Content-Range': `bytes ${first}-${first + data.length - 1}/${total}` },
      body: data,
    })

  it('initiates a session: 201 Created with the session URI in Location, usable without a signature', async () => {
    const session = await start('fastq/initiated.fastq.gz')
    expect(session).toMatch(new RegExp(`^${server.url}/lab-bucket/fastq/initiated.fastq.gz\\?upload_id=[A-Za-z0-9_-]{43}$`))
    expect(new URL(session).searchParams.has('X-Goog-Signature')).toBe(false)
    expect((await status(session, '*')).status).toBe(308)
  })

  it('refuses a start whose signature does not cover x-goog-resumable, and a POST without it', async () => {
    const put = await signUrl({ method: 'PUT', bucket: 'lab-bucket', object: 'x.gz', expiresSeconds: 900, now, origin: server.url }, signer)
    const asPost = await send(put, { method: 'POST', headers: { 'Content-Length': 0, 'x-goog-resumable': 'start' } })
    expect([asPost.status, asPost.code]).toEqual([403, 'SignatureDoesNotMatch'])
    const url = await signUrl({ method: 'POST', bucket: 'lab-bucket', object: 'x.gz', expiresSeconds: 900, now, origin: server.url }, signer)
    const form = await send(url, { method: 'POST', headers: { 'Content-Length': 0 } })
    expect(form.status).toBe(501)
  })

  it('uploads in one request to the session URI: 200 OK with the checksums', async () => {
    const data = randomBytes(100_000)
    const session = await start('one/request.bin')
    const answer = await send(session, { method: 'PUT', headers: { 'Content-Length': data.length }, body: data })
    expect(answer.status).toBe(200)
    expect(answer.headers['x-goog-hash']).toBe(`crc32c=${crcOf(data)}, md5=${md5Of(data)}`)
    expect((await readFile(storage.fileOf('lab-bucket', 'one/request.bin'))).equals(data)).toBe(true)
    expect((await storage.stat('lab-bucket', 'one/request.bin'))?.content_type).toBe('application/gzip')
  })

  it('answers chunks with 308 Resume Incomplete and Range: bytes=0-N, and the last with 200 OK', async () => {
    // The documentation's example: a 2,000,000-byte object in 524,288-byte chunks (multiples of 256 KiB), the last one shorter.
    const data = randomBytes(2_000_000)
    const session = await start('chunks/object.bin')
    const c1 = await chunk(session, data.subarray(0, 524_288), 0, 2_000_000)
    expect([c1.status, c1.message, c1.headers.range]).toEqual([308, 'Resume Incomplete', 'bytes=0-524287'])
    const c2 = await chunk(session, data.subarray(524_288, 1_048_576), 524_288, '*')
    expect(c2.headers.range).toBe('bytes=0-1048575')
    const c3 = await chunk(session, data.subarray(1_048_576, 1_572_864), 1_048_576, 2_000_000)
    expect(c3.headers.range).toBe('bytes=0-1572863')
    const last = await chunk(session, data.subarray(1_572_864), 1_572_864, 2_000_000)
    expect(last.status).toBe(200)
    expect(last.headers['x-goog-stored-content-length']).toBe('2000000')
    expect(last.headers['x-goog-hash']).toBe(`crc32c=${crcOf(data)}, md5=${md5Of(data)}`)
    expect((await readFile(storage.fileOf('lab-bucket', 'chunks/object.bin'))).equals(data)).toBe(true)
  })

  it('answers a status query: 308 without Range when nothing is stored, with Range once bytes are, 200 once complete', async () => {
    const data = randomBytes(RESUMABLE_GRANULARITY + 42)
    const session = await start('status/object.bin')
    const empty = await status(session, data.length)
    expect([empty.status, empty.headers.range]).toEqual([308, undefined])
    await chunk(session, data.subarray(0, RESUMABLE_GRANULARITY), 0, '*')
    const some = await status(session, '*')
    expect([some.status, some.headers.range]).toEqual([308, `bytes=0-${RESUMABLE_GRANULARITY - 1}`])
    // Resuming at the next byte the Range names.
    expect((await chunk(session, data.subarray(RESUMABLE_GRANULARITY), RESUMABLE_GRANULARITY, data.length)).status).toBe(200)
    const done = await status(session, data.length)
    expect([done.status, done.headers['x-goog-hash']]).toEqual([200, `crc32c=${crcOf(data)}, md5=${md5Of(data)}`])
  })

  it('keeps whole multiples of 256 KiB of a chunk that breaks off, and of a chunk that is not a multiple', async () => {
    const data = randomBytes(3 * RESUMABLE_GRANULARITY)
    const session = await start('cut/object.bin')
    const cut = await send(session, {
      method: 'PUT',
      headers: { 'Content-Length': data.length, 'Content-Range': `bytes 0-${data.length - 1}/${data.length}` },
      cutAfter: data.subarray(0, RESUMABLE_GRANULARITY + 1000),
    })
    expect(cut.status).toBe(0)
    expect((await status(session, '*')).headers.range).toBe(`bytes=0-${RESUMABLE_GRANULARITY - 1}`)
    const odd = await chunk(session, data.subarray(RESUMABLE_GRANULARITY, 2 * RESUMABLE_GRANULARITY + 10), RESUMABLE_GRANULARITY, '*')
    expect(odd.headers.range).toBe(`bytes=0-${2 * RESUMABLE_GRANULARITY - 1}`)
    // A chunk that starts before what is stored (sent again after a lost answer): the bytes already there are dropped.
    const again = await chunk(session, data.subarray(RESUMABLE_GRANULARITY), RESUMABLE_GRANULARITY, data.length)
    expect(again.status).toBe(200)
    expect((await readFile(storage.fileOf('lab-bucket', 'cut/object.bin'))).equals(data)).toBe(true)
  })

  it('refuses a chunk that starts after the stored bytes, and a Content-Range that disagrees with Content-Length (400)', async () => {
    const session = await start('gaps/object.bin')
    const gap = await chunk(session, randomBytes(RESUMABLE_GRANULARITY), RESUMABLE_GRANULARITY, '*')
    expect(gap.status).toBe(400)
    expect(gap.body).toContain('the upload offset is 262144 byte(s), which exceeds already uploaded size of 0 byte(s)')
    const wrong = await send(session, { method: 'PUT', headers: { 'Content-Length': 10, 'Content-Range': 'bytes 0-19/*' }, body: Buffer.alloc(10) })
    expect(wrong.status).toBe(400)
  })

  it('cancels with DELETE: 499, and the session answers 410 afterwards', async () => {
    const session = await start('cancel/object.bin')
    await chunk(session, randomBytes(RESUMABLE_GRANULARITY), 0, '*')
    const cancelled = await send(session, { method: 'DELETE', headers: { 'Content-Length': 0 } })
    expect([cancelled.status, cancelled.message]).toEqual([499, 'Client Closed Request'])
    expect((await status(session, '*')).status).toBe(410)
    expect(await storage.stat('lab-bucket', 'cancel/object.bin')).toBeUndefined()
    expect(readdirSync(join(root, '.sessions')).filter((f) => f.endsWith('.data'))).not.toContain(
      `${new URL(session).searchParams.get('upload_id')}.data`,
    )
  })

  it('expires a session a week after its start: 404', async () => {
    const session = await start('expired/object.bin')
    const started = now
    try {
      now = new Date(started.getTime() + SESSION_LIFETIME_MS + 1000)
      const answer = await status(session, '*')
      expect([answer.status, answer.code]).toEqual([404, 'NoSuchUpload'])
    } finally {
      now = started
    }
  })

  it('removes the bytes of a session a day past its week when a session starts; its URI answers 404 as before', async () => {
    const expired = await start('swept/expired.bin')
    await chunk(expired, randomBytes(RESUMABLE_GRANULARITY), 0, '*')
    const files = (session: string) => {
      const id = new URL(session).searchParams.get('upload_id')!
      return readdirSync(join(root, '.sessions')).filter((f) => f === `${id}.json` || f === `${id}.data`)
    }
    expect(files(expired)).toHaveLength(2)
    const started = now
    try {
      // Within the day's grace after the week: kept.
      now = new Date(started.getTime() + SESSION_LIFETIME_MS + 3600_000)
      const kept = await start('swept/kept.bin')
      expect([(await status(expired, '*')).status, files(expired).length]).toEqual([404, 2])
      // Later than that, the next session's start removes it (the sweep runs at most once an hour).
      now = new Date(started.getTime() + SESSION_LIFETIME_MS + 2 * 24 * 3600_000)
      const fresh = await start('swept/fresh.bin')
      await expect.poll(() => files(expired), { timeout: 5_000 }).toEqual([])
      expect((await status(expired, '*')).code).toBe('NoSuchUpload')
      expect([files(fresh).length, (await status(fresh, '*')).status]).toEqual([2, 308])
      // The session started within the hour before is not a week old: kept too.
      expect(files(kept)).toHaveLength(2)
    } finally {
      now = started
    }
  })

  it("holds a create-only start's precondition at the end: an object that appeared meanwhile is kept (412), and the session is gone", async () => {
    const session = await start('precondition/object.bin', { 'x-goog-if-generation-match': '0' })
    await storage.write('lab-bucket', 'precondition/object.bin', 'there first\n')
    const data = randomBytes(1000)
    const answer = await chunk(session, data, 0, data.length)
    expect([answer.status, answer.code]).toEqual([412, 'PreconditionFailed'])
    expect(await readFile(storage.fileOf('lab-bucket', 'precondition/object.bin'), 'utf8')).toBe('there first\n')
    expect((await status(session, '*')).status).toBe(410)
    // And refused at the start when the object already exists.
    const late = await send(await startAddress('precondition/object.bin', { 'x-goog-if-generation-match': '0' }), {
      method: 'POST',
      headers: { 'Content-Length': 0, 'Content-Type': 'application/gzip', 'x-goog-resumable': 'start', 'x-goog-if-generation-match': '0' },
    })
    expect(late.status).toBe(412)
  })

  it('stores an empty object with a status query naming a total of 0', async () => {
    const session = await start('empty/object.bin')
    expect((await status(session, 0)).status).toBe(200)
    expect((await storage.stat('lab-bucket', 'empty/object.bin'))?.size).toBe(0)
  })
})

describe('parseContentRange', () => {
  it.each([
    ['bytes 0-524287/2000000', 524_288, { first: 0, last: 524_287, total: 2_000_000 }],
    ['bytes 0-524287/*', 524_288, { first: 0, last: 524_287, total: undefined }],
    ['bytes */2000000', 0, { total: 2_000_000 }],
    ['bytes */*', 0, { total: undefined }],
    [undefined, 10, { first: 0, last: 9, total: 10 }],
    [undefined, 0, { total: 0 }],
    ['bytes 0-9/5', 10, 'invalid'],
    ['bytes 5-4/*', 0, 'invalid'],
    ['bytes 0-9/*', 11, 'invalid'],
    ['bytes */*', 3, 'invalid'],
    ['bytes=0-9/10', 10, 'invalid'],
  ] as const)('%s with Content-Length %d is %o', (header, length, expected) => {
    expect(parseContentRange(header, length)).toEqual(expected)
  })

  it('reads back any chunk it is given', () => {
    fc.assert(
      fc.property(fc.nat(2 ** 40), fc.integer({ min: 1, max: 2 ** 30 }), fc.option(fc.nat(2 ** 30)), (first, length, extra) => {
        const last = first + length - 1
        const total = extra === null ? undefined : last + 1 + extra
        expect(parseContentRange(`bytes ${first}-${last}/${total ?? '*'}`, length)).toEqual({ first, last, total })
      }),
    )
  })
})
