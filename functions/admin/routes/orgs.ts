import { resourceApp } from '../../../lib/http.js'
import type { AdminDeps } from '../deps.js'
import { listOrganizationsHandler, listRoute } from './organizations.js'

/** /orgs: the spec's name for the organization list, the same answer as GET /organizations. */
export const orgs = resourceApp<AdminDeps>()

orgs.openapi(listRoute('/orgs'), listOrganizationsHandler)
