/** What the `files` commands share: remote paths, content types, and Ctrl-C during a transfer. */
import { AbortedError } from './client.js'
import { CliError, EXIT, usageError } from './errors.js'

/** The last segment of a remote path (`fastq/S1_R1.fastq.gz`, `gs://bucket/fastq/S1_R1.fastq.gz`). */
export function remoteBasename(remote: string): string {
  const path = remote.replace(/^gs:\/\/[^/]*\/?/, '')
  if (!path || path.endsWith('/')) throw usageError(`${remote} names a folder, not a file`)
  return path.slice(path.lastIndexOf('/') + 1)
}

/** A destination that ends in '/' (or is a bucket's top) is a folder: the file keeps its name in it. */
export function intoFolder(destination: string, name: string): string {
  return destination.endsWith('/') ? destination + name : destination
}

/**
 * The Content-Type an upload declares, from the name: what genomics files usually are, compressed
 * or not. Anything else is application/octet-stream (`--content-type` says otherwise).
 */
const TYPES: Record<string, string> = {
  gz: 'application/gzip',
  bgz: 'application/gzip',
  tgz: 'application/gzip',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  zst: 'application/zstd',
  zip: 'application/zip',
  tar: 'application/x-tar',
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  svg: 'image/svg+xml',
  fastq: 'text/plain',
  fq: 'text/plain',
  fasta: 'text/plain',
  fa: 'text/plain',
  fna: 'text/plain',
  sam: 'text/plain',
  vcf: 'text/plain',
  bed: 'text/plain',
  gff: 'text/plain',
  gff3: 'text/plain',
  gtf: 'text/plain',
  nf: 'text/plain',
  wdl: 'text/plain',
}

export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return (dot > 0 && TYPES[name.slice(dot + 1).toLowerCase()]) || 'application/octet-stream'
}

/**
 * Runs work with an abort signal that Ctrl-C or SIGTERM fires (a transfer, whose partial file is
 * then removed or whose resumable session is left for the next run; a browser login's wait): the
 * work stops, and the command ends with exit code 130 and `stopped` (as it is then) as its message.
 */
export async function interruptible<T>(stopped: string | (() => string), run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController()
  const onInterrupt = () => stop.abort()
  process.once('SIGINT', onInterrupt)
  process.once('SIGTERM', onInterrupt)
  try {
    return await run(stop.signal)
  } catch (error) {
    if (error instanceof AbortedError || stop.signal.aborted) throw new CliError(typeof stopped === 'string' ? stopped : stopped(), EXIT.interrupted)
    throw error
  } finally {
    process.removeListener('SIGINT', onInterrupt)
    process.removeListener('SIGTERM', onInterrupt)
  }
}

/** `files cp` and `files mv`: the same arguments, the same answer (the file at its new path). */
export const copyOrMoveHelp = {
  source: "the file's path in the project's bucket, or gs://<bucket>/…",
  destination: 'its new path, or a folder ending in / to keep its name',
  overwrite: "replace the destination if it exists (project admins; never a file of a signed order's sample; default: refuse, exit 7)",
}
