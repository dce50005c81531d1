import { stat } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import type { Session } from './context.js'
import { CliError, EXIT, usageError } from './errors.js'
import { contentTypeOf, interruptible, intoFolder } from './files.js'
import { formatTransfer } from './output.js'
import { Progress } from './progress.js'
import { ChecksumMismatchError, md5Of, uploadFile, verify } from './transfer.js'

export interface UploadOptions {
  contentType?: string
  overwrite?: boolean
}

/**
 * One local file into the project's bucket: a signed address from the file service, the bytes,
 * the checksum compared with the storage's. `platform files upload` and, per file, `upload -r`.
 */
export async function uploadLocalFile(session: Session, local: string, remoteArg: string, opts: UploadOptions): Promise<void> {
  const info = await stat(local).catch((error: Error) => {
    throw usageError(`cannot read ${local}: ${error.message}`)
  })
  if (!info.isFile()) throw usageError(`${local} is not a file`)
  const remote = intoFolder(remoteArg, basename(local))
  const client = session.client()
  const project = await session.projectId(client)
  const signed = await client.uploadUrl(project, {
    path: remote,
    content_type: opts.contentType ?? contentTypeOf(basename(local)),
    overwrite: Boolean(opts.overwrite),
  })
  const progress = new Progress(session.out, info.size)
  const sent = await interruptible(`upload of ${local} interrupted: nothing was stored at ${remote}`, (signal) =>
    uploadFile(signed, local, info.size, { onProgress: progress.update, signal }),
  ).finally(() => progress.done())
  const seconds = progress.seconds
  let verified
  try {
    if (sent.storedSize !== undefined && sent.storedSize !== info.size)
      throw new ChecksumMismatchError('size', `${info.size} bytes`, `${sent.storedSize} bytes`)
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
  const entry = (await client.statFile(project, remote)) ?? { path: remote, size: info.size }
  const result = { ...entry, local: resolve(local), crc32c: sent.remote.crc32c ?? null, md5: sent.remote.md5 ?? null, verified, seconds }
  const where = 'uri' in entry ? entry.uri : remote
  const check = verified === 'none' ? 'not verified: the storage answered no checksum' : `${verified} verified`
  session.out.result(result, () => `Uploaded ${local} to ${where}: ${formatTransfer(info.size, seconds)}, ${check}`)
}
