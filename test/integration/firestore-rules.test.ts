import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { ALL_COLLECTIONS } from '../support/collections.js'
import { newId } from '../../lib/ids.js'
import { testKernel } from '../support/env.js'

/**
 * firestore.rules loaded into the Firestore emulator (which compiles and enforces rules for client
 * requests) for this file's own Google Cloud project id, then tried as a browser or mobile client
 * would: through the REST API, unauthenticated and as a signed-in Firebase user.
 */
const RULES = readFileSync(new URL('../../firestore.rules', import.meta.url), 'utf8')

const kernel = testKernel('rules')
const project = kernel.config.gcpProject
const emulator = `http://${kernel.config.firestoreEmulatorHost}`
const documents = `${emulator}/v1/projects/${project}/databases/(default)/documents`

/** A Firebase Auth ID token as the emulator accepts them (unsigned), for a signed-in end user. */
function firebaseUserToken(uid: string) {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    iss: `https://securetoken.google.com/${project}`,
    aud: project,
    sub: uid,
    user_id: uid,
    iat: now,
    exp: now + 3600,
    auth_time: now,
    email: `${uid}@example.org`,
    firebase: { sign_in_provider: 'password', identities: {} },
  }
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`
}

const CLIENTS: Array<[string, Record<string, string>]> = [
  ['an unauthenticated client', {}],
  ['a signed-in Firebase user', { authorization: `Bearer ${firebaseUserToken('user-1')}` }],
]

describe('firestore.rules', () => {
  const runId = newId()

  beforeAll(async () => {
    const res = await fetch(`${emulator}/emulator/v1/projects/${project}:securityRules`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: RULES }] } }),
    })
    // The emulator compiles the rules here: a syntax error is a 400 naming the line.
    if (res.status !== 200) throw new Error(`the emulator refused firestore.rules: ${res.status} ${await res.text()}`)
    await kernel.db.col('runs').doc(runId).set({ id: runId, project_id: newId(), status: 'queued' })
  })

  it('lets the services read and write through the server SDK', async () => {
    await kernel.db.col('runs').doc(runId).update({ status: 'running' })
    expect((await kernel.db.col('runs').doc(runId).get()).get('status')).toBe('running')
  })

  describe.each(CLIENTS)('for %s', (_who, headers) => {
    it('denies reading an existing document', async () => {
      const res = await fetch(`${documents}/runs/${runId}`, { headers })
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { status: string } }).error.status).toBe('PERMISSION_DENIED')
    })

    it.each(ALL_COLLECTIONS)('denies listing and creating in %s', async (collection) => {
      const list = await fetch(`${documents}/${collection}`, { headers })
      expect(list.status).toBe(403)
      const create = await fetch(`${documents}/${collection}?documentId=${newId()}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { name: { stringValue: 'written by a client' } } }),
      })
      expect(create.status).toBe(403)
    })

    it('denies updating and deleting an existing document, which stays as it was', async () => {
      const update = await fetch(`${documents}/runs/${runId}?updateMask.fieldPaths=status`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { status: { stringValue: 'succeeded' } } }),
      })
      expect(update.status).toBe(403)
      const remove = await fetch(`${documents}/runs/${runId}`, { method: 'DELETE', headers })
      expect(remove.status).toBe(403)
      const snap = await kernel.db.col('runs').doc(runId).get()
      expect(snap.exists).toBe(true)
      expect(snap.get('status')).not.toBe('succeeded')
    })
  })
})
