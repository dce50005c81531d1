import type { Command } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'

export function register(program: Command, cli: Cli) {
  program
    .command('logout')
    .description("Forget the profile's stored credentials")
    .addHelpText('after', examples('platform logout', 'platform logout --profile staging'))
    .action(
      action(cli, async (session) => {
        const name = session.profile.name
        const stored = cli.settings.credentials(name)
        const removed = cli.settings.removeCredentials(name)
        session.out.result({ profile: name, logged_out: removed }, () =>
          removed ? `Logged out of profile ${name}.` : `Not logged in to profile ${name}.`,
        )
        if (stored?.method === 'personal_token') {
          session.out.note('The personal access token itself stays valid until it expires or is revoked.')
        }
        if (cli.env.token) session.out.note('note: PLATFORM_TOKEN is still set and still used')
      }),
    )
}
