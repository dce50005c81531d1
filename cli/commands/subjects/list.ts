import { Option, type Command } from 'commander'
import { affectedStatusValues } from '../../api/clinical.js'
import type { SubjectFilters } from '../../client.js'
import { subjectColumns } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'

interface ListOptions extends PagingOptions {
  externalId?: string
  family?: string
  affectedStatus?: SubjectFilters['affected_status']
  name?: string
}

const DEFAULT_LIMIT = 20

export function register(subjects: Command, cli: Cli) {
  const list = subjects.command('list').description("List the project's subjects, newest first; says when more exist and how to get them")
  pagingOptions(list, 'subjects', 'subject', DEFAULT_LIMIT)
    .option('--external-id <id>', 'the subject with this external id')
    .option('--family <family id>', 'the subjects of one family')
    .addOption(new Option('--affected-status <status>', 'only subjects with this affected status').choices(affectedStatusValues))
    .option('--name <text>', 'a part of the display name, whatever its case')
    .addHelpText(
      'after',
      examples(
        'platform subjects list --family FAM-0042',
        'platform subjects list --affected-status affected --limit 50',
        "platform subjects list --name ada --format 'csv(external_id,display_name,sex)'",
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const filters: SubjectFilters = {
          external_id: opts.externalId,
          family_id: opts.family,
          affected_status: opts.affectedStatus,
          name: opts.name,
        }
        const page = await client.listSubjects(project, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, subjectColumns) : 'No subjects.',
        )
        if (next && !session.out.whole) {
          const words = ['subjects', 'list']
          const add = (flag: string, value: string | undefined) => value !== undefined && words.push(flag, value)
          add('--external-id', opts.externalId)
          add('--family', opts.family)
          add('--affected-status', opts.affectedStatus)
          add('--name', opts.name)
          session.out.note(`More subjects exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every subject)`)
        }
      }),
    )
}
