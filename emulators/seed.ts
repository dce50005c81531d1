import { adminDeps } from '../functions/admin/app.js'
import { seedOrgAndProject, seedToken, seedUser } from '../functions/admin/seed.js'
import type { OrgRecord, ProjectRecord, UserRecord } from '../lib/access.js'
import type { Config } from '../lib/config.js'
import type { KernelDeps } from '../lib/http.js'
import { seedComputeCatalogue } from '../functions/compute/seed.js'

/**
 * The local suite's seed data. Every step is idempotent: a restart without --clean finds what the
 * previous start made and changes nothing, so seeding can run on every start.
 */

export const SEED = {
  user: { email: 'admin@example.org', name: 'Local Admin' },
  org: { name: 'Demo Lab', slug: 'demo-lab' },
  project: { name: 'Demo', slug: 'demo', bucket: 'demo-lab-demo' },
  tokenName: 'local suite',
} as const

export const serviceAccountFor = (gcpProject: string) => `pipeline-runner@${gcpProject}.iam.gserviceaccount.com`

/** What a seeder can use: the base records, a kernel on the suite's Firestore, and where the suite keeps its files. */
export interface SeedContext {
  config: Config
  kernel: KernelDeps
  user: UserRecord
  org: OrgRecord
  project: ProjectRecord
  dataDir: string
  /** Base address of every HTTP service of the registry, by name. */
  services: Record<string, string>
}

export interface Seeder {
  name: string
  run(ctx: SeedContext): Promise<void>
}

/**
 * Seeders that services add for their own data (e.g. the compute service's pipelines). They run in
 * order after the base seed, on every start, so each must be idempotent. Add one by importing it
 * here and appending it to this list.
 */
export const SEEDERS: Seeder[] = [{ name: 'compute pipelines', run: (ctx) => seedComputeCatalogue(ctx.kernel) }]

export interface BaseSeed {
  user: UserRecord
  org: OrgRecord
  project: ProjectRecord
  token: string
  /** True when the stored token no longer verified (or there was none) and a new one was made. */
  tokenCreated: boolean
}

/** The admin user (platform admin, owner of Demo Lab), the Demo project with its bucket, and a personal access token. */
export async function seedBase(kernel: KernelDeps, storedToken?: string): Promise<BaseSeed> {
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
  if (storedToken) {
    const found = await deps.tokens.verifyPersonal(storedToken, deps.clock.now())
    if (found.ok && found.record.user_id === user.id) return { user, org, project, token: storedToken, tokenCreated: false }
  }
  const token = await seedToken(deps, user, SEED.tokenName)
  return { user, org, project, token, tokenCreated: true }
}

export async function runSeeders(ctx: SeedContext, seeders: readonly Seeder[] = SEEDERS) {
  for (const seeder of seeders) {
    try {
      await seeder.run(ctx)
    } catch (err) {
      throw new Error(`seeding ${seeder.name} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
  }
}
