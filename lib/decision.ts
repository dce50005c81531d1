import type { AuditInput } from './audit.js'
import type { Permission } from './auth/roles.js'
import { ApiError } from './errors.js'

/**
 * The shape of every rule of the domain (STYLE.md 11a, DESIGN.md "One domain, seven doors"): a pure
 * function from the state read in a transaction and a command to what to write and which audit
 * events to record, or a refusal. Decisions never touch Firestore, the clock or HTTP: the store
 * reads, calls the decision, and writes what it returns; the route maps a refusal to HTTP through
 * `Refused`, once, in the kernel's error handler.
 */

/** Why a command is refused, as plain data. Each kind has one HTTP status (see `refusalStatus`). */
export type Refusal =
  /** 400: the command itself is malformed (a field out of range, a name too long). */
  | { kind: 'invalid'; detail: string }
  /** 401: the credential the command carries is not (or no longer) good: unknown, spent, revoked, expired, or its account disabled. */
  | { kind: 'unauthenticated'; detail: string }
  /** 403, with an access.denied event: the caller lacks a permission. */
  | { kind: 'permission'; permission: Permission }
  /** 403, with an access.denied event: the caller holds the permission, but a rule about them forbids it (the author signing, a grant above one's own role). */
  | { kind: 'forbidden'; reason: string; detail: string }
  /** 404: what the command names does not exist for this caller (another tenant's record included). */
  | { kind: 'not_found'; what: string }
  /** 409: the state forbids it now (a frozen record, a resource another project holds, a status without that edge). */
  | { kind: 'conflict'; detail: string }
  /** 412: a precondition the command carried does not hold (an object that must not exist yet). */
  | { kind: 'precondition'; detail: string }

export type RefusalStatus = 400 | 401 | 403 | 404 | 409 | 412

/** What a decision allows: the changes to write and the audit events to record with them. */
export interface Allowed<C> {
  ok: true
  changes: C
  events: AuditInput[]
}
export interface Denied {
  ok: false
  refusal: Refusal
}
export type Decision<C> = Allowed<C> | Denied

export const allow = <C>(changes: C, events: AuditInput[] = []): Allowed<C> => ({ ok: true, changes, events })
export const deny = (refusal: Refusal): Denied => ({ ok: false, refusal })

/** Constructors, so that a decision reads as `return deny(conflict('…'))`. */
export const invalid = (detail: string): Refusal => ({ kind: 'invalid', detail })
export const unauthenticated = (detail: string): Refusal => ({ kind: 'unauthenticated', detail })
export const missingPermission = (permission: Permission): Refusal => ({ kind: 'permission', permission })
export const forbiddenBy = (reason: string, detail: string): Refusal => ({ kind: 'forbidden', reason, detail })
export const absent = (what: string): Refusal => ({ kind: 'not_found', what })
export const conflictWith = (detail: string): Refusal => ({ kind: 'conflict', detail })
export const preconditionFailed = (detail: string): Refusal => ({ kind: 'precondition', detail })

export function refusalStatus(r: Refusal): RefusalStatus {
  switch (r.kind) {
    case 'invalid':
      return 400
    case 'unauthenticated':
      return 401
    case 'permission':
    case 'forbidden':
      return 403
    case 'not_found':
      return 404
    case 'conflict':
      return 409
    case 'precondition':
      return 412
  }
}

export function refusalDetail(r: Refusal): string {
  switch (r.kind) {
    case 'invalid':
    case 'unauthenticated':
    case 'forbidden':
    case 'conflict':
    case 'precondition':
      return r.detail
    case 'permission':
      return `permission ${r.permission} is required`
    case 'not_found':
      return `${r.what} not found`
  }
}

/** The reason an access.denied event records for a 403 refusal. */
export function refusalReason(r: Refusal): string {
  return r.kind === 'permission' ? `missing permission ${r.permission}` : r.kind === 'forbidden' ? r.reason : refusalDetail(r)
}

/** Where a 403 refusal's access.denied event is recorded: the scope and the entity the caller was refused on. */
export interface DeniedOn {
  scope: { project_id?: string; org_id?: string }
  entity: { type: string; id: string; parent?: string }
}

/**
 * A refusal on its way to the caller: thrown by a store (aborting its transaction, so nothing is
 * written) or a route, answered by the kernel's error handler with the refusal's status and detail.
 * A 403 with `on` also leaves an access.denied event there (lib/errors.ts errorHandler).
 */
export class Refused extends ApiError {
  constructor(
    readonly refusal: Refusal,
    readonly on?: DeniedOn,
  ) {
    super(refusalStatus(refusal), refusalDetail(refusal))
    this.name = 'Refused'
  }
}

/** The changes of an allowed decision, or the refusal thrown (`on`: where a 403 is recorded). */
export function orRefuse<C>(decision: Decision<C>, on?: DeniedOn): Allowed<C> {
  if (!decision.ok) throw new Refused(decision.refusal, on)
  return decision
}
