import Provider, { errors, type ResourceServer } from 'oidc-provider'
import type { AccountStore } from './accounts.js'

export const PASSWORD_GRANT = 'password'

const OIDC_SCOPES = new Set(['openid', 'email', 'profile', 'offline_access'])

/** Who may use the password grant, and who gets opaque access tokens (for the provider's userinfo, not the platform's API). */
export interface PasswordGrantOptions {
  audience: string
  resourceServer: ResourceServer
  allowed(clientId: string): boolean
  opaque(clientId: string): boolean
}

/**
 * The resource owner password grant (RFC 6749 §4.3), which oidc-provider does not ship, for the
 * CLI's e-mail and password login. Only confidential clients allowed it may use it: the client
 * secret stays on the platform's server, the CLI only ever talks to the platform. It issues what
 * the code flow issues: an access token (a JWT for the platform's API, or an opaque one), an ID
 * token, and a refresh token when offline_access is asked for (then refreshed by the provider's
 * own refresh_token grant).
 */
export function registerPasswordGrant(provider: Provider, accounts: AccountStore, opts: PasswordGrantOptions) {
  const { audience, resourceServer } = opts
  provider.registerGrantType<{ username?: string; password?: string }>(
    PASSWORD_GRANT,
    async (ctx) => {
      const { client, params } = ctx.oidc
      if (client.clientAuthMethod === 'none' || !opts.allowed(client.clientId)) {
        throw new errors.UnauthorizedClient('the password grant is not allowed for this client')
      }
      if (!params.username || !params.password) {
        throw new errors.InvalidRequest('username and password are required')
      }
      const account = await accounts.authenticate(params.username, params.password)
      if (!account) throw new errors.InvalidGrant('invalid e-mail or password')

      // An opaque access token is for the provider's userinfo only: no resource, no API scope.
      const opaque = opts.opaque(client.clientId)
      const apiScopes = opaque ? [] : resourceServer.scope.split(' ').filter(Boolean)
      const requested = (params.scope ?? 'openid').split(' ').filter(Boolean)
      const unknown = requested.filter((s) => !OIDC_SCOPES.has(s) && !apiScopes.includes(s))
      if (unknown.length) throw new errors.InvalidScope('requested scope is not supported', unknown.join(' '))
      // API access is what this grant is for, so its scopes are implied; the refresh token keeps them.
      const scope = [...new Set([...requested, ...apiScopes])].join(' ')
      const oidcRequested = requested.filter((s) => OIDC_SCOPES.has(s)).join(' ')

      // The grant is what the refresh_token grant checks later: same client, same account, these scopes.
      const grant = new provider.Grant({ clientId: client.clientId, accountId: account.accountId })
      grant.addOIDCScope(oidcRequested)
      if (!opaque) grant.addResourceScope(audience, resourceServer.scope)
      const grantId = await grant.save()

      const at = new provider.AccessToken({
        accountId: account.accountId,
        client,
        grantId,
        gty: PASSWORD_GRANT,
        ...(opaque
          ? { scope: oidcRequested }
          : { resourceServer: new provider.ResourceServer(audience, resourceServer), scope: resourceServer.scope }),
      })
      ctx.oidc.entity('AccessToken', at)
      const accessToken = await at.save()

      let refreshToken: string | undefined
      if (requested.includes('offline_access') && client.grantTypeAllowed('refresh_token')) {
        const rt = new provider.RefreshToken({
          accountId: account.accountId,
          client,
          grantId,
          gty: PASSWORD_GRANT,
          scope,
          ...(opaque ? {} : { resource: audience }),
          rotations: 0,
        })
        refreshToken = await rt.save()
      }

      let idToken: string | undefined
      if (requested.includes('openid')) {
        const oidcScope = grant.getOIDCScope()
        const token = new provider.IdToken(
          { ...(await account.claims('id_token', oidcScope, {}, [])), auth_time: Math.floor(Date.now() / 1000) },
          { ctx },
        )
        // The scope decides which of the account's claims the ID token carries.
        ;(token as unknown as { scope: string }).scope = oidcScope
        idToken = await token.issue({ use: 'idtoken' })
      }

      ctx.body = {
        access_token: accessToken,
        token_type: at.tokenType,
        expires_in: at.expiration,
        scope,
        ...(idToken ? { id_token: idToken } : {}),
        ...(refreshToken ? { refresh_token: refreshToken } : {}),
      }
    },
    ['username', 'password', 'scope'],
  )
}
