/**
 * The rules of a resumable upload (Cloud Storage's XML API sessions), as pure functions: which
 * files go through a session, how a file is cut into chunks, what a session's `308 Resume
 * Incomplete` says is stored, and which saved session belongs to a file. cli/upload.ts does the
 * I/O and asks these.
 */
import { createHash } from 'node:crypto'

/** Files above this go through a resumable session in chunks; at most this, one PUT (gsutil's resumable threshold, 8 MiB). */
export const RESUMABLE_THRESHOLD = 8 * 1024 * 1024

/** Cloud Storage wants every chunk but the last to be a whole multiple of 256 KiB. */
export const CHUNK_GRANULARITY = 256 * 1024

/**
 * How a session's bytes are sent. By default the rest of the file goes in one request, as Google
 * recommends for resumable uploads ("upload the data in a single chunk" unless memory or an
 * intermediary's request size forces chunks): an interrupted request still leaves what arrived
 * in the session (Cloud Storage and the local server keep it in whole multiples of 256 KiB), and
 * the next run sends the rest. Chunks each end in a round trip during which nothing is sent: on a
 * 1 GiB file, 64 MiB chunks reached 0.63× curl's speed, one request 1.04× (docs/benchmarks.md).
 * PLATFORM_UPLOAD_CHUNK_MIB cuts the upload into chunks of that size instead, as gcloud's
 * storage/upload_chunk_size does (for a proxy that limits a request's size).
 */
export const WHOLE_FILE = Number.POSITIVE_INFINITY

/** The chunk size PLATFORM_UPLOAD_CHUNK_MIB asks for (whole MiB, 1 to 1024), WHOLE_FILE without it; else why not. */
export function chunkBytesOf(setting: string | undefined): number | { error: string } {
  if (setting === undefined) return WHOLE_FILE
  const mib = /^\d+$/.test(setting.trim()) ? Number(setting) : NaN
  if (!(mib >= 1 && mib <= 1024))
    return { error: `PLATFORM_UPLOAD_CHUNK_MIB must be a whole number of MiB from 1 to 1024, not ${JSON.stringify(setting)}` }
  return mib * 1024 * 1024
}

/** Whether a file of `size` bytes is uploaded through a resumable session. */
export const isResumable = (size: number) => size > RESUMABLE_THRESHOLD

/**
 * How many bytes a session holds, from the `Range` of its 308 answer (`bytes=0-n`: n + 1 bytes;
 * absent: none). Anything else is not a Cloud Storage answer: undefined.
 */
export function storedFromRange(header: string | undefined): number | undefined {
  if (header === undefined) return 0
  const m = /^bytes=0-(\d+)$/.exec(header.trim())
  return m ? Number(m[1]) + 1 : undefined
}

/** One chunk: its first and last byte (inclusive), and whether it completes the object. */
export interface Chunk {
  first: number
  last: number
  final: boolean
}

/**
 * The chunk to send when the session holds `stored` of `size` bytes: at most `chunkBytes` (a
 * multiple of CHUNK_GRANULARITY, or WHOLE_FILE: all that remains), the last one whatever remains;
 * undefined when nothing remains.
 * An empty file is one final chunk with nothing in it, sent as a status query with its total.
 */
export function nextChunk(stored: number, size: number, chunkBytes = WHOLE_FILE): Chunk | undefined {
  if (chunkBytes !== WHOLE_FILE && (chunkBytes <= 0 || chunkBytes % CHUNK_GRANULARITY !== 0))
    throw new Error(`a chunk is a positive multiple of ${CHUNK_GRANULARITY} bytes, not ${chunkBytes}`)
  if (stored > size || stored < 0) throw new Error(`the session holds ${stored} bytes of a ${size}-byte file`)
  if (stored === size && size > 0) return undefined
  const last = Math.min(stored + chunkBytes, size) - 1
  return { first: stored, last, final: last + 1 === size }
}

/** Every chunk from `stored` to the end, in order (what an uninterrupted upload sends). */
export function chunkPlan(stored: number, size: number, chunkBytes = WHOLE_FILE): Chunk[] {
  const plan: Chunk[] = []
  for (let c = nextChunk(stored, size, chunkBytes); c; c = c.final ? undefined : nextChunk(c.last + 1, size, chunkBytes)) plan.push(c)
  return plan
}

/** What identifies an upload whose session can be taken up again: the same file, unchanged, to the same place. */
export interface UploadIdentity {
  /** The absolute path of the local file. */
  local: string
  size: number
  mtimeMs: number
  /** The file service's address and the project: another platform's or project's bucket is another place. */
  filesUrl: string
  project: string
  /** The remote path as resolved (fastq/S1_R1.fastq.gz or gs://…). */
  remote: string
  contentType: string
}

/** The name of a saved session's file: a hash of its identity, so that any change means another session. */
export function sessionKey(id: UploadIdentity): string {
  const fields = [id.local, id.size, id.mtimeMs, id.filesUrl, id.project, id.remote, id.contentType]
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 32)
}
