/**
 * Moving a file's bytes through a signed address (the file service's `upload-url` and
 * `download-url`): straight between the local disk and the storage (Cloud Storage, or the local
 * suite's storage server), without the platform's services in the path and without an
 * Authorization header. The bytes stream in large chunks and are checksummed in the same pass;
 * the storage's own checksums (`x-goog-hash: crc32c=…,md5=…`, on the upload's answer and on
 * every read) are what they are compared with. Like client.ts, it knows nothing about the terminal:
 * progress is a callback.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream, writeSync } from 'node:fs'
import { link, open, rename, rm } from 'node:fs/promises'
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { basename, dirname, join } from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AbortedError } from './client.js'
import { Crc32c } from './crc32c.js'
import { storedFromRange, type Chunk } from './resumable.js'

/** Read and write this much at a time: few system calls and callbacks per gigabyte, and a bounded memory. */
export const CHUNK_BYTES = 4 * 1024 * 1024

/** The checksums of an object, base64 as Cloud Storage gives them: MD5 (16 bytes), CRC32C (4 bytes, big-endian). */
export interface Checksums {
  crc32c?: string
  md5?: string
}

/** Which checksums a transfer was verified with; none when the storage gave none it could be compared with. */
export type Verified = 'crc32c' | 'md5' | 'crc32c+md5' | 'none'

/** The storage answered the signed address with an error (Cloud Storage's XML: <Code>, <Message>). */
export class StorageHttpError extends Error {
  constructor(
    readonly method: string,
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${method} of the signed address: ${status} ${code}: ${detail}`)
    this.name = 'StorageHttpError'
  }
}

/** No answer from the storage, or the connection broke during the transfer. */
export class StorageUnreachableError extends Error {
  constructor(
    readonly origin: string,
    readonly reason: string,
  ) {
    super(`the transfer with the storage at ${origin} failed: ${reason}`)
    this.name = 'StorageUnreachableError'
  }
}

/** The transferred bytes do not have the checksum the storage has for them. */
export class ChecksumMismatchError extends Error {
  constructor(
    readonly algorithm: 'crc32c' | 'md5' | 'size',
    readonly local: string,
    readonly remote: string,
  ) {
    super(`${algorithm} ${local} here, ${remote} in the storage`)
    this.name = 'ChecksumMismatchError'
  }
}

/** `x-goog-hash: crc32c=…, md5=…` (one header or several), into its parts. */
export function parseGoogHash(header: string | string[] | undefined): Checksums {
  const out: Checksums = {}
  for (const part of [header ?? []].flat().join(',').split(',')) {
    const m = /^\s*(crc32c|md5)=(\S+)\s*$/.exec(part)
    if (m) out[m[1] as keyof Checksums] = m[2]
  }
  return out
}

/** The MD5 of a local file (a large upload's, hashed in the transfer thread while it is sent). */
export async function md5Of(file: string, signal?: AbortSignal): Promise<string> {
  const md5 = createHash('md5')
  await eachChunk(file, { signal }, (chunk) => void md5.update(chunk))
  return md5.digest('base64')
}

/**
 * Compares every checksum computed here with the storage's of the same kind (a mismatch in either
 * is a ChecksumMismatchError); which ones were compared.
 */
export function verify(local: Checksums, remote: Checksums): Verified {
  const compared = (['crc32c', 'md5'] as const).filter((algorithm) => local[algorithm] !== undefined && remote[algorithm] !== undefined)
  for (const algorithm of compared) {
    if (local[algorithm] !== remote[algorithm]) throw new ChecksumMismatchError(algorithm, local[algorithm]!, remote[algorithm]!)
  }
  return compared.length === 2 ? 'crc32c+md5' : (compared[0] ?? 'none')
}

interface Signed {
  url: string
  headers?: Record<string, string>
}

export interface TransferOptions {
  /** Called with the bytes moved so far, after each chunk. */
  onProgress?: (bytes: number) => void
  signal?: AbortSignal
}

const xmlField = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]

async function failure(method: string, res: IncomingMessage): Promise<StorageHttpError> {
  let text = ''
  for await (const chunk of res) if (text.length < 64 * 1024) text += (chunk as Buffer).toString()
  const code = xmlField(text, 'Code') ?? `HTTP ${res.statusCode}`
  const message = xmlField(text, 'Message') ?? (text.trim().slice(0, 300) || res.statusMessage || '')
  return new StorageHttpError(method, res.statusCode ?? 0, code, message)
}

function networkReason(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  return e.code && !e.message.includes(e.code) ? `${e.code} ${e.message}` : (e.message ?? String(error))
}

/**
 * One request to a signed address: the answer once its headers are in, or the storage's error.
 * `send` writes the body; an answer that comes while it is still writing (a refusal) wins over
 * the broken pipe that follows it.
 */
export function exchange(
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  signed: Signed,
  headers: OutgoingHttpHeaders,
  signal: AbortSignal | undefined,
  send?: (req: NodeJS.WritableStream) => Promise<void>,
  /** The statuses that are answers, not failures (default 2xx; a resumable session's chunks also 308). */
  accepted: (status: number) => boolean = (status) => status >= 200 && status < 300,
): Promise<IncomingMessage> {
  const url = new URL(signed.url)
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    let settled = false
    let answered = false
    const settle = (f: () => void) => {
      if (!settled) {
        settled = true
        f()
      }
    }
    const req = request(url, { method, headers: { ...signed.headers, ...headers }, signal }, (res) => {
      answered = true
      if (accepted(res.statusCode ?? 0)) settle(() => resolve(res))
      else void failure(method, res).then((error) => settle(() => reject(error)), reject)
    })
    const fail = (error: unknown) => {
      if (signal?.aborted) return settle(() => reject(new AbortedError()))
      // A refusal sent before the whole body was read closes the connection: give its answer a moment to be read.
      setTimeout(() => !answered && settle(() => reject(new StorageUnreachableError(url.origin, networkReason(error)))), answered ? 0 : 250)
    }
    // A file that shrinks or grows while it is sent fails the request instead of leaving the storage waiting for bytes.
    Object.assign(req, { strictContentLength: true })
    req.on('error', fail)
    if (send) send(req).catch(fail)
    else req.end()
  })
}

/**
 * Calls `use` with each chunk of `file` from `start` (default 0) to `end` (inclusive; default: its
 * end), in order, and answers the bytes read. The file is read CHUNK_BYTES at a time into two
 * buffers used in turn, the next read under way while `use` has the chunk before it, rather than
 * into a new buffer per read: a fresh 4 MiB buffer per read made a page fault per 4 KiB (80,000
 * per GiB) and external memory for the garbage collector to chase (docs/benchmarks.md). A chunk's
 * buffer is read into again once `use` is done with it (its promise settled). Every local read of
 * a transfer goes through here: the bytes sent, a file's MD5 and CRC32C, a downloaded part checked.
 */
export async function eachChunk(
  file: string,
  range: { start?: number; end?: number; signal?: AbortSignal },
  use: (chunk: Buffer) => void | Promise<void>,
): Promise<number> {
  const start = range.start ?? 0
  const last = range.end ?? Number.POSITIVE_INFINITY
  if (last < start) return 0
  const handle = await open(file, 'r')
  const buffers = [Buffer.allocUnsafeSlow(CHUNK_BYTES), Buffer.allocUnsafeSlow(CHUNK_BYTES)]
  let at = start
  const read = async (turn: number): Promise<Buffer | undefined> => {
    if (at > last) return undefined
    const buffer = buffers[turn % 2]!
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, last + 1 - at), at)
    at += bytesRead
    return bytesRead ? buffer.subarray(0, bytesRead) : undefined
  }
  let next: Promise<Buffer | undefined> | undefined
  try {
    next = read(0)
    for (let turn = 1; ; turn++) {
      range.signal?.throwIfAborted()
      const chunk = await next
      if (!chunk) break
      next = read(turn)
      await use(chunk)
    }
    return at - start
  } finally {
    // A read still under way when `use` failed ends before the file closes.
    await next?.catch(() => undefined)
    await handle.close()
  }
}

/**
 * Writes bytes `start` to `end` (inclusive) of `file` as a request's body (eachChunk), then ends
 * it; `onChunk` sees each chunk before it goes. A buffer is read into again only once the socket
 * has drained, as a pipe waits. The chunks are larger than a socket's buffer on purpose: a write
 * that the socket takes whole at once meets a connection the storage has already reset before
 * its answer to a refused request is read (with 1 MiB chunks a refusal came out as ECONNRESET).
 * A file that ends early ends the body early (the caller compares what was sent with what it
 * announced).
 */
async function sendFileRange(req: NodeJS.WritableStream, file: string, range: { start: number; end: number }, onChunk: (chunk: Buffer) => void) {
  // A request that fails while the body waits for the socket never drains: its close ends the wait.
  const drained = () =>
    new Promise<void>((resolve, reject) => {
      const closed = () => reject(new Error('the request closed before its body was sent'))
      req.once('drain', () => (req.removeListener('close', closed), resolve()))
      req.once('close', closed)
    })
  await eachChunk(file, range, async (chunk) => {
    onChunk(chunk)
    if (!req.write(chunk)) await drained()
  })
  req.end()
}

/**
 * PUTs `file` (`size` bytes) to a signed upload address with the headers it was signed with,
 * computing its CRC32C and MD5 as it streams (the CLI sends files of at most 8 MiB so: the MD5
 * costs milliseconds); answers the storage's checksums of what it stored and ours.
 */
export async function uploadFile(
  signed: Signed,
  file: string,
  size: number,
  opts: TransferOptions = {},
): Promise<{ local: Checksums; remote: Checksums; storedSize?: number }> {
  const crc = new Crc32c()
  const md5 = createHash('md5')
  let moved = 0
  const res = await exchange('PUT', signed, { 'content-length': size }, opts.signal, (req) =>
    sendFileRange(req, file, { start: 0, end: size - 1 }, (chunk) => {
      crc.update(chunk)
      md5.update(chunk)
      moved += chunk.length
      opts.onProgress?.(moved)
    }),
  )
  res.resume()
  const stored = res.headers['x-goog-stored-content-length']
  if (moved !== size) throw new StorageUnreachableError(new URL(signed.url).origin, `${file} changed while it was read: ${moved} bytes of ${size}`)
  return {
    local: { crc32c: crc.base64(), md5: md5.digest('base64') },
    remote: parseGoogHash(res.headers['x-goog-hash']),
    storedSize: stored === undefined ? undefined : Number(stored),
  }
}

/** What a resumable session holds: some bytes of the object, or all of them stored as the object (with its checksums). */
export type SessionState = { state: 'incomplete'; stored: number } | { state: 'complete'; remote: Checksums; storedSize?: number }

const RESUME_INCOMPLETE = 308

function sessionState(res: IncomingMessage, origin: string): SessionState {
  res.resume()
  if (res.statusCode === RESUME_INCOMPLETE) {
    const stored = storedFromRange(res.headers.range)
    if (stored === undefined) throw new StorageUnreachableError(origin, `the storage answered a Range that is not bytes=0-n: ${res.headers.range}`)
    return { state: 'incomplete', stored }
  }
  const size = res.headers['x-goog-stored-content-length']
  return { state: 'complete', remote: parseGoogHash(res.headers['x-goog-hash']), storedSize: size === undefined ? undefined : Number(size) }
}

const sessionAnswer = (status: number) => status === RESUME_INCOMPLETE || (status >= 200 && status < 300)

/**
 * Starts a resumable upload session with a signed POST address (x-goog-resumable: start among its
 * headers): the session URI the storage answers in Location.
 */
export async function startSession(signed: Signed, signal?: AbortSignal): Promise<string> {
  const res = await exchange('POST', signed, { 'content-length': 0 }, signal)
  res.resume()
  const location = res.headers.location
  if (!location) throw new StorageUnreachableError(new URL(signed.url).origin, 'the storage started no session: its answer has no Location')
  return new URL(location, signed.url).toString()
}

/** Cancels a session (DELETE, answered 499), so that the storage drops the bytes it holds. */
export async function cancelSession(uri: string, signal?: AbortSignal): Promise<void> {
  const res = await exchange(
    'DELETE',
    { url: uri },
    { 'content-length': 0 },
    signal,
    undefined,
    (status) => status === 499 || (status >= 200 && status < 300),
  )
  res.resume()
}

/** Asks a session what it holds (a PUT with no body and `Content-Range: bytes *\/size`). */
export async function sessionStatus(uri: string, size: number, signal?: AbortSignal): Promise<SessionState> {
  const res = await exchange('PUT', { url: uri }, { 'content-length': 0, 'content-range': `bytes */${size}` }, signal, undefined, sessionAnswer)
  return sessionState(res, new URL(uri).origin)
}

/**
 * PUTs one chunk of `file` (`size` bytes in all) to a session, feeding `crc` with its bytes in
 * order and telling `onBytes` how many of them left so far; answers what the session holds then.
 */
export async function putChunk(
  uri: string,
  file: string,
  chunk: Chunk,
  size: number,
  opts: { crc: Crc32c; onBytes?: (sent: number) => void; signal?: AbortSignal },
): Promise<SessionState> {
  let sent = 0
  const length = chunk.last - chunk.first + 1
  const headers = { 'content-length': length, 'content-range': `bytes ${chunk.first}-${chunk.last}/${chunk.final ? size : '*'}` }
  const res = await exchange(
    'PUT',
    { url: uri },
    headers,
    opts.signal,
    (req) =>
      sendFileRange(req, file, { start: chunk.first, end: chunk.last }, (bytes) => {
        opts.crc.update(bytes)
        sent += bytes.length
        opts.onBytes?.(sent)
      }),
    sessionAnswer,
  )
  if (sent !== length) throw new StorageUnreachableError(new URL(uri).origin, `${file} changed while it was read: ${sent} bytes of ${length}`)
  return sessionState(res, new URL(uri).origin)
}

/**
 * Feeds `crc` the bytes of a file from `start` (default 0), `length` of them (default: to its end):
 * the CRC32C of a local file, of what an earlier run already sent of it, of a part already downloaded.
 */
export async function crcOfFile(file: string, crc: Crc32c, range: { start?: number; length?: number; signal?: AbortSignal } = {}): Promise<Crc32c> {
  const start = range.start ?? 0
  const end = range.length === undefined ? undefined : start + range.length - 1
  await eachChunk(file, { start, end, signal: range.signal }, (chunk) => void crc.update(chunk))
  return crc
}

/**
 * GETs bytes `start` to `end` (inclusive) of a signed download address and writes each chunk at
 * its offset in the open file `fd` as it arrives, checksummed on the way: the parts of a download
 * in parts (cli/download.ts), run in the transfer thread (cli/transfer-thread.ts). The writes are
 * synchronous: one writer of the file, no thread pool round trip and no promise per 64 KiB, which
 * on two cores took a third of the CPU a GiB costs (docs/benchmarks.md). `onBytes` is told the
 * bytes written so far. A refusal is the storage's StorageHttpError (412 when `if-match` no longer
 * holds); a connection that ends early or sends more than the range, a StorageUnreachableError.
 */
export async function fetchRange(
  signed: Signed,
  fd: number,
  range: { start: number; end: number },
  opts: { headers?: OutgoingHttpHeaders; onBytes?: (bytes: number) => void; signal?: AbortSignal } = {},
): Promise<{ crc32c: number; bytes: number }> {
  const origin = new URL(signed.url).origin
  const res = await exchange('GET', signed, { ...opts.headers, range: `bytes=${range.start}-${range.end}` }, opts.signal)
  const crc = new Crc32c()
  const length = range.end - range.start + 1
  let at = range.start
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (at + chunk.length > range.end + 1)
        return done(new StorageUnreachableError(origin, `the storage sent more than bytes ${range.start}-${range.end}`))
      try {
        crc.update(chunk)
        writeSync(fd, chunk, 0, chunk.length, at)
      } catch (error) {
        return done(error as Error)
      }
      at += chunk.length
      opts.onBytes?.(at - range.start)
      done()
    },
  })
  try {
    await pipeline(res, sink)
  } catch (error) {
    if (opts.signal?.aborted) throw new AbortedError()
    if (error instanceof StorageUnreachableError || (error as NodeJS.ErrnoException).syscall) throw error
    throw new StorageUnreachableError(origin, networkReason(error))
  }
  if (at !== range.end + 1) throw new StorageUnreachableError(origin, `the connection ended after ${at - range.start} of ${length} bytes of a part`)
  return { crc32c: crc.digest(), bytes: length }
}

/** A temporary file beside `dest` (the same file system: the final rename is atomic). */
export const partFileFor = (dest: string) => join(dirname(dest), `.${basename(dest)}.${randomBytes(4).toString('hex')}.part`)

/**
 * GETs a signed download address into `dest`: into a temporary file beside it first, checksummed
 * as it streams with the checksum the storage announces (CRC32C, else MD5), then moved to `dest`
 * only when the checksum and the length match. Without `overwrite`, an existing `dest` is never
 * replaced, not even one that appeared meanwhile. On any failure the temporary file is removed
 * and `dest` is untouched.
 */
export async function downloadFile(
  signed: Signed,
  dest: string,
  opts: TransferOptions & { overwrite?: boolean } = {},
): Promise<{ bytes: number; local: Checksums; remote: Checksums; verified: Verified; contentType?: string }> {
  // The stored bytes as they are: Cloud Storage would otherwise decompress an object stored with Content-Encoding gzip, whose checksums are of the compressed bytes.
  const res = await exchange('GET', signed, { 'accept-encoding': 'gzip' }, opts.signal)
  const remote = parseGoogHash(res.headers['x-goog-hash'])
  const algorithm = remote.crc32c ? 'crc32c' : remote.md5 ? 'md5' : undefined
  const crc = new Crc32c()
  const md5 = createHash('md5')
  let bytes = 0
  async function* hashed(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      if (algorithm === 'crc32c') crc.update(chunk)
      else if (algorithm === 'md5') md5.update(chunk)
      bytes += chunk.length
      opts.onProgress?.(bytes)
      yield chunk
    }
  }
  const part = partFileFor(dest)
  try {
    try {
      await pipeline(res, hashed, createWriteStream(part, { flags: 'wx', highWaterMark: 2 * CHUNK_BYTES }), { signal: opts.signal })
    } catch (error) {
      if (opts.signal?.aborted) throw new AbortedError()
      if ((error as NodeJS.ErrnoException).syscall) throw error
      throw new StorageUnreachableError(new URL(signed.url).origin, networkReason(error))
    }
    const expected = res.headers['content-length']
    if (expected !== undefined && Number(expected) !== bytes) throw new ChecksumMismatchError('size', `${bytes} bytes`, `${expected} bytes`)
    const local: Checksums = algorithm === 'crc32c' ? { crc32c: crc.base64() } : algorithm === 'md5' ? { md5: md5.digest('base64') } : {}
    const verified = verify(local, remote)
    if (opts.overwrite) {
      await rename(part, dest)
    } else {
      // link() refuses an existing name: a file that appeared at dest during the download is kept.
      await link(part, dest)
      await rm(part, { force: true })
    }
    return { bytes, local, remote, verified, contentType: res.headers['content-type'] }
  } finally {
    await rm(part, { force: true })
  }
}
