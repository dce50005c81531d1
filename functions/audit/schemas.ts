import { z } from '@hono/zod-openapi'
import { PageQuery } from '../../lib/pagination.js'

const instant = z
  .string()
  .refine((v) => /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(v) && !Number.isNaN(Date.parse(v)), {
    message: 'an ISO 8601 date or time with its offset (2026-11-22 or 2026-11-22T06:00:00Z)',
  })
  .transform((v) => new Date(v.length === 10 ? `${v}T00:00:00Z` : v))

export const EventQuery = PageQuery.extend({
  project_id: z.string().optional().openapi({ description: "A project's events (the same as sending X-Project-ID): project admins and auditors" }),
  org_id: z.string().optional().openapi({ description: "An organization's events, its projects' included: organization owners and admins" }),
  scope: z
    .enum(['platform'])
    .optional()
    .openapi({ description: 'platform: the events of no organization (logins, personal tokens): platform administrators' }),
  entity: z.string().min(1).max(1200).optional().openapi({ description: 'type:id (run:3f0e…) or a type alone (run)', example: 'run' }),
  action: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: 'An action (run.submitted), or a group ending in .* (run.*)', example: 'run.*' }),
  actor: z.string().min(1).max(320).optional().openapi({ description: "The actor's user id, or e-mail" }),
  outcome: z.enum(['success', 'denied', 'failure']).optional(),
  from: instant.optional().openapi({ type: 'string', description: 'From this time on (inclusive), ISO 8601', example: '2026-11-01T00:00:00Z' }),
  to: instant.optional().openapi({ type: 'string', description: 'Before this time (exclusive), ISO 8601', example: '2026-12-01T00:00:00Z' }),
})

export const EventScopeHeader = z.object({
  'x-project-id': z.string().optional().openapi({ description: 'Project UUID: the same as the project_id query parameter' }),
})

const Actor = z.object({
  type: z.enum(['user', 'service_user', 'system']),
  id: z.string(),
  email: z.string().optional(),
  auth_method: z.string().optional(),
})

export const AuditEventSchema = z
  .object({
    id: z.string(),
    occurred_at: z.string().openapi({ description: 'ISO 8601 UTC' }),
    org_id: z.string().optional(),
    project_id: z.string().optional(),
    service: z.string(),
    action: z.string().openapi({ example: 'run.submitted' }),
    outcome: z.enum(['success', 'denied', 'failure']),
    actor: Actor,
    request: z
      .object({
        id: z.string().optional(),
        ip: z.string().optional(),
        user_agent: z.string().optional(),
        method: z.string().optional(),
        path: z.string().optional(),
      })
      .optional(),
    entity: z.object({ type: z.string(), id: z.string(), parent: z.string().optional() }),
    change: z
      .object({
        from: z.string().optional(),
        to: z.string().optional(),
        reason: z.string().optional(),
        fields: z.array(z.string()).optional(),
        query: z.record(z.string(), z.string()).optional(),
      })
      .optional(),
    chain: z
      .string()
      .openapi({ description: 'The hash chain of the event: one of 256 per project (or organization, or the platform), chosen by its entity' }),
    seq: z.number().int(),
    prev_hash: z.string(),
    hash: z.string().openapi({ description: 'SHA-256 of the canonical JSON of the event without its hash' }),
  })
  .openapi('AuditEvent')

export const AuditEventDetail = AuditEventSchema.extend({
  chain_verified: z.boolean().openapi({ description: 'Its hash matches its content and it links to the events before and after it in its chain' }),
  chain_problems: z.array(z.string()).openapi({ description: 'Why not, when chain_verified is false' }),
}).openapi('AuditEventDetail')
