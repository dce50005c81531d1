import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { iso } from '../../../lib/db.js'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { commonErrors, conflictError, IdParam, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import type { CheckedUrl } from '../../../domain/webhooks/decide.js'
import type { DeliveryRecord, WebhookRecord } from '../../../domain/webhooks/model.js'
import { resolveUrl } from '../../../domain/webhooks/sender.js'
import type { ComputeDeps, ComputeEnv } from '../deps.js'
import { CreateWebhook, Delivery, DeliveryListQuery, UpdateWebhook, Webhook, WebhookDeliveryParams, WebhookWithSecret } from '../webhook-schemas.js'

/**
 * /webhooks: a project's endpoints for signed event deliveries (docs/webhooks.md), on the compute
 * service: the one project-scoped service (X-Project-ID) whose domain most events come from, and
 * whose orchestrator sends them. Managing them is a project administrator's (project.manage): a
 * webhook sends the project's events to an address outside the platform.
 */
export const webhooks = resourceApp<ComputeDeps>()

/** A webhook as the API shows it at `now` (the previous secret's expiry only while it still signs). */
export function toWebhook(h: WebhookRecord, now: Date): z.infer<typeof Webhook> {
  const previous = h.secrets[1]
  return {
    id: h.id,
    url: h.url,
    events: h.events,
    description: h.description,
    enabled: h.enabled,
    secret_generation: h.secrets[0]!.generation,
    previous_secret_expires: previous?.expires && previous.expires.toMillis() > now.getTime() ? iso(previous.expires) : undefined,
    created: iso(h.created)!,
    created_by: h.created_by,
    updated: iso(h.updated)!,
  }
}

export function toDelivery(d: DeliveryRecord): z.infer<typeof Delivery> {
  return {
    id: d.id,
    webhook_id: d.webhook_id,
    type: d.type,
    status: d.status,
    created: iso(d.created)!,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : undefined,
    round: d.round,
    attempt_count: d.round_attempts,
    failure: d.failure,
    payload: JSON.parse(d.body) as Record<string, unknown>,
    attempts: d.attempts.map((a) => ({ ...a, at: iso(a.at)! })),
  }
}

const manage = requires('project.manage')

async function loadHook(c: Context<ComputeEnv>, id: string): Promise<WebhookRecord> {
  const hook = UUID_RE.test(id) ? await c.get('deps').webhooks.get(c.get('project').id, id) : undefined
  if (!hook) throw notFound('webhook')
  return hook
}

/** The URL with the addresses its host resolves to now, for the policy (a literal address is its own). */
const checked = (c: Context<ComputeEnv>, text: string): Promise<CheckedUrl> => resolveUrl(text, c.get('deps').config.webhookUrlPolicy)

webhooks.openapi(
  createRoute({
    operationId: 'createWebhook',
    method: 'post',
    path: '/webhooks',
    tags: ['webhooks'],
    summary: 'Register an endpoint for the events it names; the signing secret is in this response only',
    middleware: [manage] as const,
    request: { body: { content: { 'application/json': { schema: CreateWebhook } }, required: true } },
    responses: { 201: json(WebhookWithSecret, 'Registered'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const deps = c.get('deps')
    const project = c.get('project')
    const { hook, secret } = await deps.webhooks.register(auditContext(c), project, {
      url: await checked(c, body.url),
      events: body.events,
      description: body.description,
      policy: deps.config.webhookUrlPolicy,
      by: c.get('principal').user.id,
    })
    return c.json({ ...toWebhook(hook, deps.clock.now()), secret }, 201)
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'listWebhooks',
    method: 'get',
    path: '/webhooks',
    tags: ['webhooks'],
    summary: "The project's webhooks, oldest first",
    middleware: [manage] as const,
    request: { query: PageQuery },
    responses: { 200: { ...json(z.array(Webhook)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const page = await c.get('deps').webhooks.list(c.get('project').id, c.req.valid('query'))
    return pageResponse(c, { items: page.items.map((h) => toWebhook(h, c.get('deps').clock.now())), nextPageToken: page.nextPageToken })
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'getWebhook',
    method: 'get',
    path: '/webhooks/{id}',
    tags: ['webhooks'],
    summary: 'A webhook (never its secret)',
    middleware: [manage] as const,
    request: { params: IdParam },
    responses: { 200: json(Webhook), ...commonErrors },
  }),
  async (c) => c.json(toWebhook(await loadHook(c, c.req.valid('param').id), c.get('deps').clock.now()), 200),
)

webhooks.openapi(
  createRoute({
    operationId: 'updateWebhook',
    method: 'patch',
    path: '/webhooks/{id}',
    tags: ['webhooks'],
    summary: "Change a webhook's URL, events or description, or disable and enable it",
    middleware: [manage] as const,
    request: { params: IdParam, body: { content: { 'application/json': { schema: UpdateWebhook } }, required: true } },
    responses: { 200: json(Webhook), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const body = c.req.valid('json')
    const deps = c.get('deps')
    await loadHook(c, id)
    const hook = await deps.webhooks.update(auditContext(c), c.get('project').id, id, {
      ...body,
      url: body.url === undefined ? undefined : await checked(c, body.url),
      policy: deps.config.webhookUrlPolicy,
    })
    return c.json(toWebhook(hook, deps.clock.now()), 200)
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'rotateWebhookSecret',
    method: 'post',
    path: '/webhooks/{id}/rotate-secret',
    tags: ['webhooks'],
    summary: 'A new signing secret, in this response only; the previous one also signs deliveries for 24 hours',
    middleware: [manage] as const,
    request: { params: IdParam },
    responses: { 200: json(WebhookWithSecret, 'Rotated'), ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    const deps = c.get('deps')
    await loadHook(c, id)
    const { hook, secret } = await deps.webhooks.rotate(auditContext(c), c.get('project').id, id)
    return c.json({ ...toWebhook(hook, deps.clock.now()), secret }, 200)
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'deleteWebhook',
    method: 'delete',
    path: '/webhooks/{id}',
    tags: ['webhooks'],
    summary: 'Delete a webhook; its pending deliveries are not sent',
    middleware: [manage] as const,
    request: { params: IdParam },
    responses: { 204: { description: 'Deleted' }, ...commonErrors },
  }),
  async (c) => {
    const { id } = c.req.valid('param')
    await loadHook(c, id)
    await c.get('deps').webhooks.delete(auditContext(c), c.get('project').id, id)
    return c.body(null, 204)
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'listWebhookDeliveries',
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    tags: ['webhooks'],
    summary: "A webhook's deliveries, newest first, each with its attempts; filter status",
    middleware: [manage] as const,
    request: { params: IdParam, query: PageQuery.extend(DeliveryListQuery.shape) },
    responses: { 200: { ...json(z.array(Delivery)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const hook = await loadHook(c, c.req.valid('param').id)
    const { status, ...query } = c.req.valid('query')
    const page = await c.get('deps').webhooks.listDeliveries(hook, { status }, query)
    return pageResponse(c, { items: page.items.map(toDelivery), nextPageToken: page.nextPageToken })
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'getWebhookDelivery',
    method: 'get',
    path: '/webhooks/{id}/deliveries/{delivery_id}',
    tags: ['webhooks'],
    summary: 'A delivery and its attempts',
    middleware: [manage] as const,
    request: { params: WebhookDeliveryParams },
    responses: { 200: json(Delivery), ...commonErrors },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid('param')
    const delivery = await c.get('deps').webhooks.getDelivery(await loadHook(c, id), delivery_id)
    if (!delivery) throw notFound('delivery')
    return c.json(toDelivery(delivery), 200)
  },
)

webhooks.openapi(
  createRoute({
    operationId: 'redeliverWebhookDelivery',
    method: 'post',
    path: '/webhooks/{id}/deliveries/{delivery_id}/redeliver',
    tags: ['webhooks'],
    summary: 'Send a delivery again now, as a new round of attempts, with the same webhook-id and body',
    middleware: [manage] as const,
    request: { params: WebhookDeliveryParams },
    responses: { 202: json(Delivery, 'Due now: the orchestrator sends it'), ...commonErrors },
  }),
  async (c) => {
    const { id, delivery_id } = c.req.valid('param')
    const delivery = await c.get('deps').webhooks.redeliver(auditContext(c), await loadHook(c, id), delivery_id)
    return c.json(toDelivery(delivery), 202)
  },
)
