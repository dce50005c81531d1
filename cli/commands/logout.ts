import type { Command } from 'commander'
import { action, type Cli } from '../context.js'
import { explain } from '../errors.js'
import { examples } from '../help.js'

export function register(program: Command, cli: Cli) {
  program
    .command('logout')
    .description("End the profile's login at the platform (its credentials stop working everywhere) and forget them")
    .addHelpText('after', examples('platform logout', 'platform logout --profile staging'))
    .action(
      action(cli, async (session) => {
        const name = session.profile.name
        const stored = cli.settings.credentials(name)
        // A login's credentials are ended at the platform first: forgetting them here alone would leave a copy usable elsewhere.
        // Never at another platform than the one that issued them (the profile's address changed since): they are only forgotten then.
        const here = !stored?.url || stored.url === session.platformUrl
        let ended = false
        if (!here)
          session.out.note(`warning: the login was made at ${stored?.url}, which this profile no longer points at: it is forgotten, not ended there`)
        if (here && stored?.refresh_token && stored.method !== 'personal_token') {
          try {
            await session.anonymousClient().revokeLogin(stored.refresh_token)
            ended = true
          } catch (error) {
            session.out.note(
              `warning: the login could not be ended at the platform (${explain(error).message}): its credentials stay valid until they expire`,
            )
          }
        }
        const removed = cli.settings.removeCredentials(name)
        session.out.result({ profile: name, logged_out: removed, login_ended: ended }, () =>
          removed ? `Logged out of profile ${name}.` : `Not logged in to profile ${name}.`,
        )
        if (stored?.method === 'personal_token') {
          session.out.note('The personal access token itself stays valid until it expires or is revoked.')
        }
        if (cli.env.token) session.out.note('note: PLATFORM_TOKEN is still set and still used')
      }),
    )
}
