import type { Command } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'

export function register(program: Command, cli: Cli) {
  program
    .command('token')
    .description(
      'Print the profile\'s access token (renewed first when it has expired), for other tools: curl -H "Authorization: Bearer $(platform token)"',
    )
    .addHelpText(
      'after',
      examples(
        'platform token --profile local-reviewer',
        'curl -H "Authorization: Bearer $(platform token)" "$(platform config get admin_url)/api/v1/users/me"',
      ) +
        '\nThe token of a login at the identity provider (plat_cli_…) lasts an hour: ask again rather than keep it.' +
        '\nWith $PLATFORM_TOKEN set, that token is printed.\n',
    )
    .action(
      action(cli, async (session) => {
        const token = await session.token()
        session.out.result({ profile: session.profile.name, access_token: token }, () => token)
      }),
    )
}
