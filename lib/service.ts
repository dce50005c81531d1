import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Hono, Schema } from 'hono'
import type { OrgRecord, ProjectRecord, UserRecord } from './auth/access.js'
import type { Config } from './config.js'
import { API_PREFIX, createServiceApp, type AppEnv, type Prefetch, type ServiceTag, type StandardApi } from './http.js'
import type { KernelDeps } from './kernel.js'

/**
 * One HTTP service of the platform, defined once: everything else (the Cloud Functions entry, the
 * local suite and its seeding, the deploy script, the OpenAPI and docs tests, the CLI's service
 * addresses) is derived from the registry of these definitions (functions/services.ts).
 */
export interface ServiceDefinition<D extends KernelDeps> {
  /** The function's entry point and the service's key in suite.json and the CLI's profiles. */
  name: string
  title: string
  description: string
  /** The local suite's port for the default base (8101..8119); `--base-port` moves them together. */
  port: number
  /** Every /api/v1 request needs X-Project-ID (compute, clinical-data, files). */
  projectScoped: boolean
  /** Paths under /api/v1 reachable without credentials. Exact, or ending in '*'. */
  publicPaths?: string[]
  /** Every tag the service's operations use, described: the OpenAPI document's top-level `tags`. */
  tags: ReadonlyArray<ServiceTag>
  /** The Firestore collections this service's domain owns (the kernel's own are in lib/db.ts). */
  collections: readonly string[]
  /** The service's dependencies: the kernel's, its stores and its adapters. */
  deps(kernel: KernelDeps): D
  /** One sub-app per first path segment, mounted under /api/v1. */
  routes: ReadonlyArray<OpenAPIHono<AppEnv<D>, Schema, string>>
  /**
   * Browser pages (HTML, lib/pages.ts), mounted at the service's root beside /openapi.json: not
   * part of the JSON API or its document. Each authenticates its own requests (the session cookie).
   */
  pages?: ReadonlyArray<Hono<AppEnv<D>, Schema, string>>
  /** The records routes read, declared so that the kernel reads them with the caller's account (lib/http.ts). */
  prefetch?: ReadonlyArray<Prefetch<D>>
  /** Standard APIs spoken beside /api/v1, each with its routes mounted under its prefix (lib/http.ts `StandardApi`). */
  standardApis?: ReadonlyArray<StandardApi & { routes: Hono<AppEnv<D>, Schema, string> }>
  /** Idempotent seed data of the local suite (run on every start, after the base seed). */
  seed?(ctx: SeedContext): Promise<void>
}

/** What a service's seeder gets: the base records, a kernel on the suite's Firestore, and where the suite keeps its files. */
export interface SeedContext {
  config: Config
  kernel: KernelDeps
  user: UserRecord
  org: OrgRecord
  project: ProjectRecord
  dataDir: string
  /** Base address of every HTTP service of the registry, by name. */
  services: Record<string, string>
}

/** A definition with its dependency type erased, for the registry; `create` builds the whole app from a kernel. */
export type Service = Omit<ServiceDefinition<KernelDeps>, 'deps' | 'routes' | 'pages' | 'prefetch' | 'standardApis'> & {
  create(kernel: KernelDeps): OpenAPIHono<AppEnv>
}

/** The service's app on given dependencies (tests pass their own adapters). */
export function serviceApp<D extends KernelDeps>(def: ServiceDefinition<D>, deps: D) {
  const app = createServiceApp({ ...def, deps })
  for (const routes of def.routes) app.route(API_PREFIX, routes)
  for (const api of def.standardApis ?? []) app.route(api.prefix, api.routes)
  for (const pages of def.pages ?? []) app.route('/', pages)
  return app
}

export function defineService<D extends KernelDeps>(def: ServiceDefinition<D>): Service & { definition: ServiceDefinition<D> } {
  const { deps: _deps, routes: _routes, pages: _pages, prefetch: _prefetch, standardApis: _standardApis, ...rest } = def
  return { ...rest, definition: def, create: (kernel) => serviceApp(def, def.deps(kernel)) as unknown as OpenAPIHono<AppEnv> }
}
