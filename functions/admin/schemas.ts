import { z } from '@hono/zod-openapi'
import { ORG_ROLES, PROJECT_ROLES } from '../../lib/roles.js'

export const slugSchema = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'lowercase letters, digits and hyphens, 1 to 63 characters')

export const Organization = z.object({ id: z.string().uuid(), name: z.string(), slug: z.string(), created: z.string() }).openapi('Organization')

export const CreateOrganization = z.object({ name: z.string().trim().min(1).max(200), slug: slugSchema.optional() }).openapi('CreateOrganization')

export const Project = z
  .object({
    id: z.string().uuid().openapi({ description: 'Value to send as X-Project-ID' }),
    name: z.string(),
    slug: z.string(),
    org_id: z.string().uuid(),
    org_name: z.string(),
    bucket_name: z.string().openapi({ description: 'Storage bucket of the project' }),
    credentials_configured: z.boolean(),
    created: z.string(),
  })
  .openapi('Project')

export const CreateProject = z
  .object({
    org_id: z.string().uuid(),
    name: z.string().trim().min(1).max(200),
    slug: slugSchema.optional(),
    bucket_name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'a valid Cloud Storage bucket name')
      .optional()
      .openapi({ description: 'Defaults to <organization slug>-<project slug>' }),
    service_account_email: z.email().optional().openapi({ description: "Service account the project's runs and files use" }),
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

export const IdParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) })
