import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { layout, loadState, type Layout } from '../../../emulators/data-dir.js'
import { loadConfig } from '../../../lib/config.js'

describe("the local suite's data folder: the audit key ring", () => {
  let dir: string
  let l: Layout
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'data-dir-test-'))
    l = layout(dir)
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('is made on the first start, readable by the platform, and kept on the next start', async () => {
    const first = await loadState(l)
    expect(first.created).toBe(true)
    const config = loadConfig({ AUDIT_HMAC_KEYS: first.state.audit_hmac_keys, AUDIT_HMAC_ACTIVE_KEY: first.state.audit_hmac_active_key })
    expect(config.auditKeys?.activeId).toBe('local-1')
    expect(statSync(l.stateFile).mode & 0o777).toBe(0o600)

    const again = await loadState(l)
    expect(again.created).toBe(false)
    expect(again.state.audit_hmac_keys).toBe(first.state.audit_hmac_keys)
  })

  it('is added to a data folder made before events were keyed, leaving its other values alone', async () => {
    const older = { oidc_client_secret: 'secret', admin_password: 'pw', reviewer_password: 'pw2', token: 'plat_pat_x' }
    writeFileSync(l.stateFile, JSON.stringify(older))
    const { state, created } = await loadState(l)
    expect(created).toBe(false)
    expect(state).toMatchObject({
      ...older,
      audit_hmac_active_key: 'local-1',
      audit_hmac_keys: expect.stringMatching(/^local-1:/),
      oidc_cli_client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    })
    expect(JSON.parse(readFileSync(l.stateFile, 'utf8'))).toEqual(state)
  })
})
