import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { newAuditKeyEntry } from '../../lib/audit-keys.js'
import { loadConfig, type Config } from '../../lib/config.js'
import { createKernel } from '../../lib/kernel.js'

/** A config pointing at the shared emulators, under a Google Cloud project id of its own, with an audit key of its own. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    GOOGLE_CLOUD_PROJECT: `test-${randomBytes(5).toString('hex')}`,
    FIRESTORE_EMULATOR_HOST: inject('firestoreHost'),
    PUBSUB_EMULATOR_HOST: inject('pubsubHost'),
    AUDIT_HMAC_KEYS: newAuditKeyEntry('test'),
    LOG_LEVEL: 'silent',
    ...env,
  })
}

export function testKernel(service = 'test', env: Record<string, string | undefined> = {}) {
  return createKernel(testConfig(env), service)
}
