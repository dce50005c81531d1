import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import { unauthorized } from '../errors.js'

export interface OidcSettings {
  issuer: string
  audience: string
  algorithms: string[]
}

/**
 * Verifies OIDC access tokens (JWTs) against the identity provider's published keys:
 * signature with an allow-listed algorithm, issuer, audience, expiry. Keys are discovered once
 * and cached by jose, which refetches them when an unknown `kid` appears.
 */
export class OidcVerifier {
  private keys?: Promise<JWTVerifyGetKey>

  constructor(private readonly settings: OidcSettings) {}

  private jwks(): Promise<JWTVerifyGetKey> {
    this.keys ??= (async () => {
      const url = new URL('.well-known/openid-configuration', this.settings.issuer.endsWith('/') ? this.settings.issuer : this.settings.issuer + '/')
      const res = await fetch(url)
      if (!res.ok) throw new Error(`OIDC discovery at ${url} answered ${res.status}`)
      const meta = (await res.json()) as { jwks_uri?: string; issuer?: string }
      if (!meta.jwks_uri) throw new Error(`OIDC discovery at ${url} has no jwks_uri`)
      return createRemoteJWKSet(new URL(meta.jwks_uri))
    })().catch((err) => {
      this.keys = undefined
      throw err
    })
    return this.keys
  }

  async verify(token: string): Promise<JWTPayload & { sub: string; email?: string; email_verified?: boolean; name?: string }> {
    const keys = await this.jwks()
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: this.settings.algorithms,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      })
      return payload as JWTPayload & { sub: string; email?: string; email_verified?: boolean; name?: string }
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthorized('token expired')
      if (err instanceof joseErrors.JOSEError) throw unauthorized(`invalid token: ${err.code}`)
      throw err
    }
  }
}
