import { randomBytes, randomUUID } from 'node:crypto'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PubSub } from '@google-cloud/pubsub'
import type { Browser } from 'playwright-core'
import { importPKCS8, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureSigningKey, layout, LOCAL_SIGNING_ACCOUNT } from '../../emulators/data-dir.js'
import { ensureTopics } from '../../emulators/functions.js'
import { startOidcProvider, type RunningOidcProvider } from '../../emulators/oidc/provider.js'
import { freePort, freePorts, startFirestoreEmulator, startPubsubEmulator, type RunningProcess } from '../../emulators/processes.js'
import { runSeeders, SEED, seedBase } from '../../emulators/seed.js'
import { LOCAL_OIDC_AUDIENCE, LOCAL_OIDC_CLIENT_ID } from '../../emulators/suite.js'
import { startStorageServer, type RunningStorageServer } from '../../emulators/storage-server.js'
import { JWT_BEARER_GRANT, KEY_ALGORITHM } from '../../functions/admin/jwt-bearer.js'
import { SERVICES } from '../../functions/services.js'
import { newAuditKeyEntry } from '../../lib/audit-keys.js'
import { loadConfig } from '../../lib/config.js'
import { createKernel } from '../../lib/kernel.js'
import { LocalObjectStorage } from '../../lib/storage.js'
import { ORCHESTRATOR_FUNCTIONS } from '../../orchestrator/function-list.js'
import { launchChromium, signIn } from '../support/browser.js'
import { readDeployPlan, type DeployPlan, type PlannedFunction } from '../support/deploy-plan.js'
import { stageAndInstall, startFunction } from '../support/deployed.js'
import { publicFetch, startFrontEnd, type FrontEnd } from '../support/front-end.js'
import { repoRoot } from '../support/suite.js'

/**
 * The deployed shape (docs/tests.md, "The deployed shape"): the source as infra/stage-source.sh
 * stages it, installed as Cloud Build installs it (`npm ci --omit=dev`), every function of the
 * deploy's plan (`infra/deploy.sh --dry-run`) its own functions-framework process with the
 * environment the plan writes, behind a stand-in for Google's front end of the shared
 * `https://REGION-PROJECT.cloudfunctions.net` host, fed by the push subscriptions the plan creates.
 * The operator's functions env file is infra/functions.env.example with the provider's three
 * settings filled in. What differs from the cloud is `overrides` below, only where Google Cloud
 * cannot be reached from here. Then a short path through it: a token's API calls, a run through
 * Pub/Sub push to its output downloaded through a signed address, and a report signed in a real
 * browser on the one browser host.
 */

// Nothing here runs on Google Cloud: the seeding clients of this process must not probe for a metadata server.
process.env.METADATA_SERVER_DETECTION = 'none'

const PROJECT_ID = 'shape-tier-lab'
/** Where the last run's logs (each function's, the emulators') are kept for a human to read. */
const LOGS = fileURLToPath(new URL('../../.local/deployed-shape-logs/', import.meta.url))
/** The Secret Manager secret the tier asks the deploy to give the functions as OIDC_CLIENT_SECRET. */
const OIDC_SECRET = 'platform-oidc-client-secret'

describe('the deployed shape: the staged source, one functions-framework process per function, the environment the deploy writes', () => {
  let scratch: string
  let source: string
  let plan: DeployPlan
  let frontEnd: FrontEnd
  let browser: Browser
  let provider: RunningOidcProvider
  let storage: RunningStorageServer
  let queue: PubSub
  const emulators: RunningProcess[] = []
  const processes = new Map<string, { fn: PlannedFunction; port: number; process?: RunningProcess }>()
  const users = {
    admin: { email: SEED.user.email, password: randomBytes(12).toString('base64url'), name: SEED.user.name },
    reviewer: { email: SEED.reviewer.email, password: randomBytes(12).toString('base64url'), name: SEED.reviewer.name },
  }
  let token: string
  let projectId: string
  let orgId: string

  /** The function deployed with entry point `entry`. */
  const planned = (entry: string) => {
    const found = plan.functions.find((f) => f.entryPoint === entry)
    if (!found) throw new Error(`the plan deploys no function with entry point ${entry}`)
    return found
  }
  /** A service's public base address: its path on the one browser host. */
  const publicAddress = (entry: string) => `${frontEnd.publicUrl}/${planned(entry).name}`

  /** An API call with the admin's personal access token, through the front end; anything but 2xx fails the test. */
  async function api(entry: string, method: string, path: string, body?: unknown) {
    const res = await publicFetch(frontEnd, `${publicAddress(entry)}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'x-project-id': projectId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    expect(res.status, `${method} ${publicAddress(entry)}/api/v1${path}: ${text.slice(0, 500)}`).toBeLessThan(300)
    return { res, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text }
  }

  /**
   * Where a push endpoint or scheduler address of the plan is reached here: `<url of NAME>` (the
   * function's own run.app address) is its process; an address on the shared host is the front end.
   */
  function localAddress(address: string): string {
    const own = /^<url of ([^>]+)>(.*)$/.exec(address)
    if (own) {
      const target = processes.get(own[1]!)
      if (!target) throw new Error(`${address}: the plan deploys no function ${own[1]}`)
      return `http://127.0.0.1:${target.port}${own[2]}`
    }
    const url = new URL(address)
    if (url.host === frontEnd.host) return `${frontEnd.plainUrl}${url.pathname}${url.search}`
    throw new Error(`${address} is neither a function's own address nor on the shared host ${frontEnd.host}`)
  }

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'deployed-shape-'))
    const l = layout(join(scratch, 'data'))
    await Promise.all([l.work, l.buckets, l.logs].map((dir) => mkdir(dir, { recursive: true })))
    const oidcPort = await freePort()
    const issuer = `http://127.0.0.1:${oidcPort}`
    const clientSecret = randomBytes(24).toString('base64url')

    // The slow parts side by side: the source staged and installed; the emulators; the plan, then the front end on its host and a browser that reaches it there.
    const started = Date.now()
    source = join(scratch, 'source')
    const [install, firestore, pubsub] = await allStarted([
      stageAndInstall(source),
      startFirestoreEmulator({ logFile: join(l.logs, 'firestore.log') }).then((e) => (emulators.push(e), e)),
      startPubsubEmulator({ logFile: join(l.logs, 'pubsub.log') }).then((e) => (emulators.push(e), e)),
      (async () => {
        // The operator's file: the example, with their identity provider's settings in place of the example's.
        const example = await readFile(join(repoRoot, 'infra/functions.env.example'), 'utf8')
        const provider: Record<string, string> = { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: LOCAL_OIDC_CLIENT_ID, OIDC_AUDIENCE: LOCAL_OIDC_AUDIENCE }
        for (const key of Object.keys(provider)) expect(example, `infra/functions.env.example sets ${key}`).toMatch(new RegExp(`^${key}=`, 'm'))
        const envFile = join(scratch, 'functions.env')
        await writeFile(
          envFile,
          example.replace(/^(OIDC_ISSUER|OIDC_CLIENT_ID|OIDC_AUDIENCE)=.*$/gm, (_, key: string) => `${key}=${provider[key]}`),
        )
        plan = await readDeployPlan(
          { PROJECT_ID, FUNCTIONS_ENV_FILE: envFile, FUNCTION_SECRETS: `OIDC_CLIENT_SECRET=${OIDC_SECRET}:latest` },
          scratch,
        )
        frontEnd = await startFrontEnd({ host: new URL(plan.env.ADMIN_PUBLIC_URL!).host, dir: scratch })
        browser = await launchChromium([`--host-resolver-rules=MAP ${frontEnd.host}:443 127.0.0.1:${frontEnd.port}`])
      })(),
    ])
    const installed = Date.now() - started

    // One port per function and one for the storage server, held together so that they differ, and none the
    // provider's: a port freed here and then asked for as port 0 (the storage server) could be one of the functions'.
    const ports = (await freePorts(plan.functions.length + 2)).filter((p) => p !== oidcPort).slice(0, plan.functions.length + 1)
    const storagePort = ports.pop()!
    plan.functions.forEach((fn, i) => processes.set(fn.name, { fn, port: ports[i]! }))
    for (const { fn, port } of processes.values()) frontEnd.route(fn.name, port)

    const adminCallback = `${plan.env.ADMIN_PUBLIC_URL}/api/v1/auth/callback`
    provider = await startOidcProvider({
      port: oidcPort,
      users: [users.admin, users.reviewer],
      clients: [{ client_id: LOCAL_OIDC_CLIENT_ID, client_secret: clientSecret, redirect_uris: [adminCallback] }],
      audience: LOCAL_OIDC_AUDIENCE,
    })
    expect(provider.issuer).toBe(issuer)
    const signingKey = await ensureSigningKey(l)
    storage = await startStorageServer({
      storage: new LocalObjectStorage(l.buckets),
      keys: { [LOCAL_SIGNING_ACCOUNT]: signingKey.publicKey },
      port: storagePort,
    })

    // Secret Manager's part: the value of each secret the plan gives the functions (--set-secrets).
    const secretValues: Record<string, string> = {
      AUDIT_HMAC_KEYS: newAuditKeyEntry(plan.env.AUDIT_HMAC_ACTIVE_KEY ?? 'audit-1'),
      OIDC_CLIENT_SECRET: clientSecret,
    }
    /**
     * What the tier changes in the environment the deploy writes, only because Google Cloud cannot
     * be reached from here (docs/tests.md lists why each).
     */
    const overrides = {
      FIRESTORE_EMULATOR_HOST: firestore.host,
      PUBSUB_EMULATOR_HOST: pubsub.host,
      BATCH_BACKEND: 'local',
      LOCAL_WORK_ROOT: l.work,
      STORAGE_BACKEND: 'local',
      LOCAL_STORAGE_ROOT: l.buckets,
      LOCAL_SIGNING_KEY_FILE: signingKey.file,
      LOCAL_SIGNING_ACCOUNT,
      STORAGE_PUBLIC_URL: storage.url,
      OIDC_ALLOW_HTTP: 'true',
    }
    const envOf = (fn: PlannedFunction) => {
      const secrets = Object.fromEntries(
        [...fn.secrets.keys()].map((key) => {
          const value = secretValues[key]
          if (value === undefined) throw new Error(`the plan gives ${fn.name} the secret ${key}, which the tier has no value for`)
          return [key, value]
        }),
      )
      return { ...plan.env, ...secrets, ...overrides }
    }

    // The data an operator would make through the API after the first administrator (the local suite's seed, on the same emulators).
    const config = loadConfig({ ...envOf(planned('admin')), LOG_LEVEL: 'warn' })
    const kernel = createKernel(config, 'seed')
    const base = await seedBase(kernel)
    const services = Object.fromEntries(SERVICES.map((s) => [s.name, publicAddress(s.name)]))
    await runSeeders({ config, kernel, user: base.user, org: base.org, project: base.project, dataDir: join(scratch, 'data'), services })
    await kernel.db.firestore.terminate()
    token = base.token
    projectId = base.project.id
    orgId = base.org.id

    const booting = Date.now()
    await allStarted(
      [...processes.values()].map(async (p) => {
        p.process = await startFunction({ source, fn: p.fn, port: p.port, env: envOf(p.fn), logFile: join(l.logs, `${p.fn.name}.log`) })
      }),
    )
    const booted = Date.now() - booting

    // The topics and push subscriptions as the plan creates them, once the functions are up (the plan deploys them first too).
    queue = new PubSub({ projectId: PROJECT_ID, apiEndpoint: pubsub.host, emulatorMode: true })
    await ensureTopics(queue, plan.topics)
    for (const push of plan.pushes) {
      await queue.topic(push.topic).createSubscription(push.subscription, {
        pushConfig: { pushEndpoint: localAddress(push.endpoint) },
        ackDeadlineSeconds: push.ackDeadlineSeconds,
      })
    }
    console.log(
      `deployed shape: staged with npm run build in ${(install.stageMs / 1000).toFixed(1)} s, npm ci --omit=dev in ${(install.installMs / 1000).toFixed(1)} s ` +
        `(${(installed / 1000).toFixed(1)} s with the emulators and the browser beside them); ${processes.size} functions up in ${(booted / 1000).toFixed(1)} s ` +
        `on Node ${process.versions.node} (the plan deploys on ${plan.functions[0]?.flags.get('--runtime')})`,
    )
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    await queue?.close()
    await Promise.allSettled([...processes.values()].map((p) => p.process?.stop()))
    await Promise.allSettled([frontEnd?.stop(), provider?.stop(), storage?.stop(), ...emulators.map((e) => e.stop())])
    if (scratch) {
      await rm(LOGS, { recursive: true, force: true })
      await cp(layout(join(scratch, 'data')).logs, LOGS, { recursive: true }).catch(() => undefined)
      await rm(scratch, { recursive: true, force: true })
    }
  }, 60_000)

  it('deploys every function of the code, and serves each from its own process of the staged source', async () => {
    expect(plan.functions.map((f) => f.entryPoint).sort()).toEqual(
      [...SERVICES.map((s) => s.name), ...ORCHESTRATOR_FUNCTIONS.map((f) => f.name)].sort(),
    )
    expect(new Set([...processes.values()].map((p) => p.process?.child.pid)).size).toBe(plan.functions.length)
    // The buildpack refuses a source whose engines.node does not admit the function's runtime.
    const engines = (JSON.parse(await readFile(join(source, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node
    for (const runtime of new Set(plan.functions.map((f) => f.flags.get('--runtime')))) {
      const major = /^nodejs(\d+)$/.exec(runtime ?? '')?.[1]
      expect(major, `--runtime=${runtime}`).toBeDefined()
      // Exactly the runtime's major: the buildpack installs the newest Node.js a range admits.
      expect(engines, `engines.node and --runtime=${runtime}`).toBe(`${major}.x`)
    }
    // Every browser address the deploy configures is on the one host.
    const addresses = Object.keys(plan.env).filter((k) => k.endsWith('_PUBLIC_URL') && k !== 'STORAGE_PUBLIC_URL')
    expect(addresses.length).toBeGreaterThanOrEqual(SERVICES.length)
    for (const key of addresses) expect(new URL(plan.env[key]!).host, key).toBe(frontEnd.host)
    for (const service of SERVICES) {
      const document = `${publicAddress(service.name)}/openapi.json`
      const res = await publicFetch(frontEnd, document)
      expect(res.status, service.name).toBe(200)
      const doc = (await res.json()) as { info: { title: string }; servers: Array<{ url: string }> }
      expect(doc.info.title).toBeTruthy()
      // Swagger UI's "Try it out" calls the document's server resolved against the document's address: the function's own path.
      expect(new URL(doc.servers[0]!.url, document).href.replace(/\/$/, ''), service.name).toBe(publicAddress(service.name))
      // Google's front end says the request came over HTTPS: the service answers with HSTS.
      expect(res.headers.get('strict-transport-security'), service.name).toMatch(/max-age=\d+/)
    }
    // The reconciler, called as the plan's Cloud Scheduler job calls it.
    expect(plan.schedules).not.toHaveLength(0)
    for (const job of plan.schedules) {
      const res = await fetch(localAddress(job.uri), { method: job.method, headers: job.headers, body: job.body })
      expect(res.status, `${job.job}: ${await res.clone().text()}`).toBe(200)
    }
  })

  it('pages through the one browser host: Link rel="next" leads back to the function that answered', async () => {
    const first = await api('compute', 'GET', '/pipelines?page_size=1')
    const next = /<([^>]+)>;\s*rel="next"/.exec(first.res.headers.get('link') ?? '')?.[1]
    expect(next, first.res.headers.get('link') ?? 'no Link header').toBeDefined()
    expect(next!.startsWith(`${publicAddress('compute')}/api/v1/pipelines?`)).toBe(true)
    const second = await api('compute', 'GET', next!.slice(`${publicAddress('compute')}/api/v1`.length))
    expect((second.body as Array<{ id: string }>)[0]!.id).not.toBe((first.body as Array<{ id: string }>)[0]!.id)
  })

  it(
    'runs a pipeline submitted with a token: run requested and job states through Pub/Sub push, its output downloaded through a signed address',
    { timeout: 90_000 },
    async () => {
      const [pipeline] = (await api('compute', 'GET', '/pipelines?slug=hello-local')).body as Array<{ id: string }>
      const greeting = `deployed shape ${Date.now()}`
      const { res: accepted, body: run } = await api('compute', 'POST', '/runs', { pipeline_id: pipeline!.id, params: { greeting } })
      expect(accepted.status).toBe(201)
      let status = ''
      for (const deadline = Date.now() + 60_000; Date.now() < deadline && !['succeeded', 'failed', 'cancelled'].includes(status);) {
        await new Promise((r) => setTimeout(r, 300))
        status = ((await api('compute', 'GET', `/runs/${run.id}`)).body as { status: string }).status
      }
      expect(status).toBe('succeeded')
      const outputs = (await api('compute', 'GET', `/runs/${run.id}/outputs`)).body as Array<{ name: string; path: string }>
      const hello = outputs.find((o) => o.name === 'hello.txt')
      expect(hello, JSON.stringify(outputs)).toBeDefined()
      const signed = (await api('files', 'GET', `/files/download-url?path=${encodeURIComponent(hello!.path)}`)).body as { url: string }
      expect(signed.url.startsWith(`${storage.url}/`)).toBe(true)
      const download = await fetch(signed.url)
      expect(download.status).toBe(200)
      expect(await download.text()).toBe(`${greeting} from run ${run.id}\n`)
    },
  )

  it('lets a service user exchange its signed assertion at the token endpoint its key names, on the one host', async () => {
    const bot = (await api('admin', 'POST', `/organizations/${orgId}/service-users`, { name: 'deployed-shape-ci' })).body as { id: string }
    const key = (await api('admin', 'POST', `/service-users/${bot.id}/keys`)).body as {
      key_id: string
      token_endpoint: string
      private_key_pem: string
    }
    expect(key.token_endpoint).toBe(`${publicAddress('admin')}/api/v1/oauth/token`)
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({ iss: bot.id, sub: bot.id, aud: key.token_endpoint, iat: now, exp: now + 300, jti: randomUUID() })
      .setProtectedHeader({ alg: KEY_ALGORITHM, kid: key.key_id })
      .sign(await importPKCS8(key.private_key_pem, KEY_ALGORITHM))
    const exchanged = await publicFetch(frontEnd, key.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: JWT_BEARER_GRANT, assertion }),
    })
    expect(exchanged.status, await exchanged.clone().text()).toBe(200)
    const { access_token } = (await exchanged.json()) as { access_token: string }
    const projects = await publicFetch(frontEnd, `${publicAddress('admin')}/api/v1/projects`, {
      headers: { authorization: `Bearer ${access_token}` },
    })
    expect(projects.status).toBe(200)
  })

  it(
    'signs a report in a browser on the one browser host: the sign-off page of the report service, the login of the admin service',
    { timeout: 90_000 },
    async () => {
      const [order] = (await api('clinical', 'GET', '/orders')).body as Array<{ accession: string }>
      await api('clinical', 'POST', `/orders/${order!.accession}/transition`, { to: 'signed' })
      const report = (
        await api('reports', 'POST', '/reports', {
          order_id: order!.accession,
          summary: 'Trio genome sequencing, deployed shape.',
          conclusion: 'No variant explains the phenotype.',
        })
      ).body as { id: string }
      await api('reports', 'POST', `/reports/${report.id}/transition`, { to: 'in_review' })
      const snapshot = (await api('reports', 'POST', `/reports/${report.id}/snapshots`)).body as { sha256: string }

      const context = await browser.newContext({ javaScriptEnabled: false, ignoreHTTPSErrors: true })
      const issuerHost = new URL(provider.issuer).host
      await context.route('**/*', (route) => {
        const host = new URL(route.request().url()).host
        return host === frontEnd.host || host === issuerHost ? route.continue() : route.abort('blockedbyclient')
      })
      const page = await context.newPage()
      const signoff = `${publicAddress('reports')}/${report.id}/signoff/`
      await page.goto(signoff)
      await signIn(page, users.reviewer, signoff)
      expect((await page.locator('#sha256').innerText()).trim()).toBe(snapshot.sha256)
      // The session of the admin service's login is the cookie of the one host, sent to every function path on it.
      const [session] = (await context.cookies(frontEnd.publicUrl)).filter((c) => c.name === 'platform_session')
      expect(session).toMatchObject({ domain: frontEnd.host, path: '/', secure: true, httpOnly: true, sameSite: 'Lax' })
      await page.check('input[name=confirm]')
      await page.click('#sign')
      await signIn(page, users.reviewer, `${publicAddress('reports')}/${report.id}/signoff/signed`)
      expect(await page.locator('#status').innerText()).toContain('Signed')
      // The console on the one host: the same session opens every service's pages, whose section links stay on that host.
      const reportPage = await page.goto(`${publicAddress('reports')}/console/p/${projectId}/reports/${report.id}`)
      expect(reportPage?.status()).toBe(200)
      const sections = await page.locator('nav.sections a').evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href))
      expect(sections.length).toBeGreaterThanOrEqual(4)
      for (const link of sections) expect(new URL(link).host, link).toBe(frontEnd.host)
      for (const link of sections) expect((await page.goto(link))?.status(), link).toBe(200)
      await context.close()

      // The session cookie with a foreign Origin is refused; from the one host it passes (and the rule of the signed report answers).
      const comment = (origin: string) =>
        publicFetch(frontEnd, `${publicAddress('reports')}/api/v1/reports/${report.id}/comments`, {
          method: 'POST',
          headers: { cookie: `platform_session=${session!.value}`, origin, 'x-project-id': projectId, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'review', comment: 'After signing?' }),
        })
      const foreign = await comment('https://attacker.example')
      expect(foreign.status).toBe(403)
      expect(((await foreign.json()) as { detail: string }).detail).toMatch(/cross-origin request refused/)
      expect((await comment(frontEnd.publicUrl)).status).toBe(409)

      const signed = (await api('reports', 'GET', `/reports/${report.id}`)).body as {
        status: string
        signatures: Array<{ signer: { email: string } }>
      }
      expect(signed).toMatchObject({ status: 'signed', signatures: [{ signer: { email: users.reviewer.email } }] })
      // The audit event carries the browser's address as Google's front end passed it on, not the front end's own (FRONT_END_ADDRESS).
      const events = (await api('audit', 'GET', `/events?entity=report:${report.id}&action=report.signed`)).body as Array<{
        request?: { ip?: string }
      }>
      expect(events).toHaveLength(1)
      expect(events[0]!.request?.ip).toBe('127.0.0.1')
    },
  )
})

/**
 * Promise.all that waits for every start to end before it rejects with the first failure, so that
 * afterAll finds everything that did start (and stops it) rather than leave a late one running.
 */
async function allStarted<T extends readonly unknown[]>(starts: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(starts)
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) throw failed.reason
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T
}
