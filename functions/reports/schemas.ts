import { z } from '@hono/zod-openapi'
import { pathId } from '../../lib/openapi.js'
import { ACMG_CLASSIFICATIONS, parseCriteria } from '../../domain/reports/acmg.js'
import {
  AMENDMENT_KINDS,
  COMMENT_TYPES,
  CONTRIBUTIONS,
  INHERITANCE,
  MAX_COMMENT,
  MAX_TEXT,
  SIGNATURE_MEANINGS,
  TEMPLATE_TYPES,
} from '../../domain/reports/model.js'
import { CANONICALIZATIONS } from '../../domain/reports/snapshot.js'
import { REPORT_STATUSES } from '../../domain/reports/status.js'

const REPORT_ID = '6a1f0c3e-2b4d-4e5f-8a9b-0c1d2e3f4a5b'
const ORDER_ID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b'
const USER_ID = '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f'
const REVIEWER_ID = '7c6b5a49-3827-4160-9f8e-7d6c5b4a3928'
const SNAPSHOT_ID = '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b'
const COMMENT_ID = '8b7a6f5e-4d3c-4b2a-9f1e-0d9c8b7a6f5e'
const VARIANT_ID = 'ga4gh:VA.8Jm6Aw6Vd2l8hYB2Hvr1zUgYVXlDTeGs'
const SHA = '9f2c5b1e0d4a7c3b8e6f1a2d5c9b0e7f3a6d8c1b4e2f5a9d0c7b3e8f1a6d2c4b'
const AT = '2026-11-22T06:15:30.000Z'
const PRINT = `https://reports.lab.example/${REPORT_ID}`

const id = z.string().uuid()
const timestamp = z.string().openapi({ description: 'ISO 8601 UTC', example: AT })
const text = (max: number, example: string, description: string) => z.string().trim().min(1).max(max).openapi({ example, description })

/** A variant id of the cache: a GA4GH VRS Allele id (`ga4gh:VA.…`) or a platform digest (`platform:VA.…`, `platform:SV.…`). */
export const VARIANT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/
const variantId = z
  .string()
  .regex(VARIANT_ID_RE, "a variant id of the order's variant cache (ga4gh:VA.…, platform:VA.…)")
  .openapi({ description: "The variant's id in the order's variant cache (GA4GH VRS Allele id, or a platform digest)", example: VARIANT_ID })

export const ReportStatusSchema = z.enum(REPORT_STATUSES).openapi({
  description:
    'draft (FHIR registered/partial), in_review (preliminary), signed (final; amended, corrected or appended for a later revision), superseded (a later revision was signed), cancelled, entered_in_error',
})
export const TemplateTypeSchema = z.enum(TEMPLATE_TYPES).openapi({ description: 'What kind of report it is' })
const ClassificationSchema = z.enum(ACMG_CLASSIFICATIONS).openapi({ description: 'ACMG/AMP 2015 classification' })
const InheritanceSchema = z.enum(INHERITANCE)

const UserRefSchema = z
  .object({ id: z.string(), name: z.string().optional(), email: z.string().optional() })
  .openapi('UserRef', { example: { id: USER_ID, name: 'Ann Analyst', email: 'ann@lab.example' } })

// ---------------------------------------------------------------------------------------------
// Reports

const reportFields = {
  template_type: TemplateTypeSchema,
  summary: text(
    MAX_TEXT,
    'A heterozygous de novo missense variant in SCN2A explains the epileptic encephalopathy.',
    'The result in a sentence or two',
  ),
  notes: text(MAX_TEXT, 'Coverage of the SCN2A coding region ≥ 20× across 100% of bases.', 'Methods, limitations, further notes'),
  conclusion: text(MAX_TEXT, 'Positive: a pathogenic variant in SCN2A consistent with the phenotype.', 'The conclusion signed by the reviewer'),
}

export const CreateReport = z
  .object({
    order_id: z.string().min(1).max(128).openapi({ description: 'An order of the project, by id or accession', example: 'ORD-2026-000123' }),
    template_type: reportFields.template_type.default('germline_diagnostic'),
    summary: reportFields.summary.optional(),
    notes: reportFields.notes.optional(),
    conclusion: reportFields.conclusion.optional(),
  })
  .strict()
  .openapi('CreateReport', {
    example: { order_id: 'ORD-2026-000123', template_type: 'germline_diagnostic', summary: 'Trio exome analysis for epileptic encephalopathy.' },
  })

export const UpdateReport = z
  .object({
    template_type: reportFields.template_type.optional(),
    summary: reportFields.summary.nullable().optional(),
    notes: reportFields.notes.nullable().optional(),
    conclusion: reportFields.conclusion.nullable().optional(),
  })
  .strict()
  .openapi('UpdateReport', {
    description: 'A draft only (409 otherwise). The fields sent change; null clears one.',
    example: { conclusion: 'Positive: a pathogenic variant in SCN2A consistent with the phenotype.' },
  })

const SignatureSchema = z
  .object({
    signer: UserRefSchema,
    at: timestamp,
    meaning: z.enum(SIGNATURE_MEANINGS).openapi({ description: 'What the signature means (21 CFR 11.50)' }),
    snapshot_id: id.openapi({ description: 'The snapshot the signer was shown and signed' }),
    sha256: z.string().openapi({ description: "The snapshot's SHA-256", example: SHA }),
    auth_time: timestamp.openapi({
      description: 'When the signer authenticated again at the identity provider for this signature (at most five minutes before `at`)',
    }),
  })
  .openapi('Signature')

const ContributorSchema = z
  .object({
    id: z.string().openapi({ description: 'The user id', example: USER_ID }),
    did: z.array(z.enum(CONTRIBUTIONS)).openapi({
      description:
        'What they did: created (wrote the report), amended (started this revision), edited (summary, conclusion, notes, template_type), ' +
        "changed_variants (added or removed variants), changed_overrides (changed a variant's classification, criteria, interpretation or other overrides), sent_to_review",
    }),
  })
  .openapi('ReportContributor')

const StatusChangeSchema = z
  .object({ from: ReportStatusSchema, to: ReportStatusSchema, by: z.string(), at: timestamp, reason: z.string().optional() })
  .openapi('ReportStatusChange')

export const Report = z
  .object({
    id,
    project_id: id,
    order_id: id,
    order_accession: z.string(),
    status: ReportStatusSchema,
    template_type: TemplateTypeSchema,
    summary: z.string().optional(),
    notes: z.string().optional(),
    conclusion: z.string().optional(),
    author: UserRefSchema.openapi({ description: 'Who wrote it (created it, or started the amendment); never its signer' }),
    contributors: z.array(ContributorSchema).openapi({
      description:
        "Everyone who changed this revision's content or sent it to review, with what they did, the author first. None of them signs it (four eyes): " +
        "sign_off.blockers says so to each of them. An amendment's contributors are its own: those of the revision it replaces are not carried over.",
    }),
    revision: z.number().int().openapi({ description: '1, then n + 1 for each amendment' }),
    replaces: id.optional().openapi({ description: 'The signed revision this one amends' }),
    amendment: z
      .object({ kind: z.enum(AMENDMENT_KINDS), reason: z.string(), by: z.string(), at: timestamp })
      .optional()
      .openapi({ description: 'Why this revision was started' }),
    pending_revision: id.optional().openapi({ description: 'A signed report: the amendment in progress' }),
    superseded_by: id.optional().openapi({ description: 'A superseded report: the revision that replaced it' }),
    signatures: z.array(SignatureSchema),
    status_history: z.array(StatusChangeSchema),
    variant_count: z.number().int(),
    unclassified_count: z.number().int().openapi({ description: 'Included variants without an ACMG classification' }),
    comment_count: z.number().int(),
    open_review_comments: z.number().int().openapi({ description: 'Review comments not yet resolved; signing waits for none' }),
    snapshot_count: z.number().int(),
    latest_snapshot: z.object({ id, seq: z.number().int(), sha256: z.string(), taken_at: timestamp }).optional(),
    available_transitions: z.array(ReportStatusSchema).openapi({
      description:
        'The statuses this caller may move the report to now with POST /reports/{id}/transition; never signed (see sign_off). ' +
        'While the order is cancelled or entered in error, only cancelled and entered_in_error.',
    }),
    sign_off: z
      .object({
        url: z.string().openapi({ description: 'The browser page where a reviewer signs the report', example: `${PRINT}/signoff/` }),
        blockers: z.array(z.string()).openapi({
          description:
            'Why this caller may not sign it now (they changed it, they lack report.sign, a review comment is open, its order is cancelled or entered in error); empty when they may',
        }),
      })
      .nullable()
      .openapi({ description: 'In review: where and whether this caller may sign the report (signing is in a browser only); null otherwise' }),
    print_url: z.string().openapi({ description: 'The report as a printable HTML document', example: `${PRINT}/print` }),
    created: timestamp,
    updated: timestamp,
  })
  .openapi('Report', {
    example: {
      id: REPORT_ID,
      project_id: ORDER_ID,
      order_id: ORDER_ID,
      order_accession: 'ORD-2026-000123',
      status: 'in_review',
      template_type: 'germline_diagnostic',
      summary: 'A heterozygous de novo missense variant in SCN2A explains the epileptic encephalopathy.',
      conclusion: 'Positive: a pathogenic variant in SCN2A consistent with the phenotype.',
      author: { id: USER_ID, name: 'Ann Analyst', email: 'ann@lab.example' },
      contributors: [{ id: USER_ID, did: ['created', 'edited', 'changed_variants', 'changed_overrides', 'sent_to_review'] }],
      revision: 1,
      signatures: [],
      status_history: [{ from: 'draft', to: 'in_review', by: USER_ID, at: AT }],
      variant_count: 2,
      unclassified_count: 0,
      comment_count: 1,
      open_review_comments: 0,
      snapshot_count: 1,
      latest_snapshot: { id: SNAPSHOT_ID, seq: 1, sha256: SHA, taken_at: AT },
      available_transitions: ['draft', 'cancelled', 'entered_in_error'],
      sign_off: { url: `${PRINT}/signoff/`, blockers: [] },
      print_url: `${PRINT}/print`,
      created: AT,
      updated: AT,
    },
  })

export const ReportListQuery = z.object({
  order_id: z.string().max(128).optional().openapi({ description: 'An order, by id or accession' }),
  status: ReportStatusSchema.optional(),
  template_type: TemplateTypeSchema.optional(),
})

export const ReportTransition = z
  .object({
    to: ReportStatusSchema,
    reason: z.string().trim().min(1).max(2000).optional().openapi({ description: 'Required for cancelled and entered_in_error' }),
  })
  .strict()
  .openapi('ReportTransition', {
    description: 'signed is reached only through the browser sign-off (409 here, naming it); superseded only by signing an amendment',
    example: { to: 'in_review' },
  })

export const AmendReport = z
  .object({
    reason: z.string().trim().min(1).max(2000).openapi({ description: 'Why the signed report is amended (shown on the new revision)' }),
    kind: z.enum(AMENDMENT_KINDS).default('amended').openapi({ description: 'FHIR DiagnosticReport status of the new revision once signed' }),
  })
  .strict()
  .openapi('AmendReport', { example: { reason: 'Reclassification of the SCN2A variant after new segregation data', kind: 'amended' } })

export const ReportIdParam = z.object({ id: pathId('id', REPORT_ID) })

// ---------------------------------------------------------------------------------------------
// Report variants

/** ACMG criteria: each of the 28 once, with an optional ClinGen strength modifier; written back canonically (`pm2_supporting` → `PM2_Supporting`). */
const Criteria = z
  .array(z.string().max(40))
  .max(28)
  .transform((list, ctx) => {
    const parsed = parseCriteria(list)
    if (parsed.ok) return parsed.value.map((c) => c.code)
    for (const p of parsed.problems) ctx.addIssue({ code: 'custom', message: p.reason, path: [p.index] })
    return z.NEVER
  })
  .openapi({
    description:
      'ACMG/AMP 2015 criteria met (PVS1, PS1–PS4, PM1–PM6, PP1–PP5, BA1, BS1–BS4, BP1–BP7), each at most once, with an optional ClinGen SVI strength modifier (PM2_Supporting, PVS1_Strong, PP3_Moderate, BP4_Strong)',
    example: ['PS2', 'PM2_Supporting', 'PP3'],
  })

const overrideFields = {
  acmg_classification: ClassificationSchema,
  acmg_criteria: Criteria,
  transcript: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .openapi({ example: 'ENST00000375437.7', description: "The transcript to report, instead of the cache's" }),
  hgvs_c: z.string().trim().min(1).max(500).openapi({ example: 'c.2558G>A' }),
  hgvs_p: z.string().trim().min(1).max(500).openapi({ example: 'p.(Arg853Gln)' }),
  inheritance: InheritanceSchema,
  interpretation: text(
    MAX_TEXT,
    'De novo (confirmed by the trio), absent from gnomAD, a recurrent variant in SCN2A-related DEE.',
    'What the variant means for the patient',
  ),
  include_in_report: z.boolean().openapi({ description: 'Shown on the report (default true); an excluded variant stays on record' }),
}

export const AddReportVariant = z
  .object({
    variant_id: variantId,
    acmg_classification: overrideFields.acmg_classification.optional(),
    acmg_criteria: overrideFields.acmg_criteria.optional(),
    transcript: overrideFields.transcript.optional(),
    hgvs_c: overrideFields.hgvs_c.optional(),
    hgvs_p: overrideFields.hgvs_p.optional(),
    inheritance: overrideFields.inheritance.optional(),
    interpretation: overrideFields.interpretation.optional(),
    include_in_report: overrideFields.include_in_report.optional(),
  })
  .strict()
  .openapi('AddReportVariant', {
    example: { variant_id: VARIANT_ID, acmg_classification: 'pathogenic', acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'], inheritance: 'de_novo' },
  })

export const UpdateReportVariant = z
  .object({
    acmg_classification: overrideFields.acmg_classification.nullable().optional(),
    acmg_criteria: overrideFields.acmg_criteria.optional(),
    transcript: overrideFields.transcript.nullable().optional(),
    hgvs_c: overrideFields.hgvs_c.nullable().optional(),
    hgvs_p: overrideFields.hgvs_p.nullable().optional(),
    inheritance: overrideFields.inheritance.nullable().optional(),
    interpretation: overrideFields.interpretation.nullable().optional(),
    include_in_report: overrideFields.include_in_report.optional(),
  })
  .strict()
  .openapi('UpdateReportVariant', {
    description: "A draft's variant only (409 otherwise). The overrides sent change; null clears one (the cache's value shows again).",
    example: { acmg_classification: 'likely_pathogenic', acmg_criteria: ['PS2_Moderate', 'PM2_Supporting', 'PP3'] },
  })

const CallSchema = z.object({
  sample: z.string().openapi({ description: "The sample's name: its external id in the order" }),
  sample_id: z.string().nullable(),
  role: z.string().nullable().openapi({ description: "The sample's role in the order (proband, mother, father, …)" }),
  genotype: z
    .string()
    .nullable()
    .openapi({ example: '0/1', description: 'Null for a sample of the order the VCF has no column for (no call at all, unlike `./.`)' }),
  zygosity: z.string().nullable().openapi({ example: 'het', description: 'Null when the genotype is' }),
  depth: z.number().nullable(),
  genotype_quality: z.number().nullable(),
  allele_fraction: z.number().nullable(),
})

export const CachedVariantSchema = z
  .object({
    id: z.string(),
    assembly: z.string().nullable(),
    chrom: z.string(),
    pos: z.number().int(),
    end: z.number().int().nullable(),
    ref: z.string(),
    alt: z.string(),
    qual: z.number().nullable(),
    filter: z.array(z.string()),
    variant_type: z.string().nullable(),
    svtype: z.string().nullable(),
    genes: z.array(z.string()),
    consequence: z.string().nullable(),
    transcript: z.string().nullable(),
    hgvs_c: z.string().nullable(),
    hgvs_p: z.string().nullable(),
    calls: z.array(CallSchema),
  })
  .openapi('CachedVariant', { description: "The variant's own values, from the order's current variant cache" })

export const ReportVariant = z
  .object({
    report_id: id,
    variant_id: z.string(),
    in_cache: z.boolean().openapi({ description: "False when the order's current cache no longer has the variant (then `variant` is null)" }),
    variant: CachedVariantSchema.nullable(),
    acmg_classification: ClassificationSchema.nullable(),
    acmg_criteria: z.array(z.string()),
    criteria_suggest: z.object({ classification: ClassificationSchema, rule: z.string() }).openapi({
      description: "The classification the criteria support by ACMG/AMP 2015's combining rules (Table 5), for comparison with the one chosen",
    }),
    transcript: z.string().nullable(),
    hgvs_c: z.string().nullable(),
    hgvs_p: z.string().nullable(),
    inheritance: InheritanceSchema.nullable(),
    interpretation: z.string().nullable(),
    include_in_report: z.boolean(),
    added_by: z.string(),
    added_at: timestamp,
    updated: timestamp,
  })
  .openapi('ReportVariant', {
    description: 'The per-report overrides (null where not set: the report shows the cache value) with the variant as the cache has it now',
    example: {
      report_id: REPORT_ID,
      variant_id: VARIANT_ID,
      in_cache: true,
      variant: {
        id: VARIANT_ID,
        assembly: 'GRCh38',
        chrom: '2',
        pos: 165310406,
        end: 165310406,
        ref: 'G',
        alt: 'A',
        qual: 812.4,
        filter: ['PASS'],
        variant_type: 'snv',
        svtype: null,
        genes: ['SCN2A'],
        consequence: 'missense_variant',
        transcript: 'ENST00000375437.7',
        hgvs_c: 'c.2558G>A',
        hgvs_p: 'p.Arg853Gln',
        calls: [
          {
            sample: 'S-DEMO-1',
            sample_id: USER_ID,
            role: 'proband',
            genotype: '0/1',
            zygosity: 'het',
            depth: 41,
            genotype_quality: 99,
            allele_fraction: 0.49,
          },
        ],
      },
      acmg_classification: 'pathogenic',
      acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'],
      criteria_suggest: { classification: 'likely_pathogenic', rule: 'likely pathogenic (iii): 1 strong and ≥2 supporting' },
      transcript: null,
      hgvs_c: null,
      hgvs_p: null,
      inheritance: 'de_novo',
      interpretation: 'De novo, absent from gnomAD.',
      include_in_report: true,
      added_by: USER_ID,
      added_at: AT,
      updated: AT,
    },
  })

export const ReportVariantParams = z.object({
  id: pathId('id', REPORT_ID),
  variant_id: variantId.openapi({ param: { name: 'variant_id', in: 'path' } }),
})

// ---------------------------------------------------------------------------------------------
// Comments

export const CommentTypeSchema = z.enum(COMMENT_TYPES).openapi({ description: 'review (blocks signing while open), internal, general' })

export const CreateComment = z
  .object({ comment: text(MAX_COMMENT, 'Please add the segregation result for the father.', 'The text'), type: CommentTypeSchema })
  .strict()
  .openapi('CreateComment', { example: { comment: 'Please add the segregation result for the father.', type: 'review' } })

export const UpdateComment = z
  .object({
    comment: text(MAX_COMMENT, 'Please add the segregation result for both parents.', 'New text: its author only (comment.write)').optional(),
    resolved: z.boolean().optional().openapi({ description: 'true resolves the comment, false reopens it (comment.resolve: reviewers)' }),
  })
  .strict()
  .refine((b) => b.comment !== undefined || b.resolved !== undefined, 'send comment, resolved, or both')
  .openapi('UpdateComment', { example: { resolved: true } })

export const Comment = z
  .object({
    id,
    report_id: id,
    type: CommentTypeSchema,
    comment: z.string(),
    author: UserRefSchema,
    created: timestamp,
    updated: timestamp,
    edited_at: timestamp.optional(),
    resolved: z.object({ by: z.string(), at: timestamp }).nullable(),
    copied_from: id.optional().openapi({ description: 'On an amendment: the comment of the replaced revision it was copied from' }),
  })
  .openapi('Comment', {
    example: {
      id: COMMENT_ID,
      report_id: REPORT_ID,
      type: 'review',
      comment: 'Please add the segregation result for the father.',
      author: { id: REVIEWER_ID, name: 'Rita Reviewer', email: 'rita@lab.example' },
      created: AT,
      updated: AT,
      resolved: { by: REVIEWER_ID, at: AT },
    },
  })

export const CommentListQuery = z.object({ type: CommentTypeSchema.optional() })
export const CommentParams = z.object({ id: pathId('id', REPORT_ID), comment_id: pathId('comment_id', COMMENT_ID) })

// ---------------------------------------------------------------------------------------------
// Snapshots

export const Snapshot = z
  .object({
    id,
    report_id: id,
    seq: z.number().int().openapi({ description: '1, 2, 3… per report' }),
    sha256: z
      .string()
      .openapi({ description: 'SHA-256 (hex) of the canonical JSON of `content`, made canonical as `canonicalization` says', example: SHA }),
    canonicalization: z.enum(CANONICALIZATIONS).openapi({
      description:
        "How `content` was made canonical before it was hashed. `rfc8785`: RFC 8785, the JSON Canonicalization Scheme (every snapshot taken since snapshots record it): any JCS implementation re-derives `sha256`. `legacy`: the platform's own sorted-key JSON, of older snapshots: the same text as RFC 8785 unless the content has a lone surrogate, which it writes as a `\\udxxx` escape.",
      example: 'rfc8785',
    }),
    taken_by: z.string(),
    taken_at: timestamp,
    report_status: ReportStatusSchema.openapi({ description: "The report's status when it was taken" }),
    content: z.record(z.string(), z.unknown()).openapi({
      description:
        "The report, its order and people tested, its variants (with the cache values of that moment) and its comments (format platform.report-snapshot/2; format 2 also holds the template's title, methods and limitations as they read then, in `report.template`, so what is signed is what prints; format 1 snapshots print the template's text of today). Re-derive the hash: SHA-256 of the canonical JSON of this value (RFC 8785 when `canonicalization` is `rfc8785`).",
    }),
  })
  .openapi('Snapshot', {
    example: {
      id: SNAPSHOT_ID,
      report_id: REPORT_ID,
      seq: 1,
      sha256: SHA,
      canonicalization: 'rfc8785',
      taken_by: USER_ID,
      taken_at: AT,
      report_status: 'in_review',
      content: { format: 'platform.report-snapshot/2', report: { id: REPORT_ID, revision: 1 }, order: {}, variants: [], comments: [] },
    },
  })
