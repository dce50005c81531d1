import { auditDeps } from '../../functions/audit/deps.js'
import { createAuditApp } from '../../functions/audit/service.js'
import type { AuditKeyRing } from '../../lib/audit-keys.js'
import { createKernel } from '../../lib/kernel.js'
import { call, type makeWorld } from './world.js'

/**
 * The audit service on a test tenant's emulator project, and a caller of it. `keys`: the service
 * runs with this key ring instead of the world's (a rotation, a key it does not hold).
 */
export function localAudit(world: Awaited<ReturnType<typeof makeWorld>>, keys?: AuditKeyRing) {
  const kernel = keys ? createKernel({ ...world.deps.config, auditKeys: keys }, 'audit', { firestore: world.deps.db.firestore }) : world.deps
  const app = createAuditApp(auditDeps(kernel))
  const api = (path: string, opts: { token?: string; project?: string } = {}) =>
    call(app, 'GET', `/api/v1${path}`, { token: opts.token ?? world.owner.token, project: opts.project })
  return { app, api, deps: kernel }
}
