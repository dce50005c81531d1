import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, type ReadStream, type Stats } from 'node:fs'
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, truncate, unlink, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { sha256 } from '../ids.js'
import { Crc32c } from './crc32c.js'
import { BUCKET_RE, contentTypeFor, StorageError, type LevelEntry, type ListOptions, type ObjectStorage, type StoredObject } from './port.js'

/**
 * The local suite's object storage: a folder per bucket under `root` (<root>/<bucket>/<object
 * name>). Beside the buckets, which cannot be named so, `.meta/` keeps each uploaded object's
 * declared content type and its checksums (MD5 and CRC32C, as Cloud Storage keeps them: computed
 * while the upload streams in; a small JSON file per object, valid only while the object's size
 * and modification time still match it, so a file replaced by other means gets new ones), and
 * `.uploads/` holds uploads in progress, renamed into place only once complete, so that a failed
 * upload leaves nothing half-written; `.sessions/` holds the resumable upload sessions (their
 * bytes so far, and what they were started with) until their last byte arrives.
 */
export class LocalObjectStorage implements ObjectStorage {
  readonly root: string
  constructor(root: string) {
    this.root = resolve(root)
  }

  /** The file of an object (or the folder of a prefix); never outside the bucket's folder. */
  fileOf(bucket: string, path: string): string {
    if (!BUCKET_RE.test(bucket)) throw new Error(`not a valid bucket name: ${bucket}`)
    const base = join(this.root, bucket)
    const full = resolve(base, path)
    // An object name with '..' must never reach outside its bucket's folder.
    if (full !== base && !full.startsWith(base + sep)) throw new Error(`object path escapes its bucket: ${path}`)
    return full
  }

  private metaFile(bucket: string, path: string) {
    return join(this.root, '.meta', bucket, `${sha256(path)}.json`)
  }

  /** What `.meta/` says of the object, if it still describes the file as it is on disk. */
  private async metaOf(bucket: string, path: string, s: Stats): Promise<Meta | undefined> {
    try {
      const meta = JSON.parse(await readFile(this.metaFile(bucket, path), 'utf8')) as Meta
      // A file replaced by other means (the local executor writing run outputs) has lost its declared type and checksums.
      // Within a millisecond: what a modification time set back with utimes keeps of it, and far finer than any rewrite.
      if (meta.size === s.size && Math.abs(meta.mtime_ms - s.mtimeMs) < 1) return meta
    } catch {
      // nothing recorded
    }
    return undefined
  }

  private async contentTypeOf(bucket: string, path: string, s: Stats): Promise<string> {
    return (await this.metaOf(bucket, path, s))?.content_type ?? contentTypeFor(path)
  }

  private async setMeta(bucket: string, path: string, contentType: string | undefined, digests: Digests | undefined) {
    const file = this.metaFile(bucket, path)
    if (!contentType && !digests) return rm(file, { force: true })
    const s = await stat(this.fileOf(bucket, path))
    await mkdir(dirname(file), { recursive: true })
    const meta: Meta = { path, content_type: contentType, size: s.size, mtime_ms: s.mtimeMs, ...digests }
    await writeFile(file, JSON.stringify(meta))
  }

  /**
   * The object's MD5 and CRC32C (base64, as Cloud Storage answers them in x-goog-hash): the ones
   * recorded when it was uploaded, else computed from the file now (one read) and recorded;
   * undefined when there is no such object.
   */
  async digests(bucket: string, path: string): Promise<Digests | undefined> {
    const file = this.fileOf(bucket, path)
    const before = await stat(file).catch(() => undefined)
    if (!before?.isFile()) return undefined
    const meta = await this.metaOf(bucket, path, before)
    if (meta?.md5 && meta.crc32c) return { md5: meta.md5, crc32c: meta.crc32c }
    const digester = new Digester()
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) digester.update(chunk as Buffer)
    const digests = digester.digests()
    const after = await stat(file).catch(() => undefined)
    // Recorded only if the file did not change while it was read.
    if (after && after.size === before.size && after.mtimeMs === before.mtimeMs) await this.setMeta(bucket, path, meta?.content_type, digests)
    return digests
  }

  private async toObject(bucket: string, path: string, s: Stats): Promise<StoredObject> {
    return {
      path,
      size: s.size,
      updated: s.mtime.toISOString(),
      content_type: await this.contentTypeOf(bucket, path, s),
      generation: localGeneration(s),
    }
  }

  async stat(bucket: string, path: string): Promise<StoredObject | undefined> {
    if (!path || path.endsWith('/')) return undefined
    try {
      const s = await stat(this.fileOf(bucket, path))
      return s.isFile() ? await this.toObject(bucket, path, s) : undefined
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined
      throw error
    }
  }

  private async walk(dir: string, out: string[]) {
    let entries
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return
      throw error
    }
    for (const e of entries) {
      const full = join(dir, e.name)
      if (e.isDirectory()) await this.walk(full, out)
      else if (e.isFile()) out.push(full)
    }
  }

  /** Whether a folder holds an object at any depth (an empty folder is not a prefix in Cloud Storage). */
  private async holdsObjects(dir: string): Promise<boolean> {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const e of entries) if (e.isFile() || (e.isDirectory() && (await this.holdsObjects(join(dir, e.name))))) return true
    return false
  }

  async list(bucket: string, prefix: string, opts: ListOptions = {}) {
    const base = this.fileOf(bucket, '')
    // Only the folder holding the prefix's last complete segment can contain matches.
    const folder = this.fileOf(bucket, prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '')
    const files: string[] = []
    await this.walk(folder, files)
    const after = opts.pageToken ? decodeToken(opts.pageToken) : undefined
    const names = files
      .map((f) => relative(base, f).split(sep).join('/'))
      .filter((n) => n.startsWith(prefix) && (after === undefined || n > after))
      .sort()
    const pageSize = opts.pageSize ?? 1000
    const page = names.slice(0, pageSize)
    const items = await Promise.all(page.map(async (name) => this.toObject(bucket, name, await stat(join(base, name)))))
    const last = page.at(-1)
    return { items, nextPageToken: names.length > pageSize && last ? encodeToken(last) : undefined }
  }

  async listLevel(bucket: string, prefix: string, opts: ListOptions = {}) {
    if (prefix && !prefix.endsWith('/')) throw new Error(`a level is listed under a folder prefix ending in '/', not ${prefix}`)
    const dir = this.fileOf(bucket, prefix)
    const entries = await readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return []
      throw error
    })
    const after = opts.pageToken ? decodeToken(opts.pageToken) : undefined
    const candidates = entries
      .filter((e) => e.isFile() || e.isDirectory())
      .map((e) => ({ path: `${prefix}${e.name}${e.isDirectory() ? '/' : ''}`, dir: e.isDirectory() }))
      .filter((e) => after === undefined || e.path > after)
      .sort((a, b) => (a.path < b.path ? -1 : 1))
    const pageSize = opts.pageSize ?? 1000
    const items: LevelEntry[] = []
    let i = 0
    for (; i < candidates.length && items.length < pageSize; i++) {
      const c = candidates[i]!
      if (c.dir) {
        if (await this.holdsObjects(this.fileOf(bucket, c.path))) items.push({ kind: 'folder', path: c.path })
      } else {
        const s = await stat(this.fileOf(bucket, c.path)).catch(() => undefined)
        if (s?.isFile()) items.push({ kind: 'object', ...(await this.toObject(bucket, c.path, s)) })
      }
    }
    const last = items.at(-1)
    return { items, nextPageToken: i < candidates.length && last ? encodeToken(last.path) : undefined }
  }

  async write(bucket: string, path: string, data: string | Uint8Array, contentType?: string) {
    await this.upload(bucket, path, Readable.from([Buffer.from(data)]), contentType)
  }

  async read(bucket: string, path: string) {
    try {
      return await readFile(this.fileOf(bucket, path))
    } catch (error) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined
      throw error
    }
  }

  /** A temporary file on the buckets' file system, so that the final rename is atomic. */
  private async tempFile(): Promise<string> {
    const dir = join(this.root, '.uploads')
    await mkdir(dir, { recursive: true })
    return join(dir, randomUUID())
  }

  /** Makes the folders above an object; a file standing where a folder must be is a conflict. */
  private async parentOf(bucket: string, path: string): Promise<string> {
    const full = this.fileOf(bucket, path)
    try {
      await mkdir(dirname(full), { recursive: true })
    } catch (error) {
      if (['EEXIST', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) {
        throw new StorageError('conflict', `${path} cannot be stored: a part of its folder path is an object`)
      }
      throw error
    }
    return full
  }

  private static asConflict(error: unknown, path: string): unknown {
    const code = (error as NodeJS.ErrnoException).code ?? ''
    return ['EISDIR', 'ENOTEMPTY', 'ENOTDIR', 'EPERM', 'EEXIST'].includes(code)
      ? new StorageError('conflict', `${path} is the name of a folder`)
      : error
  }

  /**
   * Streams `source` into the object, computing its MD5 and CRC32C on the way. `beforeCommit` runs
   * once every byte is on disk and before the object appears (the storage server checks a signed
   * digest there); if it or the stream fails, the temporary file is removed and the object is
   * unchanged. `ifGenerationMatch`, as Cloud Storage's precondition: '0' stores only if there is no
   * object yet, checked atomically (an exclusive link, as copy does); another value only if the
   * object is at that generation (checked just before the rename). StorageError 'precondition'
   * otherwise.
   */
  async upload(
    bucket: string,
    path: string,
    source: Readable,
    contentType?: string,
    opts: { beforeCommit?: () => void; ifGenerationMatch?: string } = {},
  ): Promise<StoredObject & { digests: Digests }> {
    const tmp = await this.tempFile()
    const digester = new Digester()
    try {
      // A large buffer in front of the file: chunks arriving while a write is in flight go out together in the next one.
      await pipeline(source, digester.through, createWriteStream(tmp, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES }))
      opts.beforeCommit?.()
    } catch (error) {
      await rm(tmp, { force: true })
      throw error
    }
    return this.commit(tmp, bucket, path, contentType, digester.digests(), opts.ifGenerationMatch)
  }

  /**
   * Makes the complete temporary file `tmp` the object (the file is consumed, whatever happens),
   * under `ifGenerationMatch` as `upload` describes.
   */
  private async commit(
    tmp: string,
    bucket: string,
    path: string,
    contentType: string | undefined,
    digests: Digests,
    expected: string | undefined,
  ): Promise<StoredObject & { digests: Digests }> {
    const full = this.fileOf(bucket, path)
    try {
      await this.parentOf(bucket, path)
      if (expected !== undefined && expected !== '0' && (await this.stat(bucket, path))?.generation !== expected) {
        throw new StorageError('precondition', `${path} is not at generation ${expected}`)
      }
      const commit = expected === '0' ? link(tmp, full) : rename(tmp, full)
      await commit.catch(async (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await this.stat(bucket, path))) {
          throw new StorageError('precondition', `${path} already exists`)
        }
        throw LocalObjectStorage.asConflict(error, path)
      })
    } finally {
      // After a rename there is nothing left to remove; after a link, the temporary name of the new object.
      await rm(tmp, { force: true })
    }
    await this.setMeta(bucket, path, contentType, digests)
    return { ...(await this.stat(bucket, path))!, digests }
  }

  private sessionFiles(id: string) {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return undefined
    const dir = join(this.root, '.sessions')
    return { dir, meta: join(dir, `${id}.json`), data: join(dir, `${id}.data`) }
  }

  /** Running checksums of the sessions whose bytes arrived in order in this process (else computed once at the end). */
  private readonly sessionDigests = new Map<string, { digester: Digester; at: number }>()

  /**
   * Opens a resumable upload session for one object (Cloud Storage's XML API `POST` with
   * `x-goog-resumable: start`): its bytes are kept in `.sessions/` until the last one
   * arrives, then the object is committed with the content type and precondition given here.
   */
  async startSession(
    bucket: string,
    path: string,
    opts: { contentType?: string; ifGenerationMatch?: string; now: Date; expiresAt: Date },
  ): Promise<UploadSession> {
    this.fileOf(bucket, path)
    const id = randomBytes(32).toString('base64url')
    const files = this.sessionFiles(id)!
    await mkdir(files.dir, { recursive: true })
    await writeFile(files.data, '', { flag: 'wx' })
    const meta: SessionMeta = {
      bucket,
      path,
      content_type: opts.contentType,
      if_generation_match: opts.ifGenerationMatch,
      created_at: opts.now.toISOString(),
      expires_at: opts.expiresAt.toISOString(),
      state: 'open',
    }
    await writeFile(files.meta, JSON.stringify(meta), { flag: 'wx' })
    return { id, ...meta, stored: 0 }
  }

  /** A session as it is now (how many bytes it holds), or undefined when there is no such session. */
  async uploadSession(id: string): Promise<UploadSession | undefined> {
    const files = this.sessionFiles(id)
    if (!files) return undefined
    const meta = await readFile(files.meta, 'utf8').then(
      (t) => JSON.parse(t) as SessionMeta,
      () => undefined,
    )
    if (!meta) return undefined
    const stored = meta.state === 'open' ? ((await stat(files.data).catch(() => undefined))?.size ?? 0) : (meta.object?.size ?? 0)
    return { id, ...meta, stored }
  }

  private async setSession(id: string, meta: SessionMeta) {
    const files = this.sessionFiles(id)!
    const tmp = `${files.meta}.${randomUUID()}`
    await writeFile(tmp, JSON.stringify(meta))
    await rename(tmp, files.meta)
  }

  /**
   * Appends `source` to an open session holding `offset` bytes. Only whole multiples of
   * RESUMABLE_GRANULARITY are kept of what arrives (as Cloud Storage persists a chunk), unless
   * `final`: a source that breaks off, or a chunk of another size, leaves the session at the last
   * multiple, which the next status query reports. Answers how many bytes the session holds.
   */
  async appendToSession(id: string, offset: number, source: AsyncIterable<Buffer>, opts: { final: boolean }): Promise<number> {
    const files = this.sessionFiles(id)!
    const running = this.sessionDigests.get(id)
    const digests = running?.at === offset ? running : offset === 0 ? { digester: new Digester(), at: 0 } : undefined
    this.sessionDigests.delete(id)
    // Written by hand rather than through a stream: when the source breaks off, every write has
    // landed before the session is cut back to a whole multiple, so nothing arrives after the cut.
    const file = await open(files.data, 'a')
    let received = 0
    let batch: Buffer[] = []
    let held = 0
    let inFlight: Promise<unknown> = Promise.resolve()
    // Up to WRITE_BUFFER_BYTES gathered per write, one write in flight while the next batch arrives.
    const flush = async () => {
      await inFlight
      inFlight = batch.length ? file.writev(batch) : Promise.resolve()
      batch = []
      held = 0
    }
    try {
      for await (const chunk of source) {
        digests?.digester.update(chunk)
        received += chunk.length
        batch.push(chunk)
        held += chunk.length
        if (held >= WRITE_BUFFER_BYTES) await flush()
      }
      await flush()
      await inFlight
    } catch (error) {
      // What arrived before the break is kept too, up to the last whole multiple.
      await inFlight.catch(() => undefined)
      if (batch.length) await file.writev(batch).catch(() => undefined)
      await file.close()
      const { size } = await stat(files.data)
      await truncate(files.data, size - (size % RESUMABLE_GRANULARITY))
      throw error
    }
    await file.close()
    const stored = offset + received
    if (!opts.final && stored % RESUMABLE_GRANULARITY !== 0) {
      await truncate(files.data, stored - (stored % RESUMABLE_GRANULARITY))
      return stored - (stored % RESUMABLE_GRANULARITY)
    }
    if (digests) this.sessionDigests.set(id, { digester: digests.digester, at: stored })
    return stored
  }

  /**
   * Makes an open session's bytes the object, under the session's precondition (StorageError
   * 'precondition' otherwise, and the session is then failed). The session keeps the object's
   * metadata, so that a status query after the end answers it.
   */
  async completeSession(id: string): Promise<StoredObject & { digests: Digests }> {
    const session = await this.uploadSession(id)
    if (session?.state !== 'open') throw new StorageError('not_found', `no open upload session ${id}`)
    const files = this.sessionFiles(id)!
    const running = this.sessionDigests.get(id)
    this.sessionDigests.delete(id)
    let digests: Digests
    if (running?.at === session.stored) {
      digests = running.digester.digests()
    } else {
      const digester = new Digester()
      for await (const chunk of createReadStream(files.data, { highWaterMark: 1024 * 1024 })) digester.update(chunk as Buffer)
      digests = digester.digests()
    }
    const { id: _id, stored: _stored, ...meta } = session
    try {
      const object = await this.commit(files.data, session.bucket, session.path, session.content_type, digests, session.if_generation_match)
      await this.setSession(id, { ...meta, state: 'complete', object })
      return object
    } catch (error) {
      await this.setSession(id, { ...meta, state: error instanceof StorageError && error.reason === 'precondition' ? 'failed' : 'open' })
      throw error
    }
  }

  /**
   * Removes the sessions that expired before `expiredBefore`, with the bytes they held: Cloud
   * Storage forgets a session a week after its start, and its URI answers 404 either way (the
   * storage server answers so from the expiry it keeps). How many were removed.
   */
  async sweepSessions(expiredBefore: Date): Promise<number> {
    const dir = join(this.root, '.sessions')
    const names = await readdir(dir).catch(() => [] as string[])
    let swept = 0
    for (const name of names) {
      const files = name.endsWith('.json') ? this.sessionFiles(name.slice(0, -'.json'.length)) : undefined
      if (!files) continue
      const meta = await readFile(files.meta, 'utf8').then(
        (t) => JSON.parse(t) as SessionMeta,
        () => undefined,
      )
      if (!meta || !(Date.parse(meta.expires_at) < expiredBefore.getTime())) continue
      this.sessionDigests.delete(name.slice(0, -'.json'.length))
      await rm(files.data, { force: true })
      await rm(files.meta, { force: true })
      swept++
    }
    return swept
  }

  /** Cancels an open session, dropping its bytes; false when there was no open session. */
  async cancelSession(id: string): Promise<boolean> {
    const session = await this.uploadSession(id)
    if (session?.state !== 'open') return false
    const { id: _id, stored: _stored, ...meta } = session
    this.sessionDigests.delete(id)
    await this.setSession(id, { ...meta, state: 'cancelled' })
    await rm(this.sessionFiles(id)!.data, { force: true })
    return true
  }

  /** The object's bytes as a stream (a byte range, inclusive, when given), with its metadata; undefined when absent. */
  async openRead(
    bucket: string,
    path: string,
    range?: { start: number; end: number },
  ): Promise<{ object: StoredObject; stream: ReadStream } | undefined> {
    const object = await this.stat(bucket, path)
    if (!object) return undefined
    // Large reads: 1 MiB at a time, still bounded by the socket's backpressure.
    return { object, stream: createReadStream(this.fileOf(bucket, path), { ...range, highWaterMark: 1024 * 1024 }) }
  }

  async readStream(bucket: string, path: string, opts: { generation?: string } = {}): Promise<ReadStream | undefined> {
    const file = this.fileOf(bucket, path)
    const before = await stat(file).catch(() => undefined)
    if (!before?.isFile() || (opts.generation !== undefined && localGeneration(before) !== opts.generation)) return undefined
    // Open, then check that it is still the version asked for: a file replaced after the open is
    // read as it was (its inode), as a Cloud Storage generation is.
    const stream = createReadStream(file, { highWaterMark: 1024 * 1024 })
    try {
      await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject))
    } catch (error) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined
      throw error
    }
    const after = await stat(file).catch(() => undefined)
    if (!after || localGeneration(after) !== localGeneration(before)) {
      stream.destroy()
      return opts.generation === undefined ? this.readStream(bucket, path) : undefined
    }
    return stream
  }

  async copy(bucket: string, source: string, destination: string, opts: { overwrite: boolean }) {
    const from = await this.stat(bucket, source)
    if (!from) throw new StorageError('not_found', `${source} does not exist`)
    const fromStats = await stat(this.fileOf(bucket, source)).catch(() => undefined)
    const fromMeta = fromStats && (await this.metaOf(bucket, source, fromStats))
    const tmp = await this.tempFile()
    try {
      await copyFile(this.fileOf(bucket, source), tmp)
      const to = await this.parentOf(bucket, destination)
      if (opts.overwrite) {
        await rename(tmp, to)
      } else {
        // link() fails if the name exists: no window in which a concurrent writer is overwritten.
        await link(tmp, to)
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        const existing = await this.stat(bucket, destination)
        throw existing ? new StorageError('exists', `${destination} already exists`) : LocalObjectStorage.asConflict({ code: 'EISDIR' }, destination)
      }
      throw LocalObjectStorage.asConflict(error, destination)
    } finally {
      await rm(tmp, { force: true })
    }
    // The same bytes: the same checksums, when the source had them recorded (else they are computed when asked for).
    const digests = fromMeta?.md5 && fromMeta.crc32c ? { md5: fromMeta.md5, crc32c: fromMeta.crc32c } : undefined
    await this.setMeta(bucket, destination, from.content_type, digests)
    return (await this.stat(bucket, destination))!
  }

  async delete(bucket: string, path: string) {
    if (!path || path.endsWith('/')) return false
    try {
      await unlink(this.fileOf(bucket, path))
    } catch (error) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) return false
      throw error
    }
    await rm(this.metaFile(bucket, path), { force: true })
    // Folders exist only through their objects, as prefixes do in Cloud Storage: remove the ones left empty.
    const base = this.fileOf(bucket, '')
    for (let dir = dirname(this.fileOf(bucket, path)); dir !== base && dir.startsWith(base + sep); dir = dirname(dir)) {
      try {
        await rmdir(dir)
      } catch {
        break
      }
    }
    return true
  }
}

/** An object's checksums as Cloud Storage reports them: base64 of the MD5 (16 bytes) and of the CRC32C (4 bytes, big-endian). */
export interface Digests {
  md5: string
  crc32c: string
}

interface Meta extends Partial<Digests> {
  path: string
  content_type?: string
  size: number
  mtime_ms: number
}

/**
 * What a resumable session keeps of a chunk that is not the last: whole multiples of 256 KiB, the
 * granularity Cloud Storage asks chunks to have (and persists them at).
 */
export const RESUMABLE_GRANULARITY = 256 * 1024

interface SessionMeta {
  bucket: string
  path: string
  content_type?: string
  /** The precondition the signed start carried, checked again when the object is committed. */
  if_generation_match?: string
  created_at: string
  expires_at: string
  /** open: takes bytes; complete: the object was committed; failed: its precondition no longer held; cancelled: deleted by the client. */
  state: 'open' | 'complete' | 'failed' | 'cancelled'
  /** The committed object, once complete. */
  object?: StoredObject & { digests: Digests }
}

/** A resumable upload session of the local storage (Cloud Storage's session URI names one). */
export interface UploadSession extends SessionMeta {
  id: string
  /** The bytes received and kept so far (the object's size once complete). */
  stored: number
}

/** Bytes buffered in front of an upload's file (see upload). */
const WRITE_BUFFER_BYTES = 8 * 1024 * 1024

/** MD5 and CRC32C of the bytes that pass through it, in the same pass as they are written. */
class Digester {
  private readonly md5 = createHash('md5')
  private readonly crc = new Crc32c()
  update(chunk: Buffer) {
    this.md5.update(chunk)
    this.crc.update(chunk)
  }
  /** A pipeline stage: the chunks unchanged, each one hashed on its way. */
  readonly through = (source: AsyncIterable<Buffer>) => this.pass(source)
  private async *pass(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      this.update(chunk)
      yield chunk
    }
  }
  digests(): Digests {
    return { md5: this.md5.digest('base64'), crc32c: this.crc.base64() }
  }
}

/** A local object's version: its modification time (nanoseconds) and size, which change whenever the file is replaced. */
const localGeneration = (s: Stats) => `${s.mtimeMs.toFixed(3).replace('.', '')}-${s.size}`

const encodeToken = (name: string) => Buffer.from(name).toString('base64url')
const decodeToken = (token: string) => Buffer.from(token, 'base64url').toString('utf8')
