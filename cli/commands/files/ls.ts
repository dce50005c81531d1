import type { Command } from 'commander'
import type { FileEntry } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import type { Column } from '../../format.js'
import { formatBytes, formatTime } from '../../output.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'

const DEFAULT_LIMIT = 100

export const fileColumns: Column<FileEntry>[] = [
  { header: 'NAME', value: (f) => f.name, fit: true },
  { header: 'SIZE', value: (f) => (f.kind === 'folder' ? undefined : formatBytes(f.size)) },
  { header: 'UPDATED', value: (f) => formatTime(f.updated) },
  { header: 'TYPE', value: (f) => (f.kind === 'folder' ? 'folder' : f.content_type), fit: true },
]

export function register(files: Command, cli: Cli) {
  const ls = files
    .command('ls')
    .description("List one level of the project's bucket, like gsutil ls: files and folders/ in name order; a file's path lists that file")
    .argument('[path]', "a folder (fastq/), a file, or gs://<the project's bucket>/…; default the bucket's top", '')
  pagingOptions(ls, 'entries', 'entry', DEFAULT_LIMIT)
    .addHelpText(
      'after',
      examples(
        'platform files ls',
        'platform files ls fastq/',
        'platform files ls gs://demo-lab-demo/runs/ --limit 20',
        'platform files ls fastq/ --all --json      # {"items": [...], "next_page_token": null}',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [path] = command.processedArgs as [string]
        const opts = command.opts<PagingOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const page = await client.listFiles(project, path, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, fileColumns) : `No files under ${path || 'the top of the bucket'}.`,
        )
        if (next && !session.out.whole) {
          const words = ['files', 'ls', ...(path ? [path] : [])]
          session.out.note(`More entries exist: ${nextCommand(words, opts, DEFAULT_LIMIT, next)}  (or --all for every entry)`)
        }
      }),
    )
}
