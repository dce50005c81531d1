import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { errors, type Configuration, type ResourceServer } from 'oidc-provider'
import { AccountStore, type LocalUser } from './accounts.js'
import { devicePages, handleInteraction } from './interactions.js'
import { PASSWORD_GRANT, registerPasswordGrant } from './password-grant.js'

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** A client of the platform's, confidential (the admin service's, with its secret and redirect address). */
export interface OidcClientSeed {
  client_id: string
  client_secret: string
  redirect_uris: string[]
}

/**
 * A client for the CLI's logins alone (OIDC_CLI_CLIENT_ID), shaped as a provider registers one:
 * the device authorization grant, and the password grant where allowed.
 */
export interface OidcCliClientSeed {
  client_id: string
  /**
   * Confidential with this secret, sent in the request body (client_secret_post) as Google's
   * "TVs and Limited Input devices" clients do; without one, public (no secret), as Entra ID and
   * Okta register the client of a command line.
   */
  client_secret?: string
  /** Offered the password grant (a confidential client only: a public one is refused it with unauthorized_client). */
  password_grant?: boolean
  /** Its access tokens are opaque, for the provider's own userinfo endpoint only, as Google's are: never for the platform's API. */
  opaque_access_tokens?: boolean
  /**
   * Answers as Google does: the device authorization names the address `verification_url` (not
   * RFC 8628's `verification_uri`, and with no address carrying the code), and a poll before the
   * person has finished is a 428.
   */
  google_device_answers?: boolean
}

export interface OidcProviderOptions {
  /** 0 or absent: a free port. */
  port?: number
  host?: string
  users: LocalUser[]
  clients: Array<OidcClientSeed | OidcCliClientSeed>
  /** The resource indicator of the platform's API: the `aud` of every access token. An absolute URI. */
  audience: string
  /** How long a device login's codes last (default 600 s, as Okta's and Keycloak's). */
  deviceCodeTtlSeconds?: number
  /** false: no device authorization grant, as at a provider whose operator has not enabled it for the platform. */
  deviceFlow?: boolean
}

export interface RunningOidcProvider {
  issuer: string
  stop(): Promise<void>
}

const ACCESS_TOKEN_TTL = 3600

/**
 * The local suite's identity provider: a real OpenID Connect provider (oidc-provider) in this
 * process, with the authorization code flow (PKCE S256 required, state, nonce), a login form
 * backed by in-memory users, JWT (RS256) access tokens for the platform's API (opaque ones for a
 * CLI client that asks, as Google issues), refresh tokens, and for the CLI the device
 * authorization grant (RFC 8628: its pages at /device) and a password grant. It stands in for the cloud's identity provider, so the platform talks to it exactly as it
 * would to that one: discovery, JWKS, device authorization and token endpoints.
 */
export async function startOidcProvider(opts: OidcProviderOptions): Promise<RunningOidcProvider> {
  if (!URL.canParse(opts.audience)) throw new Error(`audience must be an absolute URI, got '${opts.audience}'`)
  const accounts = new AccountStore()
  for (const user of opts.users) await accounts.add(user)

  // The issuer contains the port, which is only known once listening; requests arriving before
  // the provider exists are answered 503.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined
  const server = createServer((req, res) => {
    if (!handler) {
      res.writeHead(503).end()
      return
    }
    handler(req, res)
  })
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const issuer = `http://${host}:${port}`

  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' }

  const resourceServer: ResourceServer = {
    // The platform authorizes by its own roles, not by scopes; this one scope only marks API access.
    scope: 'api',
    audience: opts.audience,
    accessTokenTTL: ACCESS_TOKEN_TTL,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'RS256' } },
  }

  const deviceFlow = opts.deviceFlow ?? true
  const deviceGrant = deviceFlow ? [DEVICE_CODE_GRANT] : []
  const cliClients = opts.clients.filter((c): c is OidcCliClientSeed => !('redirect_uris' in c))
  const cliClient = (clientId: string | undefined) => cliClients.find((c) => c.client_id === clientId)
  const configuration: Configuration = {
    clients: opts.clients.map((c) =>
      'redirect_uris' in c
        ? {
            client_id: c.client_id,
            client_secret: c.client_secret,
            redirect_uris: c.redirect_uris,
            response_types: ['code'],
            grant_types: ['authorization_code', 'refresh_token', PASSWORD_GRANT, ...deviceGrant],
            token_endpoint_auth_method: 'client_secret_basic',
            // Every ID token says when the user authenticated, which the platform records on the session.
            require_auth_time: true,
          }
        : {
            client_id: c.client_id,
            ...(c.client_secret ? { client_secret: c.client_secret } : {}),
            application_type: 'native',
            redirect_uris: [],
            response_types: [],
            // The password grant's handler refuses a client not allowed it with RFC 6749's unauthorized_client, as Keycloak and
            // Okta answer (oidc-provider would answer invalid_request for an unlisted one).
            grant_types: [...deviceGrant, 'refresh_token', PASSWORD_GRANT],
            token_endpoint_auth_method: c.client_secret ? 'client_secret_post' : 'none',
            require_auth_time: true,
          },
    ),
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    findAccount: (_ctx, sub) => accounts.find(sub),
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The ID token carries the identity claims even in the code flow, so the platform needs no userinfo call.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // What a re-authentication confirms, from the platform (its login's `purpose`): the sign-in page shows it.
    extraParams: ['purpose'],
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: deviceFlow, ...devicePages },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // No resource for a client with opaque access tokens: they are then for the userinfo endpoint only.
        defaultResource: (_ctx, client) => (cliClient(client.clientId)?.opaque_access_tokens ? undefined : opts.audience),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== opts.audience) throw new errors.InvalidTarget(`unknown resource ${indicator}`)
          return resourceServer
        },
      },
    },
    // The platform links a first-time caller to an invited account by e-mail, so access tokens carry it.
    extraTokenClaims: (_ctx, token) => (token.kind === 'AccessToken' ? accounts.identityClaims(token.accountId) : undefined),
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      DeviceCode: opts.deviceCodeTtlSeconds ?? 600,
      IdToken: 3600,
      Interaction: 600,
      Grant: 14 * 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
      Session: 8 * 3600,
    },
  }

  const provider = new Provider(issuer, configuration)
  registerPasswordGrant(provider, accounts, {
    audience: opts.audience,
    resourceServer,
    allowed: (clientId) => cliClient(clientId)?.password_grant ?? !cliClient(clientId),
    opaque: (clientId) => cliClient(clientId)?.opaque_access_tokens ?? false,
  })
  provider.use(async (ctx, next) => {
    await next()
    if (!cliClient(ctx.oidc?.client?.clientId)?.google_device_answers) return
    const body = ctx.body as Record<string, unknown> | undefined
    if (ctx.oidc?.route === 'device_authorization' && ctx.status === 200 && body) {
      const { verification_uri: url, verification_uri_complete: _complete, ...rest } = body
      ctx.body = { ...rest, verification_url: url, interval: 5 }
    } else if (ctx.oidc?.route === 'token' && ctx.status === 400 && body?.error === 'authorization_pending') {
      ctx.status = 428
    }
  })
  const callback = provider.callback()
  handler = (req, res) => {
    handleInteraction(provider, accounts, req, res)
      .then((handled) => {
        if (!handled) callback(req, res)
      })
      .catch((error: unknown) => {
        // An expired or unknown interaction is the user's browser being stale, not a crash.
        const status = error instanceof errors.SessionNotFound ? 400 : 500
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
        res.end(status === 400 ? 'this sign-in has expired: start again from the application' : 'internal error')
      })
  }

  return {
    issuer,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()))
        server.closeAllConnections()
      }),
  }
}

/**
 * The settings a platform service needs to use this provider: every service verifies its access
 * tokens; the admin service also logs users in with the client (it also needs ADMIN_PUBLIC_URL,
 * whose /api/v1/auth/callback must be one of the client's redirect_uris), and the CLI with its own
 * client when there is one.
 */
export function platformOidcEnv(
  provider: RunningOidcProvider,
  client: OidcClientSeed,
  audience: string,
  cliClient?: OidcCliClientSeed,
): Record<string, string> {
  return {
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: client.client_id,
    OIDC_CLIENT_SECRET: client.client_secret,
    OIDC_AUDIENCE: audience,
    OIDC_ALLOW_HTTP: 'true',
    ...(cliClient ? { OIDC_CLI_CLIENT_ID: cliClient.client_id } : {}),
    ...(cliClient?.client_secret ? { OIDC_CLI_CLIENT_SECRET: cliClient.client_secret } : {}),
  }
}
