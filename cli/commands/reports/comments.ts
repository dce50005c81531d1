import { Option, type Command } from 'commander'
import { COMMENT_TYPES, type CommentType } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveReport } from '../../names.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'
import { commentColumns } from '../../results-views.js'
import { REPORT_ARGUMENT } from './show.js'

const DEFAULT_LIMIT = 50

export function register(reports: Command, cli: Cli) {
  const comments = reports
    .command('comments')
    .description("List a report's comments, oldest first (a conversation), with which review comments are still open")
    .argument('<report>', REPORT_ARGUMENT)
    .addOption(new Option('--type <type>', 'only comments of this type').choices(COMMENT_TYPES))
  pagingOptions(comments, 'comments', 'comment', DEFAULT_LIMIT)
    .addHelpText('after', examples('platform reports comments ORD-2026-000123', 'platform reports comments ORD-2026-000123 --type review --json'))
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<PagingOptions & { type?: CommentType }>()
        const client = session.client()
        const project = await session.projectId(client)
        const report = await resolveReport(client, project, ref)
        const page = await client.listComments(
          project,
          report.id,
          { type: opts.type },
          { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken },
        )
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, commentColumns) : 'No comments.',
        )
        if (next && !session.out.whole) {
          const words = ['reports', 'comments', ref, ...(opts.type ? ['--type', opts.type] : [])]
          session.out.note(`More comments exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every comment)`)
        }
      }),
    )
}
