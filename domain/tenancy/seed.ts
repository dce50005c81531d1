import { Timestamp } from '@google-cloud/firestore'
import type { OrgRecord, ProjectRecord, UserRecord } from '../../lib/auth/access.js'
import { SYSTEM_ACTOR } from '../../lib/audit.js'
import type { ProjectRole } from '../../lib/auth/roles.js'
import type { KernelDeps } from '../../lib/kernel.js'
import type { Granter } from './decide.js'
import type { AdminStore } from './store.js'

/** What seeding needs: the kernel and the tenancy store. */
export type TenancyDeps = KernelDeps & { store: AdminStore }

/**
 * Creates (or finds) a user, an organization owned by them and a project with a bucket and
 * credentials: what the local suite seeds and what tests build their worlds from. Goes through
 * the same store as the API, so every change is audited and every bucket and service account claimed.
 */
export async function seedUser(deps: TenancyDeps, input: { email: string; name?: string; platformAdmin?: boolean }): Promise<UserRecord> {
  const user = await deps.store.ensureUser(input.email)
  const patch: Partial<UserRecord> = {}
  if (input.name && user.name !== input.name) patch.name = input.name
  if (input.platformAdmin && !user.platform_admin) patch.platform_admin = true
  if (Object.keys(patch).length) await deps.db.col('users').doc(user.id).update(patch)
  return { ...user, ...patch }
}

export async function seedOrgAndProject(
  deps: TenancyDeps,
  input: {
    owner: UserRecord
    orgName: string
    orgSlug: string
    projectName: string
    projectSlug: string
    bucketName: string
    serviceAccountEmail?: string
  },
): Promise<{ org: OrgRecord; project: ProjectRecord }> {
  const existingOrg = await deps.db.col('organizations').where('slug', '==', input.orgSlug).limit(1).get()
  const org = existingOrg.empty
    ? await deps.store.createOrg(SYSTEM_ACTOR, { name: input.orgName, slug: input.orgSlug, ownerId: input.owner.id })
    : (existingOrg.docs[0]!.data() as OrgRecord)
  const existingProject = await deps.db.col('projects').where('org_id', '==', org.id).where('slug', '==', input.projectSlug).limit(1).get()
  if (!existingProject.empty) {
    // A project of a data folder from before resource claims: its bucket and account become its own, as a new project's are.
    const project = existingProject.docs[0]!.data() as ProjectRecord
    await deps.store.claimResourcesOf(project)
    return { org, project }
  }
  // The platform names the bucket as an operator would: claimed, and refused if another project holds it.
  const project = await deps.store.createProject(SYSTEM_ACTOR, {
    org,
    name: input.projectName,
    slug: input.projectSlug,
    bucketName: input.bucketName,
    serviceAccountEmail: input.serviceAccountEmail,
    operator: true,
    sharedBuckets: deps.config.storage.sharedBuckets,
    platformAccounts: deps.config.storage.platformAccounts,
  })
  return { org, project }
}

/** The platform grants as the project's owner would: any role, to anyone but itself. */
const PLATFORM_GRANTER: Granter = { id: SYSTEM_ACTOR.actor.id, roles: ['owner'] }

export async function grant(deps: TenancyDeps, project: ProjectRecord, user: UserRecord, roles: ProjectRole[]) {
  await deps.store.setMemberRoles(SYSTEM_ACTOR, PLATFORM_GRANTER, project, user, roles)
}

export async function seedToken(deps: TenancyDeps, user: UserRecord, name: string, days = 90): Promise<string> {
  const now = deps.clock.now()
  const { value } = await deps.tokens.createPersonal({ userId: user.id, name, now, expiresAt: new Date(now.getTime() + days * 86400_000) })
  return value
}

export const ts = (d: Date) => Timestamp.fromDate(d)
