import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalRequest, signUrl, stringToSign, type BlobSigner } from '../../../../lib/storage/v4.js'
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

describe('an upload address that may only create its object', () => {
  it("signs x-goog-if-generation-match as Google's V4 rules sign an extension header: lowercase, sorted among the signed headers, in the canonical request", async () => {
    const signed: string[] = []
    const recording: BlobSigner = {
      account: 'signer@p.iam.gserviceaccount.com',
      sign: async (data) => {
        signed.push(data.toString('utf8'))
        return Buffer.from('00', 'hex')
      },
    }
    const url = await signUrl(
      {
        method: 'PUT',
        bucket: 'lab-bucket',
        object: 'fastq/S1_R1.fastq.gz',
        expiresSeconds: 900,
        now: new Date('2026-03-01T10:00:00Z'),
        headers: { 'Content-Type': 'application/gzip', 'X-Goog-If-Generation-Match': '0' },
      },
      recording,
    )
    const query =
      'X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=signer%40p.iam.gserviceaccount.com%2F20260301%2Fauto%2Fstorage%2Fgoog4_request' +
      '&X-Goog-Date=20260301T100000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=content-type%3Bhost%3Bx-goog-if-generation-match'
    const canonical = [
      'PUT',
      '/lab-bucket/fastq/S1_R1.fastq.gz',
      query,
      'content-type:application/gzip\nhost:storage.googleapis.com\nx-goog-if-generation-match:0\n',
      'content-type;host;x-goog-if-generation-match',
      'UNSIGNED-PAYLOAD',
    ].join('\n')
    expect(signed).toEqual([
      ['GOOG4-RSA-SHA256', '20260301T100000Z', '20260301/auto/storage/goog4_request', createHash('sha256').update(canonical).digest('hex')].join(
        '\n',
      ),
    ])
    expect(url).toBe(`https://storage.googleapis.com/lab-bucket/fastq/S1_R1.fastq.gz?${query}&X-Goog-Signature=00`)
  })
})
