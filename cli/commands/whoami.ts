import type { Command } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'
import { fields } from '../format.js'

export function register(program: Command, cli: Cli) {
  program
    .command('whoami')
    .description('Show who the stored credentials belong to, and their roles')
    .addHelpText('after', examples('platform whoami', 'platform whoami --profile staging --json'))
    .action(
      action(cli, async (session) => {
        const client = session.client()
        const [me, projects, adminUrl] = await Promise.all([client.me(), client.projects(), session.baseUrl('admin')])
        const names = new Map(projects.map((p) => [p.id, `${p.slug} (${p.org_name})`]))
        const orgs = new Map(projects.map((p) => [p.org_id, p.org_name]))
        const roles = Object.entries(me.project_roles).map(([id, list]) => ({ id, project: names.get(id), roles: list }))
        session.out.result({ profile: session.profile.name, admin_url: adminUrl, ...me }, () => {
          const text = fields([
            ['email', me.email],
            ['name', me.name],
            ['id', me.id],
            ['kind', me.kind],
            ['auth method', me.auth_method],
            ['platform admin', me.platform_admin ? 'yes' : 'no'],
            ['organization roles', Object.entries(me.org_roles).map(([id, role]) => `${role} (${orgs.get(id) ?? id})`)],
            ['profile', session.profile.name],
            ['admin service', adminUrl],
          ])
          if (!roles.length) return text
          const rows = session.out.table(roles, [
            { header: 'PROJECT', value: (r) => r.id },
            { header: 'NAME', value: (r) => r.project, fit: true },
            { header: 'ROLES', value: (r) => r.roles, fit: true },
          ])
          return `${text}\n\n${rows}`
        })
      }),
    )
}
