import { createPrivateKey, sign, type KeyObject } from 'node:crypto'
import type { BlobSigner } from './v4.js'

/** Signs with a private key in this process: the local suite's generated key, or a test's. */
export class PrivateKeySigner implements BlobSigner {
  private readonly key: KeyObject
  constructor(
    readonly account: string,
    privateKeyPem: string,
  ) {
    this.key = createPrivateKey(privateKeyPem)
  }

  async sign(data: Buffer): Promise<Buffer> {
    return sign('RSA-SHA256', data, this.key)
  }
}

export const IAM_CREDENTIALS_URL = 'https://iamcredentials.googleapis.com/v1'

export class SignBlobError extends Error {
  override name = 'SignBlobError'
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Signs as a service account through IAM Credentials `signBlob`: the platform's own identity
 * (which holds roles/iam.serviceAccountTokenCreator on the account) asks Google to sign, so no key
 * of the account exists anywhere. The access token is the platform's (google-auth-library, from
 * the runtime's metadata server or ADC).
 */
export class IamSignBlobSigner implements BlobSigner {
  constructor(
    readonly account: string,
    private readonly opts: {
      accessToken: () => Promise<string>
      /** Default https://iamcredentials.googleapis.com/v1; tests point it at a local server. */
      endpoint?: string
      fetch?: typeof fetch
    },
  ) {}

  get url(): string {
    return `${this.opts.endpoint ?? IAM_CREDENTIALS_URL}/projects/-/serviceAccounts/${encodeURIComponent(this.account)}:signBlob`
  }

  async sign(data: Buffer): Promise<Buffer> {
    const token = await this.opts.accessToken()
    const res = await (this.opts.fetch ?? fetch)(this.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ payload: data.toString('base64') }),
    })
    const text = await res.text()
    if (!res.ok) {
      let detail = text
      try {
        detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text
      } catch {
        // not JSON
      }
      throw new SignBlobError(res.status, `IAM Credentials signBlob as ${this.account} failed (${res.status}): ${detail.slice(0, 500)}`)
    }
    const body = JSON.parse(text) as { keyId?: string; signedBlob?: string }
    if (!body.signedBlob) throw new SignBlobError(502, `IAM Credentials signBlob as ${this.account} answered without signedBlob`)
    return Buffer.from(body.signedBlob, 'base64')
  }
}
