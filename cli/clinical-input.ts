/**
 * The flags of `subjects create|edit`, `samples create|edit` and `orders create|edit`, and the
 * request bodies made of them. Create and edit share their flags, so that a field is named the
 * same way in both; edit adds `--clear <field>` (null in the PATCH or PUT: the field is removed)
 * and `--external-id` (a rename). References to other records (mother, subject, sample) are
 * resolved by the command before the body is made.
 */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { affectedStatusValues, outcomeValues, priorityValues, sampleRoleValues, sampleTypeValues, sexValues } from './api/clinical.js'
import type { CreateOrder, CreateSample, CreateSubject, SampleRole, UpdateOrder, UpdateSample, UpdateSubject } from './client.js'
import { usageError } from './errors.js'

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** A calendar date as the API takes it. */
export function isoDate(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw new InvalidArgumentError('expected a date YYYY-MM-DD')
  return value
}

/** A time with its offset (2026-11-20T09:30:00Z), or a date, taken as midnight UTC. */
export function isoTime(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${isoDate(value)}T00:00:00Z`
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidArgumentError('expected a date (2026-11-20) or a time with its offset (2026-11-20T09:30:00Z)')
  return value
}

/** Drops the keys whose value is undefined: what was not given is not sent. */
function given<T extends object>(body: T): T {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as T
}

/** The fields named by --clear, each null. */
const cleared = (fields: readonly string[] | undefined) => Object.fromEntries((fields ?? []).map((f) => [f, null]))

function clearOption(command: Command, fields: readonly string[]) {
  return command.addOption(
    new Option('--clear <field>', 'remove a field (repeat for more); phenotypes or fastq: empty the list').choices(fields).argParser(collect),
  )
}

function noChange(body: object, what: string): void {
  if (!Object.keys(body).length) throw usageError(`nothing to change: give the ${what} fields to set (see --help)`)
}

// Subjects

export interface SubjectOptions {
  externalId?: string
  name?: string
  sex?: CreateSubject['sex']
  birthDate?: string
  affectedStatus?: CreateSubject['affected_status']
  phenotype?: string[]
  family?: string
  mother?: string
  father?: string
  clear?: string[]
}

/** The subject's parents, by id, once the command has resolved --mother and --father. */
export interface Parents {
  mother_id?: string
  father_id?: string
}

export const SUBJECT_CLEARABLE = ['name', 'birth-date', 'phenotypes', 'family', 'mother', 'father'] as const
const SUBJECT_FIELD: Record<(typeof SUBJECT_CLEARABLE)[number], keyof UpdateSubject> = {
  name: 'display_name',
  'birth-date': 'birth_date',
  phenotypes: 'phenotypes',
  family: 'family_id',
  mother: 'mother_id',
  father: 'father_id',
}

export function subjectOptions(command: Command, edit: boolean): Command {
  if (edit) command.option('--external-id <id>', "a new external id (the lab's case or MRN identifier)")
  command
    .option('--name <display name>', 'the display name')
    .addOption(new Option('--sex <sex>', 'administrative sex').choices(sexValues))
    .option('--birth-date <YYYY-MM-DD>', 'date of birth', isoDate)
    .addOption(new Option('--affected-status <status>', 'affected status').choices(affectedStatusValues))
    .option('--phenotype <HP:0000000>', `an HPO term; repeat for more${edit ? ' (replaces the list)' : ''}`, collect)
    .option('--family <family id>', 'the family (pedigree) the subject belongs to')
    .option('--mother <subject>', "the mother: a subject's id or external id")
    .option('--father <subject>', "the father: a subject's id or external id")
  return edit ? clearOption(command, SUBJECT_CLEARABLE) : command
}

function subjectFields(opts: SubjectOptions, parents: Parents) {
  return given({
    display_name: opts.name,
    sex: opts.sex,
    birth_date: opts.birthDate,
    affected_status: opts.affectedStatus,
    phenotypes: opts.phenotype,
    family_id: opts.family,
    ...parents,
  })
}

export function createSubjectBody(externalId: string, opts: SubjectOptions, parents: Parents): CreateSubject {
  return { external_id: externalId, ...subjectFields(opts, parents) }
}

/** The PATCH of `subjects edit`: only the fields given; a field both set and cleared is a usage error. */
export function updateSubjectBody(opts: SubjectOptions, parents: Parents): UpdateSubject {
  const set: UpdateSubject = { ...given({ external_id: opts.externalId }), ...subjectFields(opts, parents) }
  const clear = (opts.clear ?? []).map((f) => SUBJECT_FIELD[f as keyof typeof SUBJECT_FIELD])
  return merge(set, clear, 'subject')
}

/** The fields set, and null for the fields cleared; one field both set and cleared is a usage error. */
function merge<T extends object>(set: T, clear: readonly string[], what: string): T {
  const both = clear.find((f) => f in set)
  if (both !== undefined) throw usageError(`${both} is both set and cleared: pass one of them`)
  const body = { ...set, ...cleared(clear) }
  noChange(body, what)
  return body
}

// Samples

export interface SampleOptions {
  externalId?: string
  subject?: string
  type?: CreateSample['type']
  collectedAt?: string
  receivedAt?: string
  fastq?: string[]
  bam?: string
  cram?: string
  vcf?: string
  clear?: string[]
}

export const SAMPLE_CLEARABLE = ['collected-at', 'received-at', 'fastq', 'bam', 'cram', 'vcf'] as const
const SAMPLE_FIELD: Record<(typeof SAMPLE_CLEARABLE)[number], keyof UpdateSample> = {
  'collected-at': 'collected_at',
  'received-at': 'received_at',
  fastq: 'fastq',
  bam: 'bam',
  cram: 'cram',
  vcf: 'vcf',
}

export function sampleOptions(command: Command, edit: boolean): Command {
  if (edit) command.option('--external-id <id>', 'a new external id (the tube or accession barcode)')
  command
    .option('--subject <subject>', `the subject it was taken from: id or external id${edit ? '' : ' (required)'}`)
    .addOption(new Option('--type <type>', `the material${edit ? '' : ' (required)'}`).choices(sampleTypeValues))
    .option('--collected-at <time>', 'when it was collected: 2026-11-20 or 2026-11-20T09:30:00Z', isoTime)
    .option('--received-at <time>', 'when the lab received it', isoTime)
    .option(
      '--fastq <gs://…>',
      `a FASTQ file in the project's bucket, read pairs as R1 then R2; repeat for more${edit ? ' (replaces the list)' : ''}`,
      collect,
    )
    .option('--bam <gs://…>', 'aligned reads (.bam)')
    .option('--cram <gs://…>', 'aligned reads (.cram)')
    .option('--vcf <gs://…>', 'variant calls (.vcf, .vcf.gz, .bcf)')
  return edit ? clearOption(command, SAMPLE_CLEARABLE) : command
}

function sampleFields(opts: SampleOptions, subjectId: string | undefined) {
  return given({
    subject_id: subjectId,
    type: opts.type,
    collected_at: opts.collectedAt,
    received_at: opts.receivedAt,
    fastq: opts.fastq,
    bam: opts.bam,
    cram: opts.cram,
    vcf: opts.vcf,
  })
}

export function createSampleBody(externalId: string, opts: SampleOptions, subjectId: string): CreateSample {
  if (!opts.type) throw usageError(`--type is required: one of ${sampleTypeValues.join(', ')}`)
  return { external_id: externalId, ...sampleFields(opts, subjectId), subject_id: subjectId, type: opts.type }
}

export function updateSampleBody(opts: SampleOptions, subjectId: string | undefined): UpdateSample {
  const set: UpdateSample = { ...given({ external_id: opts.externalId }), ...sampleFields(opts, subjectId) }
  const clear = (opts.clear ?? []).map((f) => SAMPLE_FIELD[f as keyof typeof SAMPLE_FIELD])
  return merge(set, clear, 'sample')
}

// Orders

export interface OrderOptions {
  testCode?: string
  priority?: CreateOrder['priority']
  indication?: string
  requester?: string
  requesterOrg?: string
  assignee?: string
  dueDate?: string
  notes?: string
  labflow?: string
  outcome?: UpdateOrder['outcome']
  sample?: string[]
  clear?: string[]
}

export const ORDER_CLEARABLE = ['indication', 'requester', 'assignee', 'due-date', 'notes', 'labflow'] as const
const ORDER_FIELD: Record<(typeof ORDER_CLEARABLE)[number], keyof UpdateOrder> = {
  indication: 'indication',
  requester: 'requester',
  assignee: 'assignee',
  'due-date': 'due_date',
  notes: 'notes',
  labflow: 'labflow_id',
}

export function orderOptions(command: Command, edit: boolean): Command {
  command
    .option('--test-code <code>', `what is ordered: a test or panel code (WGS-trio, WES-single)${edit ? '' : ' (required)'}`)
    .addOption(new Option('--priority <priority>', `priority${edit ? '' : ' (default: routine)'}`).choices(priorityValues))
    .option('--indication <text>', 'the clinical question')
    .option('--requester <name>', 'the ordering clinician')
    .option('--requester-org <organization>', "the requester's organization (with --requester)")
    .option('--assignee <user id>', 'the user of the project who takes the order, or me')
    .option('--due-date <YYYY-MM-DD>', 'when the result is due', isoDate)
    .option('--notes <text>', 'free text')
    .option('--labflow <id>', 'the labflow to follow (default: the platform germline flow)')
  if (edit) {
    command.addOption(new Option('--outcome <outcome>', 'the diagnostic outcome: in review or completed, by a reviewer').choices(outcomeValues))
    return clearOption(command, ORDER_CLEARABLE)
  }
  return command.option('--sample <sample=role>', `a sample and its role (${sampleRoleValues.join(', ')}); repeat for more`, collect)
}

/** `S-1=proband` (the last = splits: an external id may hold one). */
export function parseSampleRole(value: string): { sample: string; role: SampleRole } {
  const at = value.lastIndexOf('=')
  const role = value.slice(at + 1) as SampleRole
  const sample = value.slice(0, at)
  if (at <= 0 || !sampleRoleValues.includes(role))
    throw usageError(`--sample '${value}': expected <sample>=<role>, the role one of ${sampleRoleValues.join(', ')}`)
  return { sample, role }
}

function requesterOf(opts: OrderOptions): CreateOrder['requester'] {
  if (opts.requesterOrg !== undefined && opts.requester === undefined) throw usageError('--requester-org goes with --requester <name>')
  return opts.requester === undefined ? undefined : given({ name: opts.requester, organization: opts.requesterOrg })
}

function orderFields(opts: OrderOptions) {
  return given({
    test_code: opts.testCode,
    priority: opts.priority,
    indication: opts.indication,
    requester: requesterOf(opts),
    assignee: opts.assignee,
    due_date: opts.dueDate,
    notes: opts.notes,
    labflow_id: opts.labflow,
  })
}

export function createOrderBody(opts: OrderOptions, samples: CreateOrder['samples']): CreateOrder {
  if (!opts.testCode) throw usageError('--test-code is required: what is ordered (WGS-trio, WES-single, a panel id)')
  return { ...orderFields(opts), test_code: opts.testCode, samples }
}

export function updateOrderBody(opts: OrderOptions): UpdateOrder {
  // The generated type of requester is stricter than the API (an object with no other keys): the body is the same.
  const set = { ...orderFields(opts), ...given({ outcome: opts.outcome }) } as UpdateOrder
  const clear = (opts.clear ?? []).map((f) => ORDER_FIELD[f as keyof typeof ORDER_FIELD])
  return merge(set, clear, 'order')
}
