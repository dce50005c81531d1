import type { Service } from '../lib/service.js'
import { admin } from './admin/service.js'
import { auditService } from './audit/service.js'
import { clinical } from './clinical/service.js'
import { compute } from './compute/service.js'
import { filesService } from './files/service.js'
import { reportsService } from './reports/service.js'
import { variantCache } from './variant-cache/service.js'

/**
 * Every HTTP service of the platform. Adding a service is adding its definition here: the Cloud
 * Functions entry, the local suite, seeding, the deploy script, the OpenAPI and docs tests and the
 * CLI's service addresses all enumerate this one list.
 */
export const SERVICES: readonly Service[] = [admin, compute, clinical, filesService, variantCache, reportsService, auditService]

export const serviceNamed = (name: string) => SERVICES.find((s) => s.name === name)
