import type { Context } from 'hono'
import type { OrgPermission } from '../../lib/auth/roles.js'
import { notFound } from '../../lib/errors.js'
import { requireOrg } from '../../lib/http.js'
import { UUID_RE } from '../../lib/ids.js'
import type { AdminEnv } from './deps.js'

/** Whether the caller can see the organization at all: a member, someone with a project in it, or a platform administrator. */
export async function orgVisible(c: Context<AdminEnv>, orgId: string): Promise<boolean> {
  const p = c.get('principal')
  if (p.user.platform_admin || p.orgRoles.has(orgId)) return true
  if (!p.projectRoles.size || !UUID_RE.test(orgId)) return false
  return (await c.get('deps').store.listProjects([...p.projectRoles.keys()], [])).some((pr) => pr.org_id === orgId)
}

/**
 * An organization the caller can see (else 404, as if absent) in which they hold `permission`
 * (else 403 with an access.denied event, so a refused member learns why).
 */
export async function orgFor(c: Context<AdminEnv>, orgId: string, permission: OrgPermission) {
  if (!(await orgVisible(c, orgId))) throw notFound('organization')
  await requireOrg(c, orgId, permission)
}
