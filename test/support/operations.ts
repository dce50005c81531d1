import { randomUUID } from 'node:crypto'
import type { Hono } from 'hono'
import { importPKCS8, SignJWT } from 'jose'
import { expect } from 'vitest'
import { createComputeApp } from '../../functions/compute/service.js'
import { reportsDeps } from '../../functions/reports/deps.js'
import { createReportsApp } from '../../functions/reports/service.js'
import { variantCacheDeps } from '../../functions/variant-cache/deps.js'
import { createVariantCacheApp } from '../../functions/variant-cache/service.js'
import { sha256 } from '../../lib/ids.js'
import { createKernel } from '../../lib/kernel.js'
import { SERVICES } from '../../functions/services.js'
import { pipelineId, PLATFORM_SCOPE } from '../../domain/pipelines/model.js'
import { fetchDoc, operationsOf } from '../integration/functions/openapi-doc.js'
import { localAudit } from './audit.js'
import { localCompute } from './compute.js'
import { localFiles } from './files.js'
import { cachedVariant, makeTrioOrder, MemoryVariantCache, signThroughStore } from './reports.js'
import { Browser, confirmDeviceLogin, startLoginStack } from './oidc.js'
import { call, rand } from './world.js'

/**
 * Every mutating operation (POST, PUT, PATCH, DELETE) of every registered service, with what it
 * needs to succeed for real: a fixture per operationId makes its prerequisites and says which
 * audit event the operation leaves. Registry-driven tests (the audit walk, the security set) take
 * their operations from here: a new mutating operation without a fixture fails them.
 */
export type Stack = Awaited<ReturnType<typeof startLoginStack>>
export type EventScope = { project_id: string } | { org_id: string } | { scope: 'platform' }

export interface Mutation {
  /** The concrete path under /api/v1. */
  path: string
  body?: unknown
  /** Default: the world's owner (a platform administrator who owns the organization); null for none. */
  token?: string | null
  /** X-Project-ID; default the world's project on project-scoped services. */
  project?: string
  headers?: Record<string, string>
  /**
   * The audit event it must leave, knowing its answer; or, for a POST that changes nothing of the
   * platform's (its state is elsewhere), why it leaves none.
   */
  event: ((body: any) => { scope: EventScope; entity: string; action: string }) | { none: string }
}

export interface Ctx {
  stack: Stack
  world: Stack['world']
  app(service: string): Hono<any>
  /** A call to a service as the owner, for what a fixture needs first. */
  as(service: string, method: string, path: string, body?: unknown): Promise<any>
}

const projectScope = (c: Ctx) => ({ project_id: c.world.project.id })
const orgScope = (c: Ctx) => ({ org_id: c.world.org.id })
const platform = { scope: 'platform' } as const

async function serviceUserWithKey(c: Ctx) {
  const su = await c.as('admin', 'POST', `/organizations/${c.world.org.id}/service-users`, { name: `bot-${rand()}` })
  const key = await c.as('admin', 'POST', `/service-users/${su.id}/keys`)
  return { su, key }
}

async function orgMember(c: Ctx) {
  return c.as('admin', 'POST', `/organizations/${c.world.org.id}/members`, { email: `member-${rand()}@example.org`, role: 'org_member' })
}

async function projectMember(c: Ctx) {
  return c.as('admin', 'POST', `/projects/${c.world.project.id}/members`, { email: `m-${rand()}@example.org`, roles: ['viewer'] })
}

async function passwordLogin(c: Ctx) {
  const res = await call(c.app('admin'), 'POST', '/api/v1/auth/password', { body: { email: c.stack.user.email, password: c.stack.user.password } })
  expect(res.status).toBe(200)
  return res.body as { refresh_token: string }
}

/** The CLI login a refresh credential belongs to, as stored (under the credential's SHA-256). */
const cliLoginOf = async (c: Ctx, refreshToken: string) =>
  (await c.world.deps.db.col('cli_refresh_tokens').doc(sha256(refreshToken)).get()).get('login_id') as string

const putFile = (c: Ctx, path: string) => files!.storage.write(c.world.project.bucket_name, path, 'x', 'text/plain')
const fileEntity = (c: Ctx, path: string) => `file:gs://${c.world.project.bucket_name}/${path}`

/** A subject, a sample of it and a draft order, through the clinical-data service as the owner. */
/** A public address as an IP literal: registered under the cloud's policy without a DNS lookup (nothing is ever sent to it here). */
export const WEBHOOK_URL = 'https://93.184.215.14/hooks'

/** A webhook of the world's project for run events. */
export async function webhookVia(c: Ctx): Promise<{ id: string }> {
  return c.as('compute', 'POST', '/webhooks', { url: WEBHOOK_URL, events: ['run.*'] })
}

/** A webhook and a delivery of it (the run.queued of a run submitted after it). */
export async function webhookDeliveryVia(c: Ctx): Promise<{ hook: { id: string }; delivery: { id: string } }> {
  const hook = await webhookVia(c)
  await c.as('compute', 'POST', '/runs', { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: {} })
  const [delivery] = (await c.as('compute', 'GET', `/webhooks/${hook.id}/deliveries`)) as Array<{ id: string }>
  expect(delivery).toBeDefined()
  return { hook, delivery: delivery! }
}

export const subjectVia = (c: Ctx, body: Record<string, unknown> = {}) =>
  c.as('clinical', 'POST', '/subjects', { external_id: `P-${rand()}`, sex: 'female', affected_status: 'unaffected', ...body })
export const sampleVia = async (c: Ctx, subjectId?: string) => {
  const external_id = `S-${rand()}`
  const bucket = c.world.project.bucket_name
  return c.as('clinical', 'POST', '/samples', {
    external_id,
    subject_id: subjectId ?? (await subjectVia(c)).id,
    type: 'blood',
    fastq: [`gs://${bucket}/fastq/${external_id}_R1.fastq.gz`, `gs://${bucket}/fastq/${external_id}_R2.fastq.gz`],
  })
}
/** A draft order holding a proband's sample (enough to sign). */
const orderVia = async (c: Ctx, withProband = false) => {
  const order = await c.as('clinical', 'POST', '/orders', { test_code: 'WES-single' })
  if (withProband) {
    const sample = await sampleVia(c, (await subjectVia(c, { sex: 'male', affected_status: 'affected' })).id)
    await c.as('clinical', 'POST', `/orders/${order.id}/samples/${sample.id}`, { role: 'proband' })
  }
  return order
}
const STAGES = [
  { key: 'a', name: 'A', order: 1 },
  { key: 'b', name: 'B', order: 2 },
]

/** The report service's view of the orders' variant caches in this walk. */
const variantCache = new MemoryVariantCache()
const reportsOf = (c: Ctx) => reportsDeps(createKernel(c.world.deps.config, 'reports', { firestore: c.world.deps.db.firestore }), variantCache)
const reportEntity = (id: string) => `report:${id}`
/** A draft report, through the report service, for an in-progress trio order with a variant in its cache. */
export const reportVia = async (c: Ctx) => {
  const order = await makeTrioOrder(c.world.deps, c.world.project)
  const variant = cachedVariant()
  variantCache.put(c.world.project.id, order.id, variant)
  const report = await c.as('reports', 'POST', '/reports', { order_id: order.id, conclusion: 'Negative.' })
  return { order, variant, report }
}

/** One entry per mutating operationId of every service. */
export const FIXTURES: Record<string, (c: Ctx) => Promise<Mutation>> = {
  // admin: sign-in and sessions
  logout: async (c) => {
    const { value, record } = await c.world.deps.tokens.createSession({
      userId: c.world.owner.user.id,
      ttlSeconds: 600,
      now: new Date(),
      effectiveRoles: {},
    })
    return {
      path: '/auth/logout',
      token: null,
      headers: { cookie: `platform_session=${value}` },
      event: () => ({ scope: platform, entity: `session:${record.id}`, action: 'session.ended' }),
    }
  },
  passwordLogin: async (c) => ({
    path: '/auth/password',
    token: null,
    body: { email: c.stack.user.email, password: c.stack.user.password },
    event: () => ({ scope: platform, entity: 'cli_login', action: 'login.succeeded' }),
  }),
  refreshLogin: async (c) => {
    const { refresh_token } = await passwordLogin(c)
    const loginId = await cliLoginOf(c, refresh_token)
    return {
      path: '/auth/refresh',
      token: null,
      body: { refresh_token },
      event: () => ({ scope: platform, entity: `cli_login:${loginId}`, action: 'token.refreshed' }),
    }
  },
  revokeLogin: async (c) => {
    const { refresh_token } = await passwordLogin(c)
    const loginId = await cliLoginOf(c, refresh_token)
    return {
      path: '/auth/revoke',
      token: null,
      body: { token: refresh_token },
      event: () => ({ scope: platform, entity: `cli_login:${loginId}`, action: 'token.revoked' }),
    }
  },
  beginDeviceLogin: async () => ({
    path: '/auth/device',
    token: null,
    event: { none: "RFC 8628 makes it a POST, but the login it begins is the identity provider's: the platform records its end (pollDeviceLogin)" },
  }),
  pollDeviceLogin: async (c) => {
    const started = await call(c.app('admin'), 'POST', '/api/v1/auth/device')
    expect(started.status).toBe(200)
    await confirmDeviceLogin(new Browser(), started.body.verification_uri_complete, c.stack.user)
    return {
      path: '/auth/device/token',
      token: null,
      body: { device_code: started.body.device_code },
      event: () => ({ scope: platform, entity: 'cli_login', action: 'login.succeeded' }),
    }
  },
  exchangeServiceToken: async (c) => {
    const { su, key } = await serviceUserWithKey(c)
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({ iss: su.id, sub: su.id, aud: key.token_endpoint, iat: now, exp: now + 300, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: key.key_id })
      .sign(await importPKCS8(key.private_key_pem, 'ES256'))
    return {
      path: '/oauth/token',
      token: null,
      body: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion },
      event: () => ({ scope: orgScope(c), entity: `service_user:${su.id}`, action: 'service_token.issued' }),
    }
  },
  // admin: organizations
  createOrganization: async () => ({
    path: '/organizations',
    body: { name: `Org ${rand()}` },
    event: (org) => ({ scope: { org_id: org.id }, entity: `organization:${org.id}`, action: 'organization.created' }),
  }),
  addOrganizationMember: async (c) => ({
    path: `/organizations/${c.world.org.id}/members`,
    body: { email: `new-${rand()}@example.org`, role: 'org_member' },
    event: (m) => ({ scope: orgScope(c), entity: `org_member:${m.user_id}`, action: 'org_member.added' }),
  }),
  removeOrganizationMember: async (c) => {
    const m = await orgMember(c)
    return {
      path: `/organizations/${c.world.org.id}/members/${m.user_id}`,
      event: () => ({ scope: orgScope(c), entity: `org_member:${m.user_id}`, action: 'org_member.removed' }),
    }
  },
  createServiceUser: async (c) => ({
    path: `/organizations/${c.world.org.id}/service-users`,
    body: { name: `bot-${rand()}` },
    event: (su) => ({ scope: orgScope(c), entity: `service_user:${su.id}`, action: 'service_user.created' }),
  }),
  updateServiceUser: async (c) => {
    const { su } = await serviceUserWithKey(c)
    return {
      path: `/service-users/${su.id}`,
      body: { description: 'renamed' },
      event: () => ({ scope: orgScope(c), entity: `service_user:${su.id}`, action: 'service_user.updated' }),
    }
  },
  createServiceKey: async (c) => {
    const { su } = await serviceUserWithKey(c)
    return {
      path: `/service-users/${su.id}/keys`,
      event: (k) => ({ scope: orgScope(c), entity: `service_key:${k.key_id}`, action: 'service_key.created' }),
    }
  },
  revokeServiceKey: async (c) => {
    const { su, key } = await serviceUserWithKey(c)
    return {
      path: `/service-users/${su.id}/keys/${key.key_id}`,
      event: () => ({ scope: orgScope(c), entity: `service_key:${key.key_id}`, action: 'service_key.revoked' }),
    }
  },
  // admin: projects, members, credentials
  createProject: async (c) => ({
    path: '/projects',
    body: { org_id: c.world.org.id, name: `Project ${rand()}` },
    event: (p) => ({ scope: { project_id: p.id }, entity: `project:${p.id}`, action: 'project.created' }),
  }),
  setProjectCredentials: async (c) => ({
    path: `/projects/${c.world.project.id}/credentials`,
    body: { service_account_email: 'runner@test-project.iam.gserviceaccount.com' },
    event: () => ({ scope: projectScope(c), entity: `project:${c.world.project.id}`, action: 'credentials.configured' }),
  }),
  setProjectLetterhead: async (c) => ({
    path: `/projects/${c.world.project.id}/letterhead`,
    body: { laboratory: 'Test Lab, Molecular Genetics', address: ['1 Helix Road'] },
    event: () => ({ scope: projectScope(c), entity: `project:${c.world.project.id}`, action: 'project.letterhead_set' }),
  }),
  deleteProjectLetterhead: async (c) => {
    const p = await c.as('admin', 'POST', '/projects', { org_id: c.world.org.id, name: `Letterhead ${rand()}` })
    await c.as('admin', 'PUT', `/projects/${p.id}/letterhead`, { laboratory: 'To remove' })
    return {
      path: `/projects/${p.id}/letterhead`,
      event: () => ({ scope: { project_id: p.id }, entity: `project:${p.id}`, action: 'project.letterhead_removed' }),
    }
  },
  deleteProjectCredentials: async (c) => {
    const p = await c.as('admin', 'POST', '/projects', {
      org_id: c.world.org.id,
      name: `Creds ${rand()}`,
      service_account_email: `runner-${rand()}@x-project.iam.gserviceaccount.com`,
    })
    return {
      path: `/projects/${p.id}/credentials`,
      event: () => ({ scope: { project_id: p.id }, entity: `project:${p.id}`, action: 'credentials.removed' }),
    }
  },
  addProjectMember: async (c) => ({
    path: `/projects/${c.world.project.id}/members`,
    body: { email: `m-${rand()}@example.org`, roles: ['viewer'] },
    event: (m) => ({ scope: projectScope(c), entity: `project_member:${m.user_id}`, action: 'member.added' }),
  }),
  setProjectMemberRoles: async (c) => {
    const m = await projectMember(c)
    return {
      path: `/projects/${c.world.project.id}/members/${m.user_id}`,
      body: { roles: ['lab'] },
      event: () => ({ scope: projectScope(c), entity: `project_member:${m.user_id}`, action: 'member.roles_changed' }),
    }
  },
  removeProjectMember: async (c) => {
    const m = await projectMember(c)
    return {
      path: `/projects/${c.world.project.id}/members/${m.user_id}`,
      event: () => ({ scope: projectScope(c), entity: `project_member:${m.user_id}`, action: 'member.removed' }),
    }
  },
  // admin: the caller's own settings and tokens
  setDefaultContext: async (c) => ({
    path: '/users/me/default-context',
    body: { project_id: c.world.project.id },
    event: () => ({ scope: projectScope(c), entity: `user:${c.world.owner.user.id}`, action: 'user.default_context_set' }),
  }),
  createPersonalAccessToken: async () => ({
    path: '/users/me/tokens',
    body: { name: 'walker' },
    event: (t) => ({ scope: platform, entity: `personal_token:${t.id}`, action: 'token.created' }),
  }),
  revokePersonalAccessToken: async (c) => {
    const t = await c.as('admin', 'POST', '/users/me/tokens', { name: 'to revoke' })
    return { path: `/users/me/tokens/${t.id}`, event: () => ({ scope: platform, entity: `personal_token:${t.id}`, action: 'token.revoked' }) }
  },
  // compute
  createPipeline: async (c) => ({
    path: '/pipelines',
    body: { slug: `walker-${rand()}`, name: 'Walker', type: 'container_entrypoint', container: 'alpine:3', version: '1.0.0', commands: ['echo hi'] },
    event: (p) => ({ scope: projectScope(c), entity: `pipeline:${p.id}`, action: 'pipeline.created' }),
  }),
  createRun: async (c) => ({
    path: '/runs',
    body: { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: {} },
    event: (r) => ({ scope: projectScope(c), entity: `run:${r.id}`, action: 'run.submitted' }),
  }),
  cancelRun: async (c) => {
    const r = await c.as('compute', 'POST', '/runs', { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: {} })
    return { path: `/runs/${r.id}`, event: () => ({ scope: projectScope(c), entity: `run:${r.id}`, action: 'run.cancelled' }) }
  },
  relaunchRun: async (c) => {
    const r = await c.as('compute', 'POST', '/runs', { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: {} })
    return {
      path: `/runs/${r.id}/relaunch`,
      body: { tags: ['again'] },
      event: () => ({ scope: projectScope(c), entity: `run:${r.id}`, action: 'run.relaunched' }),
    }
  },
  // webhooks
  createWebhook: async (c) => ({
    path: '/webhooks',
    body: { url: WEBHOOK_URL, events: ['run.*'], description: 'LIMS' },
    event: (h) => ({ scope: projectScope(c), entity: `webhook:${h.id}`, action: 'webhook.created' }),
  }),
  updateWebhook: async (c) => {
    const h = await webhookVia(c)
    return {
      path: `/webhooks/${h.id}`,
      body: { events: ['run.failed', 'report.signed'] },
      event: () => ({ scope: projectScope(c), entity: `webhook:${h.id}`, action: 'webhook.updated' }),
    }
  },
  rotateWebhookSecret: async (c) => {
    const h = await webhookVia(c)
    return {
      path: `/webhooks/${h.id}/rotate-secret`,
      event: () => ({ scope: projectScope(c), entity: `webhook:${h.id}`, action: 'webhook.secret_rotated' }),
    }
  },
  deleteWebhook: async (c) => {
    const h = await webhookVia(c)
    return { path: `/webhooks/${h.id}`, event: () => ({ scope: projectScope(c), entity: `webhook:${h.id}`, action: 'webhook.deleted' }) }
  },
  redeliverWebhookDelivery: async (c) => {
    const { hook, delivery } = await webhookDeliveryVia(c)
    return {
      path: `/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`,
      event: () => ({ scope: projectScope(c), entity: `webhook:${hook.id}`, action: 'webhook.redelivered' }),
    }
  },
  // clinical data
  createSubject: async (c) => ({
    path: '/subjects',
    body: { external_id: `P-${rand()}`, sex: 'male', affected_status: 'affected' },
    event: (x) => ({ scope: projectScope(c), entity: `subject:${x.id}`, action: 'subject.created' }),
  }),
  updateSubject: async (c) => {
    const x = await subjectVia(c)
    return {
      path: `/subjects/${x.id}`,
      body: { display_name: 'Renamed' },
      event: () => ({ scope: projectScope(c), entity: `subject:${x.id}`, action: 'subject.updated' }),
    }
  },
  deleteSubject: async (c) => {
    const x = await subjectVia(c)
    return { path: `/subjects/${x.id}`, event: () => ({ scope: projectScope(c), entity: `subject:${x.id}`, action: 'subject.deleted' }) }
  },
  createSample: async (c) => {
    const subject = await subjectVia(c)
    const external_id = `S-${rand()}`
    return {
      path: '/samples',
      body: { external_id, subject_id: subject.id, type: 'saliva' },
      event: (x) => ({ scope: projectScope(c), entity: `sample:${x.id}`, action: 'sample.created' }),
    }
  },
  updateSample: async (c) => {
    const x = await sampleVia(c)
    return {
      path: `/samples/${x.id}`,
      body: { type: 'dna' },
      event: () => ({ scope: projectScope(c), entity: `sample:${x.id}`, action: 'sample.updated' }),
    }
  },
  deleteSample: async (c) => {
    const x = await sampleVia(c)
    return { path: `/samples/${x.id}`, event: () => ({ scope: projectScope(c), entity: `sample:${x.id}`, action: 'sample.deleted' }) }
  },
  createOrder: async (c) => ({
    path: '/orders',
    body: { test_code: 'WGS-trio', priority: 'urgent' },
    event: (o) => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.created' }),
  }),
  updateOrder: async (c) => {
    const o = await orderVia(c)
    return {
      path: `/orders/${o.id}`,
      body: { priority: 'stat' },
      event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.updated' }),
    }
  },
  deleteOrder: async (c) => {
    const o = await orderVia(c)
    return { path: `/orders/${o.id}`, event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.deleted' }) }
  },
  transitionOrder: async (c) => {
    const o = await orderVia(c, true)
    return {
      path: `/orders/${o.id}/transition`,
      body: { to: 'signed' },
      event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.transitioned' }),
    }
  },
  addOrderSample: async (c) => {
    const o = await orderVia(c)
    const x = await sampleVia(c)
    return {
      path: `/orders/${o.id}/samples/${x.id}`,
      body: { role: 'proband' },
      event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.sample_added' }),
    }
  },
  removeOrderSample: async (c) => {
    const o = await orderVia(c)
    const x = await sampleVia(c)
    await c.as('clinical', 'POST', `/orders/${o.id}/samples/${x.id}`, { role: 'proband' })
    return {
      path: `/orders/${o.id}/samples/${x.id}`,
      event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.sample_removed' }),
    }
  },
  moveOrderLabflow: async (c) => {
    const o = await orderVia(c, true)
    await c.as('clinical', 'POST', `/orders/${o.id}/transition`, { to: 'signed' })
    return {
      path: `/orders/${o.id}/labflow/transitions`,
      body: { transition: 'advance-accessioning' },
      event: () => ({ scope: projectScope(c), entity: `order:${o.id}`, action: 'order.labflow_moved' }),
    }
  },
  createLabflow: async (c) => ({
    path: '/labflows',
    body: { key: `k_${rand()}`, name: 'K', stages: STAGES, transitions: [] },
    event: (l) => ({ scope: projectScope(c), entity: `labflow:${l.id}`, action: 'labflow.created' }),
  }),
  createLabflowVersion: async (c) => {
    const l = await c.as('clinical', 'POST', '/labflows', { key: `k_${rand()}`, name: 'K', stages: STAGES, transitions: [] })
    return {
      path: `/labflows/${l.id}/versions`,
      body: { stages: STAGES.slice(0, 1), transitions: [] },
      event: () => ({ scope: projectScope(c), entity: `labflow:${l.id}`, action: 'labflow.version_created' }),
    }
  },
  // variant cache
  createOrderIngestion: async (c) => {
    const order = await orderVia(c, true)
    await c.as('clinical', 'POST', `/orders/${order.id}/transition`, { to: 'signed' })
    const path = `walker/calls-${rand()}.vcf`
    await putFile(c, path)
    return {
      path: `/orders/${order.id}/ingestions`,
      body: { source_uri: `gs://${c.world.project.bucket_name}/${path}` },
      event: (ing) => ({ scope: projectScope(c), entity: `variant_ingestion:${ing.id}`, action: 'variant_ingestion.requested' }),
    }
  },
  // reports
  createReport: async (c) => {
    const order = await makeTrioOrder(c.world.deps, c.world.project)
    return {
      path: '/reports',
      body: { order_id: order.accession },
      event: (r) => ({ scope: projectScope(c), entity: reportEntity(r.id), action: 'report.created' }),
    }
  },
  updateReport: async (c) => {
    const { report } = await reportVia(c)
    return {
      path: `/reports/${report.id}`,
      body: { notes: 'n' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.updated' }),
    }
  },
  deleteReport: async (c) => {
    const { report } = await reportVia(c)
    return { path: `/reports/${report.id}`, event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.deleted' }) }
  },
  transitionReport: async (c) => {
    const { report } = await reportVia(c)
    return {
      path: `/reports/${report.id}/transition`,
      body: { to: 'in_review' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.transitioned' }),
    }
  },
  amendReport: async (c) => {
    const { report } = await reportVia(c)
    await c.as('reports', 'POST', `/reports/${report.id}/transition`, { to: 'in_review' })
    const signer = await c.world.caller(['reviewer'])
    await signThroughStore({ deps: reportsOf(c), project: c.world.project }, report.id, signer)
    return {
      path: `/reports/${report.id}/amendments`,
      body: { reason: 'corrected phenotype' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.amended' }),
    }
  },
  addReportVariant: async (c) => {
    const { report, variant } = await reportVia(c)
    return {
      path: `/reports/${report.id}/variants`,
      body: { variant_id: variant.id, acmg_classification: 'pathogenic' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.variant_added' }),
    }
  },
  updateReportVariant: async (c) => {
    const { report, variant } = await reportVia(c)
    await c.as('reports', 'POST', `/reports/${report.id}/variants`, { variant_id: variant.id })
    return {
      path: `/reports/${report.id}/variants/${variant.id}`,
      body: { acmg_classification: 'benign' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.variant_updated' }),
    }
  },
  removeReportVariant: async (c) => {
    const { report, variant } = await reportVia(c)
    await c.as('reports', 'POST', `/reports/${report.id}/variants`, { variant_id: variant.id })
    return {
      path: `/reports/${report.id}/variants/${variant.id}`,
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.variant_removed' }),
    }
  },
  createReportComment: async (c) => {
    const { report } = await reportVia(c)
    return {
      path: `/reports/${report.id}/comments`,
      body: { type: 'review', comment: 'Check the segregation.' },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.comment_added' }),
    }
  },
  updateReportComment: async (c) => {
    const { report } = await reportVia(c)
    const comment = await c.as('reports', 'POST', `/reports/${report.id}/comments`, { type: 'review', comment: 'Check it.' })
    return {
      path: `/reports/${report.id}/comments/${comment.id}`,
      body: { resolved: true },
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.comment_resolved' }),
    }
  },
  createReportSnapshot: async (c) => {
    const { report } = await reportVia(c)
    return {
      path: `/reports/${report.id}/snapshots`,
      event: () => ({ scope: projectScope(c), entity: reportEntity(report.id), action: 'report.snapshot_taken' }),
    }
  },
  // files
  createUploadUrl: async (c) => {
    const path = `walker/up-${rand()}.txt`
    return {
      path: '/files/upload-url',
      body: { path, content_type: 'text/plain' },
      event: () => ({ scope: projectScope(c), entity: fileEntity(c, path), action: 'file.upload_url_issued' }),
    }
  },
  copyFile: async (c) => {
    const source = `walker/src-${rand()}.txt`
    await putFile(c, source)
    const destination = `walker/copy-${rand()}.txt`
    return {
      path: '/files/copy',
      body: { source, destination },
      event: () => ({ scope: projectScope(c), entity: fileEntity(c, destination), action: 'file.copied' }),
    }
  },
  moveFile: async (c) => {
    const source = `walker/move-${rand()}.txt`
    await putFile(c, source)
    return {
      path: '/files/move',
      body: { source, destination: `walker/moved-${rand()}.txt` },
      event: () => ({ scope: projectScope(c), entity: fileEntity(c, source), action: 'file.moved' }),
    }
  },
  deleteFile: async (c) => {
    const path = `walker/del-${rand()}.txt`
    await putFile(c, path)
    return { path: `/files?path=${path}`, event: () => ({ scope: projectScope(c), entity: fileEntity(c, path), action: 'file.deleted' }) }
  },
}

export const MUTATING = ['post', 'put', 'patch', 'delete']
let files: Awaited<ReturnType<typeof localFiles>> | undefined

export interface Operation {
  service: string
  id: string
  method: string
  path: string
  isPublic: boolean
}

/**
 * A tenant with every service's app on the emulators (admin with the real local OIDC provider, the
 * compute service with the local executor, the file service with its local storage, the rest from
 * the registry), a context for the fixtures, every mutating operation of every service, and every
 * read (GET) operation (test/support/read-operations.ts has theirs).
 */
export async function operationsWorld() {
  const stack = await startLoginStack()
  const world = stack.world
  const compute = await localCompute(world)
  files = await localFiles(world)
  const audit = localAudit(world)
  const apps = new Map<string, Hono<any>>([
    ['admin', stack.app],
    ['compute', createComputeApp(compute.deps)],
    ['files', files.app],
    ['audit', audit.app],
    ['reports', createReportsApp(reportsOf({ world } as Ctx))],
    // The variant cache looks at a source in the same bucket folders as the file service.
    ['variant_cache', createVariantCacheApp(variantCacheDeps(world.deps, { storage: files.storage }))],
  ])
  const appOf = (name: string) => {
    if (!apps.has(name)) apps.set(name, SERVICES.find((s) => s.name === name)!.create(world.deps))
    return apps.get(name)!
  }
  const scoped = (name: string) => SERVICES.find((s) => s.name === name)!.projectScoped
  const ctx: Ctx = {
    stack,
    world,
    app: appOf,
    as: async (service, method, path, body) => {
      const res = await call(appOf(service), method, `/api/v1${path}`, {
        token: world.owner.token,
        body,
        project: scoped(service) ? world.project.id : undefined,
      })
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
      return res.body
    },
  }
  const operations: Operation[] = []
  const reads: Operation[] = []
  for (const service of SERVICES) {
    for (const o of operationsOf(await fetchDoc(appOf(service.name)))) {
      const operation = {
        service: service.name,
        id: o.op.operationId ?? `${o.method} ${o.path}`,
        method: o.method,
        path: o.path,
        isPublic: o.isPublic,
      }
      if (MUTATING.includes(o.method)) operations.push(operation)
      else if (o.method === 'get') reads.push(operation)
    }
  }
  return {
    stack,
    world,
    ctx,
    audit,
    operations,
    reads,
    /** The project buckets the file service and the variant cache see. */
    storage: files.storage,
    appOf,
    scoped,
    async close() {
      await Promise.all([stack.stop(), compute.close(), files?.close()])
    },
  }
}
