import { defineService, serviceApp } from '../../lib/service.js'
import { auditConsole } from './console.js'
import { auditDeps, type AuditDeps } from './deps.js'
import { events } from './routes/events.js'

/** The audit service: the audit log of every service, read by the people DOMAIN.md names. */
export const auditService = defineService<AuditDeps>({
  name: 'audit',
  title: 'Audit service',
  description:
    "The audit log: every change of every service, who made it, when and from where, hash-chained. GET /events filters by entity, action, actor, outcome and time, newest first; GET /events/{id} also says whether the event's chain link verifies. A project's log is read by its admins and auditors (X-Project-ID or project_id), an organization's by its owners and admins (org_id). Every read is itself recorded.",
  port: 8107,
  projectScoped: false,
  collections: [],
  tags: [
    {
      name: 'events',
      description: 'The audit log: who did what to which record, when and from where, each event chained by hash to the one before it',
    },
  ],
  deps: auditDeps,
  routes: [events],
  pages: [auditConsole],
})

export const createAuditApp = (deps: AuditDeps) => serviceApp(auditService.definition, deps)
