import type { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv, KernelDeps } from '../lib/http.js'
import { adminDeps, createAdminApp } from './admin/app.js'
import { computeDeps, createComputeApp } from './compute/app.js'

/**
 * Every HTTP service of the platform, by name: the Cloud Functions entry, the local suite and the
 * documentation tests all enumerate this one list. `port` is the local suite's default.
 */
export interface ServiceDefinition {
  port: number
  /** Compute, clinical-data and files require X-Project-ID on every /api/v1 request. */
  projectScoped: boolean
  create(kernel: KernelDeps): OpenAPIHono<AppEnv>
}

export const SERVICES: Record<string, ServiceDefinition> = {
  admin: { port: 8101, projectScoped: false, create: (kernel) => createAdminApp(adminDeps(kernel)) },
  compute: { port: 8102, projectScoped: true, create: (kernel) => createComputeApp(computeDeps(kernel)) },
}
