/**
 * `files upload -r` and `files download -r`: every file of a tree, a few at once, as
 * `gcloud storage rsync` does: a file whose destination has the same size and CRC32C is skipped,
 * one that differs is replaced only with --overwrite, and a file that fails does not stop the
 * others. One progress line for the whole tree; the result is a summary with each file's outcome.
 */
import { mkdir, readdir, stat } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import type { FileEntry, PlatformClient } from './client.js'
import type { Session } from './context.js'
import { downloadObject, localCrc32c, remoteChecksums } from './download.js'
import { CliError, EXIT, explain } from './errors.js'
import { truncate } from './format.js'
import { formatTransfer, type Output } from './output.js'
import { progressLine } from './progress.js'
import { decideSync, needsChecksums, relativeTo, remoteUnder, TREE_CONCURRENCY, type Fingerprint } from './transfer-plan.js'
import { uploadLocalFile, type UploadOptions } from './upload.js'

export type Outcome = 'sent' | 'skipped' | 'failed'

export interface FileOutcome {
  /** The file's path in the bucket. */
  path: string
  /** Its local path. */
  local: string
  size: number
  status: Outcome
  /** Why it failed. */
  error?: string
  /** A download resumed from a partial one. */
  resumed?: boolean
}

export interface TreeSummary {
  source: string
  destination: string
  sent: number
  skipped: number
  failed: number
  /** Bytes moved (the files sent). */
  bytes: number
  seconds: number
  files: FileOutcome[]
}

/** A file of the tree to consider: its two ends, its size, and how to move it. */
interface Job {
  path: string
  local: string
  size: number
  /** The destination's size, when it exists. */
  destination?: Fingerprint
  /** Why the file cannot go where it should (a folder in its place). */
  blocked?: string
}

/** The tree's one progress line: its bytes, its files, and the files moving now. */
class TreeProgress {
  private readonly started = performance.now()
  private drawn = 0
  private finished = 0
  private doneBytes = 0
  private readonly moving = new Map<string, number>()

  constructor(
    private readonly out: Output,
    private readonly totalBytes: number,
    private readonly totalFiles: number,
  ) {}

  start(name: string) {
    this.moving.set(name, 0)
    this.draw(false)
  }

  update(name: string, bytes: number) {
    this.moving.set(name, bytes)
    this.draw(false)
  }

  end(name: string, size: number) {
    this.moving.delete(name)
    this.finished++
    this.doneBytes += size
    this.draw(this.finished === this.totalFiles)
  }

  get seconds() {
    return (performance.now() - this.started) / 1000
  }

  private draw(now: boolean) {
    if (!this.out.live) return
    const t = performance.now()
    if (!now && t - this.drawn < 100) return
    this.drawn = t
    const bytes = this.doneBytes + [...this.moving.values()].reduce((a, b) => a + b, 0)
    const names = [...this.moving.keys()].map((n) => n.slice(n.lastIndexOf('/') + 1)).join(', ')
    const line = `${progressLine(bytes, this.totalBytes, this.seconds)}  ${this.finished}/${this.totalFiles} files${names ? `  ${names}` : ''}`
    // A line wider than the terminal would wrap, and the next redraw could not erase it.
    this.out.status(this.out.style.width ? truncate(line, this.out.style.width - 1) : line)
  }

  done() {
    this.out.clearStatus()
  }
}

/** Runs `work` on each item, `limit` at a time. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  const queue = [...items]
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item)
  }
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker))
}

const asFolder = (prefix: string) => (prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`)

/** The object name in a remote path given as gs://<bucket>/<name>. */
const objectName = (path: string) => path.replace(/^gs:\/\/[^/]*\/?/, '')

/** Every file under `prefix` in the bucket (folders walked one level at a time, as `files ls` lists them). */
export async function listRemoteTree(client: PlatformClient, project: string, prefix: string): Promise<FileEntry[]> {
  const files: FileEntry[] = []
  // The first level as the user named it (the file service refuses gs:// of another bucket), then by object names.
  const folders = [asFolder(prefix)]
  for (let folder = folders.shift(); folder !== undefined; folder = folders.shift()) {
    const { items } = await client.listFiles(project, folder, {})
    for (const entry of items) {
      if (entry.kind === 'folder') folders.push(entry.path)
      else if (entry.path.startsWith(objectName(folder))) files.push(entry)
    }
  }
  return files.sort((a, b) => a.path.localeCompare(b.path))
}

/** Every regular file under `dir` (symbolic links to files followed), with its size. */
export async function listLocalTree(dir: string): Promise<Array<{ file: string; size: number }>> {
  const out: Array<{ file: string; size: number }> = []
  const walk = async (folder: string) => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.isFile() || entry.isSymbolicLink()) {
        const info = await stat(path).catch(() => undefined)
        if (info?.isFile()) out.push({ file: path, size: info.size })
      }
    }
  }
  await walk(dir)
  return out.sort((a, b) => a.file.localeCompare(b.file))
}

const errorText = (error: unknown) => explain(error).message

/**
 * The transfer of one tree: each file decided (decideSync, with checksums read only for a
 * destination of the same size), moved by `move`, its outcome recorded; failures are noted on
 * stderr as they happen.
 */
async function transferTree(
  session: Session,
  jobs: Job[],
  ends: { source: string; destination: string },
  opts: { overwrite: boolean; signal: AbortSignal },
  checksums: (job: Job) => Promise<{ source?: string; destination?: string }>,
  move: (job: Job, replace: boolean, onProgress: (bytes: number) => void) => Promise<{ resumed?: boolean }>,
): Promise<TreeSummary> {
  const progress = new TreeProgress(
    session.out,
    jobs.reduce((n, j) => n + j.size, 0),
    jobs.length,
  )
  const outcomes: FileOutcome[] = []
  try {
    await pool(jobs, TREE_CONCURRENCY, async (job) => {
      if (opts.signal.aborted) return
      progress.start(job.path)
      const outcome: FileOutcome = { path: job.path, local: job.local, size: job.size, status: 'sent' }
      try {
        if (job.blocked) throw new CliError(job.blocked, EXIT.usage)
        let source: Fingerprint = { size: job.size }
        let destination = job.destination
        if (needsChecksums(source, destination)) {
          const sums = await checksums(job)
          source = { ...source, crc32c: sums.source }
          destination = { ...destination!, crc32c: sums.destination }
        }
        const decision = decideSync(source, destination, opts.overwrite)
        if (decision.action === 'skip') outcome.status = 'skipped'
        else if (decision.action === 'refuse') throw new CliError(decision.reason, EXIT.rejected)
        else {
          const got = await move(job, destination !== undefined, (bytes) => progress.update(job.path, bytes))
          if (got.resumed) outcome.resumed = true
        }
      } catch (error) {
        if (opts.signal.aborted) throw error
        outcome.status = 'failed'
        outcome.error = errorText(error)
        session.out.note(`failed: ${job.path}: ${outcome.error}`)
      }
      outcomes.push(outcome)
      progress.end(job.path, job.size)
    })
  } finally {
    progress.done()
  }
  const files = outcomes.sort((a, b) => a.path.localeCompare(b.path))
  const count = (status: Outcome) => files.filter((f) => f.status === status).length
  return {
    ...ends,
    sent: count('sent'),
    skipped: count('skipped'),
    failed: count('failed'),
    bytes: files.filter((f) => f.status === 'sent').reduce((n, f) => n + f.size, 0),
    seconds: progress.seconds,
    files,
  }
}

/** The summary's human view: what moved, what was skipped, what failed and why. */
export function summaryText(verb: 'Uploaded' | 'Downloaded', s: TreeSummary): string {
  const moved = s.sent ? `${s.sent} file${s.sent === 1 ? '' : 's'} (${formatTransfer(s.bytes, s.seconds)})` : `no files (${s.seconds.toFixed(1)}s)`
  const lines = [`${verb} ${moved} from ${s.source} to ${s.destination}; skipped ${s.skipped} identical; ${s.failed} failed`]
  for (const f of s.files.filter((f) => f.status === 'failed')) lines.push(`  failed: ${f.path}: ${f.error}`)
  return lines.join('\n')
}

/** `files download -r <prefix> <dir>`: every file under `prefix` into `dir`, keeping the tree below the prefix. */
export async function downloadTree(
  session: Session,
  client: PlatformClient,
  project: string,
  prefix: string,
  dir: string,
  opts: { overwrite: boolean; signal: AbortSignal },
): Promise<TreeSummary> {
  const entries = await listRemoteTree(client, project, prefix)
  const byPath = new Map(entries.map((e) => [e.path, e]))
  const root = asFolder(objectName(prefix))
  const jobs: Job[] = []
  for (const e of entries) {
    const local = join(dir, ...relativeTo(root, e.path).split('/'))
    const info = await stat(local).catch(() => undefined)
    if (info?.isDirectory()) jobs.push({ path: e.path, local, size: e.size, blocked: `${local} is a folder` })
    else jobs.push({ path: e.path, local, size: e.size, destination: info ? { size: info.size } : undefined })
  }
  return transferTree(
    session,
    jobs,
    { source: prefix, destination: dir },
    opts,
    async (job) => ({
      source: (await remoteChecksums(client, project, byPath.get(job.path)!, opts.signal)).crc32c,
      destination: await localCrc32c(job.local, opts.signal),
    }),
    async (job, replace, onProgress) => {
      await mkdir(dirname(job.local), { recursive: true })
      const got = await downloadObject(client, project, byPath.get(job.path)!, job.local, {
        overwrite: replace,
        onProgress,
        signal: opts.signal,
        note: (text) => session.out.note(`${job.path}: ${text}`),
      })
      return { resumed: got.resumed }
    },
  )
}

/** `files upload -r <dir> <prefix>`: every file under `dir` to `prefix`, keeping the tree below the folder. */
export async function uploadTree(
  session: Session,
  client: PlatformClient,
  project: string,
  dir: string,
  prefix: string,
  opts: UploadOptions & { overwrite: boolean; signal: AbortSignal },
): Promise<TreeSummary> {
  const locals = await listLocalTree(dir)
  const remotes = new Map((await listRemoteTree(client, project, prefix)).map((e) => [e.path, e]))
  const jobs: Job[] = locals.map(({ file, size }) => {
    const path = remoteUnder(objectName(prefix), relative(dir, file).split(sep).join('/'))
    const found = remotes.get(path)
    return { path, local: file, size, destination: found ? { size: found.size } : undefined }
  })
  return transferTree(
    session,
    jobs,
    { source: dir, destination: remoteUnder(prefix, '') },
    opts,
    async (job) => ({
      source: await localCrc32c(job.local, opts.signal),
      destination: (await remoteChecksums(client, project, remotes.get(job.path)!, opts.signal)).crc32c,
    }),
    async (job, replace, onProgress) => {
      await uploadLocalFile(session, job.local, job.path, {
        contentType: opts.contentType,
        overwrite: replace,
        onProgress,
        signal: opts.signal,
        to: { client, project },
      })
      return {}
    },
  )
}
