import { z } from '@hono/zod-openapi'
import { pathId } from '../../lib/openapi.js'
import {
  AFFECTED_STATUSES,
  EXTERNAL_ID_RE,
  HPO_RE,
  MAX_ORDER_SAMPLES,
  OUTCOMES,
  PRIORITIES,
  SAMPLE_ROLES,
  SAMPLE_TYPES,
  SEXES,
} from '../../domain/clinical/model.js'
import { ORDER_STATUSES } from '../../domain/clinical/order-status.js'
import { SAMPLESHEET_COLUMNS } from '../../domain/clinical/samplesheet.js'
import { TRANSITION_KINDS } from '../../domain/clinical/labflows.js'
import { PERMISSIONS } from '../../lib/auth/roles.js'

const SUBJECT_ID = '7d4f2a10-3c5b-4e8f-9a21-6b0c5d7e8f90'
const MOTHER_ID = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'
const FATHER_ID = '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e'
const SAMPLE_ID = '9c8b7a65-4321-4fed-8cba-0987654321ab'
const ORDER_ID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b'
const USER_ID = '0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f'
const AT = '2026-11-22T06:15:30.000Z'

const externalId = (example: string, what: string) =>
  z.string().trim().regex(EXTERNAL_ID_RE, '1 to 100 characters without whitespace').openapi({ description: what, example })
const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD')
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'not a calendar date')
const id = z.string().uuid()
const timestamp = z.string().openapi({ description: 'ISO 8601 UTC', example: AT })
const hpo = z.string().regex(HPO_RE, 'an HPO term id: HP: and 7 digits').openapi({ example: 'HP:0001250' })

export const SexSchema = z.enum(SEXES).openapi('Sex', { description: 'FHIR administrative gender' })
export const AffectedSchema = z.enum(AFFECTED_STATUSES).openapi('AffectedStatus')
export const SampleTypeSchema = z.enum(SAMPLE_TYPES).openapi('SampleType')
export const PrioritySchema = z.enum(PRIORITIES).openapi('Priority')
export const OutcomeSchema = z.enum(OUTCOMES).openapi('Outcome', { description: 'The diagnostic outcome (never a status)' })

// ---------------------------------------------------------------------------------------------
// Subjects

const subjectFields = {
  external_id: externalId('P-2026-0042', "The lab's identifier of the person (case or MRN), unique in the project"),
  display_name: z.string().trim().min(1).max(200).openapi({ example: 'Proband, Demo' }),
  sex: SexSchema,
  birth_date: isoDate.openapi({ example: '2019-04-02' }),
  affected_status: AffectedSchema,
  phenotypes: z.array(hpo).max(500).openapi({ description: 'HPO term ids' }),
  family_id: externalId('FAM-0042', 'The family (pedigree) the subject belongs to'),
  mother_id: id.openapi({ description: 'A subject of the same project, not male', example: MOTHER_ID }),
  father_id: id.openapi({ description: 'A subject of the same project, not female', example: FATHER_ID }),
}

export const CreateSubject = z
  .object({
    external_id: subjectFields.external_id,
    display_name: subjectFields.display_name.optional(),
    sex: subjectFields.sex.default('unknown'),
    birth_date: subjectFields.birth_date.optional(),
    affected_status: subjectFields.affected_status.default('unknown'),
    phenotypes: subjectFields.phenotypes.default([]),
    family_id: subjectFields.family_id.optional(),
    mother_id: subjectFields.mother_id.optional(),
    father_id: subjectFields.father_id.optional(),
  })
  .strict()
  .openapi('CreateSubject', {
    example: {
      external_id: 'P-2026-0042',
      display_name: 'Proband, Demo',
      sex: 'male',
      birth_date: '2019-04-02',
      affected_status: 'affected',
      phenotypes: ['HP:0001250', 'HP:0001263'],
      family_id: 'FAM-0042',
      mother_id: MOTHER_ID,
      father_id: FATHER_ID,
    },
  })

export const UpdateSubject = z
  .object({
    external_id: subjectFields.external_id.optional(),
    display_name: subjectFields.display_name.nullable().optional(),
    sex: subjectFields.sex.optional(),
    birth_date: subjectFields.birth_date.nullable().optional(),
    affected_status: subjectFields.affected_status.optional(),
    phenotypes: subjectFields.phenotypes.nullable().optional(),
    family_id: subjectFields.family_id.nullable().optional(),
    mother_id: subjectFields.mother_id.nullable().optional(),
    father_id: subjectFields.father_id.nullable().optional(),
  })
  .strict()
  .openapi('UpdateSubject', {
    description:
      "Only the fields sent change; null clears an optional field (phenotypes: null empties the list). external_id, sex, affected_status, family_id, mother_id and father_id are frozen while a signed order holds one of the subject's samples (409).",
    example: { affected_status: 'affected', phenotypes: ['HP:0001250'], birth_date: null },
  })

export const Subject = z
  .object({
    id,
    project_id: id,
    external_id: z.string(),
    display_name: z.string().optional(),
    sex: SexSchema,
    birth_date: z.string().optional(),
    affected_status: AffectedSchema,
    phenotypes: z.array(z.string()),
    family_id: z.string().optional(),
    mother_id: z.string().optional(),
    father_id: z.string().optional(),
    sample_count: z.number().int(),
    created: timestamp,
    updated: timestamp,
    created_by: z.string(),
  })
  .openapi('Subject', {
    example: {
      id: SUBJECT_ID,
      project_id: ORDER_ID,
      external_id: 'P-2026-0042',
      display_name: 'Proband, Demo',
      sex: 'male',
      birth_date: '2019-04-02',
      affected_status: 'affected',
      phenotypes: ['HP:0001250'],
      family_id: 'FAM-0042',
      mother_id: MOTHER_ID,
      father_id: FATHER_ID,
      sample_count: 1,
      created: AT,
      updated: AT,
      created_by: USER_ID,
    },
  })

export const SubjectListQuery = z.object({
  external_id: z.string().min(1).optional(),
  family_id: z.string().min(1).optional(),
  affected_status: AffectedSchema.optional(),
  name: z.string().trim().min(1).max(200).optional().openapi({
    description:
      'A part of the display name, whatever its case. No index serves it: each page scans at most 2,000 subjects beyond itself, so a page may be short (even empty) and still carry a next-page token.',
  }),
})

// ---------------------------------------------------------------------------------------------
// Samples

const gs = (example: string, description: string) => z.string().min(6).max(2000).openapi({ example, description })
const sampleFields = {
  external_id: externalId('S-2026-0042-B1', 'The tube or accession barcode, unique in the project; the sample name in samplesheets'),
  subject_id: id.openapi({ example: SUBJECT_ID }),
  type: SampleTypeSchema,
  collected_at: z.iso.datetime({ offset: true }).openapi({ example: '2026-11-20T09:30:00Z' }),
  received_at: z.iso.datetime({ offset: true }).openapi({ example: '2026-11-21T08:00:00Z' }),
  fastq: z
    .array(gs('gs://demo-lab-demo/fastq/S-2026-0042-B1_R1.fastq.gz', 'gs:// object in the project bucket'))
    .max(200)
    .openapi({ description: 'FASTQ files in the project bucket, read pairs as R1, R2, R1, R2… (.fastq.gz or .fq.gz)' }),
  bam: gs('gs://demo-lab-demo/bam/S-2026-0042-B1.bam', 'Aligned reads (.bam) in the project bucket'),
  cram: gs('gs://demo-lab-demo/cram/S-2026-0042-B1.cram', 'Aligned reads (.cram) in the project bucket'),
  vcf: gs('gs://demo-lab-demo/vcf/S-2026-0042-B1.vcf.gz', 'Variant calls (.vcf, .vcf.gz, .bcf) in the project bucket'),
}

export const CreateSample = z
  .object({
    external_id: sampleFields.external_id,
    subject_id: sampleFields.subject_id,
    type: sampleFields.type,
    collected_at: sampleFields.collected_at.optional(),
    received_at: sampleFields.received_at.optional(),
    fastq: sampleFields.fastq.default([]),
    bam: sampleFields.bam.optional(),
    cram: sampleFields.cram.optional(),
    vcf: sampleFields.vcf.optional(),
  })
  .strict()
  .openapi('CreateSample', {
    example: {
      external_id: 'S-2026-0042-B1',
      subject_id: SUBJECT_ID,
      type: 'blood',
      collected_at: '2026-11-20T09:30:00Z',
      fastq: ['gs://demo-lab-demo/fastq/S-2026-0042-B1_R1.fastq.gz', 'gs://demo-lab-demo/fastq/S-2026-0042-B1_R2.fastq.gz'],
    },
  })

export const UpdateSample = z
  .object({
    external_id: sampleFields.external_id.optional(),
    subject_id: sampleFields.subject_id.optional(),
    type: sampleFields.type.optional(),
    collected_at: sampleFields.collected_at.nullable().optional(),
    received_at: sampleFields.received_at.nullable().optional(),
    fastq: sampleFields.fastq.nullable().optional(),
    bam: sampleFields.bam.nullable().optional(),
    cram: sampleFields.cram.nullable().optional(),
    vcf: sampleFields.vcf.nullable().optional(),
  })
  .strict()
  .openapi('UpdateSample', {
    description:
      'Only the fields sent change; null clears an optional field (fastq: null empties the list). A sample in a signed order is frozen (409).',
    example: { received_at: '2026-11-21T08:00:00Z', vcf: 'gs://demo-lab-demo/vcf/S-2026-0042-B1.vcf.gz' },
  })

export const SampleOrderRef = z
  .object({ id, accession: z.string(), frozen: z.boolean().openapi({ description: 'The order is signed: the sample cannot change' }) })
  .openapi('SampleOrderRef')

const SAMPLE_EXAMPLE = {
  id: SAMPLE_ID,
  project_id: ORDER_ID,
  external_id: 'S-2026-0042-B1',
  subject_id: SUBJECT_ID,
  type: 'blood',
  collected_at: '2026-11-20T09:30:00.000Z',
  fastq: ['gs://demo-lab-demo/fastq/S-2026-0042-B1_R1.fastq.gz', 'gs://demo-lab-demo/fastq/S-2026-0042-B1_R2.fastq.gz'],
  orders: [{ id: ORDER_ID, accession: 'ORD-2026-000123', frozen: true }],
  frozen: true,
  created: AT,
  updated: AT,
  created_by: USER_ID,
}

export const Sample = z
  .object({
    id,
    project_id: id,
    external_id: z.string(),
    subject_id: id,
    type: SampleTypeSchema,
    collected_at: z.string().optional(),
    received_at: z.string().optional(),
    fastq: z.array(z.string()),
    bam: z.string().optional(),
    cram: z.string().optional(),
    vcf: z.string().optional(),
    orders: z.array(SampleOrderRef).openapi({ description: 'The orders holding the sample' }),
    frozen: z.boolean().openapi({ description: 'Held by a signed order: it cannot be changed or deleted' }),
    created: timestamp,
    updated: timestamp,
    created_by: z.string(),
  })
  .openapi('Sample', { example: SAMPLE_EXAMPLE })

export const SampleListQuery = z.object({
  external_id: z.string().min(1).optional(),
  subject_id: z.string().uuid().optional(),
  type: SampleTypeSchema.optional(),
})

const PedSexSchema = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal('other')])
export const SampleInfo = z
  .object({
    sample: z.string(),
    lane: z.number().int().nullable(),
    fastq_1: z.string().nullable(),
    fastq_2: z.string().nullable(),
    sex: PedSexSchema.openapi({ description: '1 male, 2 female, 0 unknown, other' }),
    phenotype: z.union([z.literal(0), z.literal(1), z.literal(2)]).openapi({ description: '1 unaffected, 2 affected, 0 unknown' }),
    paternal_id: z.string().openapi({ description: "The father's first sample, or 0" }),
    maternal_id: z.string().openapi({ description: "The mother's first sample, or 0" }),
    case_id: z.string().openapi({ description: "The subject's family_id, else its external_id" }),
    subject: z.object({ id, external_id: z.string(), display_name: z.string().optional(), sex: SexSchema, affected_status: AffectedSchema }),
    hpo_terms: z.array(z.string()),
    fastq: z.array(z.string()),
    bam: z.string().nullable(),
    cram: z.string().nullable(),
    vcf: z.string().nullable(),
  })
  .openapi('SampleInfo', {
    description: 'The sample as a pipeline consumes it: the samplesheet keys of its first FASTQ pair, its subject, HPO terms and data URIs',
    example: {
      sample: 'S-2026-0042-B1',
      lane: 1,
      fastq_1: 'gs://demo-lab-demo/fastq/S-2026-0042-B1_R1.fastq.gz',
      fastq_2: 'gs://demo-lab-demo/fastq/S-2026-0042-B1_R2.fastq.gz',
      sex: 1,
      phenotype: 2,
      paternal_id: 'S-2026-0043-B1',
      maternal_id: 'S-2026-0044-B1',
      case_id: 'FAM-0042',
      subject: { id: SUBJECT_ID, external_id: 'P-2026-0042', display_name: 'Proband, Demo', sex: 'male', affected_status: 'affected' },
      hpo_terms: ['HP:0001250'],
      fastq: ['gs://demo-lab-demo/fastq/S-2026-0042-B1_R1.fastq.gz', 'gs://demo-lab-demo/fastq/S-2026-0042-B1_R2.fastq.gz'],
      bam: null,
      cram: null,
      vcf: null,
    },
  })

// ---------------------------------------------------------------------------------------------
// Orders

export const OrderStatusSchema = z.enum(ORDER_STATUSES).openapi('OrderStatus', {
  description:
    'draft, signed (requisition signed), in_progress, in_review, on_hold (back to the status it left), completed, cancelled, entered_in_error',
})
export const RoleSchema = z.enum(SAMPLE_ROLES).openapi('SampleRole')
const Requester = z
  .object({ name: z.string().trim().min(1).max(200), organization: z.string().trim().min(1).max(200).optional() })
  .openapi('Requester')

const orderFields = {
  priority: PrioritySchema,
  test_code: z.string().trim().min(1).max(100).openapi({ description: 'What is ordered: a test or panel code', example: 'WGS-trio' }),
  indication: z
    .string()
    .trim()
    .min(1)
    .max(5000)
    .openapi({ description: 'The clinical question', example: 'Global developmental delay and seizures' }),
  requester: Requester,
  assignee: id.openapi({ description: 'A user of the project', example: USER_ID }),
  due_date: isoDate.openapi({ example: '2026-12-15' }),
  notes: z.string().max(10000),
  labflow_id: id.openapi({ description: 'The labflow to follow (default: the platform germline flow); its latest version is pinned at signing' }),
}

export const CreateOrder = z
  .object({
    priority: orderFields.priority.default('routine'),
    test_code: orderFields.test_code,
    indication: orderFields.indication.optional(),
    requester: orderFields.requester.optional(),
    assignee: orderFields.assignee.optional(),
    due_date: orderFields.due_date.optional(),
    notes: orderFields.notes.optional(),
    labflow_id: orderFields.labflow_id.optional(),
    samples: z
      .array(z.object({ sample_id: id, role: RoleSchema }))
      .max(MAX_ORDER_SAMPLES)
      .default([])
      .openapi({ description: 'Samples with their roles (they can also be added one by one while the order is a draft)' }),
  })
  .strict()
  .openapi('CreateOrder', {
    example: {
      priority: 'urgent',
      test_code: 'WGS-trio',
      indication: 'Global developmental delay and seizures',
      requester: { name: 'Dr. Ada Lovelace', organization: 'Children’s Hospital' },
      due_date: '2026-12-15',
      samples: [{ sample_id: SAMPLE_ID, role: 'proband' }],
    },
  })

export const UpdateOrder = z
  .object({
    priority: orderFields.priority.optional(),
    test_code: orderFields.test_code.optional(),
    indication: orderFields.indication.nullable().optional(),
    requester: orderFields.requester.nullable().optional(),
    assignee: orderFields.assignee.nullable().optional(),
    due_date: orderFields.due_date.nullable().optional(),
    notes: orderFields.notes.nullable().optional(),
    labflow_id: orderFields.labflow_id.nullable().optional(),
    outcome: OutcomeSchema.optional().openapi({ description: 'In review or completed, by a reviewer: the diagnostic outcome (never a status)' }),
  })
  .strict()
  .openapi('UpdateOrder', {
    description:
      'The fields sent replace the stored ones (null clears an optional one). A draft takes any field; once signed only assignee and due_date change (and outcome in review or once completed); fields sent unchanged are accepted.',
    example: { assignee: USER_ID, due_date: '2026-12-20' },
  })

export const OrderSampleEntry = z.object({ sample_id: id, role: RoleSchema, added_at: timestamp, added_by: z.string() }).openapi('OrderSampleEntry')
export const StatusChangeSchema = z
  .object({ from: OrderStatusSchema, to: OrderStatusSchema, by: z.string(), at: timestamp, reason: z.string().optional() })
  .openapi('OrderStatusChange')
export const OrderRun = z.object({ id, name: z.string(), status: z.string() }).openapi('OrderRun')

export const Order = z
  .object({
    id,
    project_id: id,
    accession: z.string().openapi({ description: 'ORD-<year>-<6 digits>, unique in the project, never reused' }),
    status: OrderStatusSchema,
    held_from: OrderStatusSchema.optional().openapi({ description: 'On hold: the status it left, the one it resumes to' }),
    priority: PrioritySchema,
    test_code: z.string(),
    indication: z.string().optional(),
    requester: Requester.optional(),
    assignee: z.string().optional(),
    due_date: z.string().optional(),
    notes: z.string().optional(),
    outcome: OutcomeSchema,
    labflow: z.object({ id, version: z.number().int().optional().openapi({ description: 'Pinned when the order is signed' }) }),
    labflow_stage: z.string().optional().openapi({ description: "The order's current labflow stage, from signing on" }),
    signed: z.object({ by: z.string(), at: timestamp }).optional(),
    samples: z.array(OrderSampleEntry),
    status_history: z.array(StatusChangeSchema),
    available_transitions: z.array(OrderStatusSchema).openapi({ description: 'The statuses this caller may move the order to now' }),
    runs: z.array(OrderRun).optional().openapi({ description: "GET /orders/{id}: the order's runs, newest first (at most 20)" }),
    created: timestamp,
    updated: timestamp,
    created_by: z.string(),
  })
  .openapi('Order', {
    example: {
      id: ORDER_ID,
      project_id: ORDER_ID,
      accession: 'ORD-2026-000123',
      status: 'signed',
      priority: 'urgent',
      test_code: 'WGS-trio',
      indication: 'Global developmental delay and seizures',
      outcome: 'pending',
      labflow: { id: '3b1f6c0e-8f0a-5d2e-9c4b-7a6d5e4f3a21', version: 1 },
      labflow_stage: 'accessioning',
      signed: { by: USER_ID, at: AT },
      samples: [{ sample_id: SAMPLE_ID, role: 'proband', added_at: AT, added_by: USER_ID }],
      status_history: [{ from: 'draft', to: 'signed', by: USER_ID, at: AT }],
      available_transitions: ['in_progress', 'on_hold', 'cancelled', 'entered_in_error'],
      runs: [],
      created: AT,
      updated: AT,
      created_by: USER_ID,
    },
  })

export const OrderListQuery = z.object({
  status: OrderStatusSchema.optional(),
  priority: PrioritySchema.optional(),
  assignee: z.string().uuid().optional(),
})

export const TransitionBody = z
  .object({
    to: OrderStatusSchema,
    reason: z.string().trim().min(1).max(2000).optional().openapi({ description: 'Required for on_hold, cancelled and entered_in_error' }),
  })
  .strict()
  .openapi('OrderTransition', { example: { to: 'on_hold', reason: 'awaiting a new blood sample from the mother' } })

export const AddOrderSample = z
  .object({ role: RoleSchema })
  .strict()
  .openapi('AddOrderSample', { example: { role: 'proband' } })
export const OrderSample = Sample.extend({ role: RoleSchema }).openapi('OrderSample', { example: { ...SAMPLE_EXAMPLE, role: 'proband' } })

export const OrderSampleParams = z.object({ id: pathId('id', 'ORD-2026-000123'), sample_id: pathId('sample_id') })
export const OrderIdParam = z.object({ id: pathId('id', 'ORD-2026-000123') })

export const SamplesheetColumns = SAMPLESHEET_COLUMNS.join(',')

// ---------------------------------------------------------------------------------------------
// Labflows

const key = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'lowercase letters, digits and _, starting with a letter')
export const LabflowStage = z
  .object({
    key,
    name: z.string().trim().min(1).max(200),
    order: z.number().int().min(0).max(1000),
    assignee_roles: z.array(z.string().min(1).max(50)).max(20).default([]),
  })
  .openapi('LabflowStage')
export const LabflowTransition = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9_-]{0,99}$/, 'lowercase letters, digits, _ and -'),
    kind: z.enum(TRANSITION_KINDS),
    from: key,
    to: key.nullable().openapi({ description: 'null for remove: the item leaves the flow' }),
    permission: z.enum(PERMISSIONS as [string, ...string[]]).openapi({ description: 'The permission a caller needs to take it (e.g. labflow.move)' }),
    requires_reason: z.boolean().default(false),
  })
  .openapi('LabflowTransition')

export const Labflow = z
  .object({
    id,
    key: z.string(),
    name: z.string(),
    description: z.string().optional(),
    version: z.number().int(),
    latest_version: z.number().int(),
    scope: z.enum(['platform', 'project']),
    stages: z.array(LabflowStage),
    transitions: z.array(LabflowTransition),
    created: timestamp,
    created_by: z.string(),
  })
  .openapi('Labflow')

const labflowExample = {
  key: 'exome',
  name: 'Exome sequencing',
  stages: [
    { key: 'accessioning', name: 'Accessioning', order: 1, assignee_roles: ['lab'] },
    { key: 'capture', name: 'Exome capture', order: 2, assignee_roles: ['lab'] },
    { key: 'delivered', name: 'Delivered', order: 3, assignee_roles: ['analyst'] },
  ],
  transitions: [
    { id: 'advance-accessioning', kind: 'advance', from: 'accessioning', to: 'capture', permission: 'labflow.move', requires_reason: false },
    { id: 'repeat-capture', kind: 'repeat', from: 'capture', to: 'capture', permission: 'labflow.move', requires_reason: true },
    { id: 'complete-capture', kind: 'complete', from: 'capture', to: 'delivered', permission: 'labflow.move', requires_reason: false },
  ],
}

export const CreateLabflow = z
  .object({
    key,
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).optional(),
    stages: z.array(LabflowStage).min(1).max(100),
    transitions: z.array(LabflowTransition).max(500),
  })
  .strict()
  .openapi('CreateLabflow', { example: labflowExample })

export const NewLabflowVersion = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(5000).optional(),
    stages: z.array(LabflowStage).min(1).max(100),
    transitions: z.array(LabflowTransition).max(500),
  })
  .strict()
  .openapi('NewLabflowVersion', { example: { stages: labflowExample.stages, transitions: labflowExample.transitions } })

export const LabflowVersionQuery = z.object({
  version: z.coerce.number().int().min(1).optional().openapi({ description: 'A version (default: the latest)' }),
})

const HistoryEntry = z
  .object({ transition: z.string(), from: z.string(), to: z.string().nullable(), by: z.string(), at: timestamp, reason: z.string().optional() })
  .openapi('LabflowHistoryEntry')

export const OrderLabflow = z
  .object({
    order_id: id,
    accession: z.string(),
    labflow: z.object({ id, key: z.string(), name: z.string(), version: z.number().int().nullable().openapi({ description: 'null until signed' }) }),
    status: z.enum(['not_started', 'active', 'completed', 'removed']),
    stage: z.object({ key: z.string(), name: z.string() }).nullable(),
    assignee: z.string().nullable(),
    history: z.array(HistoryEntry),
    available_transitions: z.array(LabflowTransition).openapi({ description: 'The transitions this caller may take now' }),
  })
  .openapi('OrderLabflow', {
    example: {
      order_id: ORDER_ID,
      accession: 'ORD-2026-000123',
      labflow: { id: '3b1f6c0e-8f0a-5d2e-9c4b-7a6d5e4f3a21', key: 'germline', name: 'Germline sequencing', version: 1 },
      status: 'active',
      stage: { key: 'extraction', name: 'DNA extraction' },
      assignee: USER_ID,
      history: [
        { transition: 'start', from: 'accessioning', to: 'accessioning', by: USER_ID, at: AT },
        { transition: 'advance-accessioning', from: 'accessioning', to: 'extraction', by: USER_ID, at: AT },
      ],
      available_transitions: [
        { id: 'advance-extraction', kind: 'advance', from: 'extraction', to: 'library_prep', permission: 'labflow.move', requires_reason: false },
        { id: 'repeat-extraction', kind: 'repeat', from: 'extraction', to: 'extraction', permission: 'labflow.move', requires_reason: true },
      ],
    },
  })

export const LabflowMove = z
  .object({
    transition: z.string().min(1).max(100),
    reason: z.string().trim().min(1).max(2000).optional(),
    assignee: id.nullable().optional().openapi({ description: 'Who takes the item at its next stage (null: nobody)' }),
  })
  .strict()
  .openapi('LabflowMove', { example: { transition: 'repeat-extraction', reason: 'low DNA yield (12 ng)', assignee: USER_ID } })

// ---------------------------------------------------------------------------------------------
// Variants (the catalogue, read-only: ingestion is its only writer)

const VARIANT_ID = 'ga4gh:VA.Oop4kjdTtKcg1kiZjIJAAR3bp7qi4aNT'
/** A variant id in a path: a GA4GH VRS Allele id, or the platform's digest where VRS cannot say. */
const VARIANT_ID_RE = /^(ga4gh:VA|platform:VA|platform:SV)\.[A-Za-z0-9_-]{32}$/
export const VariantIdParam = z.object({
  id: z
    .string()
    .regex(VARIANT_ID_RE, 'a variant id: ga4gh:VA.<32 characters>, or platform:VA.… / platform:SV.…')
    .openapi({ param: { name: 'id', in: 'path' }, example: VARIANT_ID }),
})

const variantCore = {
  id: z.string().openapi({ description: 'GA4GH VRS Allele id (or platform:VA./platform:SV. digest)', example: VARIANT_ID }),
  id_type: z.enum(['vrs', 'platform']),
  assembly: z.enum(['GRCh37', 'GRCh38']).nullable(),
  chrom: z.string().openapi({ example: '2' }),
  pos: z.number().int().openapi({ example: 165310406 }),
  end: z.number().int(),
  ref: z.string().openapi({ example: 'G' }),
  alt: z.string().openapi({ example: 'A' }),
  variant_type: z.enum(['snv', 'mnv', 'insertion', 'deletion', 'delins', 'structural', 'breakend']),
  svtype: z.string().nullable(),
  genes: z.array(z.string()).openapi({ example: ['SCN2A'] }),
  consequence: z.string().nullable().openapi({ example: 'missense_variant' }),
  transcript: z.string().nullable(),
  hgvs_c: z.string().nullable().openapi({ example: 'c.1642G>A' }),
  hgvs_p: z.string().nullable().openapi({ example: 'p.Glu548Lys' }),
}

export const ObservationCounts = z
  .object({
    orders: z.number().int().openapi({ description: 'Orders whose ready cache has a sample carrying the variant' }),
    samples: z.number().int().openapi({ description: 'Distinct samples carrying it, over those orders' }),
    homozygous: z.number().int().openapi({ description: 'Of those, homozygous or hemizygous' }),
  })
  .openapi('ObservationCounts', { description: "The project's local observation counts (as Scout's loqusdb)" })

export const CatalogueVariant = z
  .object({
    ...variantCore,
    observations: ObservationCounts,
    observed_in: z
      .array(z.object({ order_id: z.string(), accession: z.string(), samples: z.array(z.string()), homozygous: z.array(z.string()) }))
      .optional()
      .openapi({ description: 'The orders observing it, with their carrier samples (the single variant only)' }),
  })
  .openapi('CatalogueVariant', {
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
      svtype: null,
      genes: ['SCN2A'],
      consequence: 'missense_variant',
      transcript: 'ENST00000283256.10',
      hgvs_c: 'c.1642G>A',
      hgvs_p: 'p.Glu548Lys',
      observations: { orders: 1, samples: 1, homozygous: 0 },
    },
  })

export const CatalogueQuery = z.object({
  gene: z.string().trim().min(1).max(100).optional().openapi({ description: 'A gene symbol (or gene id)', example: 'BRCA1' }),
  region: z.string().max(200).optional().openapi({ description: 'chr17:43044295-43125483, or a whole contig', example: 'chr17:43044295-43125483' }),
})

export const SampleVariantQuery = z.object({
  region: z.string().max(200).optional().openapi({ description: 'chr17:43044295-43125483, or a whole contig', example: 'chr2' }),
})

export const SampleVariant = z
  .object({
    ...variantCore,
    qual: z.number().nullable(),
    filter: z.array(z.string()),
    vcf_ids: z.array(z.string()),
    svlen: z.number().nullable(),
    mate: z.object({ chrom: z.string(), pos: z.number().int() }).nullable(),
    impact: z.string().nullable(),
    alt_index: z.number().int(),
    alt_count: z.number().int(),
    source_line: z.number().int(),
    build_id: z.string(),
    order_id: z.string(),
    order_accession: z.string(),
    call: z
      .object({
        sample_id: z.string(),
        sample: z.string(),
        role: z.string(),
        vcf_sample: z.string(),
        genotype: z.string(),
        source_genotype: z.string().nullable(),
        zygosity: z.enum(['het', 'hom_alt', 'hemi', 'hom_ref', 'no_call']),
        depth: z.number().nullable(),
        genotype_quality: z.number().nullable(),
        allele_fraction: z.number().nullable(),
        allele_depths: z.array(z.number()).nullable(),
      })
      .openapi({ description: "The sample's call (carrying the ALT) in that order's cache" }),
  })
  .openapi('SampleVariant')
