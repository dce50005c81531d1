import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { CliLoginStore } from '../../domain/identity/cli-login-store.js'
import { ServiceUserStore } from '../../domain/tenancy/service-users.js'
import { AdminStore } from '../../domain/tenancy/store.js'
import { OidcLogin } from './login.js'

export interface AdminDeps extends KernelDeps {
  store: AdminStore
  serviceUsers: ServiceUserStore
  /** The OIDC login flows; the provider is discovered on first use. */
  login: OidcLogin
  /** The CLI's logins and the credentials the platform issues for them. */
  cliLogins: CliLoginStore
}

export type AdminEnv = AppEnv<AdminDeps>

export function adminDeps(kernel: KernelDeps): AdminDeps {
  return {
    ...kernel,
    store: new AdminStore(kernel.db, kernel.audit, kernel.clock),
    serviceUsers: new ServiceUserStore(kernel.db, kernel.audit, kernel.clock, kernel.tokens),
    login: new OidcLogin(kernel),
    cliLogins: new CliLoginStore(kernel.db, kernel.audit, kernel.clock),
  }
}
