import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { copyOrMoveHelp, intoFolder, remoteBasename } from '../../files.js'
import { examples } from '../../help.js'

export function register(files: Command, cli: Cli) {
  files
    .command('mv')
    .description(
      "Move or rename a file within the project's bucket (a copy, then the source deleted: project admins; never a file of a signed order's sample)",
    )
    .argument('<source>', copyOrMoveHelp.source)
    .argument('<destination>', copyOrMoveHelp.destination)
    .option('--overwrite', copyOrMoveHelp.overwrite)
    .addHelpText(
      'after',
      examples('platform files mv uploads/S1_R1.fastq.gz fastq/', 'platform files mv fastq/old-name.fastq.gz fastq/new-name.fastq.gz --json'),
    )
    .action(
      action(cli, async (session, command) => {
        const [source, destination] = command.processedArgs as [string, string]
        const { overwrite } = command.opts<{ overwrite?: boolean }>()
        const client = session.client()
        const project = await session.projectId(client)
        const moved = await client.moveFile(project, {
          source,
          destination: intoFolder(destination, remoteBasename(source)),
          overwrite: Boolean(overwrite),
        })
        session.out.result(moved, () => `Moved ${source} to ${moved.uri}.`)
      }),
    )
}
