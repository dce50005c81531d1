import { Argument, type Command } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'
import { checkProfileName, DEFAULT_PROFILE, SETTING_KEYS, URL_KEYS, type SettingKey } from '../settings.js'

const keyArgument = () => new Argument('<key>', `${URL_KEYS.join(', ')} or project`).choices(SETTING_KEYS)

export function register(program: Command, cli: Cli) {
  const config = program
    .command('config')
    .description(
      `Profiles: the service addresses and project per environment (local, staging, production or your own), kept in ${cli.settings.configPath}`,
    )
    .addHelpText('after', examples('platform config set compute_url https://compute.staging.example.org --profile staging', 'platform config list'))

  config
    .command('set')
    .description('Set a value of the profile (--profile, else the current one)')
    .addHelpText(
      'after',
      examples('platform config set admin_url https://admin.staging.example.org --profile staging', 'platform config set project germline'),
    )
    .addArgument(keyArgument())
    .argument('<value>', 'a base address such as https://admin.example.org, or a project id or slug')
    .action(
      action(cli, async (session, command) => {
        const [key, value] = command.processedArgs as [SettingKey, string]
        cli.settings.set(session.profile.name, key, value)
        const saved = cli.settings.profile(session.profile.name)[key]
        session.out.result({ profile: session.profile.name, [key]: saved }, () => `${session.profile.name}: ${key} = ${saved}`)
      }),
    )

  config
    .command('unset')
    .description('Remove a value from the profile (a built-in profile falls back to its default)')
    .addHelpText('after', examples('platform config unset project'))
    .addArgument(keyArgument())
    .action(
      action(cli, async (session, command) => {
        const [key] = command.processedArgs as [SettingKey]
        cli.settings.set(session.profile.name, key, undefined)
        const now = cli.settings.profile(session.profile.name)[key]
        session.out.result({ profile: session.profile.name, [key]: now ?? null }, () => `${session.profile.name}: ${key} = ${now ?? '(unset)'}`)
      }),
    )

  config
    .command('get')
    .description('Print one value of the profile (nothing when it is unset)')
    .addHelpText('after', examples('platform config get compute_url --profile staging'))
    .addArgument(keyArgument())
    .action(
      action(cli, async (session, command) => {
        const [key] = command.processedArgs as [SettingKey]
        const value = session.profile[key]
        if (!session.out.human) session.out.result({ profile: session.profile.name, [key]: value ?? null }, () => '')
        else if (value !== undefined) session.out.line(value)
      }),
    )

  config
    .command('use')
    .description('Make a profile the current one (PLATFORM_PROFILE and --profile still take precedence)')
    .addHelpText('after', examples('platform config use staging'))
    .argument('<profile>')
    .action(
      action(cli, async (session, command) => {
        const [name] = command.processedArgs as [string]
        cli.settings.use(checkProfileName(name))
        session.out.result({ current_profile: name }, () => `Current profile: ${name}`)
      }),
    )

  config
    .command('list')
    .alias('show')
    .description('List the profiles, their addresses, project and login')
    .addHelpText('after', examples('platform config list', 'platform config list --json'))
    .action(
      action(cli, async (session) => {
        const current = cli.settings.readConfig().current_profile ?? DEFAULT_PROFILE
        const profiles = cli.settings.profileNames().map((name) => {
          const credentials = cli.settings.credentials(name)
          return {
            ...cli.settings.profile(name),
            current: name === current,
            logged_in: credentials ? (credentials.email ?? credentials.method) : null,
          }
        })
        session.out.result({ config_dir: cli.settings.dir, current_profile: current, in_use: session.profile.name, profiles }, () =>
          session.out.table(profiles, [
            { header: '', value: (p) => (p.name === session.profile.name ? '*' : ' ') },
            { header: 'PROFILE', value: (p) => p.name },
            ...URL_KEYS.map((key) => ({ header: key.toUpperCase(), value: (p: (typeof profiles)[number]) => p[key] })),
            { header: 'PROJECT', value: (p) => p.project },
            { header: 'LOGGED IN', value: (p) => p.logged_in },
          ]),
        )
      }),
    )
}
