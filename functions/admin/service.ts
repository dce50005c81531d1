import { defineService, serviceApp } from '../../lib/service.js'
import { adminDeps, type AdminDeps } from './deps.js'
import { auth } from './routes/auth.js'
import { oauth } from './routes/oauth.js'
import { organizations } from './routes/organizations.js'
import { orgs } from './routes/orgs.js'
import { projects } from './routes/projects.js'
import { serviceUsers } from './routes/service-users.js'
import { users } from './routes/users.js'

/** The admin service: tenancy, members and roles, credentials, tokens, service users and the OIDC login. */
export const admin = defineService<AdminDeps>({
  name: 'admin',
  title: 'Admin service',
  description:
    'Organizations, projects, members and roles, project credentials, the user default context, personal access tokens, service users and their keys, and the OIDC login.',
  port: 8101,
  projectScoped: false,
  // The login flows and the service-user token exchange.
  publicPaths: ['/auth/*', '/oauth/token'],
  collections: ['org_members', 'project_members', 'login_states'],
  deps: adminDeps,
  routes: [orgs, organizations, projects, users, serviceUsers, oauth, auth],
})

export const createAdminApp = (deps: AdminDeps) => serviceApp(admin.definition, deps)
