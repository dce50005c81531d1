import { Option, type Command } from 'commander'
import { sampleTypeValues } from '../../api/clinical.js'
import type { SampleFilters } from '../../client.js'
import { sampleColumns } from '../../clinical-views.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { resolveSubject } from '../../names.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'

interface ListOptions extends PagingOptions {
  externalId?: string
  subject?: string
  type?: SampleFilters['type']
}

const DEFAULT_LIMIT = 20

export function register(samples: Command, cli: Cli) {
  const list = samples.command('list').description("List the project's samples, newest first; says when more exist and how to get them")
  pagingOptions(list, 'samples', 'sample', DEFAULT_LIMIT)
    .option('--external-id <id>', 'the sample with this external id')
    .option('--subject <subject>', "one subject's samples: its id or external id")
    .addOption(new Option('--type <type>', 'only samples of this material').choices(sampleTypeValues))
    .addHelpText('after', examples('platform samples list --subject P-2026-0042', 'platform samples list --type blood --all --json'))
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<ListOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const subject = opts.subject === undefined ? undefined : await resolveSubject({ client, project }, opts.subject)
        const filters: SampleFilters = { external_id: opts.externalId, subject_id: subject?.id, type: opts.type }
        const page = await client.listSamples(project, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, sampleColumns) : 'No samples.',
        )
        if (next && !session.out.whole) {
          const words = ['samples', 'list']
          const add = (flag: string, value: string | undefined) => value !== undefined && words.push(flag, value)
          add('--external-id', opts.externalId)
          add('--subject', opts.subject)
          add('--type', opts.type)
          session.out.note(`More samples exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every sample)`)
        }
      }),
    )
}
