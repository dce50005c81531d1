import { createRoute, z } from '@hono/zod-openapi'
import type { ProjectRecord } from '../../../lib/access.js'
import { iso } from '../../../lib/db.js'
import { ApiError } from '../../../lib/errors.js'
import { auditContext, commonErrors, json, loadProjectFor, resourceApp } from '../../../lib/http.js'
import type { AdminDeps } from '../app.js'
import { IdParam } from '../schemas.js'

/** The IAM Credentials API, through which the file service acts as the project's service account. */
const IAM_CREDENTIALS = 'https://iamcredentials.googleapis.com/v1'
const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write'
/** Short-lived by design: an access token minted for one operation, and signed URLs of the spec's 900 s. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900
export const SIGNED_URL_TTL_SECONDS = 900

const serviceAccountEmail = z
  .email()
  .toLowerCase()
  .refine((v) => v.endsWith('.gserviceaccount.com'), { message: 'must be a Google Cloud service account address (…@….iam.gserviceaccount.com)' })

const ProjectCredentials = z
  .object({
    project_id: z.string().uuid(),
    bucket_name: z.string(),
    bucket_uri: z.string().openapi({ example: 'gs://lab-germline' }),
    mode: z.literal('impersonation').openapi({
      description:
        'The platform holds no key of this service account. The file service uses its own runtime identity, which must hold roles/iam.serviceAccountTokenCreator on it, to mint short-lived access tokens and to sign V4 URLs through IAM Credentials.',
    }),
    service_account_email: z.string(),
    configured_at: z.string(),
    scopes: z.array(z.string()),
    access_token_lifetime_seconds: z.number().int().openapi({ description: 'Lifetime to request from generateAccessToken' }),
    signed_url_ttl_seconds: z.number().int(),
    required_role: z.string().openapi({ description: "What the caller's runtime identity needs on the service account" }),
    iam_credentials: z
      .object({
        generate_access_token: z.url(),
        sign_blob: z.url(),
      })
      .openapi({ description: 'The IAM Credentials endpoints to call for this service account' }),
  })
  .openapi('ProjectCredentials')

const SetCredentials = z
  .object({ service_account_email: serviceAccountEmail.openapi({ example: 'runner@lab-prod.iam.gserviceaccount.com' }) })
  .openapi('SetProjectCredentials')

const noCredentials = (project: ProjectRecord) =>
  new ApiError(
    404,
    `no cloud credentials are configured for project ${project.id}; a project admin sets them with PUT /projects/${project.id}/credentials`,
  )

function toCredentials(project: ProjectRecord): z.infer<typeof ProjectCredentials> {
  if (!project.credentials) throw noCredentials(project)
  const account = `${IAM_CREDENTIALS}/projects/-/serviceAccounts/${encodeURIComponent(project.credentials.service_account_email)}`
  return {
    project_id: project.id,
    bucket_name: project.bucket_name,
    bucket_uri: `gs://${project.bucket_name}`,
    mode: 'impersonation',
    service_account_email: project.credentials.service_account_email,
    configured_at: iso(project.credentials.configured_at)!,
    scopes: [STORAGE_SCOPE],
    access_token_lifetime_seconds: ACCESS_TOKEN_LIFETIME_SECONDS,
    signed_url_ttl_seconds: SIGNED_URL_TTL_SECONDS,
    required_role: 'roles/iam.serviceAccountTokenCreator',
    iam_credentials: { generate_access_token: `${account}:generateAccessToken`, sign_blob: `${account}:signBlob` },
  }
}

/**
 * A project's cloud credentials are a reference, not a secret: the service account its runs and
 * files use. Whoever reads them (the file service, a 'pipeline' service user) still needs an IAM
 * grant of its own to act as that account, so nothing here is worth stealing.
 */
export function credentialsRoutes(deps: AdminDeps) {
  const app = resourceApp()

  app.openapi(
    createRoute({
      method: 'get',
      path: '/projects/{id}/credentials',
      tags: ['credentials'],
      summary: 'How the file service reaches the project bucket: the service account to impersonate (no long-lived secret)',
      request: { params: IdParam },
      responses: { 200: json(ProjectCredentials), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'credentials.read')
      return c.json(toCredentials(project), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'put',
      path: '/projects/{id}/credentials',
      tags: ['credentials'],
      summary: 'Set the service account of a project (project admins)',
      request: { params: IdParam, body: { content: { 'application/json': { schema: SetCredentials } }, required: true } },
      responses: { 200: json(ProjectCredentials), ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'credentials.manage')
      const updated = await deps.store.setCredentials(auditContext(c), project, c.req.valid('json').service_account_email)
      return c.json(toCredentials(updated), 200)
    },
  )

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/projects/{id}/credentials',
      tags: ['credentials'],
      summary: 'Remove the credentials of a project (project admins); its runs are refused until new ones are set',
      request: { params: IdParam },
      responses: { 204: { description: 'Removed' }, ...commonErrors },
    }),
    async (c) => {
      const project = await loadProjectFor(deps, c, c.req.valid('param').id, 'credentials.manage')
      if (!project.credentials) throw noCredentials(project)
      await deps.store.setCredentials(auditContext(c), project, null)
      return c.body(null, 204)
    },
  )

  return app
}
