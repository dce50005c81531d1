import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { CliError, EXIT } from '../../errors.js'
import { remoteBasename } from '../../files.js'
import { examples } from '../../help.js'
import { confirmOrStop } from '../../prompt.js'

export function register(files: Command, cli: Cli) {
  files
    .command('rm')
    .description("Delete a file of the project's bucket (project admins; asks for confirmation)")
    .argument('<path>', "the file's path in the project's bucket, or gs://<bucket>/…")
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText('after', examples('platform files rm fastq/S1_R1.copy.fastq.gz', 'platform files rm gs://demo-lab-demo/tmp/old.bam --yes'))
    .action(
      action(cli, async (session, command) => {
        const [path] = command.processedArgs as [string]
        const { yes } = command.opts<{ yes?: boolean }>()
        remoteBasename(path) // a folder is refused before anything is asked
        const client = session.client()
        const project = await session.projectId(client)
        const file = await client.statFile(project, path)
        if (!file) throw new CliError(`not found: no file ${path} in the project's bucket (platform files ls shows them)`, EXIT.notFound)
        await confirmOrStop(cli.io, { yes, verb: 'delete', thing: file.uri })
        await client.deleteFile(project, file.path)
        session.out.result({ ...file, deleted: true }, () => `Deleted ${file.uri}.`)
      }),
    )
}
