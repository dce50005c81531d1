import type { DocumentReference, Timestamp, Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Db } from '../../lib/db.js'
import type { Allowed } from '../../lib/decision.js'
import { sha256 } from '../../lib/ids.js'
import type { OrderStatus } from './order-status.js'

/**
 * The clinical records (DOMAIN.md, Subjects and samples, Orders): what a subject, a sample and an
 * order are, their value sets, and where they live in Firestore. Shared by the clinical-data
 * service and, for orders, the compute service (a run linked to an order).
 */
export const SEXES = ['female', 'male', 'unknown', 'other'] as const
export type Sex = (typeof SEXES)[number]
export const AFFECTED_STATUSES = ['affected', 'unaffected', 'unknown'] as const
export type AffectedStatus = (typeof AFFECTED_STATUSES)[number]
export const SAMPLE_TYPES = ['blood', 'saliva', 'tissue', 'dna', 'rna', 'other'] as const
export type SampleType = (typeof SAMPLE_TYPES)[number]
export const PRIORITIES = ['routine', 'urgent', 'asap', 'stat'] as const
export type Priority = (typeof PRIORITIES)[number]
export const OUTCOMES = ['pending', 'positive', 'negative', 'inconclusive'] as const
export type Outcome = (typeof OUTCOMES)[number]
export const FAMILY_ROLES = ['proband', 'mother', 'father', 'sibling', 'relative'] as const
export const SOMATIC_ROLES = ['tumor', 'normal'] as const
export const SAMPLE_ROLES = [...FAMILY_ROLES, ...SOMATIC_ROLES] as const
export type SampleRole = (typeof SAMPLE_ROLES)[number]

/** HPO term ids: `HP:` and seven digits. */
export const HPO_RE = /^HP:\d{7}$/
/** A lab identifier (MRN, tube barcode, family id): it becomes a samplesheet value, so no whitespace. */
export const EXTERNAL_ID_RE = /^\S{1,100}$/
/** At most this many samples in one order (a family of up to 50). */
export const MAX_ORDER_SAMPLES = 50

export interface SubjectRecord {
  id: string
  project_id: string
  org_id: string
  external_id: string
  display_name?: string
  sex: Sex
  /** YYYY-MM-DD */
  birth_date?: string
  affected_status: AffectedStatus
  phenotypes: string[]
  family_id?: string
  mother_id?: string
  father_id?: string
  /** How many samples the subject has; sample creation writes it, so it serializes with the subject's deletion. */
  sample_count: number
  created: Timestamp
  updated: Timestamp
  created_by: string
}

/** An order a sample is in, kept on the sample so that every change to either meets on the sample document. */
export interface SampleOrderRef {
  order_id: string
  accession: string
  /** True while the order is signed (from signing on, until entered_in_error): the sample cannot change. */
  frozen: boolean
}

export interface SampleRecord {
  id: string
  project_id: string
  org_id: string
  external_id: string
  subject_id: string
  type: SampleType
  collected_at?: Timestamp
  received_at?: Timestamp
  /** gs:// URIs in the project bucket, read pairs as R1, R2, R1, R2… */
  fastq: string[]
  bam?: string
  cram?: string
  vcf?: string
  orders: SampleOrderRef[]
  created: Timestamp
  updated: Timestamp
  created_by: string
}

export interface OrderSampleEntry {
  sample_id: string
  role: SampleRole
  added_at: Timestamp
  added_by: string
}

export interface StatusChange {
  from: string
  to: string
  by: string
  at: Timestamp
  reason?: string
}

export interface LabflowHistoryEntry {
  transition: string
  from: string
  to: string | null
  by: string
  at: Timestamp
  reason?: string
}

/** The order's place in its labflow, from signing on (the version is pinned then). */
export interface OrderLabflowState {
  labflow_id: string
  version: number
  status: 'active' | 'completed' | 'removed'
  stage: string
  assignee?: string
  started_at: Timestamp
  history: LabflowHistoryEntry[]
}

export interface OrderRecord {
  id: string
  project_id: string
  org_id: string
  accession: string
  status: OrderStatus
  /** While on_hold: the status it left, the only one it may resume to. */
  held_from?: OrderStatus
  priority: Priority
  test_code: string
  indication?: string
  requester?: { name: string; organization?: string }
  assignee?: string
  /** YYYY-MM-DD */
  due_date?: string
  notes?: string
  outcome: Outcome
  /** The labflow the order follows; the version is pinned when the order is signed. */
  labflow: { id: string; version?: number }
  labflow_state?: OrderLabflowState
  signed?: { by: string; at: Timestamp }
  samples: OrderSampleEntry[]
  sample_ids: string[]
  /** True from signing on (false again for entered_in_error): its samples are frozen. */
  frozen: boolean
  /** Once signed, an order can never be deleted. */
  ever_signed: boolean
  status_history: StatusChange[]
  created: Timestamp
  updated: Timestamp
  created_by: string
}

/** The project a clinical command acts in: its records are stamped with its organization, data URIs must be in its bucket. */
export interface ClinicalProject {
  id: string
  org_id: string
  bucket_name: string
}

export type KeyKind = 'subject' | 'sample'

/** Holds an external_id in a project: created with the record that takes it, deleted with it or when it is renamed. */
export interface KeyRecord {
  project_id: string
  kind: KeyKind
  external_id: string
  entity_id: string
}

/** The last accession number given in a project and year. */
export interface CounterRecord {
  project_id: string
  year: number
  last: number
  updated: Timestamp
}

interface ClinicalDocs {
  subject: SubjectRecord
  sample: SampleRecord
  order: OrderRecord
  key: KeyRecord
  counter: CounterRecord
}

/**
 * One document a clinical decision writes, whole: `create` (fails if it exists, so a lost race for
 * an external_id or a record id is a conflict), `put` (replaces a document the decision read in the
 * same transaction) or `delete`. Decisions return these as plain data; the stores write them with
 * `commit`, and the property tests apply them to a map.
 */
export type ClinicalWrite = { [K in keyof ClinicalDocs]: { kind: K; op: 'create' | 'put' | 'delete'; doc: ClinicalDocs[K] } }[keyof ClinicalDocs]

/** What an allowed clinical decision does: the documents to write, and the record the caller gets back. */
export interface ClinicalChange<T> {
  result: T
  writes: ClinicalWrite[]
}

/** Where the clinical records live; one place, so every store and transaction names them alike. */
export function clinicalRefs(db: Db) {
  return {
    subject: (id: string) => db.col('subjects').doc(id),
    sample: (id: string) => db.col('samples').doc(id),
    order: (id: string) => db.col('orders').doc(id),
    /** Uniqueness of an external_id in a project: created in the same transaction as the record that holds it. */
    key: (projectId: string, kind: KeyKind, externalId: string) => db.col('clinical_keys').doc(sha256(`${projectId}|${kind}|${externalId}`)),
    /** The accession counter of a project and year: incremented in the order's creating transaction, never decremented. */
    counter: (projectId: string, year: number) => db.col('clinical_counters').doc(`${projectId}~orders~${year}`),
    subjects: () => db.col('subjects'),
    samples: () => db.col('samples'),
    orders: () => db.col('orders'),
  }
}

type ClinicalRefs = ReturnType<typeof clinicalRefs>

function refOf(refs: ClinicalRefs, w: ClinicalWrite): DocumentReference {
  switch (w.kind) {
    case 'subject':
      return refs.subject(w.doc.id)
    case 'sample':
      return refs.sample(w.doc.id)
    case 'order':
      return refs.order(w.doc.id)
    case 'key':
      return refs.key(w.doc.project_id, w.doc.kind, w.doc.external_id)
    case 'counter':
      return refs.counter(w.doc.project_id, w.doc.year)
  }
}

/**
 * Writes an allowed decision in the store's transaction and returns its result: the chain heads of
 * its audit events are read first (every read of a transaction comes before its writes), then its
 * documents and events are written, committing together.
 */
export async function commit<T>(
  tx: Transaction,
  refs: ClinicalRefs,
  audit: AuditWriter,
  ctx: AuditContext,
  allowed: Allowed<ClinicalChange<T>>,
): Promise<T> {
  const chains = await audit.prepareMany(tx, allowed.events)
  for (const w of allowed.changes.writes) {
    const ref = refOf(refs, w)
    if (w.op === 'create') tx.create(ref, w.doc)
    else if (w.op === 'put') tx.set(ref, w.doc)
    else tx.delete(ref)
  }
  for (const event of allowed.events) chains.write(ctx, event)
  return allowed.changes.result
}

export const accessionOf = (year: number, n: number) => `ORD-${year}-${String(n).padStart(6, '0')}`
export const ACCESSION_RE = /^ORD-\d{4}-\d{6,}$/

/**
 * Reads several documents in a transaction with one request (never as concurrent requests of one
 * transaction, which the emulator does not serialize), in the order asked; an empty list reads nothing.
 */
export async function readAll<T>(tx: Transaction, refs: DocumentReference[]): Promise<Array<T | undefined>> {
  if (!refs.length) return []
  return (await tx.getAll(...refs)).map((snap) => snap.data() as T | undefined)
}
