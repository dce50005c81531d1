import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { copyOrMoveHelp, intoFolder, remoteBasename } from '../../files.js'
import { examples } from '../../help.js'

export function register(files: Command, cli: Cli) {
  files
    .command('cp')
    .description("Copy a file within the project's bucket (the storage copies it: nothing goes through this machine)")
    .argument('<source>', copyOrMoveHelp.source)
    .argument('<destination>', copyOrMoveHelp.destination)
    .option('--overwrite', copyOrMoveHelp.overwrite)
    .addHelpText(
      'after',
      examples(
        'platform files cp fastq/S1_R1.fastq.gz archive/',
        'platform files cp gs://demo-lab-demo/fastq/S1_R1.fastq.gz fastq/S1_R1.copy.fastq.gz --overwrite',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [source, destination] = command.processedArgs as [string, string]
        const { overwrite } = command.opts<{ overwrite?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const copy = await client.copyFile(project, {
          source,
          destination: intoFolder(destination, remoteBasename(source)),
          overwrite: Boolean(overwrite),
        })
        session.out.result(copy, () => `Copied ${source} to ${copy.uri}.`)
      }),
    )
}
