import { randomBytes } from 'node:crypto'
import type { Hono } from 'hono'
import { adminDeps, type AdminDeps } from '../../functions/admin/deps.js'
import { createAdminApp } from '../../functions/admin/service.js'
import { grant, seedOrgAndProject, seedToken, seedUser } from '../../domain/tenancy/seed.js'
import type { ProjectRecord, UserRecord } from '../../lib/auth/access.js'
import type { ProjectRole } from '../../lib/auth/roles.js'
import { testKernel } from './env.js'

export const rand = () => randomBytes(4).toString('hex')

export interface Caller {
  user: UserRecord
  token: string
}

/**
 * A tenant to test against: an organization whose owner is a platform admin, one project with a
 * bucket and credentials, and helpers to make callers with given roles.
 */
export async function makeWorld(env: Record<string, string | undefined> = {}) {
  const deps: AdminDeps = adminDeps(testKernel('admin', env))
  const ownerUser = await seedUser(deps, { email: `owner-${rand()}@example.org`, name: 'Owner', platformAdmin: true })
  const { org, project } = await seedOrgAndProject(deps, {
    owner: ownerUser,
    orgName: 'Test Lab',
    orgSlug: `lab-${rand()}`,
    projectName: 'Germline',
    projectSlug: 'germline',
    bucketName: `bucket-${rand()}`,
    serviceAccountEmail: 'runner@test-project.iam.gserviceaccount.com',
  })
  const owner: Caller = { user: ownerUser, token: await seedToken(deps, ownerUser, 'owner token') }

  async function caller(roles: ProjectRole[], onProject: ProjectRecord = project): Promise<Caller> {
    const user = await seedUser(deps, { email: `${roles.join('-') || 'nobody'}-${rand()}@example.org` })
    if (roles.length) await grant(deps, onProject, user, roles)
    return { user, token: await seedToken(deps, user, 'test') }
  }

  async function otherProject() {
    const other = await seedOrgAndProject(deps, {
      owner: ownerUser,
      orgName: 'Other Lab',
      orgSlug: `other-${rand()}`,
      projectName: 'Other',
      projectSlug: 'other',
      bucketName: `other-${rand()}`,
      // A service account serves one project only: each other project has its own.
      serviceAccountEmail: `runner-${rand()}@other.iam.gserviceaccount.com`,
    })
    return other
  }

  return { deps, org, project, owner, caller, otherProject }
}

/** Sends a request to an app the way a client would, returning status, headers and the parsed body. */
export async function call(
  app: Hono<any>,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; project?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  if (opts.project) headers['x-project-id'] = opts.project
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await app.request(path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) })
  const text = await res.text()
  let body: any = text
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body }
}

/**
 * Calls of `app` under /api/v1 as the world's owner in the world's project, unless told another
 * token or project (`project: null` sends no X-Project-ID).
 */
export function apiFor(app: Hono<any>, world: { owner: { token: string }; project: { id: string } }) {
  return (method: string, path: string, opts: { token?: string; body?: unknown; project?: string | null; headers?: Record<string, string> } = {}) =>
    call(app, method, `/api/v1${path}`, {
      token: opts.token ?? world.owner.token,
      body: opts.body,
      project: opts.project === null ? undefined : (opts.project ?? world.project.id),
      headers: opts.headers,
    })
}

export { createAdminApp }
