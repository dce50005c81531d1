import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { canInOrg, canInProject, type Principal } from '../../../lib/auth/access.js'
import type { AuditEvent, AuditInput } from '../../../lib/audit.js'
import { iso } from '../../../lib/db.js'
import { badRequest, forbidden, notFound } from '../../../lib/errors.js'
import { auditContext, loadProjectFor, requireOrg, resourceApp } from '../../../lib/http.js'
import { newId, UUID_RE } from '../../../lib/ids.js'
import { commonErrors, IdParam, json } from '../../../lib/openapi.js'
import { pageHeaders, pageResponse } from '../../../lib/pagination.js'
import type { AuditReadScope } from '../../../domain/audit/log.js'
import type { AuditDeps, AuditEnv } from '../deps.js'
import { AuditEventDetail, AuditEventSchema, EventQuery, EventScopeHeader } from '../schemas.js'

/** /events: the audit log, read within one scope the caller may read. */
export const events = resourceApp<AuditDeps>()

export function toEvent(e: AuditEvent): z.infer<typeof AuditEventSchema> {
  return {
    id: e.id,
    occurred_at: iso(e.occurred_at)!,
    org_id: e.org_id,
    project_id: e.project_id,
    service: e.service,
    action: e.action,
    outcome: e.outcome,
    actor: e.actor,
    request: e.request,
    entity: e.entity,
    change: e.change,
    chain: e.chain,
    seq: e.seq,
    prev_hash: e.prev_hash,
    key_id: e.key_id,
    chain_break: e.chain_break,
    hash: e.hash,
  }
}

/** Where a read of the log is itself recorded: in the scope that was read. */
type Recorded = Pick<AuditInput, 'project_id' | 'org_id'>

async function denyPlatform(c: Context<AuditEnv>): Promise<never> {
  await c.get('deps').audit.record(auditContext(c), {
    action: 'access.denied',
    outcome: 'denied',
    entity: { type: 'audit_log', id: 'platform' },
    change: { reason: 'platform administrator required' },
  })
  throw forbidden("only platform administrators read the platform's own events")
}

/**
 * The one scope a query reads, and whether the caller may: a project (X-Project-ID or project_id)
 * needs audit.read there (project admins and auditors, and organization owners and admins); an
 * organization (org_id) needs org.audit.read (its owners and admins); the platform (scope=platform)
 * a platform administrator. A project or organization the caller has no role in is a 404.
 */
async function readScope(
  c: Context<AuditEnv>,
  q: { project_id?: string; org_id?: string; scope?: 'platform' },
): Promise<{ scope: AuditReadScope; recorded: Recorded }> {
  const header = c.req.header('x-project-id')
  if (header !== undefined && q.project_id !== undefined && header !== q.project_id)
    throw badRequest('project_id: must equal the X-Project-ID header')
  const projectId = q.project_id ?? header
  const given = [projectId, q.org_id, q.scope].filter((v) => v !== undefined).length
  if (given === 0) {
    throw badRequest("send X-Project-ID (or project_id) for a project's events, org_id for an organization's, or scope=platform")
  }
  if (given > 1) throw badRequest('send only one of X-Project-ID/project_id, org_id and scope')
  if (projectId !== undefined) {
    const project = await loadProjectFor(c, projectId, 'audit.read')
    return { scope: { kind: 'project', project_id: project.id }, recorded: { project_id: project.id, org_id: project.org_id } }
  }
  if (q.org_id !== undefined) {
    const principal = c.get('principal')
    if (!UUID_RE.test(q.org_id) || !principal.orgRoles.has(q.org_id)) throw notFound('organization')
    await requireOrg(c, q.org_id, 'org.audit.read')
    return { scope: { kind: 'organization', org_id: q.org_id }, recorded: { org_id: q.org_id } }
  }
  if (!c.get('principal').user.platform_admin) await denyPlatform(c)
  return { scope: { kind: 'platform' }, recorded: {} }
}

/** Whether the caller may read this event; 'hidden' when its tenant is not theirs at all (answered as absent). */
function mayRead(p: Principal, e: AuditEvent): 'yes' | 'no' | 'hidden' {
  if (e.project_id) {
    const project = { id: e.project_id, org_id: e.org_id ?? '' }
    if (canInProject(p, project, 'audit.read') || (e.org_id && canInOrg(p, e.org_id, 'org.audit.read'))) return 'yes'
    return canInProject(p, project, 'project.read') ? 'no' : 'hidden'
  }
  if (e.org_id) return canInOrg(p, e.org_id, 'org.audit.read') ? 'yes' : p.orgRoles.has(e.org_id) ? 'no' : 'hidden'
  return p.user.platform_admin ? 'yes' : 'hidden'
}

events.openapi(
  createRoute({
    operationId: 'listEvents',
    method: 'get',
    path: '/events',
    tags: ['events'],
    summary: 'Audit events of one project, organization or the platform, newest first; filters entity, action, actor, outcome, from, to',
    description:
      'Scope: X-Project-ID or project_id (project admins and auditors), org_id (organization owners and admins: the organization and all its projects), or scope=platform (platform administrators). ' +
      'entity is type:id or a type; action is exact or a group ending in .* (run.* matches run.submitted, not run.x.y); actor is a user id or an e-mail; from is inclusive, to exclusive. ' +
      'With several filters, the narrowest (an entity id, an actor, an action, an entity type, an action group, an outcome, in that order) is looked up and the others are checked on the events read, at most 2,000 beyond a page: a page may then hold fewer than page_size events (even none) and still carry X-Next-Page-Token; follow it until it is absent. ' +
      'Every query is itself recorded (audit.queried, with its filters).',
    request: { headers: EventScopeHeader, query: EventQuery },
    responses: { 200: { ...json(z.array(AuditEventSchema)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const { project_id, org_id, scope: scopeParam, entity, action, actor, outcome, from, to, ...page } = c.req.valid('query')
    const { scope, recorded } = await readScope(c, { project_id, org_id, scope: scopeParam })
    const filters = { entity, action, actor, outcome, from, to }
    const query: Record<string, string> = Object.fromEntries(
      Object.entries({ ...filters, from: from?.toISOString(), to: to?.toISOString(), scope: scope.kind }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>
    // The read and its record run together: a query costs no more than the slower of the two, and fails if it cannot be recorded.
    const [result] = await Promise.all([
      deps.auditLog.list(scope, filters, page),
      deps.audit.record(auditContext(c), { action: 'audit.queried', ...recorded, entity: { type: 'audit_query', id: newId() }, change: { query } }),
    ])
    return pageResponse(c, { items: result.items.map(toEvent), nextPageToken: result.nextPageToken })
  },
)

events.openapi(
  createRoute({
    operationId: 'getEvent',
    method: 'get',
    path: '/events/{id}',
    tags: ['events'],
    summary: 'One audit event, and whether its link in its chain verifies, and how (chain_verified, chain_problems, verification)',
    request: { params: IdParam },
    responses: { 200: json(AuditEventDetail), ...commonErrors },
  }),
  async (c) => {
    const deps = c.get('deps')
    const event = await deps.auditLog.get(c.req.valid('param').id)
    const access = event ? mayRead(c.get('principal'), event) : 'hidden'
    if (!event || access === 'hidden') throw notFound('event')
    const recorded = { project_id: event.project_id, org_id: event.org_id }
    if (access === 'no') {
      await deps.audit.record(auditContext(c), {
        action: 'access.denied',
        outcome: 'denied',
        ...recorded,
        entity: { type: 'audit_event', id: event.id },
        change: { reason: 'missing permission audit.read' },
      })
      throw forbidden('permission audit.read is required')
    }
    const [check] = await Promise.all([
      deps.auditLog.checkLink(event),
      deps.audit.record(auditContext(c), { action: 'audit.viewed', ...recorded, entity: { type: 'audit_event', id: event.id } }),
    ])
    const { result, method, key_id, problems } = check
    return c.json(
      { ...toEvent(event), chain_verified: result === 'verified', chain_problems: problems, verification: { method, key_id, result } },
      200,
    )
  },
)
