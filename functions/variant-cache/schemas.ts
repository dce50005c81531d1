import { z } from '@hono/zod-openapi'
import { pathId } from '../../lib/openapi.js'
import { INGESTION_STATUSES, INGESTION_STEPS } from '../../domain/variants/ingestions.js'
import { ZYGOSITIES } from '../../domain/variants/records.js'

/**
 * The variant-cache service's schemas: an order's variants with every sample's call under its role,
 * the cache's status, and its ingestions. Shared with the clinical-data service's catalogue routes
 * only through the domain (a service never imports another), so the variant shapes are declared
 * where they are served.
 */
const ORDER_ID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b'
const INGESTION_ID = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const RUN_ID = '8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d'
const SAMPLE_ID = '9c8b7a65-4321-4fed-8cba-0987654321ab'
const VARIANT_ID = 'ga4gh:VA.Oop4kjdTtKcg1kiZjIJAAR3bp7qi4aNT'
const AT = '2026-11-22T06:15:30.000Z'
const timestamp = z.string().openapi({ description: 'ISO 8601 UTC', example: AT })

/** A variant id in a path: a GA4GH VRS Allele id, or the platform's digest where VRS cannot say. */
export const VARIANT_ID_RE = /^(ga4gh:VA|platform:VA|platform:SV)\.[A-Za-z0-9_-]{32}$/
export const variantIdParam = (name: string) =>
  z
    .string()
    .regex(VARIANT_ID_RE, 'a variant id: ga4gh:VA.<32 characters>, or platform:VA.… / platform:SV.…')
    .openapi({ param: { name, in: 'path' }, example: VARIANT_ID })

export const OrderParams = z.object({ order_id: pathId('order_id', 'ORD-2026-000123') })
export const OrderVariantParams = OrderParams.extend({ variant_id: variantIdParam('variant_id') })
export const OrderIngestionParams = OrderParams.extend({ ingestion_id: pathId('ingestion_id', INGESTION_ID) })

export const ZygositySchema = z.enum(ZYGOSITIES).openapi('Zygosity', {
  description: 'het, hom_alt, hemi (one ALT copy on a male X or Y outside the PARs, or a haploid call), hom_ref, no_call',
})

const Annotation = z
  .object({
    allele: z.string(),
    consequences: z.array(z.string()),
    impact: z.string().nullable(),
    gene: z.string().nullable(),
    gene_id: z.string().nullable(),
    feature_type: z.string().nullable(),
    transcript: z.string().nullable(),
    biotype: z.string().nullable(),
    hgvs_c: z.string().nullable(),
    hgvs_p: z.string().nullable(),
    canonical: z.boolean().openapi({ description: "VEP's CANONICAL=YES, a MANE Select transcript, or VEP's PICK" }),
    allele_num: z.number().int().nullable(),
  })
  .openapi('TranscriptAnnotation', { description: 'One VEP CSQ or snpEff ANN entry of the ALT' })

export const Call = z
  .object({
    sample_id: z.string(),
    sample: z.string().openapi({ description: "The sample's external id", example: 'S-DEMO-PROBAND' }),
    role: z.string().openapi({ example: 'proband' }),
    vcf_sample: z.string().nullable().openapi({ description: 'The VCF column matched to the sample; null when the VCF has none' }),
    in_vcf: z.boolean().openapi({ description: 'False for an order sample the VCF did not have (every other field is then null)' }),
    genotype: z.string().nullable().openapi({ description: 'For this ALT (multi-allelic records split)', example: '0/1' }),
    source_genotype: z.string().nullable().openapi({ description: 'As the VCF wrote it', example: '1/2' }),
    zygosity: ZygositySchema.nullable(),
    depth: z.number().nullable(),
    genotype_quality: z.number().nullable(),
    allele_fraction: z.number().nullable(),
    allele_depths: z.array(z.number()).nullable().openapi({ description: 'Reads of the reference and of this ALT' }),
  })
  .openapi('Call')

const VariantCore = {
  id: z.string().openapi({ description: 'GA4GH VRS Allele id (or platform:VA./platform:SV. digest)', example: VARIANT_ID }),
  id_type: z.enum(['vrs', 'platform']),
  assembly: z.enum(['GRCh37', 'GRCh38']).nullable(),
  chrom: z.string().openapi({ example: '2' }),
  pos: z.number().int().openapi({ example: 165310406 }),
  end: z.number().int(),
  ref: z.string().openapi({ example: 'G' }),
  alt: z.string().openapi({ example: 'A' }),
  variant_type: z.enum(['snv', 'mnv', 'insertion', 'deletion', 'delins', 'structural', 'breakend']),
  qual: z.number().nullable(),
  filter: z.array(z.string()).openapi({ example: ['PASS'] }),
  vcf_ids: z.array(z.string()),
  svtype: z.string().nullable(),
  svlen: z.number().nullable(),
  mate: z.object({ chrom: z.string(), pos: z.number().int() }).nullable(),
  genes: z.array(z.string()).openapi({ example: ['SCN2A'] }),
  consequence: z.string().nullable().openapi({ description: "The most severe consequence (VEP's order)", example: 'missense_variant' }),
  impact: z.string().nullable(),
  transcript: z.string().nullable(),
  hgvs_c: z.string().nullable().openapi({ example: 'c.1642G>A' }),
  hgvs_p: z.string().nullable().openapi({ example: 'p.Glu548Lys' }),
  alt_index: z.number().int().openapi({ description: 'This ALT in its VCF record (1-based)' }),
  alt_count: z.number().int(),
  source_line: z.number().int().openapi({ description: 'The VCF line it came from' }),
}

export const BuildSample = z
  .object({ sample_id: z.string(), sample: z.string(), role: z.string(), vcf_sample: z.string().nullable() })
  .openapi('OrderRole', { description: 'An order sample with its role, and the VCF column matched to it (null when the VCF has none)' })

export const OrderVariant = z
  .object({
    ...VariantCore,
    order_id: z.string(),
    calls: z.array(Call).openapi({ description: "Every order sample's call, proband first" }),
    roles: z.array(BuildSample),
    annotations: z.array(Annotation).openapi({ description: 'Every transcript entry (empty in a list: see the single variant)' }),
  })
  .openapi('OrderVariant', {
    example: {
      id: VARIANT_ID,
      id_type: 'vrs',
      assembly: 'GRCh38',
      chrom: '2',
      pos: 165310406,
      end: 165310406,
      ref: 'G',
      alt: 'A',
      variant_type: 'snv',
      qual: 812.6,
      filter: ['PASS'],
      vcf_ids: [],
      svtype: null,
      svlen: null,
      mate: null,
      genes: ['SCN2A'],
      consequence: 'missense_variant',
      impact: 'MODERATE',
      transcript: 'ENST00000283256.10',
      hgvs_c: 'c.1642G>A',
      hgvs_p: 'p.Glu548Lys',
      alt_index: 1,
      alt_count: 1,
      source_line: 161,
      order_id: ORDER_ID,
      calls: [
        {
          sample_id: SAMPLE_ID,
          sample: 'S-DEMO-PROBAND',
          role: 'proband',
          vcf_sample: 'S-DEMO-PROBAND',
          in_vcf: true,
          genotype: '0/1',
          source_genotype: '0/1',
          zygosity: 'het',
          depth: 32,
          genotype_quality: 99,
          allele_fraction: 0.4688,
          allele_depths: [17, 15],
        },
      ],
      roles: [{ sample_id: SAMPLE_ID, sample: 'S-DEMO-PROBAND', role: 'proband', vcf_sample: 'S-DEMO-PROBAND' }],
      annotations: [],
    },
  })

export const VariantListQuery = z.object({
  gene: z.string().trim().min(1).max(100).optional().openapi({ description: 'A gene symbol (or gene id) the variant affects', example: 'SCN2A' }),
  region: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: 'chr17:43044295-43125483, 17:43044295-43125483 or a whole contig (17)', example: 'chr2:165000000-166000000' }),
  consequence: z
    .string()
    .max(500)
    .optional()
    .openapi({ description: 'Most severe consequence, one SO term or several comma-separated', example: 'missense_variant,stop_gained' }),
  min_qual: z.coerce.number().min(0).optional().openapi({ description: 'QUAL at least this' }),
  filter: z.enum(['PASS']).optional().openapi({ description: 'PASS: only variants whose FILTER is PASS' }),
  zygosity: z.string().max(300).optional().openapi({
    description:
      'Per role, comma-separated: role:zygosity (or role=zygosity), several zygosities joined by |; `alt` is het|hom_alt|hemi. Roles: proband, mother, father, tumor, normal',
    example: 'proband:het,mother:hom_ref,father:hom_ref',
  }),
})

const Step = z.object({
  name: z.enum(INGESTION_STEPS),
  status: z.enum(['pending', 'running', 'done']),
  started: timestamp.optional(),
  finished: timestamp.optional(),
  progress: z.number().int().optional().openapi({ description: 'Variants written or observations updated so far' }),
})

const SampleMatching = z
  .object({
    matched: z.array(
      z.object({
        vcf_sample: z.string(),
        sample_id: z.string(),
        sample: z.string(),
        role: z.string(),
        matched_by: z.enum(['sample_external_id', 'subject_external_id']),
      }),
    ),
    unmatched_vcf_samples: z
      .array(z.string())
      .openapi({ description: 'VCF columns that match no order sample: their calls are attributed to nobody' }),
    missing_order_samples: z.array(z.object({ sample_id: z.string(), sample: z.string(), role: z.string() })),
    ambiguous: z.array(z.object({ vcf_sample: z.string(), sample_ids: z.array(z.string()) })),
  })
  .openapi('SampleMatching')

export const Ingestion = z
  .object({
    id: z.string(),
    order_id: z.string(),
    order_accession: z.string(),
    status: z.enum(INGESTION_STATUSES),
    status_reason: z.string().optional(),
    source_uri: z.string(),
    run_id: z.string().nullable(),
    trigger: z.enum(['run', 'request']),
    requested_by: z.string(),
    created: timestamp,
    started: timestamp.optional(),
    finished: timestamp.optional(),
    variant_count: z.number().int().optional(),
    record_count: z.number().int().optional(),
    counts: z
      .object({
        records: z.number().int(),
        variants: z.number().int(),
        vrs_ids: z.number().int(),
        platform_ids: z.number().int(),
        records_without_variants: z.number().int(),
      })
      .optional(),
    assembly: z.string().nullable().optional(),
    assembly_reason: z.string().optional(),
    samples: SampleMatching.optional(),
    sample_mismatch: z.string().nullable().optional().openapi({ description: 'Every sample that did not match, in one line; null when all did' }),
    error: z
      .object({
        step: z.enum(INGESTION_STEPS),
        reason: z.string(),
        line: z
          .number()
          .int()
          .optional()
          .openapi({ description: 'The line of the (decompressed) VCF whose record is malformed, over a limit, or refused by the database' }),
      })
      .optional()
      .openapi({
        description:
          'Why a failed ingestion failed: a failure no retry could pass (a malformed or oversized record, a missing file, no sample matched, a write the database refuses as invalid)',
      }),
    replaced_build_id: z.string().nullable().optional(),
    steps: z.array(Step),
  })
  .openapi('Ingestion', {
    example: {
      id: INGESTION_ID,
      order_id: ORDER_ID,
      order_accession: 'ORD-2026-000123',
      status: 'failed',
      source_uri: 'gs://demo-lab-demo/runs/8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d/trio.vcf.gz',
      run_id: RUN_ID,
      trigger: 'run',
      requested_by: '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f',
      created: AT,
      started: AT,
      finished: AT,
      error: { step: 'validate', reason: 'sample S-DEMO-MOTHER: GT 0/2 names allele 2 but the record has 1 ALT allele', line: 57 },
      steps: [{ name: 'validate', status: 'running', started: AT }],
    },
  })

export const CacheStatus = z
  .object({
    order_id: z.string(),
    order_accession: z.string(),
    status: z.enum(['none', ...INGESTION_STATUSES]).openapi({ description: "The order's newest ingestion's status; none before any" }),
    ingestion: Ingestion.nullable().openapi({ description: 'The newest ingestion' }),
    active: z
      .object({
        ingestion_id: z.string(),
        source_uri: z.string(),
        run_id: z.string().nullable(),
        variant_count: z.number().int(),
        assembly: z.string().nullable(),
        ready_at: timestamp,
        samples: z.array(BuildSample),
      })
      .nullable()
      .openapi({ description: 'The cache readers see now (the newest ready ingestion), or null' }),
  })
  .openapi('CacheStatus')

export const CreateIngestion = z
  .object({
    run_id: z.string().uuid().optional().openapi({ description: 'A succeeded run of the order: its VCF output', example: RUN_ID }),
    source_uri: z
      .string()
      .max(1200)
      .optional()
      .openapi({ description: 'A VCF (.vcf, .vcf.gz, .vcf.bgz) in the project bucket', example: 'gs://demo-lab-demo/vcf/trio.vcf.gz' }),
  })
  .strict()
  .openapi('CreateIngestion', { description: 'Exactly one of run_id and source_uri' })
