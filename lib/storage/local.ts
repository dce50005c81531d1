import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream, type ReadStream, type Stats } from 'node:fs'
import { copyFile, link, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { sha256 } from '../ids.js'
import { BUCKET_RE, contentTypeFor, StorageError, type LevelEntry, type ListOptions, type ObjectStorage, type StoredObject } from './port.js'

/**
 * The local suite's object storage: a folder per bucket under `root` (<root>/<bucket>/<object
 * name>). Beside the buckets, which cannot be named so, `.meta/` keeps each uploaded object's
 * declared content type (a small JSON file per object, valid only while the object's size and
 * modification time still match it), and `.uploads/` holds uploads in progress, renamed into
 * place only once complete, so that a failed upload leaves nothing half-written.
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

  private async contentTypeOf(bucket: string, path: string, s: Stats): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(this.metaFile(bucket, path), 'utf8')) as { content_type: string; size: number; mtime_ms: number }
      // A file replaced by other means (the local executor writing run outputs) has lost its declared type.
      if (meta.size === s.size && meta.mtime_ms === s.mtimeMs) return meta.content_type
    } catch {
      // no declared type
    }
    return contentTypeFor(path)
  }

  private async setContentType(bucket: string, path: string, contentType: string | undefined) {
    const file = this.metaFile(bucket, path)
    if (!contentType) return rm(file, { force: true })
    const s = await stat(this.fileOf(bucket, path))
    await mkdir(dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify({ path, content_type: contentType, size: s.size, mtime_ms: s.mtimeMs }))
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
    return ['EISDIR', 'ENOTEMPTY', 'ENOTDIR', 'EPERM'].includes(code) ? new StorageError('conflict', `${path} is the name of a folder`) : error
  }

  /**
   * Streams `source` into the object. `beforeCommit` runs once every byte is on disk and before the
   * object appears (the storage server checks a signed digest there); if it or the stream fails,
   * the temporary file is removed and the object is unchanged.
   */
  async upload(bucket: string, path: string, source: Readable, contentType?: string, opts: { beforeCommit?: () => void } = {}) {
    const full = this.fileOf(bucket, path)
    const tmp = await this.tempFile()
    try {
      await pipeline(source, createWriteStream(tmp, { flags: 'wx' }))
      opts.beforeCommit?.()
      await this.parentOf(bucket, path)
      await rename(tmp, full).catch((error: unknown) => {
        throw LocalObjectStorage.asConflict(error, path)
      })
    } catch (error) {
      await rm(tmp, { force: true })
      throw error
    }
    await this.setContentType(bucket, path, contentType)
    return (await this.stat(bucket, path))!
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
    await this.setContentType(bucket, destination, from.content_type)
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

/** A local object's version: its modification time (nanoseconds) and size, which change whenever the file is replaced. */
const localGeneration = (s: Stats) => `${s.mtimeMs.toFixed(3).replace('.', '')}-${s.size}`

const encodeToken = (name: string) => Buffer.from(name).toString('base64url')
const decodeToken = (token: string) => Buffer.from(token, 'base64url').toString('utf8')
