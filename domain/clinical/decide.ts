import { Timestamp } from '@google-cloud/firestore'
import type { AuditInput } from '../../lib/audit.js'
import type { ClinicalProject, ClinicalWrite, SampleRecord } from './model.js'

/**
 * What the clinical decisions (decide-subject.ts, decide-sample.ts, decide-order.ts) share: which
 * signed orders freeze a record, how a PATCH applies to one, and the shape of their audit events.
 * Pure: no Firestore, no clock, no HTTP.
 */

/** The accessions of the signed (frozen) orders holding any of these samples: none when nothing freezes them. */
export function frozenBy(samples: ReadonlyArray<Pick<SampleRecord, 'orders'>>): string[] {
  return [...new Set(samples.flatMap((s) => s.orders.filter((o) => o.frozen).map((o) => o.accession)))]
}

/** Two stored values compared as Firestore keeps them: timestamps by instant, lists and maps by content, absent as null. */
export function sameValue(a: unknown, b: unknown): boolean {
  const plain = (v: unknown) => (v instanceof Timestamp ? v.toMillis() : (v ?? null))
  return JSON.stringify(plain(a)) === JSON.stringify(plain(b))
}

/** A PATCH: each field sent replaces the stored one, null clears an optional one, absent leaves it. */
export type Patch<T> = { [K in keyof T]?: undefined extends T[K] ? T[K] | null : T[K] }

/**
 * A PATCH applied to a record: the names of the fields whose value it changes (sorted, as the audit
 * event lists them; a field sent with its stored value is no change) and the record after it.
 */
export function applyPatch<T extends object>(current: T, patch: Patch<T>): { changed: Array<keyof T & string>; next: T } {
  const next = { ...current } as Record<string, unknown>
  const changed: Array<keyof T & string> = []
  for (const key of (Object.keys(patch) as Array<keyof T & string>).sort()) {
    const value = patch[key]
    if (value === undefined || sameValue(value, current[key])) continue
    changed.push(key)
    if (value === null) delete next[key]
    else next[key] = value
  }
  return { changed, next: next as T }
}

/** The audit event of a clinical change in the project. */
export function clinicalEvent(
  project: Pick<ClinicalProject, 'id' | 'org_id'>,
  action: string,
  entity: AuditInput['entity'],
  change?: AuditInput['change'],
): AuditInput {
  return { action, project_id: project.id, org_id: project.org_id, entity, ...(change ? { change } : {}) }
}

type Docs = { [W in ClinicalWrite as W['kind']]: W['doc'] }
/** Write constructors: `create('subject', s)` reads as what it does. */
export const create = <K extends keyof Docs>(kind: K, doc: Docs[K]) => ({ kind, op: 'create', doc }) as ClinicalWrite
export const put = <K extends keyof Docs>(kind: K, doc: Docs[K]) => ({ kind, op: 'put', doc }) as ClinicalWrite
export const remove = <K extends keyof Docs>(kind: K, doc: Docs[K]) => ({ kind, op: 'delete', doc }) as ClinicalWrite
