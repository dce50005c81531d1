import { Option, type Command } from 'commander'
import { COMMENT_TYPES, type CommentType } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { REPORT_ARGUMENT } from './show.js'

export function register(reports: Command, cli: Cli) {
  reports
    .command('comment')
    .description('Comment on a draft or in-review report; an open review comment blocks signing until a reviewer resolves it')
    .argument('<report>', REPORT_ARGUMENT)
    .argument('<text>', 'the comment')
    .addOption(new Option('--type <type>', 'review (blocks signing while open), internal or general').choices(COMMENT_TYPES).default('general'))
    .addHelpText(
      'after',
      examples(
        "platform reports comment ORD-2026-000123 'Please add the segregation result for the father.' --type review",
        "platform reports comment ORD-2026-000123 'Sanger confirmation ordered.'",
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref, text] = command.processedArgs as [string, string]
        const { type } = command.opts<{ type: CommentType }>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        const comment = await client.addComment(project, report.id, { comment: text, type })
        session.out.result(comment, () => `Added ${comment.type} comment ${comment.id} to report ${report.id}.`)
      }),
    )
}
