import type { File, Storage } from '@google-cloud/storage'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { StorageError, type LevelEntry, type ListOptions, type ObjectStorage, type StoredObject } from './port.js'

const statusOf = (error: unknown) => (error as { code?: number }).code

function toObject(f: Pick<File, 'name' | 'metadata'>): StoredObject {
  return {
    path: f.name,
    size: Number(f.metadata.size ?? 0),
    updated: new Date(String(f.metadata.updated ?? f.metadata.timeCreated ?? 0)).toISOString(),
    content_type: f.metadata.contentType,
    generation: f.metadata.generation === undefined ? undefined : String(f.metadata.generation),
  }
}

/** Cloud Storage through @google-cloud/storage (its JSON API), as whichever identity the client holds. */
export class GcsObjectStorage implements ObjectStorage {
  constructor(private readonly storage: Storage) {}

  async list(bucket: string, prefix: string, opts: ListOptions = {}) {
    const [files, next] = await this.storage.bucket(bucket).getFiles({
      prefix,
      autoPaginate: false,
      maxResults: opts.pageSize ?? 1000,
      pageToken: opts.pageToken,
    })
    return { items: files.map(toObject), nextPageToken: (next as { pageToken?: string } | null | undefined)?.pageToken }
  }

  async listLevel(bucket: string, prefix: string, opts: ListOptions = {}) {
    const [files, next, response] = await this.storage.bucket(bucket).getFiles({
      prefix,
      delimiter: '/',
      autoPaginate: false,
      maxResults: opts.pageSize ?? 1000,
      pageToken: opts.pageToken,
    })
    const prefixes = ((response as { prefixes?: string[] } | undefined)?.prefixes ?? []).map((p): LevelEntry => ({ kind: 'folder', path: p }))
    // The JSON API answers a folder's placeholder object ("fastq/", made by the console) as an object of the level; it is the folder itself.
    const objects = files.filter((f) => f.name !== prefix).map((f): LevelEntry => ({ kind: 'object', ...toObject(f) }))
    const items = [...objects, ...prefixes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    return { items, nextPageToken: (next as { pageToken?: string } | null | undefined)?.pageToken }
  }

  async stat(bucket: string, path: string) {
    try {
      const [metadata] = await this.storage.bucket(bucket).file(path).getMetadata()
      return toObject({ name: path, metadata })
    } catch (error) {
      if (statusOf(error) === 404) return undefined
      throw error
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
      if (statusOf(error) === 404) return undefined
      throw error
    }
  }

  async readStream(bucket: string, path: string, opts: { generation?: string } = {}) {
    const file = this.storage.bucket(bucket).file(path, opts.generation ? { generation: opts.generation } : {})
    // A missing object (or generation) fails the stream's first read; asked first, it is an answer instead.
    try {
      await file.getMetadata()
    } catch (error) {
      if (statusOf(error) === 404) return undefined
      throw error
    }
    return file.createReadStream({ validation: false })
  }

  async upload(bucket: string, path: string, source: Readable, contentType?: string) {
    const file = this.storage.bucket(bucket).file(path)
    await pipeline(source, file.createWriteStream({ contentType, resumable: true }))
    return (await this.stat(bucket, path))!
  }

  async copy(bucket: string, source: string, destination: string, opts: { overwrite: boolean }) {
    const b = this.storage.bucket(bucket)
    try {
      // ifGenerationMatch=0: Cloud Storage itself refuses the copy when the destination exists.
      const [copied, response] = await b.file(source).copy(b.file(destination), opts.overwrite ? {} : { preconditionOpts: { ifGenerationMatch: 0 } })
      // The rewrite's answer carries the new object's metadata; the File handle does not.
      const resource = (response as { resource?: File['metadata'] } | undefined)?.resource
      return toObject({ name: destination, metadata: resource ?? copied.metadata })
    } catch (error) {
      if (statusOf(error) === 404) throw new StorageError('not_found', `${source} does not exist`)
      if (statusOf(error) === 412) throw new StorageError('exists', `${destination} already exists`)
      throw error
    }
  }

  async delete(bucket: string, path: string) {
    try {
      await this.storage.bucket(bucket).file(path).delete()
      return true
    } catch (error) {
      if (statusOf(error) === 404) return false
      throw error
    }
  }
}
