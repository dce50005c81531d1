import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICES } from '../../../functions/services.js'
import { loadConfig, publicUrlSetting } from '../../../lib/config.js'
import { ORCHESTRATOR_FUNCTIONS } from '../../../orchestrator/functions.js'
import { INGESTION_STEPS } from '../../../domain/variants/ingestions.js'
import { parse as parseYaml } from 'yaml'
import { planner, REPO, type Outcome } from './plan.js'

/** infra/deploy.sh --dry-run, run as an operator would, with sample settings (see ./plan.ts). */
const PROJECT = 'acme-genomics-prod'
const REGION = 'europe-west4'
const INDEXES = (JSON.parse(readFileSync(join(REPO, 'firestore.indexes.json'), 'utf8')) as { indexes: unknown[] }).indexes
const PUSH_SA = `platform-push@${PROJECT}.iam.gserviceaccount.com`
const TOPICS = loadConfig({}).topics
const PUSHED = ORCHESTRATOR_FUNCTIONS.flatMap((f) => (f.kind === 'cloudevent' ? [{ entry: f.name, topic: f.topic(loadConfig({})) }] : []))
const SCHEDULED = ORCHESTRATOR_FUNCTIONS.filter((f) => f.kind === 'http').map((f) => f.name)
/** The one place the functions' runtime is named (test/unit/infra/runtime.test.ts checks it). */
const RUNTIME = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { config: { functionsRuntime: string } }).config.functionsRuntime
const DEFAULT_BUILD_SA = '<PROJECT_NUMBER>-compute@developer.gserviceaccount.com'

const plans = planner()
const envFile = plans.file
const dryRun = (env: Record<string, string>) => plans.dryRun('deploy.sh', env)

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

/** The functions' environment the plan prints (`#   KEY: "value"` under "# Functions environment"): the same for every function. */
function envOf(out: Outcome): Record<string, string> {
  const lines = out.stdout.split('\n')
  const start = lines.findIndex((l) => l.startsWith('# Functions environment'))
  expect(start, 'the plan prints the functions environment').toBeGreaterThanOrEqual(0)
  const env: Record<string, string> = {}
  for (const line of lines.slice(start + 1)) {
    const m = /^# {3}([A-Z][A-Z0-9_]*): (".*")$/.exec(line)
    if (!m) break
    env[m[1]!] = JSON.parse(m[2]!) as string
  }
  return env
}

/** A file the plan shows as comments (`# <title> (<path>):` then `#   <line>`), parsed as YAML. */
function shownFile(out: Outcome, title: string): unknown {
  const lines = out.stdout.split('\n')
  const start = lines.findIndex((l) => l.startsWith(`# ${title} (`))
  expect(start, `the plan shows ${title}`).toBeGreaterThanOrEqual(0)
  const body: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('#   ')) break
    body.push(line.slice(4))
  }
  return parseYaml(body.join('\n'))
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
  plan = await dryRun(SAMPLE())
}, 90_000)

afterAll(() => plans.remove())

describe('infra/deploy.sh --dry-run', () => {
  it('completes without calling gcloud or curl', () => {
    expect(plan.stderr).not.toMatch(/^deploy: /m)
    expect(plan.code).toBe(0)
    expect(plans.calls()).toBe('')
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
        `--runtime=${RUNTIME}`,
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
        expect.arrayContaining(['--gen2', `--entry-point=${entry}`, '--no-allow-unauthenticated', `--runtime=${RUNTIME}`]),
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
      `#   PLATFORM_SERVICE_ACCOUNTS: "platform-functions@${PROJECT}.iam.gserviceaccount.com,platform-push@${PROJECT}.iam.gserviceaccount.com,${DEFAULT_BUILD_SA}"`,
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
      // A CLI login and its credentials are kept until the login's absolute end (reuse of a spent refresh credential is detected until then).
      ['cli_logins', 'expires_at'],
      ['cli_access_tokens', 'expires_at'],
      ['cli_refresh_tokens', 'expires_at'],
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

  it('lets the default runner read the shared reference buckets of the functions environment', async () => {
    const out = await dryRun({
      ...SAMPLE(),
      FUNCTIONS_ENV_FILE: envFile('shared.env', 'SHARED_REFERENCE_BUCKETS=acme-references,gnomad-mirror\n'),
    })
    expect(out.code).toBe(0)
    for (const shared of ['acme-references', 'gnomad-mirror']) {
      expect(out.commands).toContain(
        `gcloud storage buckets add-iam-policy-binding gs://${shared} --project=${PROJECT} --member=serviceAccount:platform-batch@${PROJECT}.iam.gserviceaccount.com --role=roles/storage.objectViewer`,
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

it('names the environment in the discovery document after the project, unless the functions env file names it', async () => {
  expect(envOf(plan).PLATFORM_ENVIRONMENT).toBe(PROJECT)
  const named = await dryRun({ ...SAMPLE(), FUNCTIONS_ENV_FILE: envFile('named.env', 'PLATFORM_ENVIRONMENT=production\n') })
  expect(named.code).toBe(0)
  expect(envOf(named).PLATFORM_ENVIRONMENT).toBe('production')
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

describe('the build', () => {
  it("builds every function as the project's Compute Engine default account, named, with Cloud Build's role", () => {
    // Quoted in the plan: the placeholder's < and > are not shell-safe.
    const builder = one(plan.commands, `gcloud projects add-iam-policy-binding ${PROJECT} '--member=serviceAccount:${DEFAULT_BUILD_SA}' `)
    expect(builder).toContain('--role=roles/cloudbuild.builds.builder')
    const deploys = plan.commands.filter((c) => c.startsWith('gcloud functions deploy '))
    expect(deploys).toHaveLength(SERVICES.length + ORCHESTRATOR_FUNCTIONS.length)
    for (const d of deploys) expect(d.split(' ')).toContain(`'--build-service-account=projects/${PROJECT}/serviceAccounts/${DEFAULT_BUILD_SA}'`)
    // The role is granted before the first build.
    expect(plan.commands.indexOf(builder)).toBeLessThan(plan.commands.indexOf(deploys[0]!))
  })

  it('builds as BUILD_SERVICE_ACCOUNT when one is named, which no project may then bind', async () => {
    const account = `platform-build@${PROJECT}.iam.gserviceaccount.com`
    const out = await dryRun({ ...SAMPLE(), BUILD_SERVICE_ACCOUNT: account })
    expect(out.code).toBe(0)
    expect(one(out.commands, `gcloud projects add-iam-policy-binding ${PROJECT} --member=serviceAccount:${account} `)).toContain(
      '--role=roles/cloudbuild.builds.builder',
    )
    expect(out.commands.filter((c) => c.includes(DEFAULT_BUILD_SA))).toEqual([])
    for (const d of out.commands.filter((c) => c.startsWith('gcloud functions deploy ')))
      expect(d.split(' ')).toContain(`--build-service-account=projects/${PROJECT}/serviceAccounts/${account}`)
    expect(envOf(out).PLATFORM_SERVICE_ACCOUNTS!.split(',')).toContain(account)
    const bad = await dryRun({ ...SAMPLE(), BUILD_SERVICE_ACCOUNT: 'builder' })
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain("BUILD_SERVICE_ACCOUNT 'builder' is not a service account e-mail")
  })
})

/** Every HTTP service's address setting and function name, from the registry. */
const ADDRESSED = SERVICES.map((s) => ({ name: s.name, fn: functionName(s.name), setting: publicUrlSetting(s.name) }))

describe('one browser host', () => {
  it("by default, every service's address is on the functions' shared cloudfunctions.net host, one hop behind Google's front end", () => {
    const host = `https://${REGION}-${PROJECT}.cloudfunctions.net`
    const env = envOf(plan)
    for (const s of ADDRESSED) expect(env[s.setting], s.setting).toBe(`${host}/${s.fn}`)
    expect(env.TRUSTED_PROXY_HOPS).toBe('1')
    // What the platform derives from them: one origin for cookie-authenticated changes, the OIDC redirect URI.
    const config = loadConfig(env)
    expect(config.publicOrigins).toEqual([host])
    expect(plan.stdout).toContain(`# OIDC redirect URI to register at the identity provider: ${host}/admin/api/v1/auth/callback`)
    expect(plan.stdout).toContain(`# Browser host: ${host} (the client's address: TRUSTED_PROXY_HOPS=1)`)
    for (const s of ADDRESSED) expect(plan.stdout).toContain(`# ${s.name}: ${host}/${s.fn}/api/v1 (docs: ${host}/${s.fn}/docs`)
    // One address for the CLI: the admin service's discovery document names the others.
    expect(plan.stdout).toContain(`#   npx platform login --url ${host}/admin --profile <profile>`)
    expect(plan.stdout).not.toMatch(/platform config set \w+_url/)
    // No address handed to a person is a run.app one, and nothing is made for a load balancer.
    expect(plan.stdout.split('\n').filter((l) => l.startsWith('# ') && /run\.app|<url of/.test(l) && !l.includes(':= gcloud'))).toEqual([])
    expect(plan.commands.filter((c) => c.startsWith('gcloud compute '))).toEqual([])
    for (const s of ADDRESSED) expect(one(plan.commands, `gcloud functions deploy ${s.fn} `).split(' ')).toContain('--ingress-settings=all')
  })

  it('with BROWSER_DOMAIN, every address is on that domain, behind a load balancer the deploy makes, two hops deep', async () => {
    const domain = 'platform.acme-genomics.example'
    const out = await dryRun({ ...SAMPLE(), BROWSER_DOMAIN: domain })
    expect(out.code).toBe(0)
    const env = envOf(out)
    for (const s of ADDRESSED) expect(env[s.setting], s.setting).toBe(`https://${domain}/${s.fn}`)
    expect(env.TRUSTED_PROXY_HOPS).toBe('2')
    expect(loadConfig(env).publicOrigins).toEqual([`https://${domain}`])
    expect(out.stdout).toContain(`# OIDC redirect URI to register at the identity provider: https://${domain}/admin/api/v1/auth/callback`)
    expect(out.stdout).toContain(`# DNS: point ${domain} (an A record) at <address of platform-browser-ip>`)
    // Reached through the load balancer only: a direct request would bring an X-Forwarded-For of the client's choosing.
    for (const s of ADDRESSED)
      expect(one(out.commands, `gcloud functions deploy ${s.fn} `).split(' ')).toContain('--ingress-settings=internal-and-gclb')
    // The orchestrator functions stay private, called by Google's services at their own addresses.
    for (const f of ORCHESTRATOR_FUNCTIONS)
      expect(one(out.commands, `gcloud functions deploy ${functionName(f.name)} `)).not.toContain('--ingress-settings')

    const g = `--global --project=${PROJECT}`
    one(out.commands, `gcloud compute addresses create platform-browser-ip ${g} --ip-version=IPV4`)
    one(out.commands, `gcloud compute ssl-certificates create platform-browser-cert ${g} --domains=${domain}`)
    for (const s of ADDRESSED) {
      one(
        out.commands,
        `gcloud compute network-endpoint-groups create ${s.fn}-neg --region=${REGION} --project=${PROJECT} --network-endpoint-type=serverless --cloud-function-name=${s.fn}`,
      )
      one(out.commands, `gcloud compute backend-services create ${s.fn}-backend ${g} --load-balancing-scheme=EXTERNAL_MANAGED`)
      one(
        out.commands,
        `gcloud compute backend-services add-backend ${s.fn}-backend ${g} --network-endpoint-group=${s.fn}-neg --network-endpoint-group-region=${REGION}`,
      )
    }
    // https://DOMAIN/<function>/… reaches the function as /…, as on the shared host.
    const backends = `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/backendServices`
    const map = shownFile(out, 'URL map platform-browser') as {
      hostRules: Array<{ hosts: string[]; pathMatcher: string }>
      pathMatchers: Array<{
        routeRules: Array<{ matchRules: Array<{ prefixMatch: string }>; service: string; routeAction: { urlRewrite: { pathPrefixRewrite: string } } }>
      }>
    }
    expect(map.hostRules).toEqual([{ hosts: [domain], pathMatcher: 'services' }])
    expect(map.pathMatchers[0]!.routeRules.map((r) => [r.matchRules[0]!.prefixMatch, r.service, r.routeAction.urlRewrite.pathPrefixRewrite])).toEqual(
      ADDRESSED.map((s) => [`/${s.fn}/`, `${backends}/${s.fn}-backend`, '/']),
    )
    expect(one(out.commands, `gcloud compute url-maps import platform-browser ${g} --source=`)).toMatch(/ --quiet$/)
    one(
      out.commands,
      `gcloud compute target-https-proxies create platform-browser-https ${g} --url-map=platform-browser --ssl-certificates=platform-browser-cert`,
    )
    one(
      out.commands,
      `gcloud compute forwarding-rules create platform-browser-https ${g} --load-balancing-scheme=EXTERNAL_MANAGED --address=platform-browser-ip --target-https-proxy=platform-browser-https --ports=443`,
    )
    // Plain http only redirects to https.
    expect(shownFile(out, 'URL map platform-browser-redirect')).toMatchObject({ defaultUrlRedirect: { httpsRedirect: true } })
    one(
      out.commands,
      `gcloud compute forwarding-rules create platform-browser-http ${g} --load-balancing-scheme=EXTERNAL_MANAGED --address=platform-browser-ip --target-http-proxy=platform-browser-http --ports=80`,
    )
  })

  it('names the prefixed functions in every address, and refuses a BROWSER_DOMAIN that is not a bare domain', async () => {
    const out = await dryRun({ ...SAMPLE(), FUNCTION_PREFIX: 'lab-' })
    expect(out.code).toBe(0)
    expect(envOf(out).ADMIN_PUBLIC_URL).toBe(`https://${REGION}-${PROJECT}.cloudfunctions.net/lab-admin`)
    expect(envOf(out).VARIANT_CACHE_PUBLIC_URL).toBe(`https://${REGION}-${PROJECT}.cloudfunctions.net/lab-variant-cache`)
    for (const bad of ['https://platform.lab.example', 'platform.lab.example/admin', 'Platform.Lab.Example']) {
      const refused = await dryRun({ ...SAMPLE(), BROWSER_DOMAIN: bad })
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain(`BROWSER_DOMAIN '${bad}' is not a domain name`)
      expect(refused.commands).toEqual([])
    }
  })

  it("wires Pub/Sub push, Cloud Scheduler and Workflows to the functions' own run.app addresses, the audience Cloud Run checks", () => {
    for (const f of ORCHESTRATOR_FUNCTIONS) {
      const name = functionName(f.name)
      expect(plan.stderr).toContain(
        `# url of ${name} := gcloud functions describe ${name} --gen2 --region=${REGION} --project=${PROJECT} '--format=value(serviceConfig.uri)'`,
      )
    }
  })
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
    ["a service's address off the browser host", 'ADMIN_PUBLIC_URL=https://admin.lab.example\n', 'ADMIN_PUBLIC_URL is set by infra/deploy.sh'],
    ["the depth of the client's address", 'TRUSTED_PROXY_HOPS=0\n', 'TRUSTED_PROXY_HOPS is set by infra/deploy.sh'],
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

it('deploys with the example files as they are, which set nothing the deploy owns', async () => {
  // The deploy's example names its functions env file as the operator's copy would be named.
  const config = readFileSync(join(REPO, 'infra/deploy.env.example'), 'utf8').replace(
    /^FUNCTIONS_ENV_FILE=.*$/m,
    `FUNCTIONS_ENV_FILE=${join(REPO, 'infra/functions.env.example')}`,
  )
  const out = await plans.dryRun('deploy.sh', {}, ['--config', envFile('example.env', config)])
  expect(out.stderr).not.toMatch(/^deploy: /m)
  expect(out.code).toBe(0)
  expect(envOf(out).OIDC_ISSUER).toBe('https://login.example.org/realms/lab')
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
