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
    chain: z.string().openapi({
      description:
        'The hash chain of the event: one of 256 per project (or organization, or the platform), chosen by its entity (<owner>~hmac~<shard>; <owner>~<shard> for the legacy chains of unkeyed events)',
    }),
    seq: z.number().int(),
    prev_hash: z.string().openapi({ description: "The hash of the event before it in its chain ('' for the first)" }),
    key_id: z.string().optional().openapi({
      description: 'The key its hash is keyed with (docs/audit.md); absent on a legacy event, written before events were keyed',
    }),
    chain_break: z.string().optional().openapi({
      description:
        "Present when, as it was written, its chain's head did not verify (it had been changed outside the platform): why. The event continues the chain from that head and never verifies.",
    }),
    hash: z.string().openapi({
      description:
        'HMAC-SHA256, with the key key_id, of the canonical JSON of the event without its hash (its chain, seq and prev_hash included); for a legacy event, a plain SHA-256 of it',
    }),
  })
  .openapi('AuditEvent')

const Verification = z
  .object({
    method: z.enum(['hmac-sha256', 'sha256', 'unverifiable']).openapi({
      description:
        "What its hash was checked with. hmac-sha256: the deployment's key key_id, which the database does not hold, so an edit by someone with write access to the database shows. " +
        'sha256: a legacy event, written before events were keyed; a plain hash shows accidents, but anyone who can write to the database can recompute it. ' +
        "unverifiable: its key key_id is not in this deployment's key ring, so its hash could not be checked.",
    }),
    key_id: z.string().optional().openapi({ description: 'The key of hmac-sha256 and unverifiable' }),
    result: z.enum(['verified', 'failed', 'unverifiable']).openapi({
      description:
        "verified: every check passed. failed: one did not (chain_problems says which). unverifiable: none failed, but a key needed (the event's or its chain head's) is not in the key ring.",
    }),
  })
  .openapi('AuditVerification')

export const AuditEventDetail = AuditEventSchema.extend({
  chain_verified: z.boolean().openapi({
    description:
      "verification.result is verified: its hash matches its content, it links to the events before and after it in its chain, and (a keyed chain) its chain's head is signed and not behind it",
  }),
  chain_problems: z.array(z.string()).openapi({ description: 'Why not, when chain_verified is false' }),
  verification: Verification,
}).openapi('AuditEventDetail')
