import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, type ReadStream, type Stats } from 'node:fs'
import { copyFile, link, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
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
 * upload leaves nothing half-written.
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
    const full = this.fileOf(bucket, path)
    const tmp = await this.tempFile()
    const digester = new Digester()
    const expected = opts.ifGenerationMatch
    try {
      // A large buffer in front of the file: chunks arriving while a write is in flight go out together in the next one.
      await pipeline(source, digester.through, createWriteStream(tmp, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES }))
      opts.beforeCommit?.()
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
    const digests = digester.digests()
    await this.setMeta(bucket, path, contentType, digests)
    return { ...(await this.stat(bucket, path))!, digests }
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
