import { describe, expect, it } from 'vitest'
import { canonicalRequest, signUrl, stringToSign } from '../../../../lib/storage/v4.js'
import { PrivateKeySigner } from '../../../../lib/storage/signers.js'
import { DUMMY_ACCOUNT, NOT_APPLICABLE, SIGNING_CASES, signInputOf } from '../../../support/gcs-v4.js'

const signer = new PrivateKeySigner(DUMMY_ACCOUNT.client_email, DUMMY_ACCOUNT.private_key)
const applicable = SIGNING_CASES.filter((c) => !(c.description in NOT_APPLICABLE))

describe("the platform's V4 signer on Google's conformance cases", () => {
  it('has every case of the fixture file but the documented exceptions', () => {
    expect(SIGNING_CASES.length).toBe(29)
    expect(applicable.length).toBe(SIGNING_CASES.length - Object.keys(NOT_APPLICABLE).length)
  })

  it.each(applicable.map((c) => [c.description, c] as const))('reproduces the expected URL: %s', async (_, c) => {
    expect(await signUrl(signInputOf(c), signer)).toBe(c.expectedUrl)
  })

  it.each(applicable.map((c) => [c.description, c] as const))('builds the expected canonical request and string to sign: %s', (_, c) => {
    const url = new URL(c.expectedUrl)
    const query = [...url.searchParams].filter(([k]) => k !== 'X-Goog-Signature')
    const lines = c.expectedCanonicalRequest.split('\n')
    const signed = lines.at(-2)!.split(';')
    const headers = Object.fromEntries(signed.map((h) => [h, lines.find((l) => l.startsWith(`${h}:`))!.slice(h.length + 1)]))
    const { request } = canonicalRequest({ method: c.method, uri: lines[1]!, query, headers })
    expect(request).toBe(c.expectedCanonicalRequest)
    expect(stringToSign(url.searchParams.get('X-Goog-Date')!, c.expectedStringToSign.split('\n')[2]!, request)).toBe(c.expectedStringToSign)
  })

  it('refuses a validity outside 1 second to 7 days', async () => {
    const base = signInputOf(applicable[0]!)
    await expect(signUrl({ ...base, expiresSeconds: 604_801 }, signer)).rejects.toThrow(/1 to 604800 seconds/)
    await expect(signUrl({ ...base, expiresSeconds: 0 }, signer)).rejects.toThrow(/1 to 604800 seconds/)
  })
})
