import { createPrivateKey, sign } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IamSignBlobSigner, SignBlobError } from '../../../../lib/storage/signers.js'
import { signUrl } from '../../../../lib/storage/v4.js'
import { DUMMY_ACCOUNT, SIGNING_CASES, signInputOf } from '../../../support/gcs-v4.js'

/**
 * The cloud signer, offline: a local HTTP server stands in for IAM Credentials, signing with the
 * dummy account's key as Google would, and records exactly what the platform sent.
 */
interface Seen {
  method?: string
  url?: string
  headers: IncomingMessage['headers']
  body: string
}
const seen: Seen[] = []
let endpoint = ''
let answer: 'sign' | 'deny' = 'sign'
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (d: Buffer) => (body += d.toString('utf8')))
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body })
    if (answer === 'deny') {
      res.writeHead(403, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { code: 403, message: "Permission 'iam.serviceAccounts.signBlob' denied", status: 'PERMISSION_DENIED' } }))
      return
    }
    const payload = Buffer.from((JSON.parse(body) as { payload: string }).payload, 'base64')
    const signedBlob = sign('RSA-SHA256', payload, createPrivateKey(DUMMY_ACCOUNT.private_key)).toString('base64')
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keyId: 'dummy-key', signedBlob }))
  })
})

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('signing as a service account through IAM Credentials signBlob', () => {
  const signer = () => new IamSignBlobSigner(DUMMY_ACCOUNT.client_email, { accessToken: async () => 'platform-access-token', endpoint })

  it("sends the string to sign, base64, with the platform's access token, and yields Google's expected URL", async () => {
    seen.length = 0
    answer = 'sign'
    const c = SIGNING_CASES.find((x) => x.description === 'Simple PUT')!
    expect(await signUrl(signInputOf(c), signer())).toBe(c.expectedUrl)
    expect(seen).toHaveLength(1)
    const [request] = seen
    expect(request!.method).toBe('POST')
    expect(request!.url).toBe('/v1/projects/-/serviceAccounts/test-iam-credentials%40dummy-project-id.iam.gserviceaccount.com:signBlob')
    expect(request!.headers.authorization).toBe('Bearer platform-access-token')
    expect(request!.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(request!.body)).toEqual({ payload: Buffer.from(c.expectedStringToSign, 'utf8').toString('base64') })
  })

  it("reports IAM's refusal with its status and message", async () => {
    answer = 'deny'
    const c = SIGNING_CASES[0]!
    const failure = await signUrl(signInputOf(c), signer()).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(SignBlobError)
    expect((failure as SignBlobError).status).toBe(403)
    expect((failure as SignBlobError).message).toMatch(/iam.serviceAccounts.signBlob' denied/)
  })
})
