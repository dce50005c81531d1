import { templateText, type TemplateText } from './template.js'
import type { Timestamp } from '@google-cloud/firestore'
import { canonicalJson, rfc8785Json } from '../../lib/canonical.js'
import { sha256 } from '../../lib/ids.js'
import { compareGenomeOrder } from '../variants/genome-order.js'
import type { CommentRecord, ReportRecord, ReportVariantRecord, SnapshotRecord, UserRef } from './model.js'
import type { FrozenVariant } from './variant-source.js'

/**
 * A snapshot's content: what a report says at one moment, as one JSON value whose canonical text
 * is hashed with SHA-256. Anyone with read access re-derives the hash from the stored text. Only
 * content is in it (no status, no counters, no times of the snapshot itself), so two snapshots of
 * an unchanged report have the same hash: that is how a sign-off knows the report did not change
 * since its page was shown.
 */
export const SNAPSHOT_FORMAT = 'platform.report-snapshot/2'
/** Snapshots taken before the template's text was part of them: they print the template's text of today. */
export const SNAPSHOT_FORMAT_1 = 'platform.report-snapshot/1'

/**
 * How a snapshot's content was made canonical before it was hashed, recorded on each snapshot so
 * that it verifies with the scheme it was made with. `rfc8785`: RFC 8785 (JCS), which any JCS
 * implementation re-derives. `legacy`: the platform's own sorted-key JSON (lib/canonical.ts
 * `canonicalJson`), of the snapshots taken before snapshots recorded it (their records have no
 * `canonicalization`); it writes the same text as RFC 8785 unless the content has a lone
 * surrogate, which it writes as a `\udxxx` escape where RFC 8785 has no form at all.
 */
export const CANONICALIZATIONS = ['rfc8785', 'legacy'] as const
export type Canonicalization = (typeof CANONICALIZATIONS)[number]
/** The canonicalization of every new snapshot. */
export const SNAPSHOT_CANONICALIZATION: Canonicalization = 'rfc8785'
/** A stored snapshot's canonicalization: `legacy` when it has none (taken before snapshots recorded it). */
export const canonicalizationOf = (s: Pick<SnapshotRecord, 'canonicalization'>): Canonicalization => s.canonicalization ?? 'legacy'

const CANONICAL_TEXT: Record<Canonicalization, (value: unknown) => string> = { rfc8785: rfc8785Json, legacy: canonicalJson }

/** The order and the people tested, as the report identifies them (ISO 15189: the patient's identification on every report). */
export interface OrderContext {
  id: string
  accession: string
  test_code: string
  indication: string | null
  requester: { name: string; organization: string | null } | null
  samples: Array<{
    sample_id: string
    external_id: string
    type: string
    role: string
    subject: {
      id: string
      external_id: string
      display_name: string | null
      sex: string
      birth_date: string | null
      affected_status: string
      phenotypes: string[]
    } | null
  }>
}

export interface SnapshotVariant {
  variant_id: string
  /** False when the order's current cache no longer has the variant (its values are then unknown: null). */
  in_cache: boolean
  variant: FrozenVariant | null
  acmg_classification: string | null
  acmg_criteria: string[]
  transcript: string | null
  hgvs_c: string | null
  hgvs_p: string | null
  inheritance: string | null
  interpretation: string | null
  include_in_report: boolean
}

export interface SnapshotContent {
  format: typeof SNAPSHOT_FORMAT | typeof SNAPSHOT_FORMAT_1
  report: {
    id: string
    project_id: string
    revision: number
    replaces: string | null
    amendment: { kind: string; reason: string; by: string; at: string } | null
    template_type: string
    /**
     * The template's title, methods and limitations as they read when the snapshot was taken
     * (format 2): what is signed is what prints, whatever later becomes of the laboratory's
     * wording. Absent from format 1 snapshots; null for a template this code did not know.
     */
    template?: TemplateText | null
    summary: string | null
    notes: string | null
    conclusion: string | null
    author: { id: string; name: string | null; email: string | null }
  }
  order: OrderContext
  variants: SnapshotVariant[]
  comments: Array<{
    id: string
    type: string
    author: { id: string; name: string | null; email: string | null }
    comment: string
    created: string
    resolved: { by: string; at: string } | null
  }>
}

const iso = (t: Timestamp) => t.toDate().toISOString()
const user = (u: UserRef) => ({ id: u.id, name: u.name ?? null, email: u.email ?? null })

export function snapshotVariant(record: ReportVariantRecord, cached: FrozenVariant | undefined): SnapshotVariant {
  return {
    variant_id: record.variant_id,
    in_cache: cached !== undefined,
    variant: cached ?? null,
    acmg_classification: record.acmg_classification ?? null,
    acmg_criteria: record.acmg_criteria,
    transcript: record.transcript ?? null,
    hgvs_c: record.hgvs_c ?? null,
    hgvs_p: record.hgvs_p ?? null,
    inheritance: record.inheritance ?? null,
    interpretation: record.interpretation ?? null,
    include_in_report: record.include_in_report,
  }
}

/** Variants in genome order (those the cache no longer has last, by id); comments oldest first. */
export function snapshotContent(input: {
  report: ReportRecord
  order: OrderContext
  variants: Array<{ record: ReportVariantRecord; cached: FrozenVariant | undefined }>
  comments: CommentRecord[]
}): SnapshotContent {
  const { report } = input
  const variants = input.variants.map((v) => snapshotVariant(v.record, v.cached))
  variants.sort((a, b) => {
    if (a.variant && b.variant) return compareGenomeOrder(a.variant, b.variant)
    if (a.variant || b.variant) return a.variant ? -1 : 1
    return a.variant_id < b.variant_id ? -1 : a.variant_id > b.variant_id ? 1 : 0
  })
  const comments = [...input.comments]
    .sort((a, b) => a.created.toMillis() - b.created.toMillis() || (a.id < b.id ? -1 : 1))
    .map((c) => ({
      id: c.id,
      type: c.type,
      author: user(c.author),
      comment: c.comment,
      created: iso(c.created),
      resolved: c.resolved ? { by: c.resolved.by, at: iso(c.resolved.at) } : null,
    }))
  return {
    format: SNAPSHOT_FORMAT,
    report: {
      id: report.id,
      project_id: report.project_id,
      revision: report.revision,
      replaces: report.replaces ?? null,
      amendment: report.amendment
        ? { kind: report.amendment.kind, reason: report.amendment.reason, by: report.amendment.by, at: iso(report.amendment.at) }
        : null,
      template_type: report.template_type,
      template: templateText(report.template_type) ?? null,
      summary: report.summary ?? null,
      notes: report.notes ?? null,
      conclusion: report.conclusion ?? null,
      author: user(report.author),
    },
    order: input.order,
    variants,
    comments,
  }
}

/**
 * The canonical text (RFC 8785) of a content and its SHA-256 (hex). Its strings are well-formed
 * UTF-16 (Firestore stores no lone surrogate), so RFC 8785 has a form for every content.
 */
export function sealContent(content: SnapshotContent): { json: string; sha256: string } {
  const json = rfc8785Json(content)
  return { json, sha256: sha256(json) }
}

/**
 * Re-derives a stored snapshot's hash from its text with the scheme it was made with: the text
 * must be canonical under that scheme and hash to `expected`.
 */
export function verifySnapshotText(text: string, expected: string, canonicalization: Canonicalization): boolean {
  let canonical: string
  try {
    canonical = CANONICAL_TEXT[canonicalization](JSON.parse(text))
  } catch {
    // Not JSON, or (RFC 8785) a value the scheme has no form for: not a text it made.
    return false
  }
  return canonical === text && sha256(text) === expected
}
