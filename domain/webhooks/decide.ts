import type { AuditInput } from '../../lib/audit.js'
import { absent, allow, conflictWith, deny, invalid, type Decision } from '../../lib/decision.js'
import { addressesProblem, hostOf, urlProblem, type UrlPolicy } from './addresses.js'
import { isEventFilter } from './events.js'
import type { AttemptRecord, DeliveryRecord, DeliveryStatus, WebhookRecord } from './model.js'
import type { SecretRef } from './signing.js'

/**
 * The rules of webhooks, as pure decisions (lib/decision.ts): registration and its URL policy,
 * rotation, the retry schedule, claiming a delivery, the outcome of an attempt, redelivery. Times
 * are epoch milliseconds given in the command; the store turns them into timestamps.
 */

/**
 * The Standard Webhooks retry schedule (its spec.md, "Retry schedule"): the first attempt at once,
 * then 5 seconds, 5 minutes, 30 minutes, 2 hours, 5 hours, 10 hours and 10 hours after the attempt
 * before: 8 attempts over about 27.6 hours, after which the delivery is kept as failed.
 */
export const RETRY_SCHEDULE_MS = [0, 5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000] as const
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length

/** How long after the attempt number `made` (1-based) of a round fails the next one is due; undefined after the last. */
export function retryDelayMs(made: number): number | undefined {
  return made >= 1 && made < MAX_ATTEMPTS ? RETRY_SCHEDULE_MS[made] : undefined
}

/** A webhook per project at most this many (each change of a followed entity reads them all). */
export const MAX_WEBHOOKS_PER_PROJECT = 20
/** A rotated secret still signs deliveries this long, beside the new one, so receivers can switch without losing one. */
export const SECRET_OVERLAP_MS = 24 * 3600_000
/** Attempts kept on a delivery (the newest); the counts stay exact. */
export const MAX_KEPT_ATTEMPTS = 30
/** A dispatcher sending a delivery holds it this long: longer than an attempt's timeout, so two never send it at once. */
export const DELIVERY_LEASE_MS = 60_000

const entity = (hook: Pick<WebhookRecord, 'id'>) => ({ type: 'webhook', id: hook.id })
const event = (hook: Pick<WebhookRecord, 'id' | 'project_id' | 'org_id'>, action: string, change?: AuditInput['change']): AuditInput => ({
  action,
  project_id: hook.project_id,
  org_id: hook.org_id,
  entity: entity(hook),
  change,
})

/** The URL checked under the policy, with the addresses its host resolved to (undefined: it did not resolve). */
export interface CheckedUrl {
  url: string
  addresses?: readonly string[]
}

/** What is wrong with a URL under `policy`, given what its host resolved to; undefined when it may be used. */
export function urlRefusal(checked: CheckedUrl, policy: UrlPolicy): string | undefined {
  const problem = urlProblem(checked.url, policy)
  if (problem) return problem
  return addressesProblem(hostOf(new URL(checked.url)), checked.addresses ?? [], policy)
}

function filtersProblem(events: readonly string[]): string | undefined {
  if (!events.length) return 'events: name at least one event type, group (run.*) or *'
  const unknown = events.find((e) => !isEventFilter(e))
  return unknown === undefined ? undefined : `events: '${unknown}' is not an event type, a group (run.*) or *`
}

export interface RegisterWebhook {
  id: string
  project: { id: string; org_id: string }
  url: CheckedUrl
  events: string[]
  description: string
  policy: UrlPolicy
  secret: SecretRef
  by: string
  now: number
}

export type WebhookDraft = Omit<WebhookRecord, 'created' | 'updated' | 'secrets'> & {
  secrets: Array<SecretRef & { created: number; expires?: number }>
}

/** A new webhook of a project that has `count` already. */
export function decideRegister(count: number, cmd: RegisterWebhook): Decision<WebhookDraft> {
  const url = urlRefusal(cmd.url, cmd.policy)
  if (url) return deny(invalid(`url: ${url}`))
  const filters = filtersProblem(cmd.events)
  if (filters) return deny(invalid(filters))
  if (count >= MAX_WEBHOOKS_PER_PROJECT) return deny(conflictWith(`a project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one first`))
  const hook: WebhookDraft = {
    id: cmd.id,
    project_id: cmd.project.id,
    org_id: cmd.project.org_id,
    url: cmd.url.url,
    events: [...new Set(cmd.events)],
    description: cmd.description,
    enabled: true,
    secrets: [{ ...cmd.secret, created: cmd.now }],
    created_by: cmd.by,
  }
  return allow(hook, [event(hook, 'webhook.created', { to: 'enabled' })])
}

export interface UpdateWebhook {
  url?: CheckedUrl
  events?: string[]
  description?: string
  enabled?: boolean
  policy: UrlPolicy
}

export type WebhookPatch = Partial<Pick<WebhookRecord, 'url' | 'events' | 'description' | 'enabled'>>

/** A change of a webhook's URL, events, description or state; the audit event names the fields changed (never the URL, which may carry a token). */
export function decideUpdate(hook: WebhookRecord | undefined, cmd: UpdateWebhook): Decision<WebhookPatch> {
  if (!hook) return deny(absent('webhook'))
  if (cmd.url) {
    const url = urlRefusal(cmd.url, cmd.policy)
    if (url) return deny(invalid(`url: ${url}`))
  }
  if (cmd.events) {
    const filters = filtersProblem(cmd.events)
    if (filters) return deny(invalid(filters))
  }
  const patch: WebhookPatch = {}
  if (cmd.url && cmd.url.url !== hook.url) patch.url = cmd.url.url
  if (cmd.events) {
    const events = [...new Set(cmd.events)]
    if (events.join('\n') !== hook.events.join('\n')) patch.events = events
  }
  if (cmd.description !== undefined && cmd.description !== hook.description) patch.description = cmd.description
  if (cmd.enabled !== undefined && cmd.enabled !== hook.enabled) patch.enabled = cmd.enabled
  const fields = Object.keys(patch)
  if (!fields.length) return allow(patch)
  const state = patch.enabled === undefined ? undefined : { from: hook.enabled ? 'enabled' : 'disabled', to: patch.enabled ? 'enabled' : 'disabled' }
  return allow(patch, [event(hook, 'webhook.updated', { ...state, fields })])
}

/**
 * A new secret (the next generation, derived with the ring's active key). The one it replaces keeps
 * signing for SECRET_OVERLAP_MS beside it; older ones are dropped.
 */
export function decideRotate(hook: WebhookRecord | undefined, cmd: { key_id: string; now: number }): Decision<WebhookDraft['secrets']> {
  if (!hook) return deny(absent('webhook'))
  const current = hook.secrets[0]!
  const next = { key_id: cmd.key_id, generation: Math.max(...hook.secrets.map((s) => s.generation)) + 1, created: cmd.now }
  const previous = {
    key_id: current.key_id,
    generation: current.generation,
    created: current.created.toMillis(),
    expires: cmd.now + SECRET_OVERLAP_MS,
  }
  return allow([next, previous], [event(hook, 'webhook.secret_rotated', { reason: `generation ${next.generation}` })])
}

/** The secrets that sign a delivery now: the current one, and a rotated one until it expires. */
export function signingSecrets(hook: Pick<WebhookRecord, 'secrets'>, now: number) {
  return hook.secrets.filter((s) => s.expires === undefined || s.expires.toMillis() > now)
}

/** Deleting a webhook: its pending deliveries are not sent any more (the dispatcher keeps them failed). */
export function decideDelete(hook: WebhookRecord | undefined): Decision<null> {
  if (!hook) return deny(absent('webhook'))
  return allow(null, [event(hook, 'webhook.deleted', { from: hook.enabled ? 'enabled' : 'disabled' })])
}

/** The state of a delivery a dispatcher is about to send, as the claim sees it. */
export type ClaimState = Pick<DeliveryRecord, 'status' | 'next_attempt_at' | 'lease_until'>

/**
 * Whether a dispatcher may send a delivery now, holding it for DELIVERY_LEASE_MS: it is pending,
 * due, and nobody else holds it. Messages are at least once, so a duplicate is told apart here.
 */
export function decideClaim(d: ClaimState | undefined, now: number): Decision<{ lease_until: number }> {
  if (!d) return deny(absent('delivery'))
  if (d.status !== 'pending') return deny(conflictWith(`the delivery has ${d.status}`))
  if (d.next_attempt_at && d.next_attempt_at.toMillis() > now) return deny(conflictWith('the delivery is not due yet'))
  if (d.lease_until && d.lease_until.toMillis() > now) return deny(conflictWith('another dispatcher is sending the delivery'))
  return allow({ lease_until: now + DELIVERY_LEASE_MS })
}

/** How an attempt went: the receiver's status, or why there was none. */
export interface AttemptOutcome {
  at: number
  duration_ms: number
  status_code?: number
  error?: string
}

/** A 2xx answer is a delivery (Standard Webhooks); anything else, or no answer, is tried again. */
export const isSuccess = (o: Pick<AttemptOutcome, 'status_code' | 'error'>) =>
  o.error === undefined && o.status_code !== undefined && o.status_code >= 200 && o.status_code < 300

export interface AttemptChange {
  status: DeliveryStatus
  round_attempts: number
  /** Epoch ms of the next attempt, while pending. */
  next_attempt_at?: number
  attempt: Omit<AttemptRecord, 'at'> & { at: number }
}

/** What an attempt's outcome makes of the delivery: succeeded, pending until the schedule's next time, or failed after the last attempt. */
export function decideAttempt(d: Pick<DeliveryRecord, 'round' | 'round_attempts'>, o: AttemptOutcome): AttemptChange {
  const number = d.round_attempts + 1
  const succeeded = isSuccess(o)
  const error = o.error ?? (succeeded ? undefined : `the receiver answered ${o.status_code}`)
  const attempt = { at: o.at, number, round: d.round, duration_ms: o.duration_ms, status_code: o.status_code, error, succeeded }
  if (succeeded) return { status: 'succeeded', round_attempts: number, attempt }
  const delay = retryDelayMs(number)
  if (delay === undefined) return { status: 'failed', round_attempts: number, attempt }
  return { status: 'pending', round_attempts: number, next_attempt_at: o.at + delay, attempt }
}

/**
 * A delivery sent again on request: a new round of the schedule from now, with the same id and
 * body (a receiver that already has it can tell by its `webhook-id`). Allowed in any status: a
 * pending delivery is brought forward (its receiver is fixed and the next try is hours away).
 */
export function decideRedeliver(
  d: Pick<DeliveryRecord, 'id' | 'status' | 'round'> | undefined,
  hook: Pick<WebhookRecord, 'id' | 'project_id' | 'org_id'>,
  now: number,
): Decision<{ status: 'pending'; round: number; round_attempts: 0; next_attempt_at: number }> {
  if (!d) return deny(absent('delivery'))
  return allow({ status: 'pending', round: d.round + 1, round_attempts: 0, next_attempt_at: now }, [
    event(hook, 'webhook.redelivered', { from: d.status, to: 'pending', reason: `delivery ${d.id}` }),
  ])
}
