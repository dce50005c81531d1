import type { Command } from 'commander'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'

export function register(projects: Command, cli: Cli) {
  projects
    .command('list')
    .description('List the projects you can see (their id is what --project takes)')
    .addHelpText('after', examples('platform projects list', 'platform projects list --json'))
    .action(
      action(cli, async (session) => {
        const list = await session.client().projects()
        session.out.result(list, () =>
          list.length
            ? session.out.table(list, [
                { header: 'ID', value: (p) => p.id },
                { header: 'SLUG', value: (p) => p.slug },
                { header: 'NAME', value: (p) => p.name, fit: true },
                { header: 'ORGANIZATION', value: (p) => p.org_name, fit: true },
                { header: 'BUCKET', value: (p) => p.bucket_name },
              ])
            : 'No projects.',
        )
      }),
    )
}
