import { Storage } from '@google-cloud/storage'
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { dirname, extname, join, relative, resolve, sep } from 'node:path'
import type { Config } from './config.js'

/**
 * Object storage behind one small interface: Cloud Storage in the cloud, a folder per bucket on
 * disk in the local suite (gs://<bucket>/<path> ↔ <localRoot>/<bucket>/<path>). Paths are object
 * names inside the bucket, as in Cloud Storage; a prefix is a string prefix, not a folder.
 */
export interface StoredObject {
  /** The object name inside its bucket, e.g. runs/<run-id>/result.txt */
  path: string
  size: number
  /** ISO 8601 UTC */
  updated: string
  content_type?: string
}

export interface ListOptions {
  pageSize?: number
  pageToken?: string
}

export interface ObjectStorage {
  /** Objects whose names start with `prefix`, in name order, a page at a time. */
  list(bucket: string, prefix: string, opts?: ListOptions): Promise<{ items: StoredObject[]; nextPageToken?: string }>
  write(bucket: string, path: string, data: string | Uint8Array, contentType?: string): Promise<void>
  /** The object's bytes, or undefined when there is no such object. */
  read(bucket: string, path: string): Promise<Buffer | undefined>
}

const GS_RE = /^gs:\/\/([a-z0-9][a-z0-9._-]{1,221}[a-z0-9])(?:\/(.*))?$/

export function parseGsUri(uri: string): { bucket: string; path: string } {
  const m = GS_RE.exec(uri)
  if (!m) throw new Error(`not a gs:// URI: ${uri}`)
  return { bucket: m[1]!, path: m[2] ?? '' }
}

export const gsUri = (bucket: string, path: string) => `gs://${bucket}/${path}`

function localRootOf(config: Pick<Config, 'storage'>): string {
  if (!config.storage.localRoot) throw new Error('LOCAL_STORAGE_ROOT is not set: the local storage backend needs a folder')
  return resolve(config.storage.localRoot)
}

function safeJoin(root: string, bucket: string, path: string): string {
  if (!GS_RE.test(`gs://${bucket}`)) throw new Error(`not a valid bucket name: ${bucket}`)
  const base = join(root, bucket)
  const full = resolve(base, path)
  // An object name with '..' must never reach outside its bucket's folder.
  if (full !== base && !full.startsWith(base + sep)) throw new Error(`object path escapes its bucket: ${path}`)
  return full
}

/**
 * The file on disk that stands for a gs:// URI in the local suite. The local Batch executor writes
 * a run's outputs to localPathFor(config, 'gs://<bucket>/runs/<run-id>/'), where the compute
 * service lists them.
 */
export function localPathFor(config: Pick<Config, 'storage'>, uri: string): string {
  const { bucket, path } = parseGsUri(uri)
  return safeJoin(localRootOf(config), bucket, path)
}

const CONTENT_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.json': 'application/json',
  '.html': 'text/html',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.pdf': 'application/pdf',
  '.gz': 'application/gzip',
  '.bam': 'application/octet-stream',
}

const encodeToken = (name: string) => Buffer.from(name).toString('base64url')
const decodeToken = (token: string) => Buffer.from(token, 'base64url').toString('utf8')

export class LocalObjectStorage implements ObjectStorage {
  constructor(private readonly root: string) {}

  private async walk(dir: string, out: string[]) {
    let entries
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    for (const e of entries) {
      const full = join(dir, e.name)
      if (e.isDirectory()) await this.walk(full, out)
      else if (e.isFile()) out.push(full)
    }
  }

  async list(bucket: string, prefix: string, opts: ListOptions = {}) {
    const base = safeJoin(this.root, bucket, '')
    // Only the folder holding the prefix's last complete segment can contain matches.
    const folder = safeJoin(this.root, bucket, prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '')
    const files: string[] = []
    await this.walk(folder, files)
    const after = opts.pageToken ? decodeToken(opts.pageToken) : undefined
    const names = files
      .map((f) => relative(base, f).split(sep).join('/'))
      .filter((n) => n.startsWith(prefix) && (after === undefined || n > after))
      .sort()
    const pageSize = opts.pageSize ?? 1000
    const page = names.slice(0, pageSize)
    const items = await Promise.all(
      page.map(async (name) => {
        const s = await stat(join(base, name))
        return { path: name, size: s.size, updated: s.mtime.toISOString(), content_type: CONTENT_TYPES[extname(name).toLowerCase()] }
      }),
    )
    const last = page.at(-1)
    return { items, nextPageToken: names.length > pageSize && last ? encodeToken(last) : undefined }
  }

  async write(bucket: string, path: string, data: string | Uint8Array) {
    const full = safeJoin(this.root, bucket, path)
    await mkdir(dirname(full), { recursive: true })
    await writeFile(full, data)
  }

  async read(bucket: string, path: string) {
    try {
      return await readFile(safeJoin(this.root, bucket, path))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
}

export class GcsObjectStorage implements ObjectStorage {
  constructor(private readonly storage: Storage) {}

  async list(bucket: string, prefix: string, opts: ListOptions = {}) {
    const [files, next] = await this.storage.bucket(bucket).getFiles({
      prefix,
      autoPaginate: false,
      maxResults: opts.pageSize ?? 1000,
      pageToken: opts.pageToken,
    })
    return {
      items: files.map((f) => ({
        path: f.name,
        size: Number(f.metadata.size ?? 0),
        updated: new Date(String(f.metadata.updated ?? f.metadata.timeCreated ?? 0)).toISOString(),
        content_type: f.metadata.contentType,
      })),
      nextPageToken: (next as { pageToken?: string } | null | undefined)?.pageToken,
    }
  }

  async write(bucket: string, path: string, data: string | Uint8Array, contentType?: string) {
    await this.storage.bucket(bucket).file(path).save(Buffer.from(data), { contentType, resumable: false })
  }

  async read(bucket: string, path: string) {
    try {
      const [bytes] = await this.storage.bucket(bucket).file(path).download()
      return bytes
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined
      throw error
    }
  }
}

export function createObjectStorage(config: Config): ObjectStorage {
  return config.storage.backend === 'local'
    ? new LocalObjectStorage(localRootOf(config))
    : new GcsObjectStorage(new Storage({ projectId: config.gcpProject }))
}
