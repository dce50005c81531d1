import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AuditKeyRing, newAuditKeyEntry } from '../../../../lib/audit-keys.js'
import { postWebhook, resolveUrl, type Resolve } from '../../../../domain/webhooks/sender.js'
import { deriveSecret, signature, signedHeaders } from '../../../../domain/webhooks/signing.js'
import { urlRefusal } from '../../../../domain/webhooks/decide.js'
import { startReceiver } from '../../../support/webhooks.js'

const ring = AuditKeyRing.parse(newAuditKeyEntry('k1'))
const secret = deriveSecret(ring, { key_id: 'k1', generation: 1 }, 'hook-1')
/** A resolver that answers `addresses` for every name, as a DNS server under someone else's control would. */
const answering =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

describe('signing (Standard Webhooks)', () => {
  it('derives a whsec_ secret of 32 bytes per webhook and generation, from the key ring alone', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(deriveSecret(ring, { key_id: 'k1', generation: 1 }, 'hook-1')).toBe(secret)
    expect(deriveSecret(ring, { key_id: 'k1', generation: 2 }, 'hook-1')).not.toBe(secret)
    expect(deriveSecret(ring, { key_id: 'k1', generation: 1 }, 'hook-2')).not.toBe(secret)
    expect(() => deriveSecret(ring, { key_id: 'gone', generation: 1 }, 'hook-1')).toThrow(/the key gone of its secret is not in the key ring/)
  })

  it('signs exactly as the standardwebhooks library does, for any message', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
        fc.stringMatching(/^msg_[0-9a-f]{32}$/),
        (body, seconds, id) => {
          expect(signature(secret, id, seconds, body)).toBe(new Webhook(secret).sign(id, new Date(seconds * 1000), body))
        },
      ),
    )
  })

  it('is verified by the library with every secret it signs with (a rotation), and with no other', () => {
    const next = deriveSecret(ring, { key_id: 'k1', generation: 2 }, 'hook-1')
    const now = Math.floor(Date.now() / 1000)
    const headers = signedHeaders([next, secret], 'msg_0123456789abcdef0123456789abcdef', now, '{"type":"run.failed"}')
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/)
    for (const s of [next, secret]) expect(new Webhook(s).verify('{"type":"run.failed"}', headers)).toEqual({ type: 'run.failed' })
    expect(() => new Webhook(deriveSecret(ring, { key_id: 'k1', generation: 3 }, 'hook-1')).verify('{"type":"run.failed"}', headers)).toThrow()
  })
})

describe('sending a delivery', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    receiver = await startReceiver()
    receiver.verifyWith(secret)
  })
  afterAll(() => receiver.close())
  const body = '{"type":"run.succeeded","timestamp":"2026-11-26T10:00:00.000Z","data":{}}'
  const headers = () => signedHeaders([secret], 'msg_0123456789abcdef0123456789abcdef', Math.floor(Date.now() / 1000), body)

  it('POSTs the signed body, which the standardwebhooks library verifies', async () => {
    receiver.answer(204)
    const before = receiver.received.length
    expect(await postWebhook(receiver.url, headers(), body, { policy: 'local', timeoutMs: 5000 })).toEqual({ status_code: 204 })
    const got = receiver.received.at(before)!
    expect(got).toMatchObject({ id: 'msg_0123456789abcdef0123456789abcdef', body, verified: [true] })
    expect(got.headers['content-type']).toBe('application/json')
  })

  it('connects to the address its own checked lookup gave, not another lookup', async () => {
    const before = receiver.received.length
    const url = `http://hooks.example.org:${receiver.port}/hooks`
    expect(await postWebhook(url, headers(), body, { policy: 'local', timeoutMs: 5000, resolve: answering('127.0.0.1') })).toEqual({
      status_code: 204,
    })
    expect(receiver.received.length).toBe(before + 1)
  })

  it('refuses a host that resolved to a public address at registration and resolves to a private one at delivery (DNS rebinding)', async () => {
    const url = `https://hooks.example.org:${receiver.port}/hooks`
    expect(urlRefusal(await resolveUrl(url, 'public', answering('93.184.215.14')), 'public')).toBeUndefined()
    const before = receiver.received.length
    for (const rebound of [['127.0.0.1'], ['169.254.169.254'], ['93.184.215.14', '10.0.0.8'], ['::ffff:127.0.0.1']]) {
      expect(await postWebhook(url, headers(), body, { policy: 'public', timeoutMs: 5000, resolve: answering(...rebound) })).toEqual({
        error: expect.stringMatching(/^refused: hooks\.example\.org resolves to .*, which is not a public address$/),
      })
    }
    expect(receiver.received.length).toBe(before)
  })

  it.each([
    ['a loopback literal', 'https://127.0.0.1/hooks', 'refused: 127.0.0.1 is not a public address'],
    ['the metadata server', 'https://metadata.google.internal/computeMetadata/v1/token', 'refused: metadata.google.internal is the metadata server'],
    ['plain http', 'http://hooks.example.org/hooks', 'refused: must be https://'],
  ])('refuses %s in the cloud without a request', async (_, url, error) => {
    expect(await postWebhook(url, headers(), body, { policy: 'public', timeoutMs: 5000, resolve: answering('127.0.0.1') })).toEqual({ error })
  })

  it('does not follow a redirect: its status is the answer', async () => {
    receiver.answer(302)
    expect(await postWebhook(receiver.url, headers(), body, { policy: 'local', timeoutMs: 5000 })).toEqual({ status_code: 302 })
    receiver.answer(204)
  })

  it('gives up on a receiver that does not answer in time', async () => {
    const silent = createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`
      expect(await postWebhook(url, headers(), body, { policy: 'local', timeoutMs: 300 })).toEqual({ error: 'no answer within 0.3 s' })
    } finally {
      silent.closeAllConnections()
      silent.close()
    }
  })

  it('says why a connection failed', async () => {
    const result = await postWebhook('http://127.0.0.1:1/', headers(), body, { policy: 'local', timeoutMs: 5000 })
    expect(result.error).toMatch(/^ECONNREFUSED/)
  })
})
