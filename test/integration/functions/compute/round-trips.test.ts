import { exportJWK, generateKeyPair } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { computeDeps } from '../../../../functions/compute/deps.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { grant, seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { firestoreSettings } from '../../../../lib/db.js'
import { newId, newNamingSecret, newSecret, sha256, TOKEN_PREFIX } from '../../../../lib/ids.js'
import { Timestamp } from '@google-cloud/firestore'
import { createKernel } from '../../../../lib/kernel.js'
import { rand } from '../../../support/world.js'
import { readRounds, ReadRecordingFirestore } from '../../../support/read-rounds.js'
import { makeComputeWorld } from './support.js'

/**
 * How many sequential round trips to Firestore GET /runs/{id} makes for authentication, tenancy
 * and the record (issue 6): one for every credential the platform issues (its value names its
 * account, lib/ids.ts newNamingSecret), two for a value that names none, counted on the real
 * client the compute service runs on. And what that must not weaken: every request reads the credential and
 * the account afresh, so a revoked credential or a removed role shows on the next request.
 */
describe('compute: the round trips of GET /runs/{id}', async () => {
  const w = await makeComputeWorld()
  const firestore = new ReadRecordingFirestore(firestoreSettings(w.deps.config))
  const app = createComputeApp(computeDeps(createKernel(w.deps.config, 'compute', { firestore }), { batch: w.batch, storage: w.storage }))
  afterAll(() => firestore.terminate())
  const prefix = w.deps.config.collectionPrefix

  const submitted = await w.api('POST', '/runs', { body: { pipeline_id: w.platformId('hello-local', '1.0.0'), params: {} } })
  const runPath = `/api/v1/runs/${submitted.body.id as string}`
  const get = (headers: Record<string, string>) => app.request(runPath, { headers: { ...headers, 'x-project-id': w.project.id } })

  /** A service user with a role in the project, an active key, and a token obtained with it. */
  async function serviceCaller() {
    const user = await w.admin.serviceUsers.create(SYSTEM_ACTOR, { orgId: w.org.id, name: `bot-${rand()}` })
    await grant(w.admin, w.project, user, ['viewer'])
    const { publicKey } = await generateKeyPair('ES256')
    const key = await w.admin.serviceUsers.addKey(SYSTEM_ACTOR, user, { keyId: newId(), alg: 'ES256', publicJwk: await exportJWK(publicKey) })
    const { value } = await w.admin.tokens.issueServiceToken({ userId: user.id, keyId: key.id, ttlSeconds: 3600, now: new Date() })
    return { user, key, headers: { authorization: `Bearer ${value}` } }
  }

  async function sessionCaller() {
    const { value } = await w.admin.tokens.createSession({ userId: w.owner.user.id, ttlSeconds: 3600, now: new Date(), effectiveRoles: {} })
    return { value, headers: { cookie: `platform_session=${value}` } }
  }

  /** A CLI login of the owner, as the admin service makes one at the end of a sign-in at the identity provider. */
  async function cliCaller() {
    const pair = await w.admin.cliLogins.begin(
      { actor: { type: 'user', id: w.owner.user.id, auth_method: 'password' } },
      { userId: w.owner.user.id, method: 'password', lifetimeSeconds: 3600 },
    )
    return { pair, headers: { authorization: `Bearer ${pair.access_token}` } }
  }

  const cases: Array<[string, () => Promise<Record<string, string>>, string[][]]> = [
    ['a personal access token', async () => ({ authorization: `Bearer ${w.owner.token}` }), [['personal_tokens', 'projects', 'runs', 'users']]],
    ['a service-user token', async () => (await serviceCaller()).headers, [['projects', 'runs', 'service_keys', 'service_tokens', 'users']]],
    ['a session cookie', async () => (await sessionCaller()).headers, [['projects', 'runs', 'sessions', 'users']]],
    ["the CLI's access credential", async () => (await cliCaller()).headers, [['cli_access_tokens', 'cli_logins', 'projects', 'runs', 'users']]],
    [
      'a personal access token whose value names no account (issued before values named one)',
      async () => ({ authorization: `Bearer ${await storedToken(newSecret(TOKEN_PREFIX.personal), w.owner.user.id)}` }),
      [
        ['personal_tokens', 'projects'],
        ['runs', 'users'],
      ],
    ],
  ]

  /** A personal access token stored as the platform stores one, with a value of our making, for `userId`. */
  async function storedToken(value: string, userId: string) {
    const now = Timestamp.now()
    await w.deps.db
      .col('personal_tokens')
      .doc(sha256(value))
      .create({
        id: newId(),
        user_id: userId,
        name: 'made by the test',
        hint: value.slice(0, 13),
        created: now,
        expires_at: Timestamp.fromMillis(now.toMillis() + 3_600_000),
      })
    return value
  }

  it.each(cases)(
    'reads the credential, the project, the account and the run in as few round trips as the value allows with %s',
    async (_kind, headers, rounds) => {
      const h = await headers()
      // The second request reads everything again: nothing is kept from one request to the next.
      for (const _request of [1, 2]) {
        firestore.take()
        const res = await get(h)
        expect(res.status).toBe(200)
        expect(((await res.json()) as { id: string }).id).toBe(submitted.body.id)
        expect(readRounds(firestore.take(), prefix)).toEqual(rounds)
      }
    },
  )

  it("takes the account from the stored credential, not from the value's names: a value naming another account reads the right one next", async () => {
    const other = await seedUser(w.admin, { email: `other-${rand()}@example.org` })
    const value = await storedToken(newNamingSecret(TOKEN_PREFIX.personal, [other.id]), w.owner.user.id)
    firestore.take()
    const res = await get({ authorization: `Bearer ${value}` })
    // The named account has no role in the project: had its name been trusted, this would be a 403.
    expect(res.status).toBe(200)
    expect(readRounds(firestore.take(), prefix)).toEqual([
      ['personal_tokens', 'projects', 'runs', 'users'],
      ['runs', 'users'],
    ])
  })

  it('reads no account and no run for an unknown credential that names none', async () => {
    firestore.take()
    const res = await get({ authorization: `Bearer plat_pat_${rand()}${rand()}` })
    expect(res.status).toBe(401)
    expect(readRounds(firestore.take(), prefix)).toEqual([['personal_tokens', 'projects']])
  })

  it('answers 401 on the request after a personal access token is revoked', async () => {
    const user = await seedUser(w.admin, { email: `viewer-${rand()}@example.org` })
    await grant(w.admin, w.project, user, ['viewer'])
    const token = await seedToken(w.admin, user, 'to revoke')
    const h = { authorization: `Bearer ${token}` }
    expect((await get(h)).status).toBe(200)
    const [listed] = await w.admin.tokens.listPersonal(user.id)
    await w.admin.tokens.revokePersonal(user.id, listed!.id, new Date())
    const res = await get(h)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ detail: 'token revoked' })
  })

  it('answers 401 on the request after the key a service token was obtained with is revoked', async () => {
    const { user, key, headers } = await serviceCaller()
    expect((await get(headers)).status).toBe(200)
    await w.admin.serviceUsers.revokeKey(SYSTEM_ACTOR, user, key.id)
    const res = await get(headers)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ detail: 'token revoked' })
  })

  it("answers 401 on the request after the CLI's login is ended (logout)", async () => {
    const { pair, headers } = await cliCaller()
    expect((await get(headers)).status).toBe(200)
    await w.admin.cliLogins.logout(undefined, pair.refresh_token)
    const res = await get(headers)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ detail: 'token revoked' })
  })

  it('answers 401 on the request after the session ends', async () => {
    const { value, headers } = await sessionCaller()
    expect((await get(headers)).status).toBe(200)
    await w.admin.tokens.endSession(value)
    expect((await get(headers)).status).toBe(401)
  })

  it('answers 403 without the run on the request after the caller loses their role in the project', async () => {
    const { user, headers } = await serviceCaller()
    expect((await get(headers)).status).toBe(200)
    await grant(w.admin, w.project, user, [])
    const res = await get(headers)
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ detail: 'permission project.read is required' })
  })
})
