import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JWK } from 'jose'

export interface JwksServer {
  /** http://127.0.0.1:<port>: what to configure as OIDC_ISSUER and to put in `iss`. */
  issuer: string
  jwksUri: string
  /** Replaces the published keys (e.g. to rotate). */
  setKeys(keys: JWK[]): void
  /** How many times the key set was fetched. */
  jwksFetches(): number
  close(): Promise<void>
}

/**
 * A tiny real identity provider for the verifier: OIDC discovery and a JWKS endpoint on a local
 * port, publishing the public keys a test made with jose. Tests sign tokens themselves.
 */
export async function startJwksServer(keys: JWK[]): Promise<JwksServer> {
  let published = keys
  let fetches = 0
  let issuer = ''
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.method !== 'GET') return send(405, { error: 'method not allowed' })
    if (req.url === '/.well-known/openid-configuration') {
      return send(200, {
        issuer,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
      })
    }
    if (req.url === '/jwks') {
      fetches += 1
      return send(200, { keys: published })
    }
    return send(404, { error: 'not found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    setKeys: (k) => {
      published = k
    },
    jwksFetches: () => fetches,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}
