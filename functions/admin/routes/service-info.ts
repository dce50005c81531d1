import { createRoute, z } from '@hono/zod-openapi'
import { ApiError } from '../../../lib/errors.js'
import { resourceApp } from '../../../lib/http.js'
import { json } from '../../../lib/openapi.js'
import type { AdminDeps } from '../deps.js'

/**
 * /service-info: where the platform's services are, from the one address a person knows (the admin
 * service's). The name is GA4GH's (`GET /service-info`, with its `environment`), but the document is
 * the platform's own. Not a `/.well-known/` document (RFC 8615): those live at an origin's root,
 * and in the cloud the admin service is a path on a shared host (…cloudfunctions.net/admin, or the
 * load balancer's domain), whose root no function serves. docs/discovery.md describes it.
 */
export const serviceInfo = resourceApp<AdminDeps>()

const IdentityProvider = z
  .object({
    issuer: z.string().openapi({ description: "The OIDC issuer people log in at (the platform's login goes through this service)" }),
    cli_login_methods: z
      .array(z.enum(['browser', 'password']))
      .nullable()
      .openapi({
        description:
          'How the CLI may log in, as GET /auth/cli lists them (browser: the device authorization grant; password); ' +
          "null while the provider's metadata cannot be read (GET /auth/cli then says why). A personal access token always works besides.",
      }),
  })
  .openapi('IdentityProvider', { description: 'Where people log in; null where login is not configured (personal access tokens only)' })

const ServiceInfo = z
  .object({
    environment: z.string().openapi({
      description:
        'The name of this deployment (PLATFORM_ENVIRONMENT): local in the local suite, else the name its deploy gave (by default the Google Cloud project id)',
      example: 'production',
    }),
    version: z.string().nullable().openapi({
      description: "The platform's version (PLATFORM_VERSION: the deploy sets package.json's); null where it was not set",
      example: '0.1.0',
    }),
    services: z.record(z.string(), z.string()).openapi({
      description:
        "Each service's base address by name (admin, compute, clinical, files, variant_cache, reports, audit): its API is <address>/api/v1, its documentation <address>/docs. " +
        'The addresses browsers and the CLI use (<SERVICE>_PUBLIC_URL), without a trailing slash.',
      example: {
        admin: 'https://europe-west4-lab-prod.cloudfunctions.net/admin',
        compute: 'https://europe-west4-lab-prod.cloudfunctions.net/compute',
      },
    }),
    identity_provider: IdentityProvider.nullable(),
  })
  .openapi('ServiceInfo')

serviceInfo.openapi(
  createRoute({
    operationId: 'getServiceInfo',
    method: 'get',
    path: '/service-info',
    tags: ['platform'],
    summary: "Where the platform's services are: every service's address, the identity provider, the environment's name",
    description:
      "Public, so that a client given the admin service's address alone (`platform config set url <address>`) finds the rest before anyone logs in. " +
      'It says only what the platform already tells every browser (its addresses, its login page).',
    security: [],
    responses: { 200: json(ServiceInfo, 'Where the services are') },
  }),
  async (c) => {
    const deps = c.get('deps')
    const { config } = deps
    // The addresses matter more than the login methods: a provider that cannot be read now does not hide them.
    let cliLoginMethods: ('browser' | 'password')[] | null = null
    if (config.oidc && config.adminPublicUrl) {
      try {
        cliLoginMethods = (await deps.login.cliMethods(deps.log)).methods
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
      }
    }
    c.header('Cache-Control', 'public, max-age=300')
    return c.json(
      {
        environment: config.environment,
        version: config.version,
        services: { ...config.publicUrls },
        identity_provider: config.oidc && config.adminPublicUrl ? { issuer: config.oidc.issuer, cli_login_methods: cliLoginMethods } : null,
      },
      200,
    )
  },
)
