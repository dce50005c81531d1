import type { Timestamp } from '@google-cloud/firestore'
import type { Db } from '../../lib/db.js'
import { sha256 } from '../../lib/ids.js'
import type { AcmgClassification } from './acmg.js'
import type { Canonicalization } from './snapshot.js'
import type { ReportStatus } from './status.js'

/**
 * The report records (DOMAIN.md, Reports): a report of an order with its per-report variant
 * overrides, its comments, its immutable snapshots and its signatures, and where they live in
 * Firestore. A report is never edited once it leaves draft: an amendment is a new revision.
 */
export const TEMPLATE_TYPES = ['germline_diagnostic', 'carrier', 'secondary_findings', 'negative'] as const
export type TemplateType = (typeof TEMPLATE_TYPES)[number]

/** Modes of inheritance (HPO's "Mode of inheritance" terms) and the segregation labels reports use beside them. */
export const INHERITANCE = [
  'autosomal_dominant',
  'autosomal_recessive',
  'x_linked',
  'x_linked_dominant',
  'x_linked_recessive',
  'y_linked',
  'mitochondrial',
  'de_novo',
  'compound_heterozygous',
  'unknown',
] as const
export type Inheritance = (typeof INHERITANCE)[number]

export const COMMENT_TYPES = ['review', 'internal', 'general'] as const
export type CommentType = (typeof COMMENT_TYPES)[number]

/** What a signature means (21 CFR 11.50): the only one the platform records is approval of the report. */
export const SIGNATURE_MEANINGS = ['approved'] as const
export type SignatureMeaning = (typeof SIGNATURE_MEANINGS)[number]

/** Why a signed report gets a new revision (FHIR DiagnosticReport: amended, corrected, appended). */
export const AMENDMENT_KINDS = ['amended', 'corrected', 'appended'] as const
export type AmendmentKind = (typeof AMENDMENT_KINDS)[number]

/**
 * What a person did to a report's content or its way to signing: wrote it (`created`, or
 * `amended`: started this revision), changed its text (`edited`: summary, conclusion, notes,
 * template type), added or removed variants (`changed_variants`), changed a variant's overrides
 * (`changed_overrides`), or sent it to review (`sent_to_review`). Whoever did any of them does not
 * sign it (four eyes: domain/reports/decide.ts).
 */
export const CONTRIBUTIONS = ['created', 'amended', 'edited', 'changed_variants', 'changed_overrides', 'sent_to_review'] as const
export type Contribution = (typeof CONTRIBUTIONS)[number]

/** One person who changed a report (a user id), with what they did, in CONTRIBUTIONS order. */
export interface Contributor {
  id: string
  did: Contribution[]
}

/** Bounds that keep a report, and its snapshot, one Firestore document each. */
export const MAX_REPORT_VARIANTS = 100
export const MAX_REPORT_COMMENTS = 200
export const MAX_REPORT_SNAPSHOTS = 100
export const MAX_TEXT = 20_000
export const MAX_COMMENT = 5_000
/** A snapshot's canonical JSON is stored in one document (1 MiB at most, with its other fields). */
export const MAX_SNAPSHOT_BYTES = 900 * 1024

export interface UserRef {
  id: string
  name?: string
  email?: string
}

export interface StatusChange {
  from: string
  to: string
  by: string
  at: Timestamp
  reason?: string
}

/** A signature of a report (21 CFR 11.50 and 11.70): who, when, what it means, and exactly which snapshot it applies to. */
export interface SignatureRecord {
  signer: UserRef
  at: Timestamp
  meaning: SignatureMeaning
  snapshot_id: string
  sha256: string
  /** When the signer last proved their identity at the identity provider (the ID token's auth_time), within five minutes of `at`. */
  auth_time: Timestamp
}

export interface AmendmentRecord {
  kind: AmendmentKind
  reason: string
  by: string
  at: Timestamp
}

export interface ReportRecord {
  id: string
  project_id: string
  org_id: string
  order_id: string
  order_accession: string
  status: ReportStatus
  template_type: TemplateType
  summary?: string
  notes?: string
  conclusion?: string
  author: UserRef
  /**
   * Everyone who changed this revision's content or sent it to review, the author first. Absent on
   * reports written before it was recorded: contributorsOf (decide.ts) reads those from the author
   * and the status history.
   */
  contributors?: Contributor[]
  /** 1 for the first report, n + 1 for the amendment of revision n. */
  revision: number
  /** The signed revision this one amends. */
  replaces?: string
  amendment?: AmendmentRecord
  /** The open (draft or in-review) revision that amends this signed one. */
  pending_revision?: string
  /** The revision that superseded this one when it was signed. */
  superseded_by?: string
  signatures: SignatureRecord[]
  status_history: StatusChange[]
  variant_count: number
  /** Variants included in the report without an ACMG classification: review waits for none. */
  unclassified_count: number
  comment_count: number
  /** Review comments not yet resolved: signing waits for none. */
  open_review_comments: number
  snapshot_count: number
  latest_snapshot?: { id: string; seq: number; sha256: string; taken_at: Timestamp }
  created: Timestamp
  updated: Timestamp
}

/** A variant of the order's cache on a report, keyed by its variant id; the variant's own fields are read from the cache. */
export interface ReportVariantRecord {
  report_id: string
  project_id: string
  order_id: string
  variant_id: string
  acmg_classification?: AcmgClassification
  acmg_criteria: string[]
  transcript?: string
  hgvs_c?: string
  hgvs_p?: string
  inheritance?: Inheritance
  interpretation?: string
  include_in_report: boolean
  added_by: string
  added_at: Timestamp
  updated: Timestamp
}

export interface CommentRecord {
  id: string
  report_id: string
  project_id: string
  type: CommentType
  comment: string
  author: UserRef
  created: Timestamp
  updated: Timestamp
  edited_at?: Timestamp
  resolved?: { by: string; at: Timestamp }
  /** On an amendment: the comment of the replaced revision this one was copied from. */
  copied_from?: string
}

export interface SnapshotRecord {
  id: string
  report_id: string
  project_id: string
  /** 1, 2, 3… per report. */
  seq: number
  /** The report, its variants (with the cache's values of that moment) and its comments as canonical JSON, exactly as hashed. */
  content: string
  sha256: string
  /** How `content` was made canonical; absent on the snapshots taken before it was recorded (`legacy`, domain/reports/snapshot.ts). */
  canonicalization?: Canonicalization
  taken_by: string
  taken_at: Timestamp
  /** The report's status when it was taken. */
  report_status: ReportStatus
}

/**
 * A sign-off in progress, bound to one browser session, one report and one snapshot. `page`: the
 * sign-off page was shown with a form whose token hashes to this document's id. `reauth`: the form
 * was posted and the signer sent to the identity provider; the session and the report find it
 * again (no secret travels in an address). Each is used once and expires quickly.
 */
export interface SignoffRecord {
  stage: 'page' | 'reauth'
  report_id: string
  project_id: string
  user_id: string
  /** The id of the platform session (SessionRecord.id) it is bound to. */
  session_id: string
  snapshot_id: string
  sha256: string
  meaning?: SignatureMeaning
  created: Timestamp
  expires_at: Timestamp
}

export const variantDocId = (reportId: string, variantId: string) => `${reportId}~${sha256(variantId).slice(0, 40)}`

/** Where the report records live; one place, so every store and transaction names them alike. */
export function reportRefs(db: Db) {
  return {
    reports: () => db.col('reports'),
    report: (id: string) => db.col('reports').doc(id),
    variants: () => db.col('report_variants'),
    variant: (reportId: string, variantId: string) => db.col('report_variants').doc(variantDocId(reportId, variantId)),
    comments: () => db.col('report_comments'),
    comment: (id: string) => db.col('report_comments').doc(id),
    snapshots: () => db.col('report_snapshots'),
    snapshot: (id: string) => db.col('report_snapshots').doc(id),
    signoffs: () => db.col('report_signoffs'),
    signoff: (secret: string) => db.col('report_signoffs').doc(sha256(secret)),
  }
}

export const REPORT_COLLECTIONS = ['reports', 'report_variants', 'report_comments', 'report_snapshots', 'report_signoffs'] as const
