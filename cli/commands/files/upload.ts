import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { uploadedLine, uploadLocalFile, type UploadOptions } from '../../upload.js'

export function register(files: Command, cli: Cli) {
  files
    .command('upload')
    .description(
      "Upload a local file to the project's bucket through a signed address, then check its CRC32C against the storage's (exit 10 when they differ); a progress bar on a terminal. " +
        'Above 8 MiB, through a resumable upload session in 64 MiB chunks (PLATFORM_UPLOAD_CHUNK_MIB): an upload stopped by Ctrl-C, a kill or a network cut resumes when the same command is run again, sending only what the storage lacks',
    )
    .argument('<local>', 'the local file')
    .argument('<remote>', "its path in the project's bucket (fastq/S1_R1.fastq.gz), a folder ending in / to keep its name, or gs://<bucket>/…")
    .option('--content-type <type>', 'the Content-Type stored with it (default: from its extension, else application/octet-stream)')
    .option('--overwrite', "replace the file if it exists (project admins; never a file of a signed order's sample; default: refuse, exit 7)")
    .addHelpText(
      'after',
      examples(
        'platform files upload S1_R1.fastq.gz fastq/',
        'platform files upload ./reads.fq.gz gs://demo-lab-demo/fastq/S1_R1.fastq.gz --overwrite',
        'platform files upload panel.bed refs/panel.bed --content-type text/plain --json',
        'platform files upload NA12878.cram cram/   # interrupted? the same command resumes it',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [local, remoteArg] = command.processedArgs as [string, string]
        const opts = command.opts<UploadOptions>()
        const uploaded = await uploadLocalFile(session, local, remoteArg, opts)
        session.out.result(uploaded, () => uploadedLine(local, uploaded))
      }),
    )
}
