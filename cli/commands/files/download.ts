import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Option, type Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { CliError, EXIT, usageError } from '../../errors.js'
import { interruptible, remoteBasename } from '../../files.js'
import { examples } from '../../help.js'
import { formatTransfer } from '../../output.js'
import { Progress } from '../../progress.js'
import { ChecksumMismatchError, downloadFile } from '../../transfer.js'

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
      "Download a file of the project's bucket through a signed address, checking its checksum against the storage's before it takes its place (exit 10 when they differ); a progress bar on a terminal",
    )
    .argument('<remote>', "the file's path in the project's bucket, or gs://<bucket>/…")
    .argument('[local]', "where to write it: a file, or an existing folder (default: the file's name in the current folder)")
    .option('--overwrite', 'replace an existing local file (default: refuse, exit 3)')
    .addOption(new Option('--force', 'the former name of --overwrite').hideHelp())
    .addHelpText(
      'after',
      examples(
        'platform files download fastq/S-DEMO-PROBAND_R1.fastq.gz',
        'platform files download gs://demo-lab-demo/runs/<run id>/hello.txt ./results/ --overwrite',
        'platform files download fastq/S-DEMO-PROBAND_R1.fastq.gz reads.fq.gz --json',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [remote, local] = command.processedArgs as [string, string | undefined]
        const opts = command.opts<{ overwrite?: boolean; force?: boolean }>()
        // --force was this command's name for what upload, cp and mv call --overwrite: it still works, with a warning.
        if (opts.force) session.out.note('warning: --force is deprecated: use --overwrite')
        const overwrite = Boolean(opts.overwrite || opts.force)
        const name = remoteBasename(remote)
        const dest = local === undefined ? name : local.endsWith('/') || isDirectory(local) ? join(local, name) : local
        if (isDirectory(dest)) throw usageError(`${dest} is a folder`)
        if (!overwrite && existsSync(dest)) throw usageError(`${dest} exists: pass --overwrite to replace it`)
        const client = session.client()
        const project = await session.projectId(client)
        const entry = await client.statFile(project, remote)
        if (!entry) throw new CliError(`not found: no file ${remote} in the project's bucket (platform files ls shows them)`, EXIT.notFound)
        const signed = await client.downloadUrl(project, entry.path)
        const progress = new Progress(session.out, entry.size)
        let got
        try {
          got = await interruptible(`download of ${entry.uri} interrupted: ${dest} was not written`, (signal) =>
            downloadFile(signed, dest, { overwrite, onProgress: progress.update, signal }),
          ).finally(() => progress.done())
        } catch (error) {
          if (error instanceof ChecksumMismatchError) {
            throw new CliError(
              `checksum mismatch downloading ${entry.uri}: ${error.message}; ${dest} was not written. Try again; if it happens again, the stored file is damaged`,
              EXIT.checksum,
            )
          }
          if ((error as NodeJS.ErrnoException).code === 'EEXIST')
            throw usageError(`${dest} appeared during the download and was kept: pass --overwrite to replace it`)
          throw error
        }
        const seconds = progress.seconds
        const result = {
          ...entry,
          local: resolve(dest),
          crc32c: got.remote.crc32c ?? null,
          md5: got.remote.md5 ?? null,
          verified: got.verified,
          seconds,
        }
        const check = got.verified === 'none' ? 'not verified: the storage answered no checksum' : `${got.verified} verified`
        session.out.result(result, () => `Downloaded ${entry.uri} to ${dest}: ${formatTransfer(got.bytes, seconds)}, ${check}`)
      }),
    )
}
