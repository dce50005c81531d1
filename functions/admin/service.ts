import { defineService, serviceApp } from '../../lib/service.js'
import { adminConsole } from './console/index.js'
import { adminDeps, type AdminDeps } from './deps.js'
import { auth } from './routes/auth.js'
import { oauth } from './routes/oauth.js'
import { organizations } from './routes/organizations.js'
import { orgs } from './routes/orgs.js'
import { projects } from './routes/projects.js'
import { serviceInfo } from './routes/service-info.js'
import { serviceUsers } from './routes/service-users.js'
import { users } from './routes/users.js'

/** The admin service: tenancy, members and roles, credentials, tokens, service users and the OIDC login. */
export const admin = defineService<AdminDeps>({
  name: 'admin',
  title: 'Admin service',
  description:
    'Organizations, projects, members and roles, project credentials, the user default context, personal access tokens, service users and their keys, the OIDC login, and where every service of the platform is (GET /service-info).',
  port: 8101,
  projectScoped: false,
  // The login flows, the service-user token exchange, and where the services are (read before any login).
  publicPaths: ['/auth/*', '/oauth/token', '/service-info'],
  // platform_bootstrap: the marker of the first platform administrator (domain/tenancy/bootstrap.ts).
  collections: ['org_members', 'project_members', 'login_states', 'resource_claims', 'platform_bootstrap'],
  tags: [
    { name: 'platform', description: "Where the platform's services are: the one document a client needs besides this service's address" },
    {
      name: 'auth',
      description:
        "Logging in: the OIDC browser flow with its session cookie, and the CLI's logins (in a browser by the device authorization grant, or with e-mail and password)",
    },
    { name: 'users', description: 'The caller: who they are, their roles, and their default project' },
    { name: 'tokens', description: 'Personal access tokens (plat_pat_…) of the caller: shown once, stored hashed' },
    { name: 'organizations', description: 'Organizations and their members (org_owner, org_admin, org_member)' },
    { name: 'projects', description: 'Projects of an organization, each with its bucket' },
    { name: 'members', description: 'Project members and their roles' },
    { name: 'credentials', description: "A project's cloud credentials: the Google service account the platform impersonates" },
    { name: 'service users', description: 'Machine accounts of an organization, their keys, and the RFC 7523 token exchange' },
  ],
  deps: adminDeps,
  routes: [orgs, organizations, projects, users, serviceUsers, oauth, auth, serviceInfo],
  pages: [adminConsole],
})

export const createAdminApp = (deps: AdminDeps) => serviceApp(admin.definition, deps)
