import { z } from '@hono/zod-openapi'
import { ORG_ROLES, PROJECT_ROLES } from '../../lib/auth/roles.js'
import { iso } from '../../lib/db.js'
import { pathId } from '../../lib/openapi.js'
import { bucketNameProblem, serviceAccountProblem } from '../../domain/tenancy/decide.js'
import type { ServiceKeyRecord, ServiceUserRecord } from '../../domain/tenancy/service-users.js'
import { JWT_BEARER_GRANT, MAX_ASSERTION_LIFETIME_SECONDS } from './jwt-bearer.js'

export const slugSchema = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'lowercase letters, digits and hyphens, 1 to 63 characters')

export const Organization = z.object({ id: z.string().uuid(), name: z.string(), slug: z.string(), created: z.string() }).openapi('Organization')

export const CreateOrganization = z.object({ name: z.string().trim().min(1).max(200), slug: slugSchema.optional() }).openapi('CreateOrganization')

const line = (max: number) => z.string().trim().min(1).max(max)
export const LetterheadSchema = z
  .object({
    laboratory: line(200).openapi({ description: 'The laboratory as its reports name it' }),
    address: z.array(line(200)).max(6).optional(),
    phone: line(50).optional(),
    email: z.email().optional(),
    website: z.url().max(200).optional(),
    accreditation: line(500).optional().openapi({ description: 'Accreditations and licences' }),
    director: line(200).optional().openapi({ description: 'The laboratory director' }),
    footer: line(1000).optional().openapi({ description: 'A closing line under every report' }),
  })
  .strict()
  .openapi('Letterhead', {
    description: "How the laboratory identifies itself on the project's reports (ISO 15189: who issued a report, and how to reach them)",
    example: {
      laboratory: 'Demo Lab, Molecular Genetics',
      address: ['1 Helix Road', '10115 Berlin', 'Germany'],
      phone: '+49 30 0000000',
      email: 'genetics@demo-lab.example',
      accreditation: 'ISO 15189:2022 accredited',
      director: 'Dr. Grace Hopper, laboratory director',
    },
  })

export const Project = z
  .object({
    id: z.string().uuid().openapi({ description: 'Value to send as X-Project-ID' }),
    name: z.string(),
    slug: z.string(),
    org_id: z.string().uuid(),
    org_name: z.string(),
    bucket_name: z.string().openapi({ description: 'Storage bucket of the project' }),
    credentials_configured: z.boolean(),
    letterhead: LetterheadSchema.optional().openapi({
      description: "The laboratory's letterhead on the project's reports (absent: they name the organization)",
    }),
    created: z.string(),
  })
  .openapi('Project')

/** A Google Cloud service account address, stored lowercase (decide.ts serviceAccountProblem). */
export const serviceAccountEmail = z
  .email()
  .toLowerCase()
  .superRefine((email, ctx) => {
    const problem = serviceAccountProblem(email)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })

export const CreateProject = z
  .object({
    org_id: z.string().uuid(),
    name: z.string().trim().min(1).max(200),
    slug: slugSchema.optional(),
    bucket_name: z
      .string()
      .superRefine((name, ctx) => {
        const problem = bucketNameProblem(name)
        if (problem) ctx.addIssue({ code: 'custom', message: problem })
      })
      .optional()
      .openapi({
        // Cloud Storage's rules, documented; bucketNameProblem checks them, and its message names the rule broken.
        pattern: '^[a-z0-9][a-z0-9._-]*[a-z0-9]$',
        minLength: 3,
        maxLength: 222,
        description:
          'An existing Cloud Storage bucket to bring under the project: platform administrators only (403 otherwise). Leave it out and the platform assigns one: <organization slug>-<project slug>, with a suffix from the project id when that name is taken. A bucket serves one project only: one another project holds, or a shared reference bucket, is a 409 naming it.',
      }),
    service_account_email: serviceAccountEmail.optional().openapi({
      description: "Service account the project's runs and files use. It serves one project only: one another project holds is a 409 naming it.",
    }),
  })
  .openapi('CreateProject')

export const ProjectRoleSchema = z.enum(PROJECT_ROLES)
export const OrgRoleSchema = z.enum(ORG_ROLES)

export const Member = z
  .object({
    user_id: z.string().uuid(),
    email: z.string().optional(),
    name: z.string().optional(),
    kind: z.enum(['user', 'service_user']),
    roles: z.array(ProjectRoleSchema),
  })
  .openapi('ProjectMember')

export const AddMember = z
  .object({
    email: z.email().optional(),
    user_id: z.string().uuid().optional(),
    roles: z.array(ProjectRoleSchema).min(1),
  })
  .refine((v) => Boolean(v.email) !== Boolean(v.user_id), { message: 'send exactly one of email and user_id', path: ['email'] })
  .openapi('AddProjectMember')

export const SetRoles = z.object({ roles: z.array(ProjectRoleSchema).min(1) }).openapi('SetProjectRoles')

export const OrgMember = z
  .object({
    user_id: z.string().uuid(),
    email: z.string().optional(),
    name: z.string().optional(),
    kind: z.enum(['user', 'service_user']),
    role: OrgRoleSchema,
  })
  .openapi('OrganizationMember')

export const AddOrgMember = z.object({ email: z.email(), role: OrgRoleSchema }).openapi('AddOrganizationMember')

export const Me = z
  .object({
    id: z.string().uuid(),
    kind: z.enum(['user', 'service_user']),
    email: z.string().optional(),
    name: z.string(),
    platform_admin: z.boolean(),
    auth_method: z.string(),
    org_roles: z.record(z.string(), OrgRoleSchema),
    project_roles: z.record(z.string(), z.array(ProjectRoleSchema)),
  })
  .openapi('CurrentUser')

export const DefaultContext = z.object({ project_id: z.string().uuid().nullable(), org_id: z.string().uuid().nullable() }).openapi('DefaultContext')

export const SetDefaultContext = z.object({ project_id: z.string().uuid() }).openapi('SetDefaultContext')

// Service users and their keys

export const ServiceUser = z
  .object({
    id: z.string().uuid().openapi({
      description: 'The user id: grant it project roles with POST /projects/{id}/members {user_id, roles}; iss and sub of its assertions',
    }),
    kind: z.literal('service_user'),
    org_id: z.string().uuid(),
    name: z.string(),
    description: z.string().optional(),
    disabled: z.boolean(),
    created: z.string(),
    created_by: z.string().optional(),
  })
  .openapi('ServiceUser')

export const ServiceUserDetail = ServiceUser.extend({
  project_roles: z.record(z.string(), z.array(ProjectRoleSchema)).openapi({ description: 'Project id to the roles held there' }),
}).openapi('ServiceUserDetail')

export const CreateServiceUser = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ description: 'Unique in the organization, e.g. "pipeline-runner"' }),
    description: z.string().trim().max(500).optional(),
  })
  .openapi('CreateServiceUser')

export const UpdateServiceUser = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    description: z.string().trim().max(500).optional(),
    disabled: z
      .boolean()
      .optional()
      .openapi({ description: 'A disabled service user cannot exchange assertions, and its current tokens stop working' }),
  })
  .openapi('UpdateServiceUser')

export const ServiceKey = z
  .object({
    key_id: z.string().openapi({ description: 'The kid to put in the header of assertions' }),
    service_user_id: z.string().uuid(),
    algorithm: z.string(),
    public_jwk: z.record(z.string(), z.unknown()).openapi({ description: 'The public key, as a JWK' }),
    created: z.string(),
    revoked_at: z.string().optional(),
    last_used_at: z.string().optional(),
  })
  .openapi('ServiceKey')

export const NewServiceKey = ServiceKey.extend({
  token_endpoint: z.string().openapi({ description: 'Where to exchange assertions, and their aud' }),
  private_key_pem: z.string().openapi({ description: 'PKCS #8 PEM. Shown only in this response: the platform keeps only the public key.' }),
  private_key_jwk: z.record(z.string(), z.unknown()).openapi({ description: 'The same private key as a JWK' }),
}).openapi('NewServiceKey')

export const TokenRequest = z
  .object({
    grant_type: z.string().openapi({ example: JWT_BEARER_GRANT }),
    assertion: z.string().openapi({
      description: `A JWT signed with the service key (ES256 or RS256): header kid = key_id; claims iss = sub = the service user id, aud = the token endpoint, exp at most ${MAX_ASSERTION_LIFETIME_SECONDS} s ahead, iat, and a unique jti`,
    }),
    scope: z.string().optional().openapi({ description: 'Ignored: the token carries the roles of the service user' }),
  })
  .openapi('TokenRequest')

export const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: 'A service token (plat_sat_…), sent as Authorization: Bearer' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ description: 'Seconds until the token expires' }),
  })
  .openapi('TokenResponse')

export const OrgParam = z.object({ org_id: pathId('org_id') })
export const SuParam = z.object({ id: pathId('id') })
export const KeyParam = SuParam.extend({ key_id: pathId('key_id') })

export const toServiceUser = (u: ServiceUserRecord): z.infer<typeof ServiceUser> => ({
  id: u.id,
  kind: 'service_user',
  org_id: u.org_id,
  name: u.name,
  description: u.description,
  disabled: Boolean(u.disabled),
  created: iso(u.created)!,
  created_by: u.created_by,
})

export const toKey = (k: ServiceKeyRecord): z.infer<typeof ServiceKey> => ({
  key_id: k.id,
  service_user_id: k.service_user_id,
  algorithm: k.alg,
  public_jwk: { ...k.public_jwk },
  created: iso(k.created)!,
  revoked_at: iso(k.revoked_at),
  last_used_at: iso(k.last_used_at),
})
