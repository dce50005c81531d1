import { z } from 'zod'
import { AuditKeyRing } from './audit-keys.js'
import type { AdmissionLimits } from './overload.js'

/**
 * Every setting the platform reads, parsed once at boot. No other module reads process.env.
 * A bad or missing setting stops startup with a message naming it.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')

const EnvSchema = z.object({
  GOOGLE_CLOUD_PROJECT: z.string().min(1).default('platform-local'),
  /**
   * The environment's name, as the discovery document (GET /api/v1/service-info) tells clients:
   * `local` in the local suite; infra/deploy.sh sets the project id unless the operator's file names
   * one (`production`, `staging`). Unset, the Google Cloud project id.
   */
  PLATFORM_ENVIRONMENT: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lowercase letters, digits, '-' and '_', at most 63, starting with a letter or digit")
    .optional(),
  /** The platform's version, as the discovery document tells clients: infra/deploy.sh and the local suite set package.json's. */
  PLATFORM_VERSION: z.string().min(1).max(100).optional(),
  FIRESTORE_EMULATOR_HOST: z.string().optional(),
  PUBSUB_EMULATOR_HOST: z.string().optional(),
  /** Prefix for every Firestore collection name; lets tests share one emulator. */
  COLLECTION_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]*$/, 'lowercase letters, digits and _ only')
    .default(''),

  TOPIC_RUN_REQUESTED: z.string().min(1).default('run-requested'),
  TOPIC_JOB_STATUS: z.string().min(1).default('batch-job-status'),
  TOPIC_INGESTION_REQUESTED: z.string().min(1).default('ingestion-requested'),
  /** Webhook deliveries due now, pushed to the orchestrator's webhookDelivery function (docs/webhooks.md). */
  TOPIC_WEBHOOK_DELIVERY: z.string().min(1).default('webhook-delivery'),
  /**
   * Where webhooks may be sent (domain/webhooks/addresses.ts): `public`, https:// addresses on the
   * public internet only (the cloud); `local`, http:// too and any address, this machine's included
   * (the local suite and its tests, whose receivers listen on 127.0.0.1).
   */
  WEBHOOK_URL_POLICY: z.enum(['public', 'local']).default('public'),

  /**
   * Who runs a variant ingestion's steps: a Cloud Workflows execution of INGESTION_WORKFLOW (in
   * WORKFLOWS_REGION), each step a call of the ingestionStep function; or `local`, this process
   * (the local suite and tests).
   */
  INGESTION_RUNNER: z.enum(['workflows', 'local']).default('workflows'),
  INGESTION_WORKFLOW: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a workflow id: lowercase letters, digits, - and _')
    .default('platform-ingestion'),
  WORKFLOWS_REGION: z.string().min(1).default('europe-west4'),

  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The `aud` our API expects in OIDC access tokens (the resource indicator). */
  OIDC_AUDIENCE: z.string().min(1).optional(),
  OIDC_ALGORITHMS: z.string().default('RS256,ES256,PS256'),
  /** Lets openid-client talk to an http:// issuer; only the local suite sets it. */
  OIDC_ALLOW_HTTP: bool.default(false),
  /**
   * The client the CLI's logins (e-mail and password, and the browser's device authorization
   * grant) use at the provider, when it is not OIDC_CLIENT_ID: a public client (Entra ID and Okta
   * allow the device grant only to such a client), or with OIDC_CLI_CLIENT_SECRET a confidential
   * one (Google's "TVs and Limited Input devices" clients). See docs/cli-login.md.
   */
  OIDC_CLI_CLIENT_ID: z.string().min(1).optional(),
  /** The secret of OIDC_CLI_CLIENT_ID where the provider gives its CLI client one (Google); from Secret Manager in the cloud. */
  OIDC_CLI_CLIENT_SECRET: z.string().min(1).optional(),
  /**
   * What the CLI's logins ask the provider for: only who the person is (an ID token). The platform
   * issues the CLI's credentials itself, so nothing else of the provider's is needed or kept.
   */
  OIDC_CLI_SCOPE: z.string().trim().min(1).default('openid email profile'),
  /**
   * The absolute lifetime of a CLI login (docs/cli-login.md): its refresh credential is rotated on
   * every use, but no credential of the login outlives this many seconds after the sign-in (30 days).
   */
  CLI_REFRESH_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(3600)
    .max(366 * 24 * 3600)
    .default(30 * 24 * 3600),

  /**
   * Each HTTP service's public base address, as browsers and the CLI reach it (one setting per service
   * of functions/services.ts, named by `publicUrlSetting`): the admin service's for the OIDC redirect
   * URI and token audiences, the report service's for its pages, every service's for the addresses it
   * hands out (pagination links, its OpenAPI document's server). In the cloud they all share one host
   * (docs/deploying.md, "The browser host"); infra/deploy.sh sets them.
   */
  ADMIN_PUBLIC_URL: z.url().optional(),
  COMPUTE_PUBLIC_URL: z.url().optional(),
  CLINICAL_PUBLIC_URL: z.url().optional(),
  FILES_PUBLIC_URL: z.url().optional(),
  VARIANT_CACHE_PUBLIC_URL: z.url().optional(),
  REPORTS_PUBLIC_URL: z.url().optional(),
  AUDIT_PUBLIC_URL: z.url().optional(),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 3600),
  SERVICE_TOKEN_TTL_SECONDS: z.coerce.number().int().positive().max(3600).default(3600),

  BATCH_BACKEND: z.enum(['cloud', 'local']).default('cloud'),
  BATCH_REGION: z.string().min(1).default('europe-west4'),
  STORAGE_BACKEND: z.enum(['gcs', 'local']).default('gcs'),
  LOCAL_STORAGE_ROOT: z.string().optional(),
  LOCAL_WORK_ROOT: z.string().optional(),
  /** The local suite's service-account key (PEM) and account e-mail, with which local storage addresses are signed. */
  LOCAL_SIGNING_KEY_FILE: z.string().min(1).optional(),
  LOCAL_SIGNING_ACCOUNT: z.email().optional(),
  /** Where signed storage addresses point: Cloud Storage by default, the local suite's storage server locally. */
  STORAGE_PUBLIC_URL: z.url().optional(),
  /** Buckets of shared reference data (genomes, annotations) that any project's runs may read, comma-separated. */
  SHARED_REFERENCE_BUCKETS: z.string().default(''),
  /**
   * The platform's own Google Cloud identities (the functions' runtime account, the Pub/Sub push
   * account, the build account), comma-separated: never bound to a project as its service account,
   * since the platform may act as them everywhere. infra/deploy.sh sets it.
   */
  PLATFORM_SERVICE_ACCOUNTS: z.string().default(''),

  /**
   * The platform's own public origins (scheme://host[:port]), comma-separated: a state-changing
   * request authenticated by the platform_session cookie must come from one of them. The origins of
   * the services' public addresses (<SERVICE>_PUBLIC_URL) are always included.
   */
  PUBLIC_ORIGINS: z.string().default(''),
  /**
   * Addresses appended to X-Forwarded-For by the proxies in front of the services: 1 behind Google's
   * front end (the cloudfunctions.net and run.app hosts), 2 behind an external Application Load
   * Balancer (the client's and its own), 0 when clients connect directly (the local suite). The
   * client's address is the entry that many places from the right; with 0 the header is ignored,
   * so a client cannot choose the address it is throttled and audited by. infra/deploy.sh sets it.
   */
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(5).default(0),

  /**
   * Requests a service instance handles at a time (docs/operating.md): infra/deploy.sh sets it to
   * the functions' --concurrency (FUNCTION_CONCURRENCY, 40 by default), so an instance enforces
   * itself the limit Cloud Run routes by, and the local suite, which runs without Cloud Run's front
   * end, behaves as an instance does. MAX_QUEUED_REQUESTS more may wait, each at most
   * MAX_QUEUE_WAIT_MS, for one of them to end; any other is answered 503 with Retry-After.
   */
  MAX_CONCURRENT_REQUESTS: z.coerce.number().int().min(1).max(1000).default(40),
  MAX_QUEUED_REQUESTS: z.coerce.number().int().min(0).max(1000).default(40),
  MAX_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(10_000).default(250),

  /**
   * The audit log's keys (docs/audit.md): `id:base64key[,id:base64key…]`, each 32 bytes or more,
   * and the id of the one new events are keyed with (optional when the ring holds one). A secret: in
   * the cloud from Secret Manager (infra/deploy.sh), locally from the suite's data folder. Every
   * process that records audit events needs it (createKernel refuses to start without it).
   */
  AUDIT_HMAC_KEYS: z.string().min(1).optional(),
  AUDIT_HMAC_ACTIVE_KEY: z.string().min(1).optional(),

  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
})

export type Env = z.infer<typeof EnvSchema>

/** The setting of a service's public base address: `ADMIN_PUBLIC_URL` for `admin`, `VARIANT_CACHE_PUBLIC_URL` for `variant_cache`. */
export const publicUrlSetting = (service: string) => `${service.toUpperCase().replaceAll('-', '_')}_PUBLIC_URL`

/** The services whose public base address a setting names (test/unit/lib/config.test.ts checks the registry's are all here). */
const PUBLIC_URL_SETTINGS = (Object.keys(EnvSchema.shape) as Array<keyof Env>).filter(
  (key): key is keyof Env & `${string}_PUBLIC_URL` => key.endsWith('_PUBLIC_URL') && key !== 'STORAGE_PUBLIC_URL',
)

export interface Config {
  gcpProject: string
  /** PLATFORM_ENVIRONMENT, else the Google Cloud project id. */
  environment: string
  /** PLATFORM_VERSION; null where the deploy did not say. */
  version: string | null
  firestoreEmulatorHost?: string
  pubsubEmulatorHost?: string
  collectionPrefix: string
  topics: { runRequested: string; jobStatus: string; ingestionRequested: string; webhookDelivery: string }
  /** Where webhooks may be sent: the public internet only, or (the local suite) anywhere. */
  webhookUrlPolicy: 'public' | 'local'
  /** Variant ingestion: its runner, and the Cloud Workflows workflow it executes in the cloud (full resource name). */
  ingestion: { runner: 'workflows' | 'local'; workflow: string }
  oidc?: {
    issuer: string
    clientId: string
    clientSecret?: string
    audience: string
    algorithms: string[]
    allowHttp: boolean
    /** The CLI's logins: their own client, public or with a secret (else the platform's client), and the scope they ask for. */
    cli: { clientId?: string; clientSecret?: string; scope: string }
  }
  /**
   * Each service's public base address, without a trailing slash, by service name (`variant_cache`),
   * for those configured: `<SERVICE>_PUBLIC_URL`.
   */
  publicUrls: Readonly<Record<string, string>>
  /** The admin service's (publicUrls.admin): every service sends browsers there to log in. */
  adminPublicUrl?: string
  sessionTtlSeconds: number
  serviceTokenTtlSeconds: number
  /** The absolute lifetime of a CLI login and its refresh credentials. */
  cliRefreshTtlSeconds: number
  batch: { backend: 'cloud' | 'local'; region: string; localWorkRoot?: string }
  storage: {
    backend: 'gcs' | 'local'
    localRoot?: string
    signingKeyFile?: string
    signingAccount?: string
    publicUrl?: string
    sharedBuckets: string[]
    /** PLATFORM_SERVICE_ACCOUNTS, lowercased: never a project's service account. */
    platformAccounts: string[]
  }
  trustedProxyHops: number
  /** How many requests a service instance handles at a time, and how many wait and how long (lib/overload.ts). */
  admission: AdmissionLimits
  /** Origins allowed to send cookie-authenticated state-changing requests. */
  publicOrigins: string[]
  /** The keys of the audit log; absent in tools that record nothing (a kernel requires them). */
  auditKeys?: AuditKeyRing
  logLevel: Env['LOG_LEVEL']
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

function publicUrls(e: Env): Record<string, string> {
  return Object.fromEntries(
    PUBLIC_URL_SETTINGS.flatMap((key) => {
      const url = e[key]
      return url ? [[key.slice(0, -'_PUBLIC_URL'.length).toLowerCase(), url.replace(/\/+$/, '')]] : []
    }),
  )
}

function publicOrigins(e: Env, services: Record<string, string>): string[] {
  const listed = e.PUBLIC_ORIGINS.split(',')
    .map((o) => o.trim())
    .filter(Boolean)
  const origins = [...listed, ...Object.values(services)].flatMap((u) => {
    if (!u) return []
    try {
      return [new URL(u).origin]
    } catch {
      throw new ConfigError(`invalid configuration: PUBLIC_ORIGINS: '${u}' is not a URL`)
    }
  })
  return [...new Set(origins)]
}

function auditKeys(e: Env): AuditKeyRing | undefined {
  // Without the ring, AUDIT_HMAC_ACTIVE_KEY alone says nothing yet: the deploy's check of the environment has no secret at hand, and createKernel refuses to start without keys.
  if (e.AUDIT_HMAC_KEYS === undefined) return undefined
  try {
    return AuditKeyRing.parse(e.AUDIT_HMAC_KEYS, e.AUDIT_HMAC_ACTIVE_KEY)
  } catch (err) {
    throw new ConfigError(`invalid configuration: AUDIT_HMAC_KEYS: ${(err as Error).message}`)
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvSchema.safeParse(env)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`)
  }
  const e = parsed.data
  const oidcSet = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_AUDIENCE].filter(Boolean).length
  if (oidcSet > 0 && oidcSet < 3) {
    // Without an audience of its own the API would accept ID tokens (aud = client id) as access tokens.
    throw new ConfigError('invalid configuration: OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_AUDIENCE must be set together')
  }
  if (e.OIDC_AUDIENCE && e.OIDC_AUDIENCE === e.OIDC_CLIENT_ID) {
    throw new ConfigError('invalid configuration: OIDC_AUDIENCE must differ from OIDC_CLIENT_ID (the API resource, not the client)')
  }
  if (e.OIDC_AUDIENCE && e.OIDC_AUDIENCE === e.OIDC_CLI_CLIENT_ID) {
    throw new ConfigError('invalid configuration: OIDC_AUDIENCE must differ from OIDC_CLI_CLIENT_ID (the API resource, not the client)')
  }
  if (e.OIDC_CLI_CLIENT_SECRET && !e.OIDC_CLI_CLIENT_ID) {
    throw new ConfigError('invalid configuration: OIDC_CLI_CLIENT_SECRET is the secret of OIDC_CLI_CLIENT_ID: set both, or neither')
  }
  if (e.BATCH_BACKEND === 'local' && !e.LOCAL_WORK_ROOT) {
    throw new ConfigError('invalid configuration: LOCAL_WORK_ROOT is required when BATCH_BACKEND=local')
  }
  if (e.STORAGE_BACKEND === 'local' && !e.LOCAL_STORAGE_ROOT) {
    throw new ConfigError('invalid configuration: LOCAL_STORAGE_ROOT is required when STORAGE_BACKEND=local')
  }
  const algorithms = e.OIDC_ALGORITHMS.split(',')
    .map((a) => a.trim())
    .filter(Boolean)
  if (algorithms.some((a) => a.toLowerCase() === 'none' || a.startsWith('HS'))) {
    throw new ConfigError('invalid configuration: OIDC_ALGORITHMS may list only asymmetric algorithms')
  }
  const services = publicUrls(e)
  return {
    gcpProject: e.GOOGLE_CLOUD_PROJECT,
    environment: e.PLATFORM_ENVIRONMENT ?? e.GOOGLE_CLOUD_PROJECT,
    version: e.PLATFORM_VERSION ?? null,
    firestoreEmulatorHost: e.FIRESTORE_EMULATOR_HOST,
    pubsubEmulatorHost: e.PUBSUB_EMULATOR_HOST,
    collectionPrefix: e.COLLECTION_PREFIX,
    topics: {
      runRequested: e.TOPIC_RUN_REQUESTED,
      jobStatus: e.TOPIC_JOB_STATUS,
      ingestionRequested: e.TOPIC_INGESTION_REQUESTED,
      webhookDelivery: e.TOPIC_WEBHOOK_DELIVERY,
    },
    webhookUrlPolicy: e.WEBHOOK_URL_POLICY,
    ingestion: {
      runner: e.INGESTION_RUNNER,
      workflow: `projects/${e.GOOGLE_CLOUD_PROJECT}/locations/${e.WORKFLOWS_REGION}/workflows/${e.INGESTION_WORKFLOW}`,
    },
    oidc:
      e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_AUDIENCE
        ? {
            issuer: e.OIDC_ISSUER,
            clientId: e.OIDC_CLIENT_ID,
            clientSecret: e.OIDC_CLIENT_SECRET,
            audience: e.OIDC_AUDIENCE,
            algorithms,
            allowHttp: e.OIDC_ALLOW_HTTP,
            cli: { clientId: e.OIDC_CLI_CLIENT_ID, clientSecret: e.OIDC_CLI_CLIENT_SECRET, scope: e.OIDC_CLI_SCOPE },
          }
        : undefined,
    publicUrls: services,
    adminPublicUrl: services.admin,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    serviceTokenTtlSeconds: e.SERVICE_TOKEN_TTL_SECONDS,
    cliRefreshTtlSeconds: e.CLI_REFRESH_TTL_SECONDS,
    batch: { backend: e.BATCH_BACKEND, region: e.BATCH_REGION, localWorkRoot: e.LOCAL_WORK_ROOT },
    storage: {
      backend: e.STORAGE_BACKEND,
      localRoot: e.LOCAL_STORAGE_ROOT,
      signingKeyFile: e.LOCAL_SIGNING_KEY_FILE,
      signingAccount: e.LOCAL_SIGNING_ACCOUNT,
      publicUrl: e.STORAGE_PUBLIC_URL?.replace(/\/+$/, ''),
      sharedBuckets: e.SHARED_REFERENCE_BUCKETS.split(',')
        .map((b) => b.trim())
        .filter(Boolean),
      platformAccounts: e.PLATFORM_SERVICE_ACCOUNTS.split(',')
        .map((a) => a.trim().toLowerCase())
        .filter(Boolean),
    },
    trustedProxyHops: e.TRUSTED_PROXY_HOPS,
    admission: { maxConcurrent: e.MAX_CONCURRENT_REQUESTS, maxQueued: e.MAX_QUEUED_REQUESTS, maxWaitMs: e.MAX_QUEUE_WAIT_MS },
    publicOrigins: publicOrigins(e, services),
    auditKeys: auditKeys(e),
    logLevel: e.LOG_LEVEL,
  }
}
