import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { planner, type Outcome } from './plan.js'

/**
 * infra/add-project.sh --dry-run: what one more project's bucket and runner get, so that the
 * functions read its run outputs, check its ingestion sources and read its VCFs as themselves, and
 * start its jobs and reach its files as its runner (see ./plan.ts for the tripwires).
 */
const PROJECT = 'acme-genomics-prod'
const RUNTIME_SA = `platform-functions@${PROJECT}.iam.gserviceaccount.com`
const RUNNER = `oncology-runner@${PROJECT}.iam.gserviceaccount.com`
const BUCKET = 'acme-oncology-data'

const plans = planner()
const settings = () => ({
  PROJECT_ID: PROJECT,
  REGION: 'europe-west4',
  FUNCTIONS_ENV_FILE: plans.file(
    'functions.env',
    'OIDC_ISSUER=https://login.acme.example\nSHARED_REFERENCE_BUCKETS="acme-references, gnomad-mirror"\n',
  ),
})
const addProject = (env: Record<string, string>, args = ['--bucket', BUCKET, '--account', 'oncology-runner']) =>
  plans.dryRun('add-project.sh', env, args)

let plan: Outcome
beforeAll(async () => {
  plan = await addProject(settings())
}, 60_000)
afterAll(() => plans.remove())

/** The roles a member holds on a resource, from the plan's `add-iam-policy-binding` commands. */
function rolesOn(resource: string, member: string): string[] {
  return plan.commands
    .filter((c) => c.includes(` add-iam-policy-binding ${resource} `) && c.includes(` --member=serviceAccount:${member} `))
    .map((c) => /--role=(\S+)/.exec(c)![1]!)
    .sort()
}

describe('infra/add-project.sh --dry-run', () => {
  it('completes without calling gcloud', () => {
    expect(plan.stderr).toBe('')
    expect(plan.code).toBe(0)
    expect(plans.calls()).toBe('')
    expect(plan.stdout).toContain('# dry run complete: nothing was changed')
  })

  it('makes the runner and a private bucket with uniform access when missing', () => {
    expect(plan.stdout).toContain(`# if missing: gcloud iam service-accounts describe ${RUNNER} --project=${PROJECT}`)
    expect(plan.commands).toContain(
      `gcloud iam service-accounts create oncology-runner --project=${PROJECT} '--display-name=Pipeline platform: runner of the project of gs://${BUCKET}'`,
    )
    expect(plan.commands).toContain(
      `gcloud storage buckets create gs://${BUCKET} --project=${PROJECT} --location=europe-west4 --uniform-bucket-level-access --public-access-prevention`,
    )
  })

  it("lets the functions' runtime account read the bucket as itself (run outputs, ingestion sources, VCFs), and nothing more of it", () => {
    expect(rolesOn(`gs://${BUCKET}`, RUNTIME_SA)).toEqual(['roles/storage.objectViewer'])
  })

  it('lets the functions start jobs as the runner and reach the bucket and sign addresses through it', () => {
    expect(rolesOn(RUNNER, RUNTIME_SA)).toEqual(['roles/iam.serviceAccountTokenCreator', 'roles/iam.serviceAccountUser'])
  })

  it('gives the runner what the default runner has: its bucket read and written, the shared references read, Batch, logs, images, job states', () => {
    expect(rolesOn(`gs://${BUCKET}`, RUNNER)).toEqual(['roles/storage.objectAdmin'])
    expect(rolesOn('gs://acme-references', RUNNER)).toEqual(['roles/storage.objectViewer'])
    expect(rolesOn('gs://gnomad-mirror', RUNNER)).toEqual(['roles/storage.objectViewer'])
    expect(rolesOn(PROJECT, RUNNER)).toEqual(['roles/artifactregistry.reader', 'roles/batch.agentReporter', 'roles/logging.logWriter'])
    expect(rolesOn('batch-job-status', RUNNER)).toEqual(['roles/pubsub.publisher'])
    // Least privilege: no basic role, and nothing granted on the project to the runtime account.
    expect(plan.commands.filter((c) => /--role=roles\/(owner|editor|viewer)\b/.test(c))).toEqual([])
    expect(rolesOn(PROJECT, RUNTIME_SA)).toEqual([])
  })

  it('grants only after the runner and the bucket exist', () => {
    const firstGrant = plan.commands.findIndex((c) => c.includes('add-iam-policy-binding'))
    const lastCreate = plan.commands.findLastIndex((c) => / create /.test(c))
    expect(firstGrant).toBeGreaterThan(lastCreate)
  })

  it('takes an existing runner of another project by its e-mail, making no account', async () => {
    const other = 'runner@acme-oncology.iam.gserviceaccount.com'
    const out = await addProject(settings(), ['--bucket', BUCKET, '--account', other])
    expect(out.code).toBe(0)
    expect(out.commands.filter((c) => c.startsWith('gcloud iam service-accounts create'))).toEqual([])
    expect(out.commands).toContain(
      `gcloud iam service-accounts add-iam-policy-binding ${other} --project=${PROJECT} --member=serviceAccount:${RUNTIME_SA} --role=roles/iam.serviceAccountUser`,
    )
  })

  it.each([
    ['no bucket', ['--account', 'oncology-runner'], '--bucket is required'],
    ['no runner', ['--bucket', BUCKET], '--account is required'],
    ['a bucket name no bucket can have', ['--bucket', 'Acme_Data!', '--account', 'oncology-runner'], "--bucket 'Acme_Data!' is not a bucket name"],
    [
      "the platform's own runtime account as the runner",
      ['--bucket', BUCKET, '--account', 'platform-functions'],
      "one of the platform's own accounts",
    ],
    ['an unknown argument', ['--bucket', BUCKET, '--account', 'oncology-runner', '--force'], 'unknown argument --force'],
  ])('refuses %s before doing anything', async (_what, args, message) => {
    const out = await addProject(settings(), args)
    expect(out.code).not.toBe(0)
    expect(out.stderr).toContain(message)
    expect(out.commands).toEqual([])
  })
})
