import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICES } from '../../../functions/services.js'
import { loadConfig } from '../../../lib/config.js'
import { ORCHESTRATOR_FUNCTIONS } from '../../../orchestrator/functions.js'
import { INGESTION_STEPS } from '../../../domain/variants/ingestions.js'
import { parse as parseYaml } from 'yaml'

/**
 * infra/deploy.sh --dry-run, run as an operator would, with sample settings. gcloud and curl are
 * replaced on PATH by tripwires that record any call: a dry run must not touch the cloud.
 */
const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const PROJECT = 'acme-genomics-prod'
const REGION = 'europe-west4'
const INDEXES = (JSON.parse(readFileSync(join(REPO, 'firestore.indexes.json'), 'utf8')) as { indexes: unknown[] }).indexes
const PUSH_SA = `platform-push@${PROJECT}.iam.gserviceaccount.com`
const TOPICS = loadConfig({}).topics
const PUSHED = ORCHESTRATOR_FUNCTIONS.flatMap((f) => (f.kind === 'cloudevent' ? [{ entry: f.name, topic: f.topic(loadConfig({})) }] : []))
const SCHEDULED = ORCHESTRATOR_FUNCTIONS.filter((f) => f.kind === 'http').map((f) => f.name)

let scratch: string
let tripwireLog: string

interface Outcome {
  code: number
  stdout: string
  stderr: string
  /** The printed commands (comments left out). */
  commands: string[]
}

function envFile(name: string, text: string) {
  const path = join(scratch, name)
  writeFileSync(path, text)
  return path
}

function dryRun(env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [join(REPO, 'infra/deploy.sh'), '--dry-run'],
      {
        cwd: REPO,
        env: { PATH: `${join(scratch, 'bin')}:${process.env.PATH}`, HOME: process.env.HOME ?? scratch, TMPDIR: scratch, ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr, commands: stdout.split('\n').filter((l) => l && !l.startsWith('#')) })
      },
    )
  })
}

/** The Cloud Functions name of an entry point: lowercase, words joined by hyphens. */
const functionName = (entry: string) =>
  entry
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase()

function one(commands: string[], prefix: string): string {
  const found = commands.filter((c) => c.startsWith(prefix))
  expect(found, `one command starting with "${prefix}"`).toHaveLength(1)
  return found[0]!
}

const SAMPLE = () => ({
  PROJECT_ID: PROJECT,
  REGION,
  BUCKETS: 'acme-germline-data acme-oncology-data',
  FUNCTION_SECRETS: 'OIDC_CLIENT_SECRET=oidc-client-secret:latest',
  FUNCTIONS_ENV_FILE: envFile(
    'functions.env',
    '# sample\nOIDC_ISSUER=https://login.acme.example/realms/lab\nOIDC_CLIENT_ID=platform\nOIDC_AUDIENCE=platform-api\n',
  ),
})

let plan: Outcome

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'infra-test-'))
  tripwireLog = join(scratch, 'tripwire.log')
  mkdirSync(join(scratch, 'bin'))
  for (const tool of ['gcloud', 'curl']) {
    const path = join(scratch, 'bin', tool)
    writeFileSync(path, `#!/bin/sh\necho "${tool} $*" >> '${tripwireLog}'\nexit 97\n`)
    chmodSync(path, 0o755)
  }
  plan = await dryRun(SAMPLE())
}, 90_000)

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true })
})

describe('infra/deploy.sh --dry-run', () => {
  it('completes without calling gcloud or curl', () => {
    expect(plan.stderr).not.toMatch(/^deploy: /m)
    expect(plan.code).toBe(0)
    expect(existsSync(tripwireLog) ? readFileSync(tripwireLog, 'utf8') : '').toBe('')
    expect(plan.stdout).toContain('# dry run complete: nothing was changed')
  })

  it('names the project on every gcloud command instead of relying on the active configuration', () => {
    const gcloud = plan.commands.filter((c) => c.startsWith('gcloud '))
    expect(gcloud.length).toBeGreaterThan(20)
    expect(gcloud.filter((c) => !c.includes(`--project=${PROJECT}`) && !c.startsWith(`gcloud projects add-iam-policy-binding ${PROJECT} `))).toEqual(
      [],
    )
  })

  it('deploys every service of the registry as a public gen2 HTTP function with its entry point and the env file', () => {
    const names = SERVICES.map((s) => s.name)
    expect(names.length).toBeGreaterThan(0)
    for (const name of names) {
      const deploy = one(plan.commands, `gcloud functions deploy ${functionName(name)} `)
      for (const flag of [
        '--gen2',
        `--entry-point=${name}`,
        '--runtime=nodejs20',
        `--region=${REGION}`,
        '--trigger-http',
        '--allow-unauthenticated',
        `--service-account=platform-functions@${PROJECT}.iam.gserviceaccount.com`,
        '--set-secrets=AUDIT_HMAC_KEYS=platform-audit-hmac-keys:latest,OIDC_CLIENT_SECRET=oidc-client-secret:latest',
      ]) {
        expect(deploy.split(' ')).toContain(flag)
      }
      expect(deploy).toMatch(/ --env-vars-file=\S+functions-env\.yaml/)
    }
  })

  it('deploys every orchestrator function privately, invocable by the push account only', () => {
    expect(ORCHESTRATOR_FUNCTIONS.length).toBeGreaterThan(0)
    for (const { name: entry } of ORCHESTRATOR_FUNCTIONS) {
      const name = functionName(entry)
      const deploy = one(plan.commands, `gcloud functions deploy ${name} `)
      expect(deploy.split(' ')).toEqual(
        expect.arrayContaining(['--gen2', `--entry-point=${entry}`, '--no-allow-unauthenticated', '--runtime=nodejs20']),
      )
      expect(one(plan.commands, `gcloud functions add-invoker-policy-binding ${name} `)).toContain(`--member=serviceAccount:${PUSH_SA}`)
    }
  })

  it('creates the run-requested, batch-job-status, ingestion-requested and dead-letter topics', () => {
    expect([TOPICS.runRequested, TOPICS.jobStatus, TOPICS.ingestionRequested]).toEqual(['run-requested', 'batch-job-status', 'ingestion-requested'])
    for (const topic of ['run-requested', 'batch-job-status', 'ingestion-requested', 'platform-dead-letter'])
      one(plan.commands, `gcloud pubsub topics create ${topic} `)
  })

  it('pushes each topic to its orchestrator function with an OIDC token, a retry policy and a dead-letter topic', () => {
    expect(PUSHED.length).toBeGreaterThan(0)
    for (const { topic, entry } of PUSHED) {
      const sub = one(plan.commands, `gcloud pubsub subscriptions create ${topic}-push `)
      const url = `<url of ${functionName(entry)}>`
      expect(sub).toContain(`--topic=${topic}`)
      expect(sub).toContain(`'--push-endpoint=${url}/projects/${PROJECT}/topics/${topic}'`)
      expect(sub).toContain(`--push-auth-service-account=${PUSH_SA}`)
      expect(sub).toContain(`'--push-auth-token-audience=${url}'`)
      expect(sub).toContain('--dead-letter-topic=platform-dead-letter')
      expect(sub).toMatch(/--min-retry-delay=\S+ --max-retry-delay=\S+/)
    }
  })

  it('schedules the reconciler with an OIDC-authenticated Cloud Scheduler job', () => {
    expect(SCHEDULED).toContain('reconcile')
    for (const entry of SCHEDULED) {
      const name = functionName(entry)
      const job = one(plan.commands, `gcloud scheduler jobs create http ${name}-schedule `)
      expect(job).toContain("'--schedule=*/5 * * * *'")
      expect(job).toContain(`'--uri=<url of ${name}>'`)
      expect(job).toContain(`--oidc-service-account-email=${PUSH_SA}`)
      expect(job).toContain(`'--oidc-token-audience=<url of ${name}>'`)
    }
  })

  it('deploys the ingestion workflow, running as the push account, calling the private ingestionStep function', () => {
    const steps = ORCHESTRATOR_FUNCTIONS.filter((f) => f.kind === 'workflow-step').map((f) => f.name)
    expect(steps).toEqual(['ingestionStep'])
    const url = `<url of ${functionName('ingestionStep')}>`
    const deploy = one(plan.commands, 'gcloud workflows deploy platform-ingestion ')
    expect(deploy.split(' ')).toEqual(
      expect.arrayContaining([`--location=${REGION}`, `--service-account=${PUSH_SA}`, `--project=${PROJECT}`, '--call-log-level=log-errors-only']),
    )
    expect(deploy).toContain(`--source=${join(REPO, 'infra/workflows/ingestion.yaml')}`)
    expect(deploy).toContain(`'--set-env-vars=STEP_URL=${url}'`)
    one(plan.commands, 'gcloud pubsub topics create ingestion-requested ')
    expect(plan.commands.filter((c) => c.includes('roles/workflows.invoker'))).toHaveLength(1)
  })

  it("the workflow takes the ingestion's steps in the code's order, retrying failures but not a 400 or 404", () => {
    const wf = parseYaml(readFileSync(join(REPO, 'infra/workflows/ingestion.yaml'), 'utf8')) as Record<string, { steps: unknown[] }>
    const text = JSON.stringify(wf)
    expect(Object.keys(wf).sort()).toEqual(['main', 'take_step', 'worth_retrying'])
    const init = JSON.stringify(wf.main!.steps[0])
    expect(init).toContain(JSON.stringify(INGESTION_STEPS))
    expect(text).toContain('"predicate":"${worth_retrying}"')
    expect(text).toContain('"type":"OIDC"')
    expect(text).toContain('sys.get_env(\\"STEP_URL\\")')
  })

  it('creates the audit key secret when missing, never printing a key, and lets only the runtime account read it', () => {
    expect(plan.stdout).toContain(`# if missing: gcloud secrets describe platform-audit-hmac-keys --project=${PROJECT}`)
    const create = one(plan.commands, 'gcloud secrets create platform-audit-hmac-keys ')
    expect(create.split(' ')).toEqual(expect.arrayContaining([`--project=${PROJECT}`, '--data-file=-', '--replication-policy=automatic']))
    expect(plan.stdout).toContain('# the data: a new key ring "audit-1:<32 random bytes, base64>"')
    // No 32-byte key in base64 anywhere in the plan.
    expect(plan.stdout).not.toMatch(/[A-Za-z0-9+/]{43}=/)
    const readers = plan.commands.filter((c) => c.startsWith('gcloud secrets add-iam-policy-binding platform-audit-hmac-keys '))
    expect(readers).toEqual([
      `gcloud secrets add-iam-policy-binding platform-audit-hmac-keys --project=${PROJECT} --member=serviceAccount:platform-functions@${PROJECT}.iam.gserviceaccount.com --role=roles/secretmanager.secretAccessor`,
    ])
    // Created before the binding that needs it.
    expect(plan.commands.indexOf(create)).toBeLessThan(plan.commands.indexOf(readers[0]!))
    expect(plan.stdout).toContain('#   AUDIT_HMAC_ACTIVE_KEY: "audit-1"')
    expect(plan.stdout).not.toContain('AUDIT_HMAC_KEYS:')
  })

  it("names the platform's own identities, which no project may bind as its service account", () => {
    expect(plan.stdout).toContain(
      `#   PLATFORM_SERVICE_ACCOUNTS: "platform-functions@${PROJECT}.iam.gserviceaccount.com,platform-push@${PROJECT}.iam.gserviceaccount.com"`,
    )
  })

  it('creates the three service accounts and grants the runtime account use of the Batch account only', () => {
    for (const sa of ['platform-functions', 'platform-batch', 'platform-push']) one(plan.commands, `gcloud iam service-accounts create ${sa} `)
    const onBatch = plan.commands.filter((c) =>
      c.startsWith(`gcloud iam service-accounts add-iam-policy-binding platform-batch@${PROJECT}.iam.gserviceaccount.com `),
    )
    expect(onBatch.map((c) => /--role=(\S+)/.exec(c)?.[1]).sort()).toEqual(['roles/iam.serviceAccountTokenCreator', 'roles/iam.serviceAccountUser'])
    // Least privilege: no basic role anywhere.
    expect(plan.commands.filter((c) => /--role=roles\/(owner|editor|viewer)\b/.test(c))).toEqual([])
  })

  it('creates the Firestore database, releases firestore.rules and creates every index of firestore.indexes.json', () => {
    one(plan.commands, 'gcloud firestore databases create ')
    expect(plan.commands.filter((c) => c.startsWith('curl ') && c.includes('firebaserules.googleapis.com')).length).toBeGreaterThanOrEqual(2)
    const indexes = plan.commands.filter((c) => c.startsWith('gcloud firestore indexes composite create '))
    expect(indexes).toHaveLength(INDEXES.length)
    expect(indexes[0]).toContain('--collection-group=runs')
  })

  it('turns on TTL deletion for the short-lived records, never for personal access tokens', () => {
    const ttl = plan.commands.filter((c) => c.startsWith('gcloud firestore fields ttls update '))
    for (const [collection, field] of [
      ['service_tokens', 'expires_at'],
      ['sessions', 'expires_at'],
      ['login_states', 'expires_at'],
      ['used_assertions', 'expires_at'],
      ['idempotency_keys', 'expires'],
    ]) {
      expect(one(ttl, `gcloud firestore fields ttls update ${field} --collection-group=${collection} `).split(' ')).toContain('--enable-ttl')
    }
    expect(ttl.filter((c) => c.includes('personal_tokens'))).toEqual([])
  })

  it('creates each bucket private, with uniform access, and lets the Batch account write to it', () => {
    for (const bucket of ['acme-germline-data', 'acme-oncology-data']) {
      const create = one(plan.commands, `gcloud storage buckets create gs://${bucket} `)
      expect(create).toContain('--uniform-bucket-level-access')
      expect(create).toContain('--public-access-prevention')
      expect(plan.commands).toContain(
        `gcloud storage buckets add-iam-policy-binding gs://${bucket} --project=${PROJECT} --member=serviceAccount:platform-batch@${PROJECT}.iam.gserviceaccount.com --role=roles/storage.objectAdmin`,
      )
    }
  })

  it("shows the functions' environment: the operator's settings and the deploy's own, never a secret", () => {
    expect(plan.stdout).toContain(`#   GOOGLE_CLOUD_PROJECT: "${PROJECT}"`)
    expect(plan.stdout).toContain('#   OIDC_ISSUER: "https://login.acme.example/realms/lab"')
    expect(plan.stdout).toContain('#   BATCH_BACKEND: "cloud"')
    expect(plan.stdout).toContain(`#   ADMIN_PUBLIC_URL: "https://${REGION}-${PROJECT}.cloudfunctions.net/admin"`)
    expect(plan.stdout).not.toContain('OIDC_CLIENT_SECRET:')
  })

  it('has each service instance admit itself as many requests at a time as Cloud Run lets into it (FUNCTION_CONCURRENCY)', () => {
    expect(plan.stdout).toContain('#   MAX_CONCURRENT_REQUESTS: "40"')
    for (const name of SERVICES.map((s) => s.name)) {
      expect(one(plan.commands, `gcloud functions deploy ${functionName(name)} `).split(' ')).toContain('--concurrency=40')
    }
  })
})

it("moves the instances' own limit with FUNCTION_CONCURRENCY, which the functions env file may not set apart", async () => {
  const out = await dryRun({ ...SAMPLE(), FUNCTION_CONCURRENCY: '12' })
  expect(out.code).toBe(0)
  expect(out.stdout).toContain('#   MAX_CONCURRENT_REQUESTS: "12"')
  expect(one(out.commands, 'gcloud functions deploy compute ').split(' ')).toContain('--concurrency=12')
  const apart = await dryRun({ ...SAMPLE(), FUNCTIONS_ENV_FILE: envFile('apart.env', 'MAX_CONCURRENT_REQUESTS=80\n') })
  expect(apart.code).not.toBe(0)
  expect(apart.stderr).toContain('MAX_CONCURRENT_REQUESTS is set by infra/deploy.sh')
})

describe('infra/deploy.sh refuses a bad configuration before doing anything', () => {
  it('without PROJECT_ID', async () => {
    const { PROJECT_ID: _omitted, ...rest } = SAMPLE()
    const out = await dryRun(rest)
    expect(out.code).not.toBe(0)
    expect(out.stderr).toContain('PROJECT_ID is required')
    expect(out.commands).toEqual([])
  })

  it.each([
    ['an emulator address', 'FIRESTORE_EMULATOR_HOST=127.0.0.1:8080\n', 'FIRESTORE_EMULATOR_HOST is for the local suite only'],
    ['a setting the deploy owns', 'GOOGLE_CLOUD_PROJECT=another-project\n', 'GOOGLE_CLOUD_PROJECT is set by infra/deploy.sh'],
    [
      'a secret in the clear',
      'OIDC_ISSUER=https://login.acme.example\nOIDC_CLIENT_ID=platform\nOIDC_AUDIENCE=platform-api\nOIDC_CLIENT_SECRET=hunter2\n',
      'OIDC_CLIENT_SECRET comes from Secret Manager',
    ],
    ['the audit keys in the clear', `AUDIT_HMAC_KEYS=k1:${'A'.repeat(43)}=\n`, 'AUDIT_HMAC_KEYS comes from Secret Manager'],
    ['the active audit key', 'AUDIT_HMAC_ACTIVE_KEY=k2\n', 'AUDIT_HMAC_ACTIVE_KEY is set by infra/deploy.sh'],
    ["the platform's own identities", 'PLATFORM_SERVICE_ACCOUNTS=\n', 'PLATFORM_SERVICE_ACCOUNTS is set by infra/deploy.sh'],
    [
      'a value the platform would refuse at boot',
      'OIDC_ISSUER=not a url\nOIDC_CLIENT_ID=platform\nOIDC_AUDIENCE=platform-api\n',
      'OIDC_ISSUER: Invalid URL',
    ],
  ])('with %s in the functions env file', async (_what, text, message) => {
    const out = await dryRun({ ...SAMPLE(), FUNCTIONS_ENV_FILE: envFile('bad.env', text) })
    expect(out.code).not.toBe(0)
    expect(out.stderr).toContain(message)
    expect(out.commands).toEqual([])
  })
})

it('prefixes the index collections with the deployment COLLECTION_PREFIX', async () => {
  const out = await dryRun({ ...SAMPLE(), FUNCTIONS_ENV_FILE: envFile('prefixed.env', 'COLLECTION_PREFIX=prod_\n') })
  expect(out.code).toBe(0)
  const indexes = out.commands.filter((c) => c.startsWith('gcloud firestore indexes composite create '))
  expect(indexes).toHaveLength(INDEXES.length)
  expect(indexes.every((c) => /--collection-group=prod_[a-z_]+ /.test(c))).toBe(true)
})

it('keys new audit events with the key AUDIT_HMAC_ACTIVE_KEY names (a rotation), and refuses the audit keys among FUNCTION_SECRETS', async () => {
  const rotated = await dryRun({ ...SAMPLE(), AUDIT_HMAC_ACTIVE_KEY: 'audit-2', AUDIT_KEY_SECRET: 'lab-audit-keys' })
  expect(rotated.code).toBe(0)
  expect(rotated.stdout).toContain('#   AUDIT_HMAC_ACTIVE_KEY: "audit-2"')
  expect(one(rotated.commands, 'gcloud functions deploy admin ').split(' ')).toContain(
    '--set-secrets=AUDIT_HMAC_KEYS=lab-audit-keys:latest,OIDC_CLIENT_SECRET=oidc-client-secret:latest',
  )
  const twice = await dryRun({ ...SAMPLE(), FUNCTION_SECRETS: 'AUDIT_HMAC_KEYS=mine:latest' })
  expect(twice.code).not.toBe(0)
  expect(twice.stderr).toContain('AUDIT_HMAC_KEYS is provided by the deploy from AUDIT_KEY_SECRET')
  const bad = await dryRun({ ...SAMPLE(), AUDIT_HMAC_ACTIVE_KEY: 'not a key id' })
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain("AUDIT_HMAC_ACTIVE_KEY 'not a key id' is not a key id")
})
