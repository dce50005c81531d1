import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Option, type Command } from 'commander'
import { action, type Cli, type Session } from '../../context.js'
import { CliError, EXIT, usageError } from '../../errors.js'
import { interruptible, remoteBasename } from '../../files.js'
import { examples } from '../../help.js'
import { downloadObject, ObjectChangedError } from '../../download.js'
import { formatBytes, formatTransfer } from '../../output.js'
import { Progress } from '../../progress.js'
import { ChecksumMismatchError, StorageHttpError, StorageUnreachableError } from '../../transfer.js'
import { CONNECTIONS, PARALLEL_THRESHOLD, TREE_CONCURRENCY } from '../../transfer-plan.js'
import { downloadTree, summaryText } from '../../tree.js'

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

export function register(files: Command, cli: Cli) {
  files
    .command('download')
    .description(
      "Download a file of the project's bucket through a signed address, checking its checksum against the storage's before it takes its place (exit 10 when they differ); " +
        `files of ${formatBytes(PARALLEL_THRESHOLD)} or more come in parts over ${CONNECTIONS} connections and resume where an interrupted download stopped; ` +
        'with -r, every file under a folder, skipping identical ones; a progress bar on a terminal',
    )
    .argument('<remote>', "the file's path in the project's bucket, or gs://<bucket>/…; with -r, a folder")
    .argument(
      '[local]',
      "where to write it: a file, or an existing folder (default: the file's name in the current folder); with -r, the folder to fill",
    )
    .option(
      '-r, --recursive',
      `every file under <remote> into the folder <local>, ${TREE_CONCURRENCY} at a time; identical files (size and CRC32C) are skipped, a failed one does not stop the others (exit 11)`,
    )
    .option('--overwrite', 'replace an existing local file (default: refuse, exit 3; with -r, a file that differs fails)')
    .addOption(new Option('--force', 'the former name of --overwrite').hideHelp())
    .addHelpText(
      'after',
      examples(
        'platform files download fastq/S-DEMO-PROBAND_R1.fastq.gz',
        'platform files download gs://demo-lab-demo/runs/<run id>/hello.txt ./results/ --overwrite',
        'platform files download fastq/S-DEMO-PROBAND_R1.fastq.gz reads.fq.gz --json',
        'platform files download -r runs/<run id>/ ./results      # again later: only what is missing or changed',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [remote, local] = command.processedArgs as [string, string | undefined]
        const opts = command.opts<{ overwrite?: boolean; force?: boolean; recursive?: boolean }>()
        // --force was this command's name for what upload, cp and mv call --overwrite: it still works, with a warning.
        if (opts.force) session.out.note('warning: --force is deprecated: use --overwrite')
        const overwrite = Boolean(opts.overwrite || opts.force)
        if (opts.recursive) return downloadFolder(session, remote, local, overwrite)
        const name = remoteBasename(remote)
        const dest = local === undefined ? name : local.endsWith('/') || isDirectory(local) ? join(local, name) : local
        if (isDirectory(dest)) throw usageError(`${dest} is a folder`)
        if (!overwrite && existsSync(dest)) throw usageError(`${dest} exists: pass --overwrite to replace it`)
        const client = session.client()
        const project = await session.projectId(client)
        const entry = await client.statFile(project, remote)
        if (!entry) throw new CliError(`not found: no file ${remote} in the project's bucket (platform files ls shows them)`, EXIT.notFound)
        const inParts = entry.size >= PARALLEL_THRESHOLD
        const kept = `the parts downloaded are kept beside ${dest}: the same command resumes`
        const progress = new Progress(session.out, entry.size)
        let got
        try {
          got = await interruptible(`download of ${entry.uri} interrupted: ${inParts ? kept : `${dest} was not written`}`, (signal) =>
            downloadObject(client, project, entry, dest, { overwrite, onProgress: progress.update, signal, note: (text) => session.out.note(text) }),
          ).finally(() => progress.done())
        } catch (error) {
          if (error instanceof ChecksumMismatchError) {
            throw new CliError(
              `checksum mismatch downloading ${entry.uri}: ${error.message}; ${dest} was not written. Try again; if it happens again, the stored file is damaged`,
              EXIT.checksum,
            )
          }
          if (error instanceof ObjectChangedError) {
            throw new CliError(`${error.message}: ${dest} was not written; run the command again to download the new version`, EXIT.rejected)
          }
          if ((error as NodeJS.ErrnoException).code === 'EEXIST')
            throw usageError(`${dest} appeared during the download and was kept: pass --overwrite to replace it`)
          if (inParts && (error instanceof StorageUnreachableError || error instanceof StorageHttpError)) session.out.note(kept)
          throw error
        }
        const { seconds } = got
        const result = {
          ...entry,
          local: resolve(dest),
          crc32c: got.remote.crc32c ?? null,
          md5: got.remote.md5 ?? null,
          verified: got.verified,
          resumed: got.resumed,
          fetched: got.fetched,
          seconds,
        }
        const check = got.verified === 'none' ? 'not verified: the storage answered no checksum' : `${got.verified} verified`
        const resumed = got.resumed ? ` (resumed: ${formatBytes(got.fetched)} fetched now)` : ''
        session.out.result(result, () => `Downloaded ${entry.uri} to ${dest}: ${formatTransfer(got.fetched, seconds)}${resumed}, ${check}`)
      }),
    )
}

async function downloadFolder(session: Session, remote: string, local: string | undefined, overwrite: boolean) {
  if (local === undefined) throw usageError('name the local folder to download into: platform files download -r <folder> <local folder>')
  if (existsSync(local) && !isDirectory(local)) throw usageError(`${local} is not a folder`)
  const client = session.client()
  const project = await session.projectId(client)
  const summary = await interruptible(
    `download of ${remote} interrupted: the files done are in ${local}; the same command skips them and resumes the large ones`,
    (signal) => downloadTree(session, client, project, remote, local, { overwrite, signal }),
  )
  if (summary.sent + summary.skipped + summary.failed === 0)
    throw new CliError(`not found: no files under ${remote} in the project's bucket`, EXIT.notFound)
  session.out.result(summary, () => summaryText('Downloaded', summary))
  return summary.failed ? EXIT.someFailed : EXIT.ok
}
