import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../lib/config.js'

describe('configuration', () => {
  it('starts with defaults from an empty environment', () => {
    const config = loadConfig({})
    expect(config.gcpProject).toBe('platform-local')
    expect(config.oidc).toBeUndefined()
    expect(config.topics).toEqual({ runRequested: 'run-requested', jobStatus: 'batch-job-status', ingestionRequested: 'ingestion-requested' })
    expect(config.ingestion).toEqual({ runner: 'workflows', workflow: 'projects/platform-local/locations/europe-west4/workflows/platform-ingestion' })
  })

  it.each([
    [{ SESSION_TTL_SECONDS: 'soon' }, /SESSION_TTL_SECONDS/],
    [{ OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a' }, /OIDC_ISSUER/],
    [{ OIDC_ISSUER: 'https://idp.example.org' }, /OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_AUDIENCE must be set together/],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'platform', OIDC_AUDIENCE: 'platform' }, /OIDC_AUDIENCE must differ/],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a', OIDC_ALGORITHMS: 'RS256,none' }, /OIDC_ALGORITHMS/],
    [{ OIDC_ISSUER: 'https://idp.example.org', OIDC_CLIENT_ID: 'c', OIDC_AUDIENCE: 'a', OIDC_ALGORITHMS: 'HS256' }, /OIDC_ALGORITHMS/],
    [{ BATCH_BACKEND: 'local' }, /LOCAL_WORK_ROOT/],
    [{ INGESTION_RUNNER: 'lambda' }, /INGESTION_RUNNER/],
    [{ INGESTION_WORKFLOW: 'Not A Workflow' }, /INGESTION_WORKFLOW/],
    [{ STORAGE_BACKEND: 'local' }, /LOCAL_STORAGE_ROOT/],
    [{ BATCH_BACKEND: 'kubernetes' }, /BATCH_BACKEND/],
    [{ COLLECTION_PREFIX: 'Runs!' }, /COLLECTION_PREFIX/],
  ])('refuses %j with an error naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })
})
