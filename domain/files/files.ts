import type { AuditContext, AuditInput, AuditWriter } from '../../lib/audit.js'
import type { Db } from '../../lib/db.js'
import { Refused, type Allowed } from '../../lib/decision.js'
import { conflict, notFound } from '../../lib/errors.js'
import { gsUri, StorageError, type LevelEntry, type ObjectStorage, type Page, type StoredObject } from '../../lib/storage.js'
import { frozenRefusal, type CopyObject, type DeleteObject, type FileProject, type MoveObject, type ObjectState } from './decide.js'
import { frozenSamplesNaming } from './frozen.js'

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
 * The files of one project's bucket: the state the rules of ./decide.ts are decided on (`read`),
 * and the storage actions they allow, each recorded in the audit log after the storage has made
 * it (the bucket is not Firestore: the event cannot share its transaction). Listing, reading and
 * download addresses need no decision. Paths are already checked (./paths.ts).
 */
export class ProjectFiles {
  constructor(
    private readonly storage: ObjectStorage,
    private readonly audit: AuditWriter,
    private readonly db: Db,
    private readonly project: FileProject,
  ) {}

  private get bucket() {
    return this.project.bucket_name
  }

  private record(ctx: AuditContext, action: string, path: string, change?: AuditInput['change']) {
    return this.audit.record(ctx, {
      action,
      org_id: this.project.org_id,
      project_id: this.project.id,
      entity: { type: 'file', id: gsUri(this.bucket, path), parent: this.project.id },
      change,
    })
  }

  /** The events of an allowed decision, once what it allowed is done. */
  async recordAll(ctx: AuditContext, events: readonly AuditInput[]): Promise<void> {
    for (const event of events) await this.audit.record(ctx, event)
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

  /** What a decision about `paths` needs: whether each is stored (and its size), and the frozen samples naming it. */
  async read(paths: readonly string[]): Promise<Map<string, ObjectState>> {
    const [stored, frozen] = await Promise.all([Promise.all(paths.map((p) => this.stat(p))), frozenSamplesNaming(this.db, this.project, paths)])
    return new Map(paths.map((path, i) => [path, { exists: stored[i] !== undefined, size: stored[i]?.size, frozenBy: frozen.get(path) ?? [] }]))
  }

  private async copyObject(source: string, destination: string, onlyIfAbsent: boolean): Promise<FileEntry> {
    try {
      return toEntry(this.bucket, { kind: 'object', ...(await this.storage.copy(this.bucket, source, destination, { overwrite: !onlyIfAbsent })) })
    } catch (error) {
      if (!(error instanceof StorageError)) throw error
      if (error.reason === 'not_found') throw notFound(`file ${source}`)
      // Absent when the decision was made, there now: the storage's precondition kept it.
      if (error.reason === 'exists') throw conflict(`destination ${destination} already exists; send "overwrite": true to replace it`)
      throw conflict(`destination ${destination}: ${error.message}`)
    }
  }

  async copy(ctx: AuditContext, allowed: Allowed<CopyObject>): Promise<FileEntry> {
    const { source, destination, onlyIfAbsent } = allowed.changes
    const copied = await this.copyObject(source, destination, onlyIfAbsent)
    await this.recordAll(ctx, allowed.events)
    return copied
  }

  /**
   * Copy, then delete the source. Just before the deletion the source's frozen samples are read
   * again: a copy of a large object takes a while, and an order signed meanwhile keeps its file
   * (409; the copy stays, recorded as one). If the deletion fails, both exist and the copy is
   * what is recorded.
   */
  async move(ctx: AuditContext, allowed: Allowed<MoveObject>): Promise<FileEntry> {
    const { source, destination, onlyIfAbsent } = allowed.changes
    const moved = await this.copyObject(source, destination, onlyIfAbsent)
    const copiedOnly = (reason: string) => this.record(ctx, 'file.copied', destination, { from: gsUri(this.bucket, source), to: moved.uri, reason })
    const frozen = frozenRefusal(source, (await frozenSamplesNaming(this.db, this.project, [source])).get(source) ?? [])
    if (frozen) {
      await copiedOnly('move: the source became a file of a signed order during the copy')
      throw new Refused(frozen)
    }
    try {
      await this.storage.delete(this.bucket, source)
    } catch (error) {
      await copiedOnly('move: deleting the source failed')
      throw error
    }
    await this.recordAll(ctx, allowed.events)
    return moved
  }

  async delete(ctx: AuditContext, allowed: Allowed<DeleteObject>): Promise<void> {
    if (!(await this.storage.delete(this.bucket, allowed.changes.path))) throw notFound(`file ${allowed.changes.path}`)
    await this.recordAll(ctx, allowed.events)
  }

  /** Issuing a download address is itself recorded: who could read which file, until when (an upload address's event comes with its decision). */
  async recordDownloadAddress(ctx: AuditContext, path: string, expiresAt: Date) {
    await this.record(ctx, 'file.download_url_issued', path, { reason: `valid until ${expiresAt.toISOString()}` })
  }
}
