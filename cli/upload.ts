/** One local file into the project's bucket: `platform files upload`, and each file of `upload -r`. */
import { basename, resolve } from 'node:path'
import type { FileEntry, PlatformClient } from './client.js'
import { CliError, EXIT } from './errors.js'
import { contentTypeOf } from './files.js'
import { formatTransfer } from './output.js'
import { ChecksumMismatchError, md5Of, uploadFile, verify, type TransferOptions, type Verified } from './transfer.js'

export interface UploadOptions {
  contentType?: string
  overwrite?: boolean
}

/** What an upload printed as its result: the stored file, where it came from, and how it was checked. */
export type Uploaded = (FileEntry | { path: string; size: number }) & {
  local: string
  crc32c: string | null
  md5: string | null
  verified: Verified
  seconds: number
}

/** The one line `files upload` prints for a person. */
export function uploadedText(up: Uploaded): string {
  const where = 'uri' in up ? up.uri : up.path
  const check = up.verified === 'none' ? 'not verified: the storage answered no checksum' : `${up.verified} verified`
  return `Uploaded ${up.local} to ${where}: ${formatTransfer(up.size, up.seconds)}, ${check}`
}

/**
 * Uploads `local` (a file of `size` bytes) to `remote` in the project's bucket through a signed
 * address and checks the storage's checksum of what it stored. It prints nothing: progress goes
 * to `opts.onProgress`, the result is returned, refusals are thrown (CliError, HttpError).
 */
export async function uploadLocalFile(
  client: PlatformClient,
  project: string,
  local: string,
  size: number,
  remote: string,
  opts: UploadOptions & TransferOptions,
): Promise<Uploaded> {
  const started = performance.now()
  const signed = await client.uploadUrl(project, {
    path: remote,
    content_type: opts.contentType ?? contentTypeOf(basename(local)),
    overwrite: Boolean(opts.overwrite),
  })
  const sent = await uploadFile(signed, local, size, { onProgress: opts.onProgress, signal: opts.signal })
  const seconds = (performance.now() - started) / 1000
  let verified
  try {
    if (sent.storedSize !== undefined && sent.storedSize !== size)
      throw new ChecksumMismatchError('size', `${size} bytes`, `${sent.storedSize} bytes`)
    // Cloud Storage always answers a CRC32C; a storage that answers only an MD5 costs a second read of the file.
    const mine = !sent.remote.crc32c && sent.remote.md5 ? { md5: await md5Of(local) } : sent.local
    verified = verify(mine, sent.remote)
  } catch (error) {
    if (!(error instanceof ChecksumMismatchError)) throw error
    throw new CliError(
      `checksum mismatch after uploading ${local} to ${remote}: ${error.message}. The uploaded file was left as it is: ` +
        `upload it again with --overwrite, or delete it (platform files rm ${remote})`,
      EXIT.checksum,
    )
  }
  const entry = (await client.statFile(project, remote)) ?? { path: remote, size }
  return { ...entry, local: resolve(local), crc32c: sent.remote.crc32c ?? null, md5: sent.remote.md5 ?? null, verified, seconds }
}
