import { createHash, createPublicKey, type KeyObject } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Clock } from '../lib/clock.js'
import { systemClock } from '../lib/clock.js'
import type { Logger } from '../lib/log.js'
import { loggableUrl } from '../lib/request-log.js'
import { StorageError, type LocalObjectStorage, type StoredObject } from '../lib/storage.js'
import type { Digests } from '../lib/storage/local.js'
import { canonicalPath, verifySignedRequest } from '../lib/storage/v4.js'

/**
 * The local suite's stand-in for Cloud Storage's XML API (storage.googleapis.com/<bucket>/<object>),
 * serving the local buckets to the V4 signed addresses the file service hands out: it checks the
 * signature, expiry, method and signed headers exactly as Cloud Storage does (lib/storage/v4.ts),
 * and streams bytes between the socket and the bucket folder, so a transfer of any size keeps the
 * server's memory flat. Every request needs a signed address: the buckets are private.
 *
 *   GET/HEAD /<bucket>/<object>   download (Range: bytes=… answered 206; If-Match: <ETag> else 412)
 *   PUT      /<bucket>/<object>   upload, with the Content-Type that was signed; visible once complete
 *
 * An upload's answer and every read carry the object's checksums as Cloud Storage sends them
 * (x-goog-hash crc32c and md5, the MD5 as ETag): computed while the upload streams in and kept
 * beside the object, or computed on the first read of a file put in the bucket folder otherwise.
 *   POST     /<bucket>/<object>   with x-goog-resumable: start (signed): a resumable upload session,
 *                                  201 with its URI in Location (<object>?upload_id=…), valid a week
 *                                  and used without a signature: PUT chunks with Content-Range
 *                                  (308 Resume Incomplete with Range: bytes=0-n until the last, then
 *                                  200 with the checksums), a status query (PUT, empty, bytes *\/…),
 *                                  DELETE to cancel (499). Chunks but the last are kept in whole
 *                                  multiples of 256 KiB; the start's precondition holds at the end.
 *   DELETE   /<bucket>/<object>   delete
 *   GET      /<bucket>            list (ListBucketResult; prefix, delimiter, marker, max-keys)
 *
 * A request carrying `x-goog-if-generation-match` (signed into the address or not) proceeds only if
 * the object is at that generation, `0` meaning that there is no object yet, as Cloud Storage's
 * precondition does: 412 PreconditionFailed otherwise. An upload with `0` is checked before its body
 * is read and again, atomically, when it is stored, so of two concurrent uploads one is refused.
 *
 * Errors are Cloud Storage's XML errors: SignatureDoesNotMatch (403), ExpiredToken (400),
 * MalformedSecurityHeader (400), AccessDenied (403), NoSuchKey (404), PreconditionFailed (412),
 * InvalidRange (416), …
 */
export interface StorageServerOptions {
  storage: LocalObjectStorage
  /** The service accounts whose signatures are accepted, with their public keys (PEM or KeyObject). */
  keys: Record<string, string | KeyObject>
  clock?: Clock
  log?: Logger
  /** Host names under which a bucket is addressed virtual-hosted style: <bucket>.<suffix>. */
  virtualHostSuffixes?: string[]
  /** Host names bound to one bucket each (a bucket-bound host name, as behind a load balancer). */
  bucketHosts?: Record<string, string>
}

const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message)
  }
}

function sendError(res: ServerResponse, f: HttpFailure, closeConnection: boolean) {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const fields = Object.entries(f.extra)
    .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
    .join('')
  const body = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${f.code}</Code><Message>${xmlEscape(f.message)}</Message>${fields}</Error>`
  res.writeHead(f.status, {
    'content-type': 'application/xml; charset=UTF-8',
    'content-length': Buffer.byteLength(body),
    ...(closeConnection ? { connection: 'close' } : {}),
  })
  res.end(body)
}

const preconditionFailed = () => new HttpFailure(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold.')

/**
 * The generation a request's `x-goog-if-generation-match` names, if it has one: a number, as Cloud
 * Storage's are, or a local object's (its modification time and size, lib/storage/local.ts).
 */
function expectedGeneration(req: IncomingMessage): string | undefined {
  const raw = req.headers['x-goog-if-generation-match']
  if (raw === undefined) return undefined
  // Sent twice, it is two values joined: not one generation.
  const value = (Array.isArray(raw) ? raw.join(',') : raw).trim()
  if (!/^\d+(-\d+)?$/.test(value)) throw new HttpFailure(400, 'InvalidArgument', 'x-goog-if-generation-match must be one generation number.')
  return value
}

/** Whether an object (undefined: none) is at the generation a precondition names ('0': that there is none). */
const atGeneration = (expected: string | undefined, found: StoredObject | undefined) =>
  expected === undefined || (expected === '0' ? found === undefined : found?.generation === expected)

/** A single byte range of `bytes=a-b`, `bytes=a-` or `bytes=-n`; undefined to send everything, 'unsatisfiable' for 416. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!m || (!m[1] && !m[2])) return undefined
  if (!m[1]) {
    const suffix = Number(m[2])
    if (suffix === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1
  if (start >= size || (m[2] && Number(m[2]) < start)) return 'unsatisfiable'
  return { start, end }
}

/**
 * What Cloud Storage answers about an object's content, on an upload and on every read: its
 * checksums in two `x-goog-hash` headers (`crc32c=<base64>`, `md5=<base64>`; a client reading them
 * together sees `crc32c=…,md5=…`), and an ETag that is the hex MD5, as it is for an object not
 * composed of others.
 */
const hashHeaders = (d: Digests) => ({
  etag: `"${Buffer.from(d.md5, 'base64').toString('hex')}"`,
  'x-goog-hash': [`crc32c=${d.crc32c}`, `md5=${d.md5}`],
})

/** How long a resumable session can be used: a week from its start, as Cloud Storage's. */
export const SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000
const SWEEP_EVERY_MS = 3600 * 1000
const SWEEP_GRACE_MS = 24 * 3600 * 1000

const headerOf = (req: IncomingMessage, name: string) => {
  const v = req.headers[name]
  return Array.isArray(v) ? v.join(',') : v
}

/**
 * A session PUT's `Content-Range` (absent: the whole object in this one request): the chunk's
 * first and last byte (none in a status query `bytes *\/…`) and the object's total size when the
 * client knows it; 'invalid' when it is malformed or disagrees with Content-Length.
 */
export function parseContentRange(header: string | undefined, contentLength: number): { first?: number; last?: number; total?: number } | 'invalid' {
  if (header === undefined) return contentLength > 0 ? { first: 0, last: contentLength - 1, total: contentLength } : { total: 0 }
  const m = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(header.trim())
  if (!m) return 'invalid'
  const total = m[3] === '*' ? undefined : Number(m[3])
  if (m[1] === undefined) return contentLength === 0 ? { total } : 'invalid'
  const [first, last] = [Number(m[1]), Number(m[2])]
  if (last < first || last - first + 1 !== contentLength || (total !== undefined && last >= total)) return 'invalid'
  return { first, last, total }
}

export function createStorageServer(opts: StorageServerOptions): Server {
  const clock = opts.clock ?? systemClock
  const keys = new Map(Object.entries(opts.keys).map(([account, key]) => [account, typeof key === 'string' ? createPublicKey(key) : key]))
  const storage = opts.storage

  /** Which bucket and object a request names, and the canonical URIs its signature may cover. */
  function locate(host: string, rawPath: string): { bucket: string; object: string; canonicalUris: Array<string | undefined> } {
    const hostname = host.replace(/:\d+$/, '').toLowerCase()
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s)
      } catch {
        throw new HttpFailure(400, 'InvalidURI', 'The request path is not correctly percent-encoded.')
      }
    }
    const own = canonicalPath(rawPath)
    const bound = opts.bucketHosts?.[hostname]
    if (bound) return { bucket: bound, object: decode(rawPath.slice(1)), canonicalUris: [own] }
    const suffix = opts.virtualHostSuffixes?.find((s) => hostname.endsWith(`.${s}`))
    if (suffix) {
      const bucket = hostname.slice(0, -suffix.length - 1)
      // Some signers sign a virtual-hosted address over its path-style URI: both name the same object.
      return { bucket, object: decode(rawPath.slice(1)), canonicalUris: [own, own === undefined ? undefined : `/${bucket}${own === '/' ? '' : own}`] }
    }
    const slash = rawPath.indexOf('/', 1)
    const bucket = decode(slash < 0 ? rawPath.slice(1) : rawPath.slice(1, slash))
    return { bucket, object: slash < 0 ? '' : decode(rawPath.slice(slash + 1)), canonicalUris: [own] }
  }

  /** An object name the bucket folders can hold; anything else is simply not there. */
  const fileOk = (bucket: string, object: string) => {
    try {
      storage.fileOf(bucket, object)
      return object.length > 0 && !object.startsWith('/') && !object.endsWith('/')
    } catch {
      return false
    }
  }

  async function download(req: IncomingMessage, res: ServerResponse, bucket: string, object: string) {
    const found = fileOk(bucket, object) ? await storage.stat(bucket, object) : undefined
    const digests = found && (await storage.digests(bucket, object))
    if (!found || !digests) throw new HttpFailure(404, 'NoSuchKey', 'The specified key does not exist.')
    if (!atGeneration(expectedGeneration(req), found)) throw preconditionFailed()
    // If-Match with the ETag a read answered: the ranged reads of one download all read the same content.
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined && ifMatch.trim() !== '*' && !ifMatch.split(',').some((tag) => tag.trim() === hashHeaders(digests).etag)) {
      throw preconditionFailed()
    }
    const range = parseRange(req.headers.range, found.size)
    if (range === 'unsatisfiable') {
      res.setHeader('content-range', `bytes */${found.size}`)
      throw new HttpFailure(416, 'InvalidRange', 'The requested range cannot be satisfied.')
    }
    const headers: Record<string, string | number | string[]> = {
      'content-type': found.content_type ?? 'application/octet-stream',
      'last-modified': new Date(found.updated).toUTCString(),
      ...hashHeaders(digests),
      ...(found.generation ? { 'x-goog-generation': found.generation } : {}),
      'accept-ranges': 'bytes',
      'x-goog-stored-content-length': found.size,
    }
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...headers, 'content-length': found.size })
      res.end()
      return
    }
    const opened = await storage.openRead(bucket, object, range)
    if (!opened) throw new HttpFailure(404, 'NoSuchKey', 'The specified key does not exist.')
    if (range) {
      res.writeHead(206, {
        ...headers,
        'content-length': range.end - range.start + 1,
        'content-range': `bytes ${range.start}-${range.end}/${found.size}`,
      })
    } else {
      res.writeHead(200, { ...headers, 'content-length': found.size })
    }
    await pipeline(opened.stream, res)
  }

  async function upload(req: IncomingMessage, res: ServerResponse, bucket: string, object: string, payloadSha256: string | undefined) {
    if (!fileOk(bucket, object)) throw new HttpFailure(400, 'InvalidArgument', `The object name ${JSON.stringify(object)} cannot be stored.`)
    const generation = expectedGeneration(req)
    // Refused before a byte of the body is read; checked again when the object is stored.
    if (generation !== undefined && !atGeneration(generation, await storage.stat(bucket, object))) throw preconditionFailed()
    const hash = createHash('sha256')
    // Pulled chunk by chunk (backpressure), hashed on the way only when the signature covers the digest;
    // a client that goes away ends the iteration with an error, and the upload leaves nothing.
    async function* body() {
      for await (const chunk of req) {
        if (payloadSha256) hash.update(chunk as Buffer)
        yield chunk as Buffer
      }
    }
    let stored
    try {
      // Without a signed digest the request itself is the source: pipeline() notices a client that goes away.
      stored = await storage.upload(bucket, object, payloadSha256 ? Readable.from(body()) : req, req.headers['content-type'], {
        beforeCommit: () => {
          if (payloadSha256 && hash.digest('hex') !== payloadSha256) {
            throw new HttpFailure(400, 'BadDigest', 'The SHA-256 of the body does not match the signed x-goog-content-sha256.')
          }
        },
        ifGenerationMatch: generation,
      })
    } catch (error) {
      if (error instanceof StorageError && error.reason === 'precondition') throw preconditionFailed()
      if (error instanceof StorageError) throw new HttpFailure(409, 'Conflict', error.message)
      throw error
    }
    res.writeHead(200, { ...hashHeaders(stored.digests), 'x-goog-stored-content-length': stored.size, 'content-length': 0 })
    res.end()
  }

  /**
   * Expired sessions' bytes are removed when a session starts, at most once an hour: a suite that
   * is used keeps no abandoned upload's gigabytes longer than a day past its week. A day's grace,
   * so that a request still writing when its session expired is not cut from under it.
   */
  let sweptAt = -Infinity
  function sweepExpiredSessions(now: Date) {
    if (now.getTime() - sweptAt < SWEEP_EVERY_MS) return
    sweptAt = now.getTime()
    storage
      .sweepSessions(new Date(now.getTime() - SWEEP_GRACE_MS))
      .then((swept) => swept && opts.log?.info('expired upload sessions removed', { swept }))
      .catch((error: unknown) => opts.log?.warn('expired upload sessions could not be removed', { error }))
  }

  /** POST with `x-goog-resumable: start`: a session for the object, its URI in Location (201). */
  async function startSession(req: IncomingMessage, res: ServerResponse, host: string, rawPath: string, bucket: string, object: string) {
    if (!fileOk(bucket, object)) throw new HttpFailure(400, 'InvalidArgument', `The object name ${JSON.stringify(object)} cannot be stored.`)
    const generation = expectedGeneration(req)
    // Checked now to refuse early, and again when the last byte arrives.
    if (generation !== undefined && !atGeneration(generation, await storage.stat(bucket, object))) throw preconditionFailed()
    const now = clock.now()
    sweepExpiredSessions(now)
    const session = await storage.startSession(bucket, object, {
      contentType: headerOf(req, 'content-type'),
      ifGenerationMatch: generation,
      now,
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
    })
    req.resume()
    res.writeHead(201, { location: `http://${host}${rawPath}?upload_id=${session.id}`, 'content-length': 0 })
    res.end()
  }

  /** Requests on a session URI run one after the other: a status query waits for the chunk still being stored. */
  const sessionQueues = new Map<string, Promise<unknown>>()

  function sessionRequest(req: IncomingMessage, res: ServerResponse, id: string, bucket: string, object: string): Promise<void> {
    const previous = sessionQueues.get(id) ?? Promise.resolve()
    const turn = previous.catch(() => undefined).then(() => onSession(req, res, id, bucket, object))
    sessionQueues.set(id, turn)
    void turn.catch(() => undefined).finally(() => sessionQueues.get(id) === turn && sessionQueues.delete(id))
    return turn
  }

  /** What Cloud Storage answers a session that holds `stored` bytes of an upload not yet complete. */
  function resumeIncomplete(res: ServerResponse, stored: number) {
    res.writeHead(308, 'Resume Incomplete', { ...(stored > 0 ? { range: `bytes=0-${stored - 1}` } : {}), 'content-length': 0 })
    res.end()
  }

  function completed(res: ServerResponse, object: StoredObject & { digests: Digests }) {
    res.writeHead(200, {
      ...hashHeaders(object.digests),
      'x-goog-stored-content-length': object.size,
      ...(object.generation ? { 'x-goog-generation': object.generation } : {}),
      'content-length': 0,
    })
    res.end()
  }

  async function complete(res: ServerResponse, id: string) {
    try {
      completed(res, await storage.completeSession(id))
    } catch (error) {
      if (error instanceof StorageError && error.reason === 'precondition') throw preconditionFailed()
      if (error instanceof StorageError) throw new HttpFailure(409, 'Conflict', error.message)
      throw error
    }
  }

  /**
   * PUT (a chunk, or a status query with `Content-Range: bytes *\/…`) and DELETE (cancel) on a
   * session URI, as Cloud Storage's XML API answers them.
   */
  async function onSession(req: IncomingMessage, res: ServerResponse, id: string, bucket: string, object: string) {
    const session = await storage.uploadSession(id)
    const noSuchUpload = new HttpFailure(
      404,
      'NoSuchUpload',
      'No such upload session: it does not exist, or it expired (a week after it was started).',
    )
    if (!session || session.bucket !== bucket || session.path !== object) throw noSuchUpload
    if (clock.now().getTime() > Date.parse(session.expires_at)) throw noSuchUpload
    if (session.state === 'cancelled' || session.state === 'failed') {
      throw new HttpFailure(
        410,
        'Gone',
        `The upload session was ${session.state === 'cancelled' ? 'cancelled' : 'refused: its precondition no longer held'}; start a new one.`,
      )
    }
    if (req.method === 'DELETE') {
      req.resume()
      if (session.state === 'complete') throw new HttpFailure(409, 'Conflict', 'The upload is complete: there is no session left to cancel.')
      await storage.cancelSession(id)
      res.writeHead(499, 'Client Closed Request', { 'content-length': 0 })
      res.end()
      return
    }
    if (req.method !== 'PUT') throw new HttpFailure(405, 'MethodNotAllowed', `${req.method} is not supported on an upload session; PUT or DELETE it.`)
    const length = Number(headerOf(req, 'content-length') ?? 0)
    const range = parseContentRange(headerOf(req, 'content-range'), length)
    if (range === 'invalid')
      throw new HttpFailure(
        400,
        'InvalidArgument',
        'Content-Range must be bytes a-b/total, bytes a-b/*, bytes */total or bytes */*, and match Content-Length.',
      )
    if (session.state === 'complete') {
      req.resume()
      return completed(res, session.object!)
    }
    if (range.total !== undefined && range.total < session.stored) {
      throw new HttpFailure(400, 'InvalidArgument', `The total size ${range.total} is smaller than the ${session.stored} bytes already uploaded.`)
    }
    if (range.first === undefined) {
      // A status query: what the session holds; with a total it already holds in full, the end.
      req.resume()
      if (range.total !== undefined && range.total === session.stored) return complete(res, id)
      return resumeIncomplete(res, session.stored)
    }
    if (range.first > session.stored) {
      throw new HttpFailure(
        400,
        'InvalidArgument',
        `Invalid request. According to the Content-Range header, the upload offset is ${range.first} byte(s), which exceeds already uploaded size of ${session.stored} byte(s).`,
      )
    }
    const final = range.total !== undefined && range.last! + 1 === range.total
    // Bytes the session already holds (a chunk sent again after a lost answer) are read and dropped.
    let skip = session.stored - range.first
    async function* fresh() {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        if (skip >= chunk.length) {
          skip -= chunk.length
          continue
        }
        yield skip > 0 ? chunk.subarray(skip) : chunk
        skip = 0
      }
    }
    const stored = await storage.appendToSession(id, session.stored, fresh(), { final })
    if (final && stored === range.total) return complete(res, id)
    return resumeIncomplete(res, stored)
  }

  async function listBucket(res: ServerResponse, bucket: string, query: URLSearchParams) {
    const prefix = query.get('prefix') ?? ''
    const delimiter = query.get('delimiter')
    const maxKeys = Math.min(1000, Number(query.get('max-keys') ?? 1000) || 1000)
    const marker = query.get('marker') ?? undefined
    const token = marker ? Buffer.from(marker).toString('base64url') : undefined
    const contents: string[] = []
    const prefixes: string[] = []
    let next: string | undefined
    if (delimiter === '/' && (prefix === '' || prefix.endsWith('/'))) {
      const page = await storage.listLevel(bucket, prefix, { pageSize: maxKeys, pageToken: token })
      for (const e of page.items) {
        if (e.kind === 'folder') prefixes.push(`<CommonPrefixes><Prefix>${xmlEscape(e.path)}</Prefix></CommonPrefixes>`)
        else contents.push(`<Contents><Key>${xmlEscape(e.path)}</Key><LastModified>${e.updated}</LastModified><Size>${e.size}</Size></Contents>`)
      }
      next = page.nextPageToken && page.items.at(-1)?.path
    } else {
      const page = await storage.list(bucket, prefix, { pageSize: maxKeys, pageToken: token })
      for (const o of page.items)
        contents.push(`<Contents><Key>${xmlEscape(o.path)}</Key><LastModified>${o.updated}</LastModified><Size>${o.size}</Size></Contents>`)
      next = page.nextPageToken && page.items.at(-1)?.path
    }
    const body =
      `<?xml version='1.0' encoding='UTF-8'?><ListBucketResult xmlns="http://doc.s3.amazonaws.com/2006-03-01"><Name>${xmlEscape(bucket)}</Name>` +
      `<Prefix>${xmlEscape(prefix)}</Prefix><Marker>${xmlEscape(marker ?? '')}</Marker>` +
      `${next ? `<NextMarker>${xmlEscape(next)}</NextMarker>` : ''}<IsTruncated>${Boolean(next)}</IsTruncated>${contents.join('')}${prefixes.join('')}</ListBucketResult>`
    res.writeHead(200, { 'content-type': 'application/xml; charset=UTF-8', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const target = req.url ?? '/'
    const q = target.indexOf('?')
    const rawPath = q < 0 ? target : target.slice(0, q)
    const rawQuery = q < 0 ? '' : target.slice(q + 1)
    const host = req.headers.host ?? ''
    const { bucket, object, canonicalUris } = locate(host, rawPath)
    const query = new URLSearchParams(rawQuery)
    // A session URI carries no signature: its unguessable upload_id is the capability, as in Cloud Storage.
    const uploadId = query.get('upload_id')
    if (uploadId !== null) return sessionRequest(req, res, uploadId, bucket, object)
    if (!query.has('X-Goog-Signature') && !query.has('X-Goog-Algorithm')) {
      throw new HttpFailure(403, 'AccessDenied', 'Access denied: the local buckets are private; use a signed address from the file service.')
    }
    const verified = verifySignedRequest(
      { method: req.method ?? 'GET', host, rawPath, rawQuery, headers: req.headers },
      { now: clock.now(), publicKeyFor: (account) => keys.get(account), canonicalUris },
    )
    if (!verified.ok) {
      throw new HttpFailure(verified.status, verified.code, verified.message, verified.stringToSign ? { StringToSign: verified.stringToSign } : {})
    }
    if (!bucket) throw new HttpFailure(400, 'InvalidBucketName', 'The request names no bucket.')
    switch (req.method) {
      case 'GET':
      case 'HEAD':
        return object ? download(req, res, bucket, object) : listBucket(res, bucket, query)
      case 'PUT':
        return upload(req, res, bucket, object, verified.payloadSha256)
      case 'DELETE': {
        const found = fileOk(bucket, object) ? await storage.stat(bucket, object) : undefined
        if (found && !atGeneration(expectedGeneration(req), found)) throw preconditionFailed()
        if (!found || !(await storage.delete(bucket, object))) throw new HttpFailure(404, 'NoSuchKey', 'The specified key does not exist.')
        res.writeHead(204)
        res.end()
        return
      }
      case 'POST':
        if (headerOf(req, 'x-goog-resumable') !== 'start' || !object) {
          throw new HttpFailure(
            501,
            'NotImplemented',
            'Form uploads are not supported by the local storage server: PUT the object, or POST with x-goog-resumable: start.',
          )
        }
        return startSession(req, res, host, rawPath, bucket, object)
      default:
        throw new HttpFailure(405, 'MethodNotAllowed', `${req.method} is not supported.`)
    }
  }

  /** What a failed request is answered: its own failure, else a 500 whose cause is logged. */
  function failureOf(error: unknown, req: IncomingMessage): HttpFailure {
    if (error instanceof HttpFailure) return error
    // A signed address's target carries its signature: logged as the services' access lines log a URL.
    opts.log?.error('storage server error', { error, method: req.method, path: loggableUrl(req.url ?? '/') })
    return new HttpFailure(500, 'InternalError', 'We encountered an internal error. Please try again.')
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A refused upload's body is not read: the connection cannot be reused.
      sendError(res, failureOf(error, req), req.method === 'PUT' && !req.complete)
    })
  })
  // Large transfers take as long as they take; Node's default would cut a request off after 5 minutes.
  server.requestTimeout = 0
  return server
}

export interface RunningStorageServer {
  url: string
  server: Server
  stop(): Promise<void>
}

export async function startStorageServer(opts: StorageServerOptions & { port?: number; host?: string }): Promise<RunningStorageServer> {
  const server = createStorageServer(opts)
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
