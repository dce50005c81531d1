import { API_PREFIX, createServiceApp, type KernelDeps } from '../../lib/http.js'
import { authRoutes } from './routes/auth.js'
import { credentialsRoutes } from './routes/credentials.js'
import { organizationRoutes } from './routes/organizations.js'
import { projectRoutes } from './routes/projects.js'
import { serviceUsersRoutes } from './routes/service-users.js'
import { tokensRoutes } from './routes/tokens.js'
import { AdminStore } from './store.js'

export interface AdminDeps extends KernelDeps {
  store: AdminStore
}

export function adminDeps(kernel: KernelDeps): AdminDeps {
  return { ...kernel, store: new AdminStore(kernel.db, kernel.audit, kernel.clock) }
}

/** Paths reachable without credentials: the login flows and the service-user token exchange. */
export const ADMIN_PUBLIC_PATHS = ['/auth/*', '/oauth/token']

export function createAdminApp(deps: AdminDeps) {
  const app = createServiceApp({
    name: 'admin',
    title: 'Admin service',
    description:
      'Organizations, projects, members and roles, project credentials, the user default context, personal access tokens, service users and their keys, and the OIDC login.',
    deps,
    projectScoped: false,
    publicPaths: ADMIN_PUBLIC_PATHS,
  })
  app.route(API_PREFIX, organizationRoutes(deps, deps.store))
  app.route(API_PREFIX, projectRoutes(deps, deps.store))
  app.route(API_PREFIX, credentialsRoutes(deps))
  app.route(API_PREFIX, tokensRoutes(deps))
  app.route(API_PREFIX, serviceUsersRoutes(deps))
  app.route(API_PREFIX, authRoutes(deps))
  return app
}
