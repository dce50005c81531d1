import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { AuditLog } from '../../domain/audit/log.js'

export interface AuditDeps extends KernelDeps {
  auditLog: AuditLog
}

export type AuditEnv = AppEnv<AuditDeps>

export const auditDeps = (kernel: KernelDeps): AuditDeps => ({ ...kernel, auditLog: new AuditLog(kernel.db, kernel.audit.keys) })
