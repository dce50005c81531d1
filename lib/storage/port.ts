import type { Readable } from 'node:stream'
import { lookup } from 'mime-types'

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
  /** The object's version: Cloud Storage's generation, or locally its modification time and size. */
  generation?: string
}

/** One entry of a one-level listing: an object, or a folder (a prefix ending in '/' that has objects under it). */
export type LevelEntry = ({ kind: 'object' } & StoredObject) | { kind: 'folder'; path: string }

export interface ListOptions {
  pageSize?: number
  pageToken?: string
}

export interface Page<T> {
  items: T[]
  nextPageToken?: string
}

/** Why a storage operation did not happen, for the caller to answer with the right status. */
export class StorageError extends Error {
  override name = 'StorageError'
  constructor(
    /** 'precondition': the object is not at the generation the request names (0: it exists). */
    readonly reason: 'not_found' | 'exists' | 'conflict' | 'precondition',
    message: string,
  ) {
    super(message)
  }
}

export interface ObjectStorage {
  /** Objects whose names start with `prefix`, at any depth, in name order, a page at a time. */
  list(bucket: string, prefix: string, opts?: ListOptions): Promise<Page<StoredObject>>
  /**
   * One level under `prefix` (which ends in '/', or is '' for the bucket's top), like `gsutil ls`:
   * the objects directly in it and its sub-folders, in name order, a page at a time.
   */
  listLevel(bucket: string, prefix: string, opts?: ListOptions): Promise<Page<LevelEntry>>
  /** The object's metadata, or undefined when there is no such object. */
  stat(bucket: string, path: string): Promise<StoredObject | undefined>
  write(bucket: string, path: string, data: string | Uint8Array, contentType?: string): Promise<void>
  /** The object's bytes, or undefined when there is no such object. */
  read(bucket: string, path: string): Promise<Buffer | undefined>
  /**
   * The object's bytes as a stream, read as they are consumed (a VCF of any size in bounded memory),
   * or undefined when there is no such object. With `generation`, that version of the object
   * (Cloud Storage's generation; locally, the modification time and size `stat` gave): a version
   * that is no longer there reads as undefined.
   */
  readStream(bucket: string, path: string, opts?: { generation?: string }): Promise<Readable | undefined>
  /** Streams bytes into an object; nothing is visible under its name until the stream has ended well. */
  upload(bucket: string, path: string, source: Readable, contentType?: string): Promise<StoredObject>
  /**
   * Copies an object inside its bucket, metadata included. StorageError 'not_found' without the
   * source; 'exists' when the destination exists and `overwrite` is false (checked atomically
   * where the backend can); 'conflict' when the destination cannot be an object (a folder's name).
   */
  copy(bucket: string, source: string, destination: string, opts: { overwrite: boolean }): Promise<StoredObject>
  /** Deletes an object; false when there was none. */
  delete(bucket: string, path: string): Promise<boolean>
}

/** A Cloud Storage bucket name (3–63 characters, or up to 222 with dots). */
export const BUCKET_RE = /^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$/
const GS_RE = /^gs:\/\/([a-z0-9][a-z0-9._-]{1,221}[a-z0-9])(?:\/(.*))?$/s

export function parseGsUri(uri: string): { bucket: string; path: string } {
  const m = GS_RE.exec(uri)
  if (!m) throw new Error(`not a gs:// URI: ${uri}`)
  return { bucket: m[1]!, path: m[2] ?? '' }
}

export const gsUri = (bucket: string, path: string) => `gs://${bucket}/${path}`

/** The content type of an object that was stored without one: from its name (mime-types), else octet-stream. */
export function contentTypeFor(path: string): string {
  return lookup(path) || 'application/octet-stream'
}
