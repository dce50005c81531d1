import { adminDeps } from '../functions/admin/deps.js'
import { SERVICES } from '../functions/services.js'
import type { OrgRecord, ProjectRecord, UserRecord } from '../lib/auth/access.js'
import type { KernelDeps } from '../lib/kernel.js'
import type { SeedContext } from '../lib/service.js'
import { grant, seedOrgAndProject, seedToken, seedUser } from '../domain/tenancy/seed.js'

/**
 * The local suite's seed data. Every step is idempotent: a restart without --clean finds what the
 * previous start made and changes nothing, so seeding can run on every start.
 */

export const SEED = {
  user: { email: 'admin@example.org', name: 'Local Admin' },
  /** Signs the reports the admin writes: a report's author never signs it. */
  reviewer: { email: 'reviewer@example.org', name: 'Local Reviewer' },
  org: { name: 'Demo Lab', slug: 'demo-lab' },
  project: { name: 'Demo', slug: 'demo', bucket: 'demo-lab-demo' },
  tokenName: 'local suite',
} as const

export const serviceAccountFor = (gcpProject: string) => `pipeline-runner@${gcpProject}.iam.gserviceaccount.com`

export type { SeedContext }

export interface BaseSeed {
  user: UserRecord
  org: OrgRecord
  project: ProjectRecord
  token: string
  /** The reviewer's own personal access token: what the CLI's local-reviewer profile logs in with. */
  reviewerToken: string
  /** True when a stored token no longer verified (or there was none) and a new one was made: the state file keeps them. */
  tokenCreated: boolean
}

/**
 * The admin user (platform admin, owner of Demo Lab), the Demo project with its bucket, its reviewer,
 * and a personal access token of each of the two people (the stored ones while they still verify).
 */
export async function seedBase(kernel: KernelDeps, stored: { token?: string; reviewerToken?: string } = {}): Promise<BaseSeed> {
  const deps = adminDeps(kernel)
  const user = await seedUser(deps, { email: SEED.user.email, name: SEED.user.name, platformAdmin: true })
  const { org, project } = await seedOrgAndProject(deps, {
    owner: user,
    orgName: SEED.org.name,
    orgSlug: SEED.org.slug,
    projectName: SEED.project.name,
    projectSlug: SEED.project.slug,
    bucketName: SEED.project.bucket,
    serviceAccountEmail: serviceAccountFor(kernel.config.gcpProject),
  })
  const reviewer = await seedUser(deps, { email: SEED.reviewer.email, name: SEED.reviewer.name })
  if (!reviewer.grants?.projects?.[project.id]?.length) await grant(deps, project, reviewer, ['reviewer'])
  let tokenCreated = false
  const tokenOf = async (owner: UserRecord, storedToken: string | undefined) => {
    if (storedToken) {
      const found = await deps.tokens.verifyPersonal(storedToken, deps.clock.now())
      if (found.ok && found.record.user_id === owner.id) return storedToken
    }
    tokenCreated = true
    return seedToken(deps, owner, SEED.tokenName)
  }
  const token = await tokenOf(user, stored.token)
  const reviewerToken = await tokenOf(reviewer, stored.reviewerToken)
  return { user, org, project, token, reviewerToken, tokenCreated }
}

/** Each service's own seed data (the compute service's pipelines, …), in registry order, after the base seed. */
export async function runSeeders(ctx: SeedContext) {
  for (const service of SERVICES) {
    if (!service.seed) continue
    try {
      await service.seed(ctx)
    } catch (err) {
      throw new Error(`seeding the ${service.name} service failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
  }
}
