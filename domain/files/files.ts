import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import { ApiError, conflict, notFound } from '../../lib/errors.js'
import { gsUri, StorageError, type LevelEntry, type ObjectStorage, type Page, type StoredObject } from '../../lib/storage.js'

/** A file or folder as the file service shows it. */
export interface FileEntry {
  kind: 'object' | 'folder'
  /** The last segment: `S1_R1.fastq.gz`, or `fastq/` for a folder. */
  name: string
  /** The object name (or folder prefix) in the bucket. */
  path: string
  uri: string
  size: number
  updated?: string
  content_type?: string
}

export interface FileProject {
  id: string
  org_id: string
  bucket_name: string
}

const nameOf = (path: string) => {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path
  return trimmed.slice(trimmed.lastIndexOf('/') + 1) + (path.endsWith('/') ? '/' : '')
}

function toEntry(bucket: string, e: LevelEntry | ({ kind: 'object' } & StoredObject)): FileEntry {
  if (e.kind === 'folder') return { kind: 'folder', name: nameOf(e.path), path: e.path, uri: gsUri(bucket, e.path), size: 0 }
  return {
    kind: 'object',
    name: nameOf(e.path),
    path: e.path,
    uri: gsUri(bucket, e.path),
    size: e.size,
    updated: e.updated,
    content_type: e.content_type,
  }
}

/**
 * The files of one project's bucket: listing one level, copy, move (copy then delete: a failure
 * between them leaves the source), delete, each change recorded in the audit log after the
 * storage has made it (the bucket is not Firestore: the event cannot share its transaction).
 * Paths are already checked (./paths.ts).
 */
export class ProjectFiles {
  constructor(
    private readonly storage: ObjectStorage,
    private readonly audit: AuditWriter,
    private readonly project: FileProject,
  ) {}

  private get bucket() {
    return this.project.bucket_name
  }

  private record(ctx: AuditContext, action: string, path: string, change?: { from?: string; to?: string; reason?: string }) {
    return this.audit.record(ctx, {
      action,
      org_id: this.project.org_id,
      project_id: this.project.id,
      entity: { type: 'file', id: gsUri(this.bucket, path), parent: this.project.id },
      change,
    })
  }

  /**
   * One level under `folder`, like `gsutil ls`. A folder path that names an object rather than a
   * folder (`fastq/S1_R1.fastq.gz`) lists that object alone.
   */
  async list(folder: string, page: { pageSize: number; pageToken?: string }): Promise<Page<FileEntry>> {
    const level = await this.storage.listLevel(this.bucket, folder, page)
    if (!level.items.length && !page.pageToken && folder) {
      const single = await this.storage.stat(this.bucket, folder.slice(0, -1))
      if (single) return { items: [toEntry(this.bucket, { kind: 'object', ...single })] }
    }
    return { items: level.items.map((e) => toEntry(this.bucket, e)), nextPageToken: level.nextPageToken }
  }

  async stat(path: string): Promise<FileEntry | undefined> {
    const found = await this.storage.stat(this.bucket, path)
    return found && toEntry(this.bucket, { kind: 'object', ...found })
  }

  async require(path: string): Promise<FileEntry> {
    const found = await this.stat(path)
    if (!found) throw notFound(`file ${path}`)
    return found
  }

  private async copyObject(source: string, destination: string, overwrite: boolean): Promise<FileEntry> {
    if (source === destination) throw new ApiError(400, 'destination: is the same as source')
    try {
      return toEntry(this.bucket, { kind: 'object', ...(await this.storage.copy(this.bucket, source, destination, { overwrite })) })
    } catch (error) {
      if (!(error instanceof StorageError)) throw error
      if (error.reason === 'not_found') throw notFound(`file ${source}`)
      if (error.reason === 'exists') throw conflict(`destination ${destination} already exists; send "overwrite": true to replace it`)
      throw conflict(`destination ${destination}: ${error.message}`)
    }
  }

  async copy(ctx: AuditContext, source: string, destination: string, overwrite: boolean): Promise<FileEntry> {
    const copied = await this.copyObject(source, destination, overwrite)
    await this.record(ctx, 'file.copied', destination, { from: gsUri(this.bucket, source), to: copied.uri })
    return copied
  }

  /** Copy, then delete the source: if the deletion fails, both exist and the copy is what is recorded. */
  async move(ctx: AuditContext, source: string, destination: string, overwrite: boolean): Promise<FileEntry> {
    const moved = await this.copyObject(source, destination, overwrite)
    try {
      await this.storage.delete(this.bucket, source)
    } catch (error) {
      await this.record(ctx, 'file.copied', destination, {
        from: gsUri(this.bucket, source),
        to: moved.uri,
        reason: 'move: deleting the source failed',
      })
      throw error
    }
    await this.record(ctx, 'file.moved', source, { from: gsUri(this.bucket, source), to: moved.uri })
    return moved
  }

  async delete(ctx: AuditContext, path: string): Promise<void> {
    const file = await this.require(path)
    if (!(await this.storage.delete(this.bucket, path))) throw notFound(`file ${path}`)
    await this.record(ctx, 'file.deleted', path, { from: file.uri, reason: `${file.size} bytes` })
  }

  /** Issuing a signed address is itself recorded: who could read or write which file, until when. */
  async recordAddressIssued(ctx: AuditContext, kind: 'download' | 'upload', path: string, detail: { expiresAt: Date; contentType?: string }) {
    await this.record(ctx, kind === 'upload' ? 'file.upload_url_issued' : 'file.download_url_issued', path, {
      to: detail.contentType,
      reason: `valid until ${detail.expiresAt.toISOString()}`,
    })
  }
}
