/**
 * The rules of parallel, resumable downloads and of directory transfers, as pure functions: which
 * parts a file is fetched in, which of them a partial download still lacks, whether a partial
 * download may be resumed, and whether a file of a tree is sent, skipped or refused. The I/O
 * (cli/download.ts, cli/tree.ts) only reads, calls these and writes.
 */

/**
 * Files of at least this size are fetched in parts, in parallel, resumably. Below it a single
 * stream already runs at the link's speed within a second or two on a good connection, and a
 * restart costs less than a state file: gsutil's sliced downloads start at 150 MiB, gcloud storage's
 * parallel ones likewise; 64 MiB brings the gain (and the resume) to the FASTQ of a panel too.
 */
export const PARALLEL_THRESHOLD = 64 * 1024 * 1024

/**
 * The size of a part: large enough that a request's round trip is a small cost beside it, small
 * enough that an interruption loses little (at most one part per connection is fetched again).
 */
export const PART_BYTES = 32 * 1024 * 1024

/** Connections at once for one file: gsutil's default for a sliced download. */
export const CONNECTIONS = 4

/** Files of a tree transferred at once (`-r`). */
export const TREE_CONCURRENCY = 4

/** A byte range of the object, `end` included (as in `Range: bytes=start-end`). */
export interface Part {
  index: number
  start: number
  end: number
}

export const partLength = (p: Part) => p.end - p.start + 1

/** The parts of an object of `size` bytes, in order, each `partBytes` long but the last. */
export function planParts(size: number, partBytes = PART_BYTES): Part[] {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size ${size} is not a byte count`)
  if (!Number.isSafeInteger(partBytes) || partBytes <= 0) throw new RangeError(`part size ${partBytes} is not positive`)
  const parts: Part[] = []
  for (let start = 0, index = 0; start < size; start += partBytes, index++) parts.push({ index, start, end: Math.min(size, start + partBytes) - 1 })
  return parts
}

/** The parts not yet complete (`done` maps a complete part's index to its CRC32C). */
export const remainingParts = (parts: Part[], done: ReadonlyMap<number, number>): Part[] => parts.filter((p) => !done.has(p.index))

/** The object as its first answer describes it: what a partial download must still match. */
export interface RemoteObject {
  uri: string
  size: number
  /** The ETag (Cloud Storage: the MD5 in hex, or a generation-bound value for a composite object). */
  etag?: string
  /** x-goog-generation, where the storage sends it. */
  generation?: string
}

/** What is kept beside a partial download (`<file>.part.json`). */
export interface DownloadState extends RemoteObject {
  part_bytes: number
  /** Complete parts: their index and CRC32C. */
  parts: Array<[number, number]>
}

export type ResumeDecision = { resume: true; done: Map<number, number> } | { resume: false; reason?: string }

/**
 * Whether a partial download (its state, if one was found) may be continued for `object`: only
 * when it is of the same object at the same version (generation and ETag), size and part size.
 * `reason` says why a partial download that exists is abandoned.
 */
export function decideResume(state: DownloadState | undefined, object: RemoteObject, partBytes = PART_BYTES): ResumeDecision {
  if (!state) return { resume: false }
  if (state.uri !== object.uri) return { resume: false, reason: `the partial download is of ${state.uri}` }
  if (!object.etag && !object.generation) return { resume: false, reason: 'the storage names no version of the file to compare with' }
  if (state.generation !== object.generation || state.etag !== object.etag || state.size !== object.size) {
    return { resume: false, reason: `${object.uri} changed since the partial download` }
  }
  if (state.part_bytes !== partBytes) return { resume: false, reason: 'the partial download was made in parts of another size' }
  const count = planParts(object.size, partBytes).length
  const done = new Map(state.parts.filter(([index]) => Number.isInteger(index) && index >= 0 && index < count))
  return { resume: true, done }
}

/** The CRC32C of the whole object from its parts' (combined in order). */
export function wholeCrc32c(parts: Part[], done: ReadonlyMap<number, number>, combine: (a: number, b: number, lengthB: number) => number): number {
  let crc = 0
  for (const p of parts) {
    const partCrc = done.get(p.index)
    if (partCrc === undefined) throw new Error(`part ${p.index} is missing`)
    crc = p.index === 0 ? partCrc : combine(crc, partCrc, partLength(p))
  }
  return crc
}

/** A file's size and, where known, CRC32C (base64, as x-goog-hash gives it). */
export interface Fingerprint {
  size: number
  crc32c?: string
}

export type SyncDecision = { action: 'send' } | { action: 'skip' } | { action: 'refuse'; reason: string }

/**
 * Whether the checksums must be read to decide: only when the destination exists with the same
 * size (a different size already says the files differ), as `gcloud storage rsync` does.
 */
export const needsChecksums = (source: Fingerprint, destination: Fingerprint | undefined) =>
  destination !== undefined && destination.size === source.size

/**
 * What a tree transfer does with one file: send it when the destination is absent; skip it when
 * the destination has the same size and CRC32C; otherwise replace it only with `--overwrite`. A
 * checksum that is unknown on either side never proves two files identical.
 */
export function decideSync(source: Fingerprint, destination: Fingerprint | undefined, overwrite: boolean): SyncDecision {
  if (!destination) return { action: 'send' }
  const identical = destination.size === source.size && source.crc32c !== undefined && source.crc32c === destination.crc32c
  if (identical) return { action: 'skip' }
  if (overwrite) return { action: 'send' }
  return { action: 'refuse', reason: 'exists and differs: pass --overwrite to replace it' }
}

/**
 * Where each file of a tree goes: the path below the source's root, joined to the destination's
 * root with '/' (the caller turns it into a local path). A root given without its trailing '/'
 * is a folder all the same.
 */
export function relativeTo(root: string, path: string): string {
  const prefix = root === '' || root.endsWith('/') ? root : `${root}/`
  if (!path.startsWith(prefix)) throw new Error(`${path} is not under ${prefix}`)
  return path.slice(prefix.length)
}

/** The remote path of a local file of an uploaded tree: under `prefix`, a folder. */
export const remoteUnder = (prefix: string, relative: string) => (prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`) + relative
