import { auditDeps } from '../../functions/audit/deps.js'
import { createAuditApp } from '../../functions/audit/service.js'
import { call, type makeWorld } from './world.js'

/** The audit service on a test tenant's emulator project, and a caller of it. */
export function localAudit(world: Awaited<ReturnType<typeof makeWorld>>) {
  const app = createAuditApp(auditDeps(world.deps))
  const api = (path: string, opts: { token?: string; project?: string } = {}) =>
    call(app, 'GET', `/api/v1${path}`, { token: opts.token ?? world.owner.token, project: opts.project })
  return { app, api }
}
