import type { Hono } from 'hono'
import { expect } from 'vitest'
import { grant, seedOrgAndProject, seedToken, seedUser } from '../../domain/tenancy/seed.js'
import { pipelineId, PLATFORM_SCOPE } from '../../domain/pipelines/model.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { RunStore } from '../../domain/runs/store.js'
import { runIngestion } from '../../domain/variants/ingest.js'
import { trioVcf } from '../../domain/variants/synthetic.js'
import type { OrgRecord, ProjectRecord, UserRecord } from '../../lib/auth/access.js'
import { API_PREFIX } from '../../lib/http.js'
import { PubSubQueue } from '../../lib/queue.js'
import type { LocalObjectStorage } from '../../lib/storage.js'
import { makeTrioOrder } from './reports.js'
import { reportVia, sampleVia, subjectVia, webhookDeliveryVia, type Ctx } from './operations.js'
import { call, rand } from './world.js'

/**
 * Every read (GET) of every registered service, with a fixture naming this tenant's records: the
 * registry-driven reads walk (test/integration/security/every-operation.test.ts) takes its
 * operations from the services' OpenAPI documents, so a new read without a fixture here fails it,
 * as a public one not listed in PUBLIC_READS does. Browser pages (outside /api/v1, not in the
 * documents) are taken from the services' route tables and listed here the same way.
 */

/** This tenant's records that the reads name, made once through the services as its owner. */
export interface TenantRecords {
  org: OrgRecord
  project: ProjectRecord
  owner: UserRecord
  subject: { id: string; external_id: string }
  /** The subject's family id (the console's pedigree page). */
  family: string
  sample: { id: string; external_id: string }
  /** An in-progress trio order with a ready variant cache, a run, and its labflow state. */
  order: { id: string; accession: string }
  /** Its proband's sample, whose calls GET /samples/{id}/variants lists. */
  proband: string
  /** A variant of the order's cache (and of the project's catalogue). */
  variant: string
  ingestion: string
  labflow: string
  report: { id: string; order: string; variant: string; comment: string }
  run: string
  /** A run whose Batch job has started (it has a task, as WES lists them). */
  started: string
  pipeline: { id: string; slug: string }
  /** An object of the project's bucket, and its folder. */
  file: { path: string; folder: string }
  /** An audit event of the project. */
  event: string
  serviceUser: string
  /** A webhook of the project and one of its deliveries. */
  webhook: { id: string; delivery: string }
  /** Every id and name above (and the project's bucket): none of them may reach another tenant. */
  ids: string[]
}

/** The other tenant: an organization and project of their own, which they own; their token and a browser session. */
export interface Stranger {
  user: UserRecord
  token: string
  session: string
  org: OrgRecord
  project: ProjectRecord
}

export interface Read {
  /** The concrete path under /api/v1, naming this tenant's records. */
  path: string
  /** A read of one record named in the query rather than the path (a file): refused like a read by id. */
  record?: true
  /** More paths of a list, each with a filter naming this tenant's records. */
  filtered?: string[]
  /** What a successful answer to the other tenant never contains, even when the request named it (the project's bucket, for files). */
  never?: string[]
}

/** The caller's own organization and project: for reads that name the scope they read (the audit log). */
export interface Scope {
  org: { id: string }
  project: { id: string }
}

export type ReadFixture = (t: TenantRecords, caller: Scope) => Read

const id = (value: string) => encodeURIComponent(value)

/** One entry per read operationId of every service, but the public ones. */
export const READ_FIXTURES: Record<string, ReadFixture> = {
  // admin
  listOrgs: () => ({ path: '/orgs' }),
  listOrganizations: () => ({ path: '/organizations' }),
  getOrganization: (t) => ({ path: `/organizations/${t.org.id}` }),
  listOrganizationMembers: (t) => ({ path: `/organizations/${t.org.id}/members` }),
  listServiceUsers: (t) => ({ path: `/organizations/${t.org.id}/service-users` }),
  getProjectCredentials: (t) => ({ path: `/projects/${t.project.id}/credentials` }),
  listProjects: (t) => ({ path: '/projects', filtered: [`/projects?org_id=${t.org.id}`] }),
  getProject: (t) => ({ path: `/projects/${t.project.id}` }),
  listProjectMembers: (t) => ({ path: `/projects/${t.project.id}/members` }),
  getMe: () => ({ path: '/users/me' }),
  getDefaultContext: () => ({ path: '/users/me/default-context' }),
  listPersonalAccessTokens: () => ({ path: '/users/me/tokens' }),
  getServiceUser: (t) => ({ path: `/service-users/${t.serviceUser}` }),
  listServiceKeys: (t) => ({ path: `/service-users/${t.serviceUser}/keys` }),
  // compute
  listPipelines: (t) => ({ path: '/pipelines', filtered: [`/pipelines?slug=${t.pipeline.slug}`] }),
  getPipeline: (t) => ({ path: `/pipelines/${t.pipeline.id}` }),
  getPipelineBySlug: (t) => ({ path: `/pipelines/slug/${t.pipeline.slug}` }),
  listPipelineVersions: (t) => ({ path: `/pipelines/slug/${t.pipeline.slug}/versions` }),
  listRuns: (t) => ({ path: '/runs', filtered: [`/runs?order_id=${t.order.id}`, `/runs?order_id=${t.order.accession}`] }),
  listRunsByOrder: (t) => ({ path: `/runs/by-order/${t.order.id}` }),
  getRun: (t) => ({ path: `/runs/${t.run}` }),
  listWebhooks: () => ({ path: '/webhooks' }),
  getWebhook: (t) => ({ path: `/webhooks/${t.webhook.id}` }),
  listWebhookDeliveries: (t) => ({ path: `/webhooks/${t.webhook.id}/deliveries`, filtered: [`/webhooks/${t.webhook.id}/deliveries?status=pending`] }),
  getWebhookDelivery: (t) => ({ path: `/webhooks/${t.webhook.id}/deliveries/${t.webhook.delivery}` }),
  listRunOutputs: (t) => ({ path: `/runs/${t.run}/outputs` }),
  getRunLogs: (t) => ({ path: `/runs/${t.run}/logs`, filtered: [`/runs/${t.run}/logs?stream=stderr`] }),
  // clinical data
  listSubjects: (t) => ({ path: '/subjects', filtered: [`/subjects?external_id=${t.subject.external_id}`] }),
  getSubject: (t) => ({ path: `/subjects/${t.subject.id}` }),
  listSamples: (t) => ({ path: '/samples', filtered: [`/samples?subject_id=${t.subject.id}`, `/samples?external_id=${t.sample.external_id}`] }),
  getSample: (t) => ({ path: `/samples/${t.sample.id}` }),
  getSampleInfo: (t) => ({ path: `/samples/${t.sample.id}/sampleinfo` }),
  listSampleVariants: (t) => ({ path: `/samples/${t.proband}/variants` }),
  listOrders: () => ({ path: '/orders' }),
  getOrder: (t) => ({ path: `/orders/${t.order.id}` }),
  getOrderSamplesheet: (t) => ({ path: `/orders/${t.order.id}/samplesheet` }),
  listOrderSamples: (t) => ({ path: `/orders/${t.order.id}/samples` }),
  getOrderLabflow: (t) => ({ path: `/orders/${t.order.id}/labflow` }),
  listLabflows: () => ({ path: '/labflows' }),
  getLabflow: (t) => ({ path: `/labflows/${t.labflow}` }),
  listLabflowVersions: (t) => ({ path: `/labflows/${t.labflow}/versions` }),
  listVariants: () => ({ path: '/variants' }),
  getVariant: (t) => ({ path: `/variants/${id(t.variant)}` }),
  // files: paths are object names in the caller's own bucket; none reaches another bucket
  listFiles: (t) => ({
    path: `/files?path=${t.file.folder}`,
    filtered: [
      `/files?path=gs://${t.project.bucket_name}/${t.file.folder}`,
      `/files?path=../${t.project.bucket_name}/${t.file.folder}`,
      `/files?path=${id(`/${t.project.bucket_name}/${t.file.folder}`)}`,
      `/files?project_id=${t.project.id}&path=${t.file.folder}`,
    ],
    never: [t.project.bucket_name],
  }),
  getDownloadUrl: (t) => ({
    path: `/files/download-url?path=${t.file.path}`,
    record: true,
    filtered: [
      `/files/download-url?path=gs://${t.project.bucket_name}/${t.file.path}`,
      `/files/download-url?path=../${t.project.bucket_name}/${t.file.path}`,
      `/files/download-url?path=${id(`/${t.project.bucket_name}/${t.file.path}`)}`,
      `/files/download-url?path=${id(`..%2F${t.project.bucket_name}%2F${t.file.path}`)}`,
      `/files/download-url?project_id=${t.project.id}&path=${t.file.path}`,
    ],
    never: [t.project.bucket_name],
  }),
  // variant cache
  listOrderVariants: (t) => ({ path: `/orders/${t.order.id}/variants` }),
  getOrderVariant: (t) => ({ path: `/orders/${t.order.id}/variants/${id(t.variant)}` }),
  getOrderCacheStatus: (t) => ({ path: `/orders/${t.order.id}/status` }),
  listOrderIngestions: (t) => ({ path: `/orders/${t.order.id}/ingestions` }),
  getOrderIngestion: (t) => ({ path: `/orders/${t.order.id}/ingestions/${t.ingestion}` }),
  // reports
  listReports: (t) => ({ path: '/reports', filtered: [`/reports?order_id=${t.report.order}`] }),
  getReport: (t) => ({ path: `/reports/${t.report.id}` }),
  listReportVariants: (t) => ({ path: `/reports/${t.report.id}/variants` }),
  getReportVariant: (t) => ({ path: `/reports/${t.report.id}/variants/${id(t.report.variant)}` }),
  listReportComments: (t) => ({ path: `/reports/${t.report.id}/comments` }),
  listReportSnapshots: (t) => ({ path: `/reports/${t.report.id}/snapshots` }),
  // audit: the caller's own scope, filtered by this tenant's entities and actor; or this tenant's scopes
  listEvents: (t, s) => ({
    path: `/events?project_id=${s.project.id}`,
    filtered: [
      `/events?project_id=${s.project.id}&entity=subject:${t.subject.id}`,
      `/events?project_id=${s.project.id}&entity=report:${t.report.id}`,
      `/events?project_id=${s.project.id}&actor=${t.owner.id}`,
      `/events?org_id=${s.org.id}&entity=order:${t.order.id}`,
      `/events?org_id=${s.org.id}&actor=${id(t.owner.email ?? t.owner.id)}`,
      `/events?project_id=${t.project.id}`,
      `/events?org_id=${t.org.id}`,
      `/events?scope=platform`,
    ],
  }),
  getEvent: (t) => ({ path: `/events/${t.event}` }),
}

/** Reads anyone may make (security: [] in the documents): the browser login and its callback, how the CLI may log in, and where the services are (discovery). */
export const PUBLIC_READS = ['beginLogin', 'completeLogin', 'cliLoginMethods', 'getServiceInfo']

/** Pages every service serves outside /api/v1 without credentials: its OpenAPI document, the docs pages and their assets, health. */
export const PUBLIC_PAGES = ['/openapi.json', '/docs', '/redoc', '/docs-assets/:name', '/healthz', '/health']

/** Browser pages (outside /api/v1) that read a tenant's records, by `<service> <route>`: the path naming this tenant's, from the service's root; and public ones of a service. */
export const PAGE_FIXTURES: Record<string, ((t: TenantRecords) => string) | 'public'> = {
  'reports /assets/report.css': 'public',
  'reports /:id/print': (t) => `/${t.report.id}/print`,
  'reports /:id/signoff': (t) => `/${t.report.id}/signoff`,
  'reports /:id/signoff/': (t) => `/${t.report.id}/signoff/`,
  'reports /:id/signoff/complete': (t) => `/${t.report.id}/signoff/complete`,
  'reports /:id/signoff/signed': (t) => `/${t.report.id}/signoff/signed`,
  // The admin console (functions/admin/console): the caller's own account, tokens and projects; an organization, its service users and a project's members and credentials by id.
  'admin /console/assets/console.css': 'public',
  'admin /console/assets/console.js': 'public',
  'admin /console/': () => '/console/',
  'admin /console': () => '/console',
  'admin /console/account': () => '/console/account',
  'admin /console/projects': () => '/console/projects',
  'admin /console/tokens': () => '/console/tokens',
  'admin /console/orgs': () => '/console/orgs',
  'admin /console/orgs/:org': (t) => `/console/orgs/${t.org.id}`,
  'admin /console/service-users/:id': (t) => `/console/service-users/${t.serviceUser}`,
  'admin /console/p/:project/members': (t) => `/console/p/${t.project.id}/members`,
  'admin /console/p/:project/credentials': (t) => `/console/p/${t.project.id}/credentials`,
  // The runs console (functions/compute/console): the catalogue and a project's runs, a run's output by its signed address.
  'compute /console/assets/console.css': 'public',
  'compute /console/assets/console.js': 'public',
  'compute /console/': () => '/console/',
  'compute /console': () => '/console',
  'compute /console/p/:project': (t) => `/console/p/${t.project.id}`,
  'compute /console/p/:project/runs': (t) => `/console/p/${t.project.id}/runs`,
  'compute /console/p/:project/runs/:id': (t) => `/console/p/${t.project.id}/runs/${t.run}`,
  'compute /console/p/:project/runs/:id/log': (t) => `/console/p/${t.project.id}/runs/${t.run}/log`,
  'compute /console/p/:project/runs/:id/download': (t) => `/console/p/${t.project.id}/runs/${t.run}/download?path=hello.txt`,
  'compute /console/p/:project/pipelines': (t) => `/console/p/${t.project.id}/pipelines`,
  'compute /console/p/:project/pipelines/:id': (t) => `/console/p/${t.project.id}/pipelines/${t.pipeline.id}`,
  'compute /console/p/:project/pipelines/:id/launch': (t) => `/console/p/${t.project.id}/pipelines/${t.pipeline.id}/launch`,
  // An order's variants (functions/variant-cache/console.ts).
  'variant_cache /console/assets/console.css': 'public',
  'variant_cache /console/assets/console.js': 'public',
  'variant_cache /console/': () => '/console/',
  'variant_cache /console/p/:project/orders/:order/variants': (t) => `/console/p/${t.project.id}/orders/${t.order.id}/variants`,
  'variant_cache /console/p/:project/orders/:order/variants/:variant': (t) => `/console/p/${t.project.id}/orders/${t.order.id}/variants/${t.variant}`,
  // Reports (functions/reports/console) and the printout's running header, which names the patient.
  'reports /:id/print.css': (t) => `/${t.report.id}/print.css`,
  'reports /console/assets/console.css': 'public',
  'reports /console/assets/console.js': 'public',
  'reports /console/': () => '/console/',
  'reports /console': () => '/console',
  'reports /console/p/:project/reports': (t) => `/console/p/${t.project.id}/reports`,
  'reports /console/p/:project/reports/:id': (t) => `/console/p/${t.project.id}/reports/${t.report.id}`,
  'reports /console/p/:project/orders/:order/reports': (t) => `/console/p/${t.project.id}/orders/${t.report.order}/reports`,
  // A record's audit history (functions/audit/console.ts).
  'audit /console/assets/console.css': 'public',
  'audit /console/assets/console.js': 'public',
  'audit /console/': () => '/console/',
  'audit /console/p/:project/history': (t) => `/console/p/${t.project.id}/history?entity=report:${t.report.id}`,
  // The clinical console (functions/clinical/console): its assets, its entry (to the caller's default project), and the project's pages.
  'clinical /console/': () => '/console/',
  'clinical /console/assets/console.css': 'public',
  'clinical /console/assets/console.js': 'public',
  'clinical /console': () => '/console',
  'clinical /console/p/:project/subjects': (t) => `/console/p/${t.project.id}/subjects`,
  'clinical /console/p/:project/subjects/new': (t) => `/console/p/${t.project.id}/subjects/new`,
  'clinical /console/p/:project/subjects/:id': (t) => `/console/p/${t.project.id}/subjects/${t.subject.id}`,
  'clinical /console/p/:project/subjects/:id/edit': (t) => `/console/p/${t.project.id}/subjects/${t.subject.id}/edit`,
  'clinical /console/p/:project/families/:family': (t) => `/console/p/${t.project.id}/families/${t.family}`,
  'clinical /console/p/:project/samples': (t) => `/console/p/${t.project.id}/samples`,
  'clinical /console/p/:project/samples/new': (t) => `/console/p/${t.project.id}/samples/new`,
  'clinical /console/p/:project/samples/:id': (t) => `/console/p/${t.project.id}/samples/${t.sample.id}`,
  'clinical /console/p/:project/samples/:id/edit': (t) => `/console/p/${t.project.id}/samples/${t.sample.id}/edit`,
  'clinical /console/p/:project/orders': (t) => `/console/p/${t.project.id}/orders`,
  'clinical /console/p/:project/orders/new': (t) => `/console/p/${t.project.id}/orders/new`,
  'clinical /console/p/:project/orders/:id': (t) => `/console/p/${t.project.id}/orders/${t.order.id}`,
  'clinical /console/p/:project/orders/:id/edit': (t) => `/console/p/${t.project.id}/orders/${t.order.id}/edit`,
  'clinical /console/p/:project/orders/:id/samplesheet.csv': (t) => `/console/p/${t.project.id}/orders/${t.order.id}/samplesheet.csv`,
}

/** Pages that show the caller's own records whoever calls (no id of anyone else's in their path): another tenant gets a 200 of theirs, never a record of this tenant. */
export const OWN_PAGES: ReadonlySet<string> = new Set([
  'admin /console/account',
  'admin /console/projects',
  'admin /console/tokens',
  'admin /console/orgs',
])

/** The GET routes of a service outside /api/v1 (its pages and the kernel's), from its route table. */
/** The prefix of the GA4GH standard APIs a service speaks beside /api/v1 (lib/http.ts StandardApi): WES on the compute service. */
export const STANDARD_API_PREFIX = '/ga4gh/'

/** A service's GET routes outside /api/v1 and the standard APIs: its browser pages (and public documents). */
export function pagesOf(app: Hono<any>): string[] {
  const api = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`) || path.startsWith(STANDARD_API_PREFIX)
  return [...new Set(app.routes.filter((r) => r.method === 'GET' && !api(r.path)).map((r) => r.path))]
}

/** A service's GET routes of the standard APIs (outside its OpenAPI document). */
export function standardReadsOf(app: Hono<any>): string[] {
  return [...new Set(app.routes.filter((r) => r.method === 'GET' && r.path.startsWith(STANDARD_API_PREFIX)).map((r) => r.path))]
}

/**
 * The reads of the standard APIs, by `<service> <route>`: the path naming this tenant's records (a
 * bearer token and X-Project-ID, as /api/v1), and whether it reads one record (else a list, or a
 * summary of the caller's project).
 */
export const STANDARD_READ_FIXTURES: Record<string, (t: TenantRecords) => { path: string; record: boolean }> = {
  'compute /ga4gh/wes/v1/service-info': () => ({ path: '/ga4gh/wes/v1/service-info', record: false }),
  'compute /ga4gh/wes/v1/runs': () => ({ path: '/ga4gh/wes/v1/runs', record: false }),
  'compute /ga4gh/wes/v1/runs/:run_id': (t) => ({ path: `/ga4gh/wes/v1/runs/${t.started}`, record: true }),
  'compute /ga4gh/wes/v1/runs/:run_id/status': (t) => ({ path: `/ga4gh/wes/v1/runs/${t.started}/status`, record: true }),
  'compute /ga4gh/wes/v1/runs/:run_id/tasks': (t) => ({ path: `/ga4gh/wes/v1/runs/${t.started}/tasks`, record: true }),
  'compute /ga4gh/wes/v1/runs/:run_id/tasks/:task_id': (t) => ({ path: `/ga4gh/wes/v1/runs/${t.started}/tasks/0`, record: true }),
}

/** Another organization and project, owned by a user of their own, with no role anywhere else. */
export async function strangerTenant(world: Ctx['world']): Promise<Stranger> {
  const user = await seedUser(world.deps, { email: `stranger-${rand()}@example.net` })
  const { org, project } = await seedOrgAndProject(world.deps, {
    owner: user,
    orgName: 'Stranger Lab',
    orgSlug: `stranger-${rand()}`,
    projectName: 'Theirs',
    projectSlug: 'theirs',
    bucketName: `stranger-${rand()}`,
    serviceAccountEmail: `runner-${rand()}@stranger.iam.gserviceaccount.com`,
  })
  await grant(world.deps, project, user, ['owner'])
  const session = await world.deps.tokens.createSession({ userId: user.id, ttlSeconds: 3600, now: new Date(), effectiveRoles: {} })
  return { user, token: await seedToken(world.deps, user, 'stranger'), session: session.value, org, project }
}

/** Makes this tenant's records through the services (as its owner) and the ingestion steps, and collects their ids. */
export async function tenantRecords(c: Ctx, storage: LocalObjectStorage): Promise<TenantRecords> {
  const { world } = c
  const bucket = world.project.bucket_name
  const family = `FAM-${rand()}`
  const subject = await subjectVia(c, { family_id: family })
  const sample = await sampleVia(c, subject.id)

  // A trio order with a ready variant cache: the ingestion's steps run here, as the local suite runs them.
  const order = await makeTrioOrder(world.deps, world.project)
  const views = await clinicalStores(world.deps).orders.samplesOf(order)
  const name = (role: string) => views.find((v) => v.entry.role === role)!.sample
  const vcfPath = `reads/${rand()}/trio.vcf`
  await storage.write(
    bucket,
    vcfPath,
    trioVcf({
      samples: { proband: name('proband').external_id, mother: name('mother').external_id, father: name('father').external_id },
      records: 20,
      seed: 7,
    }),
  )
  const requested = await c.as('variant_cache', 'POST', `/orders/${order.id}/ingestions`, { source_uri: `gs://${bucket}/${vcfPath}` })
  const status = await runIngestion(
    {
      db: world.deps.db,
      audit: world.deps.audit,
      clock: world.deps.clock,
      log: world.deps.log,
      storage,
      queue: new PubSubQueue(world.deps.config),
      orders: clinicalStores(world.deps).orders,
      tuning: { cleanupGraceMs: 0 },
    },
    requested.id,
  )
  expect(status).toBe('ready')
  const variants = (await c.as('variant_cache', 'GET', `/orders/${order.id}/variants`)) as Array<{ id: string }>
  const run = await c.as('compute', 'POST', '/runs', {
    pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'),
    params: {},
    order_id: order.id,
  })
  const started = await c.as('compute', 'POST', '/runs', { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: {} })
  await new RunStore(world.deps.db, world.deps.audit, world.deps.clock).applyJobState(started.id, {
    status: 'running',
    at: new Date(),
    source: 'test',
    job: { name: `projects/${world.deps.config.gcpProject}/locations/local/jobs/run-${started.id}`, uid: `run-${started.id.slice(0, 8)}` },
  })
  const webhook = await webhookDeliveryVia(c)
  const slug = `reads-${rand()}`
  const pipeline = await c.as('compute', 'POST', '/pipelines', {
    slug,
    name: 'Reads',
    type: 'container_entrypoint',
    container: 'alpine:3',
    version: '1.0.0',
    commands: ['echo hi'],
  })
  const labflow = await c.as('clinical', 'POST', '/labflows', {
    key: `reads_${rand()}`,
    name: 'Reads',
    stages: [{ key: 'a', name: 'A', order: 1 }],
    transitions: [],
  })

  const { report, variant, order: reportOrder } = await reportVia(c)
  await c.as('reports', 'POST', `/reports/${report.id}/variants`, { variant_id: variant.id })
  const comment = await c.as('reports', 'POST', `/reports/${report.id}/comments`, { type: 'review', comment: 'Check the segregation.' })
  const snapshot = await c.as('reports', 'POST', `/reports/${report.id}/snapshots`)

  const folder = `reads-${rand()}/`
  const file = `${folder}calls-${rand()}.txt`
  await storage.write(bucket, file, 'x', 'text/plain')
  const serviceUser = await c.as('admin', 'POST', `/organizations/${world.org.id}/service-users`, { name: `reads-${rand()}` })
  const key = await c.as('admin', 'POST', `/service-users/${serviceUser.id}/keys`)
  // The owner's own settings and tokens, which only they see.
  await c.as('admin', 'PUT', '/users/me/default-context', { project_id: world.project.id })
  const token = await c.as('admin', 'POST', '/users/me/tokens', { name: `reads-${rand()}` })
  const events = await call(c.app('audit'), 'GET', `${API_PREFIX}/events?project_id=${world.project.id}`, { token: world.owner.token })
  expect(events.status).toBe(200)

  const trio = views.flatMap((v) => [v.sample.id, v.sample.external_id, ...(v.subject ? [v.subject.id, v.subject.external_id] : [])])
  return {
    org: world.org,
    project: world.project,
    owner: world.owner.user,
    subject: { id: subject.id, external_id: subject.external_id },
    family,
    sample: { id: sample.id, external_id: sample.external_id },
    order: { id: order.id, accession: order.accession },
    proband: name('proband').id,
    variant: variants[0]!.id,
    ingestion: requested.id,
    labflow: labflow.id,
    report: { id: report.id, order: reportOrder.id, variant: variant.id, comment: comment.id },
    run: run.id,
    started: started.id,
    pipeline: { id: pipeline.id, slug },
    file: { path: file, folder },
    event: events.body[0].id,
    serviceUser: serviceUser.id,
    webhook: { id: webhook.hook.id, delivery: webhook.delivery.id },
    ids: [
      webhook.hook.id,
      webhook.delivery.id,
      world.org.id,
      world.org.slug,
      world.project.id,
      bucket,
      subject.id,
      subject.external_id,
      family,
      sample.id,
      sample.external_id,
      order.id,
      order.accession,
      ...trio,
      ...variants.map((v) => v.id),
      requested.id,
      labflow.id,
      labflow.key,
      report.id,
      reportOrder.id,
      reportOrder.accession,
      variant.id,
      comment.id,
      snapshot.id,
      run.id,
      started.id,
      pipeline.id,
      slug,
      folder,
      file,
      ...events.body.map((e: { id: string }) => e.id),
      serviceUser.id,
      key.id,
      token.id,
      token.name,
      world.owner.user.id,
    ],
  }
}
