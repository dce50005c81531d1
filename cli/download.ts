/**
 * Large files down in parts, in parallel, resumably (the way gsutil's sliced downloads go): ranged
 * GETs of a few parts at once, each written at its offset into `.<name>.part` beside the
 * destination and checksummed as it arrives; `.<name>.part.json` records the object's version and
 * the complete parts with their CRC32C (checked again by a resumed download, as the bytes are not
 * forced to disk part by part). The whole
 * file's CRC32C comes from the parts' (crc32cCombine) and is compared with the storage's before
 * the file takes its place. A download interrupted in any way (Ctrl-C, a killed process, a broken
 * connection) leaves both files: the next download of the same object fetches only the parts
 * missing, unless the object changed meanwhile (then it starts afresh).
 */
import { randomBytes } from 'node:crypto'
import { link, open, readFile, rename, rm, writeFile, type FileHandle } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { basename, dirname, join } from 'node:path'
import type { FileEntry, PlatformClient } from './client.js'
import { Crc32c, crc32cBase64, crc32cCombine } from './crc32c.js'
import { transferThread } from './transfer-thread.js'
import {
  crcOfFile,
  downloadFile,
  exchange,
  md5Of,
  parseGoogHash,
  StorageHttpError,
  StorageUnreachableError,
  verify,
  type Checksums,
  type TransferOptions,
  type Verified,
} from './transfer.js'
import {
  CONNECTIONS,
  decideResume,
  PARALLEL_THRESHOLD,
  PART_BYTES,
  partLength,
  planParts,
  remainingParts,
  wholeCrc32c,
  type DownloadState,
  type Part,
  type RemoteObject,
} from './transfer-plan.js'

interface Signed {
  url: string
  headers?: Record<string, string>
}

/** The partial file and its state file for a destination: fixed names, so that the next download finds them. */
export const partialFiles = (dest: string) => {
  const part = join(dirname(dest), `.${basename(dest)}.part`)
  return { part, state: `${part}.json` }
}

/** The object changed while it was being downloaded (its version no longer matches the parts already fetched). */
export class ObjectChangedError extends Error {
  constructor(readonly uri: string) {
    super(`${uri} changed during the download`)
    this.name = 'ObjectChangedError'
  }
}

export interface ParallelOptions extends TransferOptions {
  overwrite?: boolean
  /** A note for the person (a partial download abandoned, and why). */
  note?: (text: string) => void
}

export interface ParallelResult {
  bytes: number
  /** Bytes fetched by this command (the rest came from a partial download). */
  fetched: number
  resumed: boolean
  local: Checksums
  remote: Checksums
  verified: Verified
  /** From the first request to the storage (the signed address in hand) to the file in place: what curl would take for the same bytes. */
  seconds: number
}

const header = (res: IncomingMessage, name: string) => {
  const value = res.headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

async function readState(file: string): Promise<DownloadState | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as DownloadState
    return Array.isArray(parsed.parts) ? parsed : undefined
  } catch {
    // None, or unreadable (cut short by a crash): the download starts afresh.
    return undefined
  }
}

/** Writes the state file whole (a temporary file renamed over it): a crash leaves the former state or the new one. */
async function writeState(file: string, state: DownloadState) {
  const tmp = `${file}.${randomBytes(4).toString('hex')}`
  await writeFile(tmp, JSON.stringify(state))
  await rename(tmp, file)
}

/**
 * Downloads the object behind `address()` (asked again for each request, so that a long download
 * outlives one signed address) into `dest`, in parts, resuming a partial download of the same
 * object. `uri` names the object in the state file and in messages.
 */
export async function downloadInParts(
  address: () => Promise<Signed>,
  uri: string,
  dest: string,
  opts: ParallelOptions = {},
): Promise<ParallelResult> {
  // Started first: its start overlaps the first requests.
  const thread = transferThread()
  const partBytes = PART_BYTES
  const files = partialFiles(dest)
  const origin = async () => new URL((await address()).url).origin

  // The first byte: the object's size, version and checksums, before anything is decided.
  const first = await address()
  const started = performance.now()
  const probe = await exchange('GET', first, { range: 'bytes=0-0', 'accept-encoding': 'gzip' }, opts.signal)
  probe.destroy()
  const total = /\/(\d+)$/.exec(header(probe, 'content-range') ?? '')?.[1]
  if (probe.statusCode !== 206 || total === undefined) {
    throw new StorageUnreachableError(await origin(), `the storage did not answer a range request (HTTP ${probe.statusCode}) for ${uri}`)
  }
  const object: RemoteObject = { uri, size: Number(total), etag: header(probe, 'etag'), generation: header(probe, 'x-goog-generation') }
  const remote = parseGoogHash(probe.headers['x-goog-hash'])

  const decision = decideResume(await readState(files.state), object, partBytes)
  const done = decision.resume ? decision.done : new Map<number, number>()
  if (!decision.resume && decision.reason) opts.note?.(`${decision.reason}: downloading it again from the start`)
  const handle: FileHandle = decision.resume ? await open(files.part, 'r+').catch(() => open(files.part, 'w')) : await open(files.part, 'w')
  // A partial file of another size (removed or changed by hand) has nothing to resume from.
  if ((await handle.stat()).size !== object.size) {
    done.clear()
    // Its full size from the start: parts land at their offsets in any order, and the size says the file is ours.
    await handle.truncate(object.size)
  }
  const parts = planParts(object.size, partBytes)
  // The parts an earlier run recorded are read again and checked against their recorded CRC32C:
  // parts are not forced to disk as they complete (a sync per part made 32 waits for the disk per GiB:
  // docs/benchmarks.md), so after a crash of the machine a recorded part may be missing; it is fetched again.
  for (const p of parts.filter((q) => done.has(q.index))) {
    const kept = await crcOfFile(files.part, new Crc32c(), { start: p.start, length: partLength(p), signal: opts.signal })
    if (kept.digest() !== done.get(p.index)) done.delete(p.index)
  }
  const todo = remainingParts(parts, done)
  const state: DownloadState = { ...object, part_bytes: partBytes, parts: [...done] }
  let saving = Promise.resolve()
  const save = () => (saving = saving.then(() => writeState(files.state, { ...state, parts: [...done] })))

  const kept = parts.filter((p) => done.has(p.index)).reduce((n, p) => n + partLength(p), 0)
  const inFlight = new Map<number, number>()
  const report = () => opts.onProgress?.(kept + fetchedDone + [...inFlight.values()].reduce((a, b) => a + b, 0))
  let fetchedDone = 0

  async function fetchPart(p: Part) {
    const headers = { 'accept-encoding': 'gzip', ...(object.etag ? { 'if-match': object.etag } : {}) }
    const onBytes = (bytes: number) => {
      inFlight.set(p.index, bytes)
      report()
    }
    const fetched = await thread
      .fetchRange(await address(), handle.fd, p, { headers, onBytes, signal: opts.signal })
      .catch((error: unknown) => {
        if (error instanceof StorageHttpError && error.status === 412) throw new ObjectChangedError(uri)
        throw error
      })
      .finally(() => inFlight.delete(p.index))
    done.set(p.index, fetched.crc32c)
    fetchedDone += partLength(p)
    report()
    await save()
  }

  try {
    await save()
    const queue = [...todo]
    const worker = async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        await fetchPart(p).catch((error: unknown) => {
          // One failing part stops the others from starting; those running end on their own (or on the signal).
          queue.length = 0
          throw error
        })
      }
    }
    const workers = Array.from({ length: Math.min(CONNECTIONS, queue.length) }, worker)
    const outcomes = await Promise.allSettled(workers)
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
    if (failed) throw failed.reason
    await saving
  } catch (error) {
    await handle.close()
    if (error instanceof ObjectChangedError) await Promise.all([rm(files.part, { force: true }), rm(files.state, { force: true })])
    throw error
  }
  await handle.close()

  const algorithm = remote.crc32c ? 'crc32c' : remote.md5 ? 'md5' : undefined
  const local: Checksums =
    algorithm === 'crc32c'
      ? { crc32c: crc32cBase64(parts.length ? wholeCrc32c(parts, done, crc32cCombine) : 0) }
      : algorithm === 'md5'
        ? { md5: await md5Of(files.part, opts.signal) }
        : {}
  let verified: Verified
  try {
    verified = verify(local, remote)
  } catch (error) {
    // Damaged parts cannot be told apart: the next download starts afresh.
    await Promise.all([rm(files.part, { force: true }), rm(files.state, { force: true })])
    throw error
  }
  if (opts.overwrite) {
    await rename(files.part, dest)
  } else {
    // link() refuses an existing name: a file that appeared at dest during the download is kept.
    await link(files.part, dest)
    await rm(files.part, { force: true })
  }
  await rm(files.state, { force: true })
  const seconds = (performance.now() - started) / 1000
  return { bytes: object.size, fetched: fetchedDone, resumed: decision.resume && kept > 0, local, remote, verified, seconds }
}

/**
 * A source of signed download addresses for one file: the file service is asked again once the
 * address in hand has less than a minute left, so that a long download outlives the 15 minutes of one.
 */
export function addressesOf(sign: () => Promise<Signed & { expires_at: string }>): () => Promise<Signed> {
  let current: Promise<Signed & { expires_at: string }> | undefined
  return async () => {
    const held = current && (await current)
    if (held && Date.parse(held.expires_at) - Date.now() > 60_000) return held
    current = sign()
    return current
  }
}

export interface Downloaded {
  bytes: number
  /** Bytes fetched by this command: less than `bytes` when a partial download was resumed. */
  fetched: number
  resumed: boolean
  /** Fetched in parts, resumably (at least PARALLEL_THRESHOLD bytes). */
  inParts: boolean
  remote: Checksums
  verified: Verified
  /** The transfer itself, from the first request to the storage to the file in place (ParallelResult.seconds). */
  seconds: number
}

/**
 * A file of the project's bucket into `dest`: in parts, resumably, from PARALLEL_THRESHOLD bytes
 * on; in one stream into a temporary file otherwise (its partial file is removed on failure).
 */
export async function downloadObject(
  client: PlatformClient,
  project: string,
  entry: Pick<FileEntry, 'path' | 'uri' | 'size'>,
  dest: string,
  opts: ParallelOptions,
): Promise<Downloaded> {
  if (entry.size >= PARALLEL_THRESHOLD) {
    const got = await downloadInParts(
      addressesOf(() => client.downloadUrl(project, entry.path)),
      entry.uri,
      dest,
      opts,
    )
    return { ...got, inParts: true }
  }
  const signed = await client.downloadUrl(project, entry.path)
  const started = performance.now()
  const got = await downloadFile(signed, dest, opts)
  const seconds = (performance.now() - started) / 1000
  return { bytes: got.bytes, fetched: got.bytes, resumed: false, inParts: false, remote: got.remote, verified: got.verified, seconds }
}

/** The storage's checksums of a file, from the headers of a read of its first byte (nothing else is fetched). */
export async function remoteChecksums(
  client: PlatformClient,
  project: string,
  entry: Pick<FileEntry, 'path' | 'size'>,
  signal?: AbortSignal,
): Promise<Checksums> {
  // An empty object has no first byte to ask for (416); its CRC32C is that of nothing.
  if (entry.size === 0) return { crc32c: crc32cBase64(0) }
  const res = await exchange('GET', await client.downloadUrl(project, entry.path), { range: 'bytes=0-0', 'accept-encoding': 'gzip' }, signal)
  res.destroy()
  return parseGoogHash(res.headers['x-goog-hash'])
}

/** The CRC32C of a local file, as x-goog-hash gives it. */
export async function localCrc32c(file: string, signal?: AbortSignal): Promise<string> {
  return (await crcOfFile(file, new Crc32c(), { signal })).base64()
}
