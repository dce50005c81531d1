import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import type { Server } from 'node:http'
import { join, resolve } from 'node:path'
import { createAdaptorServer } from '@hono/node-server'
import { PubSub } from '@google-cloud/pubsub'
import { SERVICES } from '../functions/services.js'
import { loadConfig, publicUrlSetting, type Config } from '../lib/config.js'
import type { Level } from '../lib/log.js'
import { LocalObjectStorage } from '../lib/storage.js'
import { API_PREFIX } from '../lib/http.js'
import { createKernel, type KernelDeps } from '../lib/kernel.js'
import {
  acquireLock,
  cleanDataDir,
  ensureSigningKey,
  exportFirestore,
  firestoreImportPath,
  layout,
  LOCAL_SIGNING_ACCOUNT,
  loadState,
  removeSuiteFile,
  saveState,
  writeSuiteFile,
  type SuiteFile,
} from './data-dir.js'
import { ensureTopics, FUNCTION_NAMES } from './functions.js'
import { startFunctionsThread } from './functions-thread.js'
import { suiteLogLevel, suiteLogOutput, type SuiteLogOptions } from './log-output.js'
import { forgetEmulators, recordEmulator, takeOverLeftovers } from './leftovers.js'
import { platformOidcEnv, startOidcProvider } from './oidc/provider.js'
import { emulatorCommand, startFirestoreEmulator, startPubsubEmulator, type RunningProcess } from './processes.js'
import { allPorts, suitePorts } from './ports.js'
import { runSeeders, SEED, seedBase } from './seed.js'
import { closeServer, ensurePortFree, listen, PortInUseError } from './servers.js'
import { createStorageServer } from './storage-server.js'
import { pointCliProfiles } from './cli-profile.js'

export const LOCAL_GCP_PROJECT = 'platform-local'
/** The repository's version (package.json), which the discovery document names as the deploy does. */
const PLATFORM_VERSION = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }).version
/** The environment's name in the discovery document, and the CLI profile `npm start` points at the suite. */
export const LOCAL_ENVIRONMENT = 'local'
/** The platform's OAuth client at the local identity provider, and the `aud` of the access tokens it issues. */
export const LOCAL_OIDC_CLIENT_ID = 'platform'
/**
 * The CLI's own client at the local identity provider: confidential, both login methods, and
 * opaque access tokens (as Google issues), so that the suite's CLI logins never rely on the
 * provider's access tokens: they end with the platform's own credentials (docs/cli-login.md).
 */
export const LOCAL_OIDC_CLI_CLIENT_ID = 'platform-cli'
export const LOCAL_OIDC_AUDIENCE = 'urn:pipeline-platform:api'
/**
 * How often the suite exports Firestore while running. A crash of the suite alone loses nothing
 * (the next start exports its emulator); this bounds what a crash of the whole machine loses.
 */
const EXPORT_EVERY_MS = 60_000

export interface SuiteOptions {
  dataDir: string
  basePort: number
  clean: boolean
  /** How the services' log lines are shown (emulators/log-output.ts); they are kept in the data folder's logs/platform.log. */
  log: Omit<SuiteLogOptions, 'file'>
  /** Progress lines for a human. */
  say?: (line: string) => void
  /** The environment whose CLI configuration folder gets the suite's profiles (emulators/cli-profile.ts); none without it. */
  cliEnv?: Record<string, string | undefined>
}

export interface RunningSuite {
  suite: SuiteFile
  /** True when this start generated the admin password (first start or after --clean). */
  passwordCreated: boolean
  /** What was done to the CLI's profiles, a line each. */
  cliProfiles: string[]
  stop(): Promise<void>
}

export { PortInUseError }

export function suiteEnv(opts: {
  dataDir: string
  firestoreHost: string
  pubsubHost: string
  /** The local service account's key (PEM file), and where the storage server listens. */
  signingKeyFile: string
  storageUrl: string
  services: Record<string, string>
  /** platformOidcEnv of the suite's provider. */
  oidcEnv: Record<string, string>
  /** The audit key ring kept in the data folder (SuiteState). */
  auditKeys: { ring: string; active: string }
  /** The lowest level the terminal shows (SuiteLogOptions). */
  logLevel: Level
}): Record<string, string | undefined> {
  const l = layout(opts.dataDir)
  return {
    GOOGLE_CLOUD_PROJECT: LOCAL_GCP_PROJECT,
    PLATFORM_ENVIRONMENT: LOCAL_ENVIRONMENT,
    PLATFORM_VERSION: PLATFORM_VERSION,
    FIRESTORE_EMULATOR_HOST: opts.firestoreHost,
    PUBSUB_EMULATOR_HOST: opts.pubsubHost,
    ...opts.oidcEnv,
    // Every service's address, as the deploy sets them: the discovery document (GET /api/v1/service-info) lists them.
    ...Object.fromEntries(Object.entries(opts.services).map(([name, url]) => [publicUrlSetting(name), url])),
    BATCH_BACKEND: 'local',
    // Variant ingestions run their steps in the orchestrator's process (Cloud Workflows in the cloud).
    INGESTION_RUNNER: 'local',
    // Webhooks may go to receivers on this machine (the cloud sends them to public https:// addresses only).
    WEBHOOK_URL_POLICY: 'local',
    LOCAL_WORK_ROOT: l.work,
    STORAGE_BACKEND: 'local',
    LOCAL_STORAGE_ROOT: l.buckets,
    LOCAL_SIGNING_KEY_FILE: opts.signingKeyFile,
    LOCAL_SIGNING_ACCOUNT: LOCAL_SIGNING_ACCOUNT,
    STORAGE_PUBLIC_URL: opts.storageUrl,
    // Browser pages of the suite (sign-off, docs) send cookie-authenticated requests from these.
    PUBLIC_ORIGINS: Object.values(opts.services).join(','),
    AUDIT_HMAC_KEYS: opts.auditKeys.ring,
    AUDIT_HMAC_ACTIVE_KEY: opts.auditKeys.active,
    LOG_LEVEL: suiteLogLevel(opts.logLevel),
  }
}

/**
 * Brings up the whole platform on 127.0.0.1: both emulators, every service of the registry, and
 * the seed data. `stop()` undoes it in reverse order (servers, then the emulators after a
 * Firestore export), and is safe to call more than once.
 */
export async function startSuite(opts: SuiteOptions): Promise<RunningSuite> {
  // Runs untouched since this instant were in flight under an earlier process: the reconciler treats them as abandoned.
  const startedAt = new Date()
  const say = opts.say ?? (() => undefined)
  const dataDir = resolve(opts.dataDir)
  const l = layout(dataDir)

  // Before touching anything: a missing tool or a running suite must not cost the user their data.
  emulatorCommand('firestore')
  emulatorCommand('pubsub')
  await mkdir(dataDir, { recursive: true })
  const releaseLock = await acquireLock(l, dataDir)

  const cleanups: Array<() => Promise<void>> = [releaseLock]
  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      // First, so that nothing polling for suite.json takes a stopping suite for a running one.
      await removeSuiteFile(l).catch((err: unknown) => say(`while stopping: ${err instanceof Error ? err.message : String(err)}`))
      for (const cleanup of cleanups.splice(0).reverse()) {
        try {
          await cleanup()
        } catch (err) {
          say(`while stopping: ${err instanceof Error ? err.message : String(err)}`)
        }
      }
    })()
    return stopping
  }

  try {
    // The folder is ours now: a suite.json still here was left by a run that crashed, and describes nothing that is up.
    await removeSuiteFile(l)
    const leftovers = await takeOverLeftovers(l, { exportData: !opts.clean, gcpProject: LOCAL_GCP_PROJECT })
    if (leftovers) {
      say(
        leftovers.found.length
          ? `the suite that ran on this folder before (pid ${leftovers.suitePid}) did not stop cleanly; its ${leftovers.found.join(' and ')} emulator${leftovers.found.length > 1 ? 's were' : ' was'} still running` +
              (leftovers.exported
                ? ': took its Firestore data, then stopped them'
                : leftovers.exportError
                  ? `: its Firestore data could not be exported (${leftovers.exportError}); the last periodic export is used`
                  : ': stopped')
          : `the suite that ran on this folder before (pid ${leftovers.suitePid}) did not stop cleanly, and its emulators are gone: the last periodic export is used`,
      )
    }
    if (opts.clean) {
      say(`starting clean: removing the previous data in ${dataDir}`)
      await cleanDataDir(l)
    }
    for (const dir of [l.work, l.buckets, l.logs, l.pubsub]) await mkdir(dir, { recursive: true })
    const { state, created: passwordCreated } = await loadState(l)

    const ports = suitePorts(opts.basePort, SERVICES, FUNCTION_NAMES)
    for (const port of allPorts(ports)) await ensurePortFree(port)

    const importData = firestoreImportPath(l)
    say(importData ? 'starting the emulators (Firestore with the data of the last run)' : 'starting the emulators')
    // Registered first, so that it runs once both emulators have stopped.
    cleanups.push(async () => forgetEmulators(l))
    const emulators = await Promise.allSettled([
      startFirestoreEmulator({
        port: ports.firestore,
        importData,
        logFile: join(l.logs, 'firestore.log'),
        onSpawn: (pid) => recordEmulator(l, { kind: 'firestore', pid, host: `127.0.0.1:${ports.firestore}` }),
      }),
      startPubsubEmulator({
        port: ports.pubsub,
        dataDir: l.pubsub,
        logFile: join(l.logs, 'pubsub.log'),
        onSpawn: (pid) => recordEmulator(l, { kind: 'pubsub', pid, host: `127.0.0.1:${ports.pubsub}` }),
      }),
    ])
    for (const e of emulators) if (e.status === 'fulfilled') cleanups.push(() => e.value.stop())
    const failed = emulators.find((e): e is PromiseRejectedResult => e.status === 'rejected')
    if (failed) throw failed.reason
    const [firestore, pubsub] = emulators.map((e) => (e as PromiseFulfilledResult<RunningProcess>).value) as [RunningProcess, RunningProcess]

    // Serialized, because the periodic export and the final one must not swap folders at the same time.
    let exporting = Promise.resolve()
    const exportNow = () => {
      // A failed export must not block the next one.
      exporting = exporting.catch(() => undefined).then(() => exportFirestore(l, firestore.host, LOCAL_GCP_PROJECT))
      return exporting
    }
    // Registered after the emulators, so it runs before they stop.
    cleanups.push(async () => {
      say('exporting Firestore data')
      await exportNow()
    })

    const signingKey = await ensureSigningKey(l)
    const storageUrl = `http://127.0.0.1:${ports.storage}`
    const serviceUrls = Object.fromEntries(Object.entries(ports.services).map(([name, port]) => [name, `http://127.0.0.1:${port}`]))
    const adminUrl = serviceUrls.admin
    if (!adminUrl) throw new Error('the service registry has no admin service; the local suite needs it for login and seeding')

    say('starting the OIDC provider')
    const oidcClient = {
      client_id: LOCAL_OIDC_CLIENT_ID,
      client_secret: state.oidc_client_secret,
      redirect_uris: [`${adminUrl}${API_PREFIX}/auth/callback`],
    }
    const cliClient = {
      client_id: LOCAL_OIDC_CLI_CLIENT_ID,
      client_secret: state.oidc_cli_client_secret,
      password_grant: true,
      opaque_access_tokens: true,
    }
    const provider = await startOidcProvider({
      port: ports.oidc,
      host: '127.0.0.1',
      users: [
        { email: SEED.user.email, password: state.admin_password, name: SEED.user.name },
        { email: SEED.reviewer.email, password: state.reviewer_password, name: SEED.reviewer.name },
      ],
      clients: [oidcClient, cliClient],
      audience: LOCAL_OIDC_AUDIENCE,
    })
    cleanups.push(() => provider.stop())

    const env = suiteEnv({
      dataDir,
      firestoreHost: firestore.host,
      pubsubHost: pubsub.host,
      signingKeyFile: signingKey.file,
      storageUrl,
      services: serviceUrls,
      oidcEnv: platformOidcEnv(provider, oidcClient, LOCAL_OIDC_AUDIENCE, cliClient),
      auditKeys: { ring: state.audit_hmac_keys, active: state.audit_hmac_active_key },
      logLevel: opts.log.level,
    })
    const config: Config = loadConfig(env)
    const logOptions: SuiteLogOptions = { ...opts.log, file: join(l.logs, 'platform.log') }
    const logs = suiteLogOutput(logOptions)
    // Registered before the servers, so that it runs after they have stopped: their last lines are kept.
    cleanups.push(async () => logs.close())

    const kernels: KernelDeps[] = []
    const kernelFor = (name: string) => {
      const kernel = createKernel(config, name, { logSink: logs.sink })
      kernels.push(kernel)
      return kernel
    }
    cleanups.push(async () => {
      await Promise.all(kernels.map((k) => k.db.firestore.terminate()))
    })

    say('seeding')
    const seedKernel = kernelFor('seed')
    const base = await seedBase(seedKernel, { token: state.token, reviewerToken: state.reviewer_token })
    if (base.tokenCreated) await saveState(l, { ...state, token: base.token, reviewer_token: base.reviewerToken })
    await runSeeders({ config, kernel: seedKernel, user: base.user, org: base.org, project: base.project, dataDir, services: serviceUrls })

    const queueClient = new PubSub({ projectId: LOCAL_GCP_PROJECT, apiEndpoint: pubsub.host, emulatorMode: true })
    cleanups.push(() => queueClient.close())
    await ensureTopics(queueClient, [
      config.topics.runRequested,
      config.topics.jobStatus,
      config.topics.ingestionRequested,
      config.topics.webhookDelivery,
    ])

    // The functions first, in their own thread: a run accepted by the compute service is picked up as soon as it is published.
    // Their jobs (the local executor's) run there too; any executor on the same work root, the compute service's included, can end them.
    const functions = await startFunctionsThread({ env, ports: ports.functions, log: logOptions })
    cleanups.push(() => functions.stop())
    const recovered = functions.recovered
    if (recovered.resumed + recovered.failed) {
      say(
        `jobs left unfinished by the previous start: ${recovered.resumed} not yet started (starting now), ${recovered.failed} running (failed: executor restarted)`,
      )
    }

    // Cloud Storage's part: the signed addresses the file service hands out point here.
    const storageServer = createStorageServer({
      storage: new LocalObjectStorage(l.buckets),
      keys: { [LOCAL_SIGNING_ACCOUNT]: signingKey.publicKey },
      log: seedKernel.log,
    })
    await listen(storageServer, ports.storage, 'the storage server')
    cleanups.push(() => closeServer(storageServer))

    for (const service of SERVICES) {
      const port = ports.services[service.name]!
      const server = createAdaptorServer({ fetch: service.create(kernelFor(service.name)).fetch, hostname: '127.0.0.1' }) as Server
      await listen(server, port, `the ${service.name} service`)
      cleanups.push(() => closeServer(server))
    }

    await exportNow()
    const exportTimer = setInterval(() => {
      exportNow().catch((err) => say(`periodic Firestore export failed: ${err instanceof Error ? err.message : String(err)}`))
    }, EXPORT_EVERY_MS)
    exportTimer.unref()
    cleanups.push(async () => clearInterval(exportTimer))
    // The first pass runs now: runs left in flight by an earlier process are settled or published again at once.
    functions.scheduleReconcile({ abandoned_before: startedAt.toISOString() })

    const suite: SuiteFile = {
      services: serviceUrls,
      functions: functions.urls,
      storage_url: storageUrl,
      oidc_issuer: provider.issuer,
      oidc_client_id: oidcClient.client_id,
      project_id: base.project.id,
      org_id: base.org.id,
      bucket_name: base.project.bucket_name,
      token: base.token,
      user: { email: SEED.user.email, password: state.admin_password },
      reviewer: { email: SEED.reviewer.email, password: state.reviewer_password, token: base.reviewerToken },
      firestore_emulator_host: firestore.host,
      pubsub_emulator_host: pubsub.host,
      gcp_project: LOCAL_GCP_PROJECT,
      data_dir: dataDir,
      started_at: new Date().toISOString(),
      pid: process.pid,
    }
    // Before suite.json, so that whoever waits for it finds the CLI pointed here. A profile that cannot be written does not stop the suite.
    let cliProfiles: string[] = []
    try {
      if (opts.cliEnv) cliProfiles = pointCliProfiles(suite, opts.cliEnv)
    } catch (err) {
      cliProfiles = [`the CLI's profiles were not set: ${err instanceof Error ? err.message : String(err)}`]
    }
    await writeSuiteFile(l, suite)
    return { suite, passwordCreated, cliProfiles, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
