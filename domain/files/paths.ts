import { badRequest } from '../../lib/errors.js'

/**
 * The rules for file paths (DOMAIN.md, Files): a path is an object name inside the project's
 * bucket, given bare (`fastq/P1_R1.fastq.gz`) or as a gs:// URI of that same bucket
 * (`gs://<bucket>/fastq/P1_R1.fastq.gz`), never of another bucket. Refused, with a 400 naming the
 * field: another bucket or another scheme, a leading '/', a '..' or '.' segment, an empty
 * segment ('a//b'), control characters, names over 1,024 bytes of UTF-8 (Cloud Storage's
 * limit), and a segment over 255 bytes. Pure functions: the same rules for every operation.
 */
export const MAX_OBJECT_NAME_BYTES = 1024
/**
 * Cloud Storage itself takes a longer segment, but the local suite's buckets are folders, and the
 * disks pipelines and `platform files download` copy objects to, hold names of at most 255 bytes
 * (NAME_MAX): a name no disk can hold is refused here, with the limit named, for every operation.
 */
export const MAX_SEGMENT_BYTES = 255

export type PathCheck = { ok: true; path: string } | { ok: false; reason: string }

// Finding control characters is the point of this pattern.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//

function check(input: string, bucket: string, kind: 'object' | 'folder'): PathCheck {
  let path = input
  if (SCHEME.test(path)) {
    const m = /^gs:\/\/([^/]*)(?:\/(.*))?$/s.exec(path)
    if (!m) return { ok: false, reason: `must be an object name in the project's bucket, or gs://${bucket}/…` }
    if (m[1] !== bucket) return { ok: false, reason: `is in bucket '${m[1]}', outside the project's bucket '${bucket}'` }
    path = m[2] ?? ''
  }
  if (CONTROL.test(path)) return { ok: false, reason: 'must not contain control characters' }
  if (path.startsWith('/')) return { ok: false, reason: "must not start with '/': object names are relative to the bucket" }
  if (Buffer.byteLength(path, 'utf8') > MAX_OBJECT_NAME_BYTES) return { ok: false, reason: `must be at most ${MAX_OBJECT_NAME_BYTES} bytes of UTF-8` }
  if (kind === 'object' && !path) return { ok: false, reason: 'must name an object' }
  if (kind === 'object' && path.endsWith('/')) return { ok: false, reason: "names a folder (ends in '/'), not an object" }
  const segments = (path.endsWith('/') ? path.slice(0, -1) : path).split('/')
  if (path) {
    if (segments.includes('..')) return { ok: false, reason: "must not contain '..'" }
    if (segments.includes('.')) return { ok: false, reason: "must not contain '.' segments" }
    if (segments.includes('')) return { ok: false, reason: "must not contain an empty segment ('//')" }
    const longest = Math.max(...segments.map((s) => Buffer.byteLength(s, 'utf8')))
    if (longest > MAX_SEGMENT_BYTES) {
      return { ok: false, reason: `has a segment of ${longest} bytes: each segment between '/' may be at most ${MAX_SEGMENT_BYTES} bytes of UTF-8` }
    }
  }
  if (kind === 'folder' && path && !path.endsWith('/')) path += '/'
  return { ok: true, path }
}

/** An object name in the bucket, from a bare name or a gs:// URI of the bucket. */
export const checkObjectPath = (input: string, bucket: string) => check(input, bucket, 'object')
/** A folder prefix in the bucket: '' for the top, else ending in '/' (added when missing). */
export const checkFolderPath = (input: string, bucket: string) => check(input, bucket, 'folder')

/** The object name, or a 400 naming `field`. */
export function objectPath(field: string, input: string, bucket: string): string {
  const r = checkObjectPath(input, bucket)
  if (!r.ok) throw badRequest(`${field}: ${r.reason}`)
  return r.path
}

export function folderPath(field: string, input: string, bucket: string): string {
  const r = checkFolderPath(input, bucket)
  if (!r.ok) throw badRequest(`${field}: ${r.reason}`)
  return r.path
}
