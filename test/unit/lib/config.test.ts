import { describe, expect, it } from 'vitest'
import { newAuditKeyEntry } from '../../../lib/audit-keys.js'
import { SERVICES } from '../../../functions/services.js'
import { ConfigError, loadConfig, publicUrlSetting } from '../../../lib/config.js'
import { createKernel } from '../../../lib/kernel.js'

describe('configuration', () => {
  it('starts with defaults from an empty environment', () => {
    const config = loadConfig({})
    expect(config.gcpProject).toBe('platform-local')
    expect(config.oidc).toBeUndefined()
    expect(config.topics).toEqual({
      runRequested: 'run-requested',
      jobStatus: 'batch-job-status',
      ingestionRequested: 'ingestion-requested',
      webhookDelivery: 'webhook-delivery',
    })
    // Webhooks go to public https:// addresses only, unless the local suite says otherwise.
    expect(config.webhookUrlPolicy).toBe('public')
    expect(config.ingestion).toEqual({ runner: 'workflows', workflow: 'projects/platform-local/locations/europe-west4/workflows/platform-ingestion' })
  })

  it.each([
    [{ SESSION_TTL_SECONDS: 'soon' }, /SESSION_TTL_SECONDS/],
    [{ OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a' }, /OIDC_ISSUER/],
    [{ OIDC_ISSUER: 'https://idp.example.org' }, /OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_AUDIENCE must be set together/],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'platform', OIDC_AUDIENCE: 'platform' }, /OIDC_AUDIENCE must differ/],
    [
      { OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'platform', OIDC_AUDIENCE: 'api', OIDC_CLI_CLIENT_ID: 'api' },
      /OIDC_AUDIENCE must differ from OIDC_CLI_CLIENT_ID/,
    ],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a', OIDC_ALGORITHMS: 'RS256,none' }, /OIDC_ALGORITHMS/],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a', OIDC_ALGORITHMS: 'HS256' }, /OIDC_ALGORITHMS/],
    [{ BATCH_BACKEND: 'local' }, /LOCAL_WORK_ROOT/],
    [{ INGESTION_RUNNER: 'lambda' }, /INGESTION_RUNNER/],
    [{ INGESTION_WORKFLOW: 'Not A Workflow' }, /INGESTION_WORKFLOW/],
    [{ STORAGE_BACKEND: 'local' }, /LOCAL_STORAGE_ROOT/],
    [{ BATCH_BACKEND: 'kubernetes' }, /BATCH_BACKEND/],
    [{ COLLECTION_PREFIX: 'Runs!' }, /COLLECTION_PREFIX/],
    [{ AUDIT_HMAC_KEYS: 'k1:c2hvcnQ=' }, /^invalid configuration: AUDIT_HMAC_KEYS: key k1 is not 32 or more bytes in base64$/],
    [{ AUDIT_HMAC_KEYS: `${newAuditKeyEntry('k1')},${newAuditKeyEntry('k2')}` }, /AUDIT_HMAC_KEYS: .*AUDIT_HMAC_ACTIVE_KEY/],
    [{ AUDIT_HMAC_KEYS: newAuditKeyEntry('k1'), AUDIT_HMAC_ACTIVE_KEY: 'k2' }, /AUDIT_HMAC_KEYS: the active key k2/],
  ])('refuses %j with an error naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  it("gives the CLI's logins the platform's client and a scope for who the person is, unless told a client, its secret and a scope of their own", () => {
    const idp = { OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'platform', OIDC_AUDIENCE: 'api' }
    expect(loadConfig(idp).oidc?.cli).toEqual({ clientId: undefined, clientSecret: undefined, scope: 'openid email profile' })
    const entra = { ...idp, OIDC_CLI_CLIENT_ID: 'platform-cli', OIDC_CLI_SCOPE: ' openid email  ' }
    expect(loadConfig(entra).oidc?.cli).toEqual({ clientId: 'platform-cli', clientSecret: undefined, scope: 'openid email' })
    const google = { ...idp, OIDC_CLI_CLIENT_ID: 'cli.apps.googleusercontent.com', OIDC_CLI_CLIENT_SECRET: 'GOCSPX-secret' }
    expect(loadConfig(google).oidc?.cli).toEqual({
      clientId: google.OIDC_CLI_CLIENT_ID,
      clientSecret: 'GOCSPX-secret',
      scope: 'openid email profile',
    })
  })

  it('keeps a CLI login 30 days unless told otherwise, and refuses a lifetime under an hour or a secret without its client', () => {
    expect(loadConfig({}).cliRefreshTtlSeconds).toBe(30 * 24 * 3600)
    expect(loadConfig({ CLI_REFRESH_TTL_SECONDS: '604800' }).cliRefreshTtlSeconds).toBe(604_800)
    expect(() => loadConfig({ CLI_REFRESH_TTL_SECONDS: '60' })).toThrow(/CLI_REFRESH_TTL_SECONDS/)
    expect(() => loadConfig({ OIDC_CLI_CLIENT_SECRET: 's' })).toThrow(/OIDC_CLI_CLIENT_SECRET is the secret of OIDC_CLI_CLIENT_ID/)
  })

  it('reads the audit key ring, its active key named or its only one', () => {
    expect(loadConfig({ AUDIT_HMAC_KEYS: newAuditKeyEntry('k1') }).auditKeys?.activeId).toBe('k1')
    const rotated = loadConfig({ AUDIT_HMAC_KEYS: `${newAuditKeyEntry('k1')},${newAuditKeyEntry('k2')}`, AUDIT_HMAC_ACTIVE_KEY: 'k2' }).auditKeys
    expect([rotated?.ids, rotated?.activeId]).toEqual([['k1', 'k2'], 'k2'])
    expect(loadConfig({}).auditKeys).toBeUndefined()
  })

  it('starts no process that records audit events without the audit keys, in the cloud or locally', () => {
    for (const env of [{}, { FIRESTORE_EMULATOR_HOST: '127.0.0.1:9' }]) {
      expect(() => createKernel(loadConfig(env), 'admin')).toThrow(ConfigError)
      expect(() => createKernel(loadConfig(env), 'admin')).toThrow(/AUDIT_HMAC_KEYS is required/)
    }
    expect(
      createKernel(loadConfig({ FIRESTORE_EMULATOR_HOST: '127.0.0.1:9', AUDIT_HMAC_KEYS: newAuditKeyEntry('k1') }), 'admin').audit.keys.activeId,
    ).toBe('k1')
  })

  it('reads a public base address for every HTTP service of the registry, its own setting each', () => {
    const host = 'https://europe-west4-acme.cloudfunctions.net'
    const env = Object.fromEntries(SERVICES.map((s) => [publicUrlSetting(s.name), `${host}/${s.name.replaceAll('_', '-')}/`]))
    const config = loadConfig(env)
    expect(Object.keys(config.publicUrls).sort()).toEqual(SERVICES.map((s) => s.name).sort())
    for (const s of SERVICES) expect(config.publicUrls[s.name]).toBe(`${host}/${s.name.replaceAll('_', '-')}`)
    expect(config.adminPublicUrl).toBe(`${host}/admin`)
    // One browser host: one origin, whatever the paths.
    expect(config.publicOrigins).toEqual([host])
    expect(publicUrlSetting('variant_cache')).toBe('VARIANT_CACHE_PUBLIC_URL')
  })

  it("accepts cookie-authenticated changes from the services' origins and the listed ones only", () => {
    const config = loadConfig({
      PUBLIC_ORIGINS: 'https://console.lab.example, https://console.lab.example',
      ADMIN_PUBLIC_URL: 'https://platform.lab.example/admin',
    })
    expect(config.publicOrigins).toEqual(['https://console.lab.example', 'https://platform.lab.example'])
    expect(loadConfig({}).publicOrigins).toEqual([])
    expect(() => loadConfig({ COMPUTE_PUBLIC_URL: 'platform.lab.example/compute' })).toThrow(/COMPUTE_PUBLIC_URL/)
  })
})
