import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { BOOTSTRAP_MARKER, BOOTSTRAPPED } from '../../../../domain/tenancy/bootstrap.js'
import { newAuditKeyEntry } from '../../../../lib/audit-keys.js'
import { verifyAuditChain, type AuditEvent, type AuditHead } from '../../../../lib/audit.js'
import type { UserRecord } from '../../../../lib/auth/access.js'
import { loadConfig } from '../../../../lib/config.js'
import { createKernel, type KernelDeps } from '../../../../lib/kernel.js'
import { AdminStore } from '../../../../domain/tenancy/store.js'

/**
 * `npm run bootstrap-admin` as an operator runs it on a fresh deployment: a process of its own,
 * configured as the deploy prints (the project, the audit key ring from Secret Manager), against
 * the Firestore emulator, which stands for the deployment's Firestore.
 */
const repo = resolve(import.meta.dirname, '../../../..')
const tsx = resolve(repo, 'node_modules/.bin/tsx')

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** A deployment of its own on the shared emulator: its project id, its audit keys. */
function deployment() {
  const env = {
    GOOGLE_CLOUD_PROJECT: `boot-${randomBytes(5).toString('hex')}`,
    FIRESTORE_EMULATOR_HOST: inject('firestoreHost'),
    AUDIT_HMAC_KEYS: newAuditKeyEntry('audit-1'),
    AUDIT_HMAC_ACTIVE_KEY: 'audit-1',
    LOG_LEVEL: 'silent',
  }
  const kernel = createKernel(loadConfig(env), 'test')
  const run = (args: string[], extra: Record<string, string | undefined> = {}) =>
    new Promise<Run>((done) => {
      // No metadata server here: the Google clients would probe for one and warn on stderr.
      const merged: Record<string, string | undefined> = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        METADATA_SERVER_DETECTION: 'none',
        ...env,
        ...extra,
      }
      const childEnv = Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined))
      execFile(tsx, ['scripts/bootstrap-admin.ts', ...args], { cwd: repo, env: childEnv, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      )
    })
  return { env, kernel, run }
}

const deployments: KernelDeps[] = []
afterAll(async () => {
  await Promise.all(deployments.map((k) => k.db.firestore.terminate()))
})

async function usersOf(kernel: KernelDeps): Promise<UserRecord[]> {
  return (await kernel.db.col('users').get()).docs.map((d) => d.data() as UserRecord)
}

async function bootstrapEvents(kernel: KernelDeps): Promise<AuditEvent[]> {
  return (await kernel.db.col('audit_events').where('action', '==', BOOTSTRAPPED).get()).docs.map((d) => d.data() as AuditEvent)
}

describe('bootstrap-admin', () => {
  it('makes the first platform administrator from an e-mail, with its marker and a keyed platform.admin_bootstrapped event', async () => {
    const { kernel, run } = deployment()
    deployments.push(kernel)
    const first = await run(['--email', 'Ann@Lab.Example'])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^ann@lab\.example \(user [0-9a-f-]{36}\) is the first platform administrator of boot-/)

    const [user, ...others] = await usersOf(kernel)
    expect(others).toEqual([])
    expect(user).toMatchObject({ kind: 'user', email: 'ann@lab.example', platform_admin: true })
    expect((await kernel.db.col('platform_bootstrap').doc(BOOTSTRAP_MARKER).get()).data()).toMatchObject({
      user_id: user!.id,
      email: 'ann@lab.example',
    })

    const [event, ...more] = await bootstrapEvents(kernel)
    expect(more).toEqual([])
    expect(event).toMatchObject({
      action: BOOTSTRAPPED,
      scope: 'platform',
      service: 'bootstrap-admin',
      entity: { type: 'user', id: user!.id },
      actor: { type: 'system', id: 'bootstrap-admin' },
      change: { fields: ['platform_admin'], to: 'true' },
      key_id: 'audit-1',
    })
    expect(event!.request?.user_agent).toMatch(/^scripts\/bootstrap-admin\.ts, run by .+@.+$/)
    // The event verifies under the deployment's keys, as the audit service checks it.
    const head = (await kernel.db.col('audit_heads').doc(event!.chain).get()).data() as AuditHead
    expect(verifyAuditChain([event!], kernel.audit.keys, head)).toEqual([])
  }, 60_000)

  it('refuses to run a second time, with a message and exit status 3, changing nothing', async () => {
    const { kernel, run } = deployment()
    deployments.push(kernel)
    expect((await run(['--email', 'ann@lab.example'])).code).toBe(0)
    const again = await run(['--email=bob@lab.example'])
    expect(again.code).toBe(3)
    expect(again.stdout).toBe('')
    expect(again.stderr).toMatch(
      /^bootstrap-admin: refused: the platform already has its first administrator \(ann@lab\.example, made \d{4}-\d\d-\d\dT[\d:.]+Z\): bootstrap-admin runs once\n$/,
    )
    expect((await usersOf(kernel)).map((u) => [u.email, u.platform_admin ?? false])).toEqual([['ann@lab.example', true]])
    expect(await bootstrapEvents(kernel)).toHaveLength(1)
  }, 60_000)

  it('makes one administrator when two operators run it at once', async () => {
    const { kernel, run } = deployment()
    deployments.push(kernel)
    const runs = await Promise.all([run(['--email', 'ann@lab.example']), run(['--email', 'bob@lab.example'])])
    expect(runs.map((r) => r.code).sort()).toEqual([0, 3])
    expect((await usersOf(kernel)).filter((u) => u.platform_admin)).toHaveLength(1)
    expect(await bootstrapEvents(kernel)).toHaveLength(1)
  }, 60_000)

  it('makes an account invited before its first login the administrator, not a second account', async () => {
    const { kernel, run } = deployment()
    deployments.push(kernel)
    const invited = await new AdminStore(kernel.db, kernel.audit, kernel.clock).ensureUser('ann@lab.example')
    expect((await run(['--email', 'ann@lab.example'])).code).toBe(0)
    expect((await usersOf(kernel)).map((u) => [u.id, u.platform_admin])).toEqual([[invited.id, true]])
  }, 60_000)

  it.each<[string, string[], Record<string, string | undefined>, RegExp]>([
    ['without --email', [], {}, /--email is required/],
    ['with what is no e-mail', ['--email', 'ann at lab'], {}, /refused: email: 'ann at lab' is not an e-mail address/],
    ['with an unknown argument', ['--email', 'ann@lab.example', '--force'], {}, /unknown argument --force/],
    ['without the project', ['--email', 'ann@lab.example'], { GOOGLE_CLOUD_PROJECT: undefined }, /GOOGLE_CLOUD_PROJECT is required/],
    ['without the audit keys', ['--email', 'ann@lab.example'], { AUDIT_HMAC_KEYS: undefined }, /AUDIT_HMAC_KEYS is required/],
  ])(
    'stops %s with exit status 2, making nothing',
    async (_case, args, extra, message) => {
      const { kernel, run } = deployment()
      deployments.push(kernel)
      const out = await run(args, extra)
      expect(out.code).toBe(2)
      expect(out.stderr).toMatch(message)
      expect(await usersOf(kernel)).toEqual([])
    },
    60_000,
  )
})
