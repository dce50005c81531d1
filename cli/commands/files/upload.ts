import { stat } from 'node:fs/promises'
import type { Command } from 'commander'
import { action, type Cli, type Session } from '../../context.js'
import { EXIT, usageError } from '../../errors.js'
import { interruptible } from '../../files.js'
import { examples } from '../../help.js'
import { TREE_CONCURRENCY } from '../../transfer-plan.js'
import { summaryText, uploadTree } from '../../tree.js'
import { uploadedLine, uploadLocalFile, type UploadOptions } from '../../upload.js'

export function register(files: Command, cli: Cli) {
  files
    .command('upload')
    .description(
      "Upload a local file to the project's bucket through a signed address, then check its CRC32C against the storage's (exit 10 when they differ); a progress bar on a terminal. " +
        'Above 8 MiB, through a resumable upload session (in chunks with PLATFORM_UPLOAD_CHUNK_MIB): an upload stopped by Ctrl-C, a kill or a network cut resumes when the same command is run again, sending only what the storage lacks',
    )
    .argument('<local>', 'the local file; with -r, a folder')
    .argument(
      '<remote>',
      "its path in the project's bucket (fastq/S1_R1.fastq.gz), a folder ending in / to keep its name, or gs://<bucket>/…; with -r, the folder to fill",
    )
    .option(
      '-r, --recursive',
      `every file under the folder <local> to the folder <remote>, ${TREE_CONCURRENCY} at a time; identical files (size and CRC32C) are skipped, a failed one does not stop the others (exit 11)`,
    )
    .option('--content-type <type>', 'the Content-Type stored with it (default: from its extension, else application/octet-stream)')
    .option('--overwrite', "replace the file if it exists (project admins; never a file of a signed order's sample; default: refuse, exit 7)")
    .addHelpText(
      'after',
      examples(
        'platform files upload S1_R1.fastq.gz fastq/',
        'platform files upload ./reads.fq.gz gs://demo-lab-demo/fastq/S1_R1.fastq.gz --overwrite',
        'platform files upload panel.bed refs/panel.bed --content-type text/plain --json',
        'platform files upload -r ./run42/fastq fastq/run42      # again later: only what is missing or changed',
        'platform files upload NA12878.cram cram/   # interrupted? the same command resumes it',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [local, remoteArg] = command.processedArgs as [string, string]
        const opts = command.opts<UploadOptions & { recursive?: boolean }>()
        if (opts.recursive) return uploadFolder(session, local, remoteArg, opts)
        const uploaded = await uploadLocalFile(session, local, remoteArg, opts)
        session.out.result(uploaded, () => uploadedLine(local, uploaded))
      }),
    )
}

async function uploadFolder(session: Session, dir: string, prefix: string, opts: UploadOptions) {
  const info = await stat(dir).catch((error: Error) => {
    throw usageError(`cannot read ${dir}: ${error.message}`)
  })
  if (!info.isDirectory()) throw usageError(`${dir} is not a folder: upload a file without -r`)
  const client = session.client()
  const project = await session.projectId(client)
  const summary = await interruptible(`upload of ${dir} interrupted: the files done are stored; the same command skips them`, (signal) =>
    uploadTree(session, client, project, dir, prefix, { ...opts, overwrite: Boolean(opts.overwrite), signal }),
  )
  session.out.result(summary, () => summaryText('Uploaded', summary))
  return summary.failed ? EXIT.someFailed : EXIT.ok
}
