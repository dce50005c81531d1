import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStorageServer, type RunningStorageServer } from '../../../emulators/storage-server.js'
import { createLogger } from '../../../lib/log.js'
import { LocalObjectStorage } from '../../../lib/storage.js'
import { crc32c } from '../../../lib/storage/crc32c.js'
import { PrivateKeySigner } from '../../../lib/storage/signers.js'
import { signUrl, verifySignedRequest, type SignUrlInput } from '../../../lib/storage/v4.js'
import { DUMMY_ACCOUNT, SIGNING_CASES, type SigningCase } from '../../support/gcs-v4.js'

/** What a refusal of the signature check answers; anything else means the address was accepted. */
const AUTH_REFUSALS = ['SignatureDoesNotMatch', 'ExpiredToken', 'MalformedSecurityHeader', 'AccessDenied', 'RequestNotYetValid']

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  code?: string
}

/** A raw HTTP request to the server: the target exactly as given (no re-encoding), any Host header. */
function send(
  server: RunningStorageServer,
  opts: { method: string; target: string; host?: string; headers?: Record<string, string>; body?: Buffer | Readable },
): Promise<Answer> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: opts.method, path: opts.target, headers: { ...(opts.host ? { host: opts.host } : {}), ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const body = Buffer.concat(chunks)
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, code: /<Code>([^<]+)<\/Code>/.exec(body.toString())?.[1] })
        })
      },
    )
    req.on('error', reject)
    if (opts.body instanceof Readable) opts.body.pipe(req)
    else req.end(opts.body)
  })
}

const targetOf = (url: string) => url.slice(url.indexOf('/', url.indexOf('//') + 2))
const hostOf = (url: string) => /^https?:\/\/([^/]+)/.exec(url)![1]!

describe('the local storage server', async () => {
  const root = await mkdtemp(join(tmpdir(), 'storage-server-'))
  const storage = new LocalObjectStorage(root)
  const local = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const localAccount = 'storage-signer@platform-local.iam.gserviceaccount.com'
  const localSigner = new PrivateKeySigner(localAccount, local.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  let now = new Date()
  let server: RunningStorageServer

  beforeAll(async () => {
    server = await startStorageServer({
      storage,
      clock: { now: () => now },
      keys: { [localAccount]: local.publicKey, [DUMMY_ACCOUNT.client_email]: createPublicKey(createPrivateKey(DUMMY_ACCOUNT.private_key)) },
      virtualHostSuffixes: ['storage.googleapis.com', 'storage.domain.com'],
      bucketHosts: { 'mydomain.tld': 'test-bucket' },
    })
    await storage.write('test-bucket', 'test-object', 'conformance object\n', 'text/plain')
    await storage.write('test-bucket2', 'test-object2', 'another\n', 'text/plain')
  })
  afterAll(async () => {
    await server?.stop()
    await rm(root, { recursive: true, force: true })
  })

  const origin = () => server.url
  const sign = (input: Partial<SignUrlInput> & Pick<SignUrlInput, 'method' | 'object'>) =>
    signUrl({ bucket: 'lab-bucket', expiresSeconds: 900, now, origin: origin(), ...input }, localSigner)

  describe("on Google's conformance cases", () => {
    /** Sends a case's URL as its client would: to its host, with the headers it signed. */
    const sendCase = (c: SigningCase, url = c.expectedUrl) =>
      send(server, {
        method: c.method,
        target: targetOf(url),
        host: hostOf(url),
        headers: c.headers,
        body: c.method === 'PUT' ? Buffer.from(c.headers?.['X-TestCaseMetadata-Payload-Value'] ?? 'uploaded') : undefined,
      })
    // A header name with '/' cannot travel in HTTP/1.1 (it is not a token): that case is checked by the same verifier, without the socket.
    const overHttp = SIGNING_CASES.filter((c) => Object.keys(c.headers ?? {}).every((h) => /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(h)))
    const at = (c: SigningCase, offsetSeconds: number) => new Date(new Date(c.timestamp).getTime() + offsetSeconds * 1000)

    it('sends all but one case over HTTP', () => {
      expect(SIGNING_CASES.length - overHttp.length).toBe(1)
    })

    it.each(overHttp.map((c) => [c.description, c] as const))('accepts the expected URL at its timestamp: %s', async (_, c) => {
      now = at(c, 1)
      const res = await sendCase(c)
      expect(AUTH_REFUSALS, `${res.status} ${res.body.toString()}`).not.toContain(res.code)
      if (c.method === 'GET' && c.object === 'test-object') expect(res.status).toBe(200)
    })

    it.each(overHttp.map((c) => [c.description, c] as const))('refuses it after expiry and with a byte changed: %s', async (_, c) => {
      now = at(c, c.expiration + 1)
      expect((await sendCase(c)).code).toBe('ExpiredToken')
      now = at(c, 1)
      const url = c.expectedUrl
      const mutations = [
        url.slice(0, -1) + (url.endsWith('0') ? '1' : '0'),
        url.replace(`X-Goog-Expires=${c.expiration}`, `X-Goog-Expires=${c.expiration + 1}`),
        url.replace('X-Goog-Date=2019', 'X-Goog-Date=2018'),
        url.replace(/\/test-object/, '/test-objecT'),
      ].filter((m) => m !== url)
      for (const m of mutations) {
        const res = await sendCase(c, m)
        expect(AUTH_REFUSALS, m).toContain(res.code)
      }
    })

    it('refuses the Simple GET URL with any one byte of its path or query changed', async () => {
      const c = SIGNING_CASES.find((x) => x.description === 'Simple GET')!
      now = at(c, 1)
      const target = targetOf(c.expectedUrl)
      const accepted: string[] = []
      for (let i = 1; i < target.length; i++) {
        const mutated = target.slice(0, i) + (target[i] === 'Z' ? 'Y' : 'Z') + target.slice(i + 1)
        const res = await send(server, { method: 'GET', target: mutated, host: hostOf(c.expectedUrl) })
        if (!AUTH_REFUSALS.includes(res.code ?? '') && res.code !== 'InvalidURI') accepted.push(`${i}: ${mutated} → ${res.status}`)
      }
      expect(accepted).toEqual([])
    })

    it('accepts, through the same verifier, the case whose header name cannot travel over HTTP/1.1', () => {
      const c = SIGNING_CASES.find((x) => !overHttp.includes(x))!
      const url = new URL(c.expectedUrl)
      const headers = Object.fromEntries(Object.entries(c.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
      const verify = (when: Date, rawQuery = url.search.slice(1)) =>
        verifySignedRequest(
          { method: c.method, host: url.host, rawPath: url.pathname, rawQuery, headers },
          { now: when, publicKeyFor: () => createPublicKey(createPrivateKey(DUMMY_ACCOUNT.private_key)) },
        )
      expect(verify(at(c, 1)).ok).toBe(true)
      expect(verify(at(c, c.expiration + 1))).toMatchObject({ ok: false, code: 'ExpiredToken' })
      expect(
        verify(
          at(c, 1),
          url.search.slice(1).replace(/.$/, (ch) => (ch === '0' ? '1' : '0')),
        ),
      ).toMatchObject({
        ok: false,
        code: 'SignatureDoesNotMatch',
      })
    })
  })

  describe('with addresses the file service signs', () => {
    it('takes an upload with the declared Content-Type and serves it back with that type and its length', async () => {
      now = new Date()
      const url = await sign({ method: 'PUT', object: 'fastq/S1_R1.fastq.gz', headers: { 'content-type': 'application/gzip' } })
      const put = await send(server, {
        method: 'PUT',
        target: targetOf(url),
        headers: { 'content-type': 'application/gzip' },
        body: Buffer.from('GZDATA'),
      })
      expect(put.status).toBe(200)
      const get = await send(server, { method: 'GET', target: targetOf(await sign({ method: 'GET', object: 'fastq/S1_R1.fastq.gz' })) })
      expect(get.status).toBe(200)
      expect(get.body.toString()).toBe('GZDATA')
      expect(get.headers['content-type']).toBe('application/gzip')
      expect(get.headers['content-length']).toBe('6')
    })

    it("answers an upload and every read with the object's checksums as Cloud Storage does: x-goog-hash crc32c and md5, the MD5 as ETag", async () => {
      now = new Date()
      const body = Buffer.from('@r1\nACGT\n+\nIIII\n')
      const md5 = createHash('md5').update(body).digest()
      const crc = Buffer.alloc(4)
      crc.writeUInt32BE(crc32c(body))
      const expected = { etag: `"${md5.toString('hex')}"`, 'x-goog-hash': `crc32c=${crc.toString('base64')}, md5=${md5.toString('base64')}` }
      const url = await sign({ method: 'PUT', object: 'sums/a.fastq', headers: { 'content-type': 'text/plain' } })
      const put = await send(server, { method: 'PUT', target: targetOf(url), headers: { 'content-type': 'text/plain' }, body })
      expect(put.status).toBe(200)
      expect(put.headers).toMatchObject({ ...expected, 'x-goog-stored-content-length': String(body.length) })
      const get = await send(server, { method: 'GET', target: targetOf(await sign({ method: 'GET', object: 'sums/a.fastq' })) })
      expect(get.headers).toMatchObject(expected)
      const head = await send(server, { method: 'HEAD', target: targetOf(await sign({ method: 'HEAD', object: 'sums/a.fastq' })) })
      expect(head.headers).toMatchObject(expected)
      // A range is served with the checksums of the whole object, as Cloud Storage does.
      const part = await send(server, {
        method: 'GET',
        target: targetOf(await sign({ method: 'GET', object: 'sums/a.fastq' })),
        headers: { range: 'bytes=0-2' },
      })
      expect(part.headers).toMatchObject(expected)

      // A file put in the bucket folder by other means (a run's outputs) gets its checksums computed on its first read.
      const file = join(root, 'lab-bucket', 'sums', 'b.txt')
      await writeFile(file, 'written by a job\n')
      const other = await send(server, { method: 'GET', target: targetOf(await sign({ method: 'GET', object: 'sums/b.txt' })) })
      expect(other.headers.etag).toBe(`"${createHash('md5').update('written by a job\n').digest('hex')}"`)
      // Rewritten in place with its size and time kept (a disk's silent corruption), it keeps the recorded ones: a reader can tell.
      const { mtimeMs } = await stat(file)
      await writeFile(file, 'WRITTEN by a job\n')
      await utimes(file, new Date(), new Date(Math.round(mtimeMs)))
      const corrupted = await send(server, { method: 'GET', target: targetOf(await sign({ method: 'GET', object: 'sums/b.txt' })) })
      expect(corrupted.body.toString()).toBe('WRITTEN by a job\n')
      expect(corrupted.headers.etag).toBe(other.headers.etag)
    })

    it('refuses an upload with another Content-Type, a GET on an upload address, and anything unsigned', async () => {
      now = new Date()
      const url = await sign({ method: 'PUT', object: 'fastq/x.txt', headers: { 'content-type': 'text/plain' } })
      const wrongType = await send(server, { method: 'PUT', target: targetOf(url), headers: { 'content-type': 'text/csv' }, body: Buffer.from('a') })
      expect([wrongType.status, wrongType.code]).toEqual([403, 'SignatureDoesNotMatch'])
      expect(wrongType.body.toString()).toContain('<StringToSign>GOOG4-RSA-SHA256')
      const read = await send(server, { method: 'GET', target: targetOf(url), headers: { 'content-type': 'text/plain' } })
      expect([read.status, read.code]).toEqual([403, 'SignatureDoesNotMatch'])
      const anonymous = await send(server, { method: 'GET', target: '/lab-bucket/fastq/S1_R1.fastq.gz' })
      expect([anonymous.status, anonymous.code]).toEqual([403, 'AccessDenied'])
      expect(existsSync(join(root, 'lab-bucket', 'fastq', 'x.txt'))).toBe(false)
    })

    it('takes an upload bound to x-goog-if-generation-match: 0 once, and answers a second PUT 412 PreconditionFailed, keeping the first', async () => {
      now = new Date()
      const headers = { 'content-type': 'text/plain', 'x-goog-if-generation-match': '0' }
      const url = await sign({ method: 'PUT', object: 'once/a.txt', headers })
      const first = await send(server, { method: 'PUT', target: targetOf(url), headers, body: Buffer.from('first') })
      expect(first.status).toBe(200)
      const second = await send(server, { method: 'PUT', target: targetOf(url), headers, body: Buffer.from('second') })
      expect([second.status, second.code]).toEqual([412, 'PreconditionFailed'])
      expect(second.headers['content-type']).toBe('application/xml; charset=UTF-8')
      expect(second.body.toString()).toBe(
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold.</Message></Error>",
      )
      expect((await storage.read('lab-bucket', 'once/a.txt'))?.toString()).toBe('first')
    })

    it('refuses the address of a no-overwrite upload sent without its x-goog-if-generation-match header (403)', async () => {
      now = new Date()
      const url = await sign({ method: 'PUT', object: 'once/b.txt', headers: { 'content-type': 'text/plain', 'x-goog-if-generation-match': '0' } })
      const res = await send(server, { method: 'PUT', target: targetOf(url), headers: { 'content-type': 'text/plain' }, body: Buffer.from('b') })
      expect([res.status, res.code]).toEqual([403, 'SignatureDoesNotMatch'])
      expect(res.body.toString()).toContain('x-goog-if-generation-match')
      expect(existsSync(join(root, 'lab-bucket', 'once', 'b.txt'))).toBe(false)
    })

    it('stores one of two concurrent uploads bound to generation 0 and refuses the other', async () => {
      now = new Date()
      const headers = { 'content-type': 'text/plain', 'x-goog-if-generation-match': '0' }
      const url = await sign({ method: 'PUT', object: 'once/race.txt', headers })
      const answers = await Promise.all(
        ['one', 'two'].map((text) => send(server, { method: 'PUT', target: targetOf(url), headers, body: Buffer.from(text.repeat(100_000)) })),
      )
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412])
      expect(readdirSync(join(root, '.uploads'))).toEqual([])
    })

    it('honours the precondition as Cloud Storage does when the client adds it unsigned, and a generation other than 0', async () => {
      now = new Date()
      const url = await sign({ method: 'PUT', object: 'once/a.txt', headers: { 'content-type': 'text/plain' } })
      const put = (generation: string) =>
        send(server, {
          method: 'PUT',
          target: targetOf(url),
          headers: { 'content-type': 'text/plain', 'x-goog-if-generation-match': generation },
          body: Buffer.from('replaced'),
        })
      expect((await put('0')).code).toBe('PreconditionFailed')
      const current = (await storage.stat('lab-bucket', 'once/a.txt'))!.generation!
      expect((await put('12345')).code).toBe('PreconditionFailed')
      expect((await put(current)).status).toBe(200)
      expect((await storage.read('lab-bucket', 'once/a.txt'))?.toString()).toBe('replaced')
      expect((await put('not-a-generation')).code).toBe('InvalidArgument')

      const del = await sign({ method: 'DELETE', object: 'once/a.txt' })
      const stale = await send(server, { method: 'DELETE', target: targetOf(del), headers: { 'x-goog-if-generation-match': current } })
      expect(stale.code).toBe('PreconditionFailed')
      expect(await storage.stat('lab-bucket', 'once/a.txt')).toBeDefined()
    })

    it('refuses an address 900 seconds after it was made, and one dated ahead of the clock', async () => {
      // X-Goog-Date counts whole seconds.
      const made = new Date(Math.floor(Date.now() / 1000) * 1000)
      now = made
      const url = await sign({ method: 'GET', object: 'fastq/S1_R1.fastq.gz' })
      now = new Date(made.getTime() + 900_000)
      expect((await send(server, { method: 'GET', target: targetOf(url) })).status).toBe(200)
      now = new Date(made.getTime() + 901_000)
      const late = await send(server, { method: 'GET', target: targetOf(url) })
      expect([late.status, late.code]).toEqual([400, 'ExpiredToken'])
      now = new Date(made.getTime() - 3600_000)
      const early = await send(server, { method: 'GET', target: targetOf(url) })
      expect([early.status, early.code]).toEqual([403, 'RequestNotYetValid'])
    })

    it('refuses a signature by a key it does not know, for the same account', async () => {
      now = new Date()
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
      const url = await signUrl(
        { method: 'GET', bucket: 'lab-bucket', object: 'fastq/S1_R1.fastq.gz', expiresSeconds: 900, now, origin: origin() },
        new PrivateKeySigner(localAccount, other),
      )
      expect((await send(server, { method: 'GET', target: targetOf(url) })).code).toBe('SignatureDoesNotMatch')
    })

    it('answers byte ranges with 206, and 416 past the end', async () => {
      now = new Date()
      const url = await sign({ method: 'GET', object: 'fastq/S1_R1.fastq.gz' })
      const part = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=2-3' } })
      expect([part.status, part.body.toString(), part.headers['content-range']]).toEqual([206, 'DA', 'bytes 2-3/6'])
      const tail = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=-2' } })
      expect(tail.body.toString()).toBe('TA')
      const past = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=10-' } })
      expect([past.status, past.code]).toEqual([416, 'InvalidRange'])
      const missing = await send(server, { method: 'GET', target: targetOf(await sign({ method: 'GET', object: 'fastq/none.gz' })) })
      expect([missing.status, missing.code]).toEqual([404, 'NoSuchKey'])
    })

    it('reads a range only while the object has the ETag of If-Match (412 once it changed), and names its generation', async () => {
      now = new Date()
      await storage.write('lab-bucket', 'ranged/v.bin', Buffer.from('first version'))
      const url = await sign({ method: 'GET', object: 'ranged/v.bin' })
      const first = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=0-0' } })
      const etag = first.headers.etag as string
      expect(first.headers['x-goog-generation']).toMatch(/^\d+(-\d+)?$/)
      const same = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=6-12', 'if-match': etag } })
      expect([same.status, same.body.toString()]).toEqual([206, 'version'])
      await storage.write('lab-bucket', 'ranged/v.bin', Buffer.from('second version'))
      const changed = await send(server, { method: 'GET', target: targetOf(url), headers: { range: 'bytes=6-12', 'if-match': etag } })
      expect([changed.status, changed.code]).toEqual([412, 'PreconditionFailed'])
    })

    it('leaves nothing behind when an upload breaks off, nor when its signed digest does not match', async () => {
      now = new Date()
      const url = await sign({ method: 'PUT', object: 'big/broken.bin', headers: { 'content-type': 'application/octet-stream' } })
      const { port } = new URL(server.url)
      await new Promise<void>((resolve) => {
        const req = request({
          host: '127.0.0.1',
          port,
          method: 'PUT',
          path: targetOf(url),
          headers: { 'content-type': 'application/octet-stream', 'content-length': 10_000_000 },
        })
        req.on('error', () => resolve())
        req.write(Buffer.alloc(1_000_000, 1), () => setTimeout(() => req.destroy(), 50))
        req.on('close', () => resolve())
      })
      await new Promise((r) => setTimeout(r, 200))
      expect(existsSync(join(root, 'lab-bucket', 'big', 'broken.bin'))).toBe(false)
      expect(readdirSync(join(root, '.uploads'))).toEqual([])

      const digest = await sign({
        method: 'PUT',
        object: 'big/digest.bin',
        headers: { 'content-type': 'text/plain', 'x-goog-content-sha256': '0'.repeat(64) },
      })
      const res = await send(server, {
        method: 'PUT',
        target: targetOf(digest),
        headers: { 'content-type': 'text/plain', 'x-goog-content-sha256': '0'.repeat(64) },
        body: Buffer.from('hello'),
      })
      expect([res.status, res.code]).toEqual([400, 'BadDigest'])
      expect(existsSync(join(root, 'lab-bucket', 'big', 'digest.bin'))).toBe(false)
    })

    it('streams 256 MiB up and down without holding it in memory', async () => {
      now = new Date()
      const size = 256 * 1024 * 1024
      const chunk = Buffer.alloc(1024 * 1024, 7)
      let peak = process.memoryUsage().rss
      const base = peak
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
      try {
        const put = await sign({ method: 'PUT', object: 'big/stream.bin', headers: { 'content-type': 'application/octet-stream' } })
        // The client's bytes are generated as they are sent: the whole body never exists anywhere in memory.
        const body = Readable.from(
          (function* () {
            for (let i = 0; i < size / chunk.length; i++) yield chunk
          })(),
        )
        const up = await send(server, { method: 'PUT', target: targetOf(put), headers: { 'content-type': 'application/octet-stream' }, body })
        expect(up.status).toBe(200)
        const { port } = new URL(server.url)
        const received = await new Promise<number>((resolve, reject) => {
          void sign({ method: 'GET', object: 'big/stream.bin' }).then((get) =>
            request({ host: '127.0.0.1', port, path: targetOf(get) }, (res) => {
              let n = 0
              res.on('data', (c: Buffer) => (n += c.length))
              res.on('end', () => resolve(n))
            })
              .on('error', reject)
              .end(),
          )
        })
        expect(received).toBe(size)
      } finally {
        clearInterval(sampler)
      }
      expect(peak - base).toBeLessThan(128 * 1024 * 1024)
    }, 60_000)
  })

  describe('its error log', () => {
    it("never carries a signed address's X-Goog-Signature: the request target is logged as the services' access lines log it", async () => {
      const lines: string[] = []
      const broken = Object.assign(Object.create(storage) as LocalObjectStorage, {
        upload: async () => {
          throw new Error('disk on fire')
        },
      })
      const failing = await startStorageServer({
        storage: broken,
        keys: { [localAccount]: local.publicKey },
        log: createLogger('error', {}, (line) => lines.push(line)),
      })
      try {
        now = new Date()
        const url = await signUrl(
          {
            method: 'PUT',
            bucket: 'lab-bucket',
            object: 'fastq/x.txt',
            expiresSeconds: 900,
            now,
            origin: failing.url,
            headers: { 'content-type': 'text/plain' },
          },
          localSigner,
        )
        const signature = new URL(url).searchParams.get('X-Goog-Signature')!
        const res = await send(failing, { method: 'PUT', target: targetOf(url), headers: { 'content-type': 'text/plain' }, body: Buffer.from('x') })
        expect([res.status, res.code]).toEqual([500, 'InternalError'])
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain('disk on fire')
        expect(lines[0]).toContain('X-Goog-Signature=REDACTED')
        expect(lines[0]).not.toContain(signature)
      } finally {
        await failing.stop()
      }
    })
  })
})
