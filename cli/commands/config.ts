import { Argument, type Command } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'
import type { Session } from '../context.js'
import { SERVICES, type ServiceName } from '../api/services.js'
import { checkProfileName, DEFAULT_PROFILE, SETTING_KEYS, URL_KEYS, type SettingKey } from '../settings.js'

const keyArgument = () => new Argument('<key>', `url, ${URL_KEYS.join(', ')} or project`).choices(SETTING_KEYS)

/** The service a <service>_url key names. */
const serviceOf = (key: SettingKey): ServiceName | undefined => SERVICES.find((s) => `${s.name}_url` === key)?.name

/** The value a key has for the profile now: for a service, the address its requests go to (the override, else the discovered one). */
async function effective(session: Session, key: SettingKey): Promise<string | undefined> {
  const service = serviceOf(key)
  if (service) return session.baseUrl(service)
  return key === 'url' ? session.platformUrl : session.profile[key]
}

export function register(program: Command, cli: Cli) {
  const config = program
    .command('config')
    .description(
      `Profiles: the platform's address and the project per environment (local, staging, production or your own), kept in ${cli.settings.configPath}`,
    )
    .addHelpText('after', examples('platform config set url https://platform.lab.example/admin --profile staging', 'platform config list'))

  config
    .command('set')
    .description(
      "Set a value of the profile (--profile, else the current one). url, the admin service's address, is all a profile needs: " +
        'the platform names every other service there (GET /api/v1/service-info), and the address is checked before it is kept. ' +
        'A <service>_url overrides the address the platform names for that service.',
    )
    .addHelpText(
      'after',
      examples(
        'platform config set url https://platform.lab.example/admin --profile staging',
        'platform config set project germline',
        'platform config set compute_url http://127.0.0.1:9102     # one service elsewhere (a debugger, a tunnel)',
      ),
    )
    .addArgument(keyArgument())
    .argument('<value>', "the platform's address (url), a service's base address, or a project id or slug")
    .action(
      action(cli, async (session, command) => {
        const [key, value] = command.processedArgs as [SettingKey, string]
        const found = key === 'url' ? await session.usePlatform(value) : undefined
        if (!found) cli.settings.set(session.profile.name, key, value)
        const saved = cli.settings.profile(session.profile.name)[key]
        const names = found ? Object.keys(found.services) : []
        session.out.result(
          {
            profile: session.profile.name,
            [key]: saved,
            ...(found ? { environment: found.environment, version: found.version, services: found.services } : {}),
          },
          () =>
            `${session.profile.name}: ${key} = ${saved}` +
            (found
              ? `\n${found.environment}${found.version ? ` (version ${found.version})` : ''}: ${names.length} service${names.length === 1 ? '' : 's'} (${names.join(', ')})`
              : ''),
        )
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
    .description(
      "Print one value of the profile (nothing when it is unset); for a <service>_url, the address the CLI uses: the profile's own, else the one the platform names",
    )
    .addHelpText('after', examples('platform config get compute_url --profile staging', 'CLIN=$(platform config get clinical_url)/api/v1'))
    .addArgument(keyArgument())
    .action(
      action(cli, async (session, command) => {
        const [key] = command.processedArgs as [SettingKey]
        const value = await effective(session, key)
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
    .description("List the profiles: the platform's address, its environment, the services' own addresses set, the project and the login")
    .addHelpText('after', examples('platform config list', 'platform config list --json'))
    .action(
      action(cli, async (session) => {
        const current = cli.settings.readConfig().current_profile ?? DEFAULT_PROFILE
        const profiles = cli.settings.profileNames().map((name) => {
          const credentials = cli.settings.credentials(name)
          const settings = cli.settings.profile(name)
          const url = settings.url ?? settings.admin_url
          // What the platform said of itself when last asked (nothing is asked here): while it describes the profile's address.
          const kept = cli.settings.discovered(name)
          const discovered = kept && kept.url === url ? kept : undefined
          return {
            ...settings,
            environment: discovered?.environment ?? null,
            services: discovered
              ? {
                  ...discovered.services,
                  ...Object.fromEntries(URL_KEYS.flatMap((k) => (settings[k] ? [[k.slice(0, -'_url'.length), settings[k]]] : []))),
                }
              : null,
            current: name === current,
            logged_in: credentials ? (credentials.email ?? credentials.method) : null,
          }
        })
        session.out.result({ config_dir: cli.settings.dir, current_profile: current, in_use: session.profile.name, profiles }, () =>
          session.out.table(profiles, [
            { header: '', value: (p) => (p.name === session.profile.name ? '*' : ' ') },
            { header: 'PROFILE', value: (p) => p.name },
            { header: 'URL', value: (p) => p.url ?? p.admin_url },
            { header: 'ENVIRONMENT', value: (p) => p.environment },
            { header: 'OVERRIDES', value: (p) => URL_KEYS.filter((k) => p[k]) },
            { header: 'PROJECT', value: (p) => p.project },
            { header: 'LOGGED IN', value: (p) => p.logged_in },
          ]),
        )
      }),
    )
}
