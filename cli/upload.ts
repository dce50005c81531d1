import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { basename, join, resolve } from 'node:path'
import type { PlatformClient } from './client.js'
import type { Session } from './context.js'
import { Crc32c } from './crc32c.js'
import { CliError, EXIT, usageError } from './errors.js'
import { contentTypeOf, interruptible, intoFolder } from './files.js'
import { formatBytes, formatTransfer } from './output.js'
import { Progress } from './progress.js'
import { hashThread } from './transfer-thread.js'
import { chunkBytesOf, isResumable, nextChunk, sessionKey, type UploadIdentity } from './resumable.js'
import {
  cancelSession,
  ChecksumMismatchError,
  crcOfFile,
  putChunk,
  sessionStatus,
  startSession,
  StorageHttpError,
  StorageUnreachableError,
  uploadFile,
  verify,
  type Checksums,
  type SessionState,
  type Verified,
} from './transfer.js'

export interface UploadOptions {
  contentType?: string
  overwrite?: boolean
  /** Told the bytes stored so far, instead of a progress bar of this file's own (upload -r draws one for all). */
  onProgress?: (bytes: number) => void
  /** Stops the transfer (upload -r's one Ctrl-C for every file); without it, Ctrl-C and SIGTERM stop this upload with exit 130. */
  signal?: AbortSignal
  /** The client and project to upload with (upload -r resolves them once for all its files); default: the session's. */
  to?: { client: PlatformClient; project: string }
}

/** Runs a transfer with the caller's signal, or, alone, with one that Ctrl-C and SIGTERM fire (exit 130, `stopped`). */
const stoppable = <T>(signal: AbortSignal | undefined, stopped: string | (() => string), run: (signal: AbortSignal) => Promise<T>) =>
  signal ? run(signal) : interruptible(stopped, run)

/** What `files upload` answers (--json): the file as the bucket lists it, and how it was sent and checked. */
export interface Uploaded {
  path: string
  uri?: string
  size: number
  local: string
  crc32c: string | null
  md5: string | null
  verified: Verified
  /** The transfer: from the first request to the storage to its last answer (a large file's MD5, when it finishes after that, is waited for beyond it). */
  seconds: number
  /** Sent through a resumable session in chunks (files above 8 MiB), or in one PUT. */
  resumable: boolean
  /** The bytes an earlier, interrupted run had already stored, which this one did not send again. */
  resumed_from: number
}

/** What the transfer itself answers, whichever way it went. */
interface Sent {
  local: Checksums
  remote: Checksums
  storedSize?: number
  resumedFrom: number
  /** From the first request to the storage (the signed address in hand) to its last answer: what curl would take for the same bytes. */
  seconds: number
}

/** A session saved under the config folder, so that another run can take it up. */
interface SavedSession {
  session_uri: string
  local: string
  remote: string
  size: number
  started_at: string
}

/**
 * The resumable sessions of uploads in progress, one small file each under <config>/uploads/,
 * named by sessionKey. A session URI lets anyone holding it write the object for a week: only the
 * user reads them (0600), as the credentials.
 */
class SavedSessions {
  private readonly dir: string
  constructor(configDir: string) {
    this.dir = join(configDir, 'uploads')
  }
  private file = (key: string) => join(this.dir, `${key}.json`)
  read(key: string): SavedSession | undefined {
    try {
      const saved = JSON.parse(readFileSync(this.file(key), 'utf8')) as Partial<SavedSession>
      return typeof saved.session_uri === 'string' ? (saved as SavedSession) : undefined
    } catch {
      // none, or not readable: a new session
      return undefined
    }
  }
  save(key: string, saved: SavedSession) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const tmp = `${this.file(key)}.${randomUUID()}`
    writeFileSync(tmp, JSON.stringify(saved, null, 2) + '\n', { mode: 0o600 })
    renameSync(tmp, this.file(key))
  }
  remove(key: string) {
    rmSync(this.file(key), { force: true })
  }
  /** The saved sessions of earlier versions of a file to the same place (it changed since), and those over a week old: no run can take them up. */
  stale(local: string, remote: string, now: Date): Array<{ key: string; saved: SavedSession }> {
    let names: string[]
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'))
    } catch {
      return []
    }
    const weekAgo = now.getTime() - 7 * 24 * 3600 * 1000
    return names.flatMap((name) => {
      const key = name.slice(0, -'.json'.length)
      const saved = this.read(key)
      if (!saved) return []
      return (saved.local === local && saved.remote === remote) || Date.parse(saved.started_at) < weekAgo ? [{ key, saved }] : []
    })
  }
}

/** The statuses of a session that cannot be taken up again: unknown or expired (404), cancelled or failed (410). */
const sessionGone = (error: unknown) => error instanceof StorageHttpError && (error.status === 404 || error.status === 410)

/**
 * One local file into the project's bucket: a signed address from the file service, the bytes,
 * the checksum compared with the storage's. `platform files upload` and, per file, `upload -r`.
 *
 * A file of at most 8 MiB goes in one PUT. A larger one goes through a Cloud Storage resumable
 * session, the rest of the file in one request (or chunks: cli/resumable.ts), its URI saved under the config folder: a run
 * that stops (Ctrl-C, SIGTERM, a killed process, a network cut) leaves the session, and the next
 * upload of the same unchanged file to the same place asks the session what it holds and sends
 * only the rest. The CRC32C is of the whole file either way.
 */
export async function uploadLocalFile(session: Session, local: string, remoteArg: string, opts: UploadOptions): Promise<Uploaded> {
  const info = await stat(local).catch((error: Error) => {
    throw usageError(`cannot read ${local}: ${error.message}`)
  })
  if (!info.isFile()) throw usageError(`${local} is not a file`)
  const remote = intoFolder(remoteArg, basename(local))
  const client = opts.to?.client ?? session.client()
  const project = opts.to?.project ?? (await session.projectId(client))
  const contentType = opts.contentType ?? contentTypeOf(basename(local))
  const progress = opts.onProgress ? undefined : new Progress(session.out, info.size)
  const onProgress = opts.onProgress ?? progress!.update
  const resumable = isResumable(info.size)
  const withMd5 = md5Wanted(session.cli.env.uploadMd5, { resumable, cores: availableParallelism() })
  if (typeof withMd5 !== 'boolean') throw usageError(withMd5.error)
  // A large file's MD5 is computed in the hash thread while it is sent, and compared with the
  // storage's as its CRC32C is (Cloud Storage keeps an MD5 of an object sent through one session).
  const hashing = new AbortController()
  const md5 = resumable && withMd5 ? hashThread().md5Of(resolve(local), hashing.signal) : undefined
  md5?.catch(() => undefined)
  let sent: Sent
  try {
    if (resumable) {
      const identity = {
        local: resolve(local),
        size: info.size,
        mtimeMs: info.mtimeMs,
        filesUrl: await session.baseUrl('files'),
        project,
        remote,
        contentType,
      }
      sent = await resumableUpload(session, client, identity, { overwrite: Boolean(opts.overwrite), onProgress, signal: opts.signal })
    } else {
      const signed = await client.uploadUrl(project, { path: remote, content_type: contentType, overwrite: Boolean(opts.overwrite) })
      const started = performance.now()
      sent = {
        ...(await stoppable(opts.signal, `upload of ${local} interrupted: nothing was stored at ${remote}`, (signal) =>
          uploadFile(signed, local, info.size, { onProgress, signal }),
        )),
        resumedFrom: 0,
        seconds: (performance.now() - started) / 1000,
      }
    }
  } catch (error) {
    hashing.abort()
    throw error
  } finally {
    progress?.done()
  }
  const { seconds } = sent
  let verified
  try {
    if (sent.storedSize !== undefined && sent.storedSize !== info.size)
      throw new ChecksumMismatchError('size', `${info.size} bytes`, `${sent.storedSize} bytes`)
    // The MD5 may still be under way when the last byte is stored (where the CPU had none to spare
    // during the transfer): it is waited for here, after the transfer's time.
    let mine = sent.local
    if (sent.remote.md5 && (withMd5 || !sent.remote.crc32c)) {
      // Without the MD5 by choice, it is computed all the same for a storage that gives no CRC32C (a second read).
      mine = { ...mine, md5: md5 ? await md5 : (sent.local.md5 ?? (await hashThread().md5Of(resolve(local)))) }
    } else {
      mine = { crc32c: mine.crc32c }
    }
    verified = verify(mine, sent.remote)
  } catch (error) {
    if (!(error instanceof ChecksumMismatchError)) throw error
    throw new CliError(
      `checksum mismatch after uploading ${local} to ${remote}: ${error.message}. The uploaded file was left as it is: ` +
        `upload it again with --overwrite, or delete it (platform files rm ${remote})`,
      EXIT.checksum,
    )
  } finally {
    // A storage that answered no MD5 leaves nothing to compare it with.
    hashing.abort()
  }
  const entry = (await client.statFile(project, remote)) ?? { path: remote, size: info.size }
  return {
    ...entry,
    local: resolve(local),
    crc32c: sent.remote.crc32c ?? null,
    md5: sent.remote.md5 ?? null,
    verified,
    seconds,
    resumable,
    resumed_from: sent.resumedFrom,
  }
}

/**
 * Whether an upload's MD5 is computed and compared with the storage's (PLATFORM_UPLOAD_MD5: auto,
 * the default, on or off), for a file sent through a resumable session or in one PUT, on a
 * machine of `cores` cores; else why the setting is not understood. Cloud Storage gives every
 * object a CRC32C, always compared (the CPU's instruction: 0.13 s a GiB), and one sent in one PUT
 * or one session an MD5 too, which costs a core 1.3 s a GiB. `auto` compares it where it is cheap:
 * a file of at most 8 MiB (hashed in the same pass, milliseconds), and a larger one when the hash
 * thread has a core to spare. On two cores it took CPU from the transfer itself (a 1 GiB upload
 * to the local suite at 0.73 × curl's speed with it, 0.87 × without: docs/benchmarks.md), so
 * there `auto` leaves it out for large files, as gcloud's check_hashes leaves out a check that
 * would be slow. `on` compares it for every file on any machine, `off` for none.
 */
export function md5Wanted(setting: string | undefined, upload: { resumable: boolean; cores: number }): boolean | { error: string } {
  const value = setting?.trim().toLowerCase()
  if (value === undefined || value === 'auto') return !upload.resumable || upload.cores > 2
  if (value === 'on') return true
  if (value === 'off') return false
  return { error: `PLATFORM_UPLOAD_MD5 must be auto, on or off, not ${JSON.stringify(setting)}` }
}

/** The line `files upload` prints for a person. */
export function uploadedLine(local: string, up: Uploaded): string {
  const check = up.verified === 'none' ? 'not verified: the storage answered no checksum' : `${up.verified} verified`
  const resumed = up.resumed_from > 0 ? `, resumed with ${formatBytes(up.resumed_from)} already stored` : ''
  return `Uploaded ${local} to ${up.uri ?? up.path}: ${formatTransfer(up.size - up.resumed_from, up.seconds)}${resumed}, ${check}`
}

/**
 * The file through a resumable session: the saved one if the storage still holds it, else a new
 * one started from a signed POST address; then chunk after chunk from what the session holds.
 */
async function resumableUpload(
  session: Session,
  client: PlatformClient,
  id: UploadIdentity,
  { overwrite, onProgress, signal: given }: { overwrite: boolean; onProgress: (bytes: number) => void; signal?: AbortSignal },
): Promise<Sent> {
  const chunkBytes = chunkBytesOf(session.cli.env.uploadChunkMib)
  if (typeof chunkBytes !== 'number') throw usageError(chunkBytes.error)
  const saved = new SavedSessions(session.cli.settings.dir)
  const key = sessionKey(id)
  const { local, size, remote } = id
  let stored = 0
  const stopped = () =>
    `upload of ${local} interrupted: ${formatBytes(stored)} of ${formatBytes(size)} are stored in its resumable session; ` +
    'run the same command again to send the rest'
  return stoppable(given, stopped, async (signal) => {
    let uri: string | undefined
    let state: SessionState = { state: 'incomplete', stored: 0 }
    let started = performance.now()
    const previous = saved.read(key)
    if (previous) {
      try {
        state = await sessionStatus(previous.session_uri, size, signal)
        uri = previous.session_uri
      } catch (error) {
        if (!sessionGone(error)) throw error
        const { status, code } = error as StorageHttpError
        session.out.note(
          `The resumable upload session of ${local} started ${previous.started_at} ${status === 404 ? 'expired' : 'was refused'} (${status} ${code}): starting afresh.`,
        )
        saved.remove(key)
      }
    }
    if (!uri) {
      // A session of an earlier version of the file holds bytes the storage keeps for a week: cancelled, best effort.
      for (const old of saved.stale(local, remote, new Date())) {
        await cancelSession(old.saved.session_uri, signal).catch(() => undefined)
        saved.remove(old.key)
      }
      const signed = await client.uploadUrl(id.project, { path: remote, content_type: id.contentType, overwrite, resumable: true })
      started = performance.now()
      uri = await startSession(signed, signal)
      saved.save(key, { session_uri: uri, local, remote, size, started_at: new Date().toISOString() })
    }
    const resumedFrom = state.state === 'incomplete' ? state.stored : size
    // The CRC32C of the whole file, fed in order: the bytes before the first chunk this run sends are read for it alone.
    let crc = new Crc32c()
    let crcAt = 0
    const crcUpTo = async (bytes: number) => {
      if (crcAt === bytes) return
      crc = new Crc32c()
      await crcOfFile(local, crc, { length: bytes, signal })
      crcAt = bytes
    }
    let stalled = 0
    try {
      while (state.state === 'incomplete') {
        stored = state.stored
        onProgress(stored)
        const chunk = nextChunk(stored, size, chunkBytes)
        if (!chunk) {
          // Every byte is there but the session was not told the total: a status query with it ends the upload.
          state = await sessionStatus(uri, size, signal)
          if (state.state === 'incomplete')
            throw new StorageUnreachableError(new URL(uri).origin, 'the storage holds every byte but does not complete the upload')
          break
        }
        await crcUpTo(chunk.first)
        state = await putChunk(uri, local, chunk, size, { crc, signal, onBytes: (n) => onProgress(chunk.first + n) })
        crcAt = chunk.last + 1
        if (state.state === 'incomplete' && state.stored <= stored && ++stalled >= 3) {
          throw new StorageUnreachableError(new URL(uri).origin, `the storage kept none of the last chunks sent (it holds ${state.stored} bytes)`)
        }
      }
    } catch (error) {
      // A session that is gone cannot be taken up again; a network failure leaves it for the next run.
      if (sessionGone(error) || (error instanceof StorageHttpError && error.status === 412)) saved.remove(key)
      if (error instanceof StorageUnreachableError) {
        throw new CliError(
          `${error.message}; ${formatBytes(stored)} of ${formatBytes(size)} are stored in its resumable session: run the same command again to send the rest`,
          EXIT.unavailable,
        )
      }
      throw error
    }
    saved.remove(key)
    stored = size
    onProgress(size)
    const seconds = (performance.now() - started) / 1000
    await crcUpTo(size)
    return { local: { crc32c: crc.base64() }, remote: state.remote, storedSize: state.storedSize, resumedFrom, seconds }
  })
}
