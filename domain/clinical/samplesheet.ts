import { stringify } from 'csv-stringify/sync'
import { conflict } from '../../lib/errors.js'
import type { AffectedStatus, OrderRecord, OrderSampleEntry, SampleRecord, SampleRole, Sex, SubjectRecord } from './model.js'

/**
 * The nf-core/raredisease input format (assets/schema_input.json): one row per FASTQ pair, PED
 * codes for sex and phenotype, parents by their sample name (0 where absent), the case id. The
 * CSV is written by csv-stringify, so a value with a comma or a quote is quoted as RFC 4180 says.
 */
export const SAMPLESHEET_COLUMNS = ['sample', 'lane', 'fastq_1', 'fastq_2', 'sex', 'phenotype', 'paternal_id', 'maternal_id', 'case_id'] as const
export type PedSex = 0 | 1 | 2 | 'other'
export type PedPhenotype = 0 | 1 | 2

export interface SamplesheetRow {
  sample: string
  lane: number
  fastq_1: string
  fastq_2: string
  sex: PedSex
  phenotype: PedPhenotype
  paternal_id: string
  maternal_id: string
  case_id: string
}

export function pedSex(sex: Sex): PedSex {
  switch (sex) {
    case 'male':
      return 1
    case 'female':
      return 2
    case 'unknown':
      return 0
    case 'other':
      return 'other'
  }
}

export function pedPhenotype(status: AffectedStatus): PedPhenotype {
  switch (status) {
    case 'unaffected':
      return 1
    case 'affected':
      return 2
    case 'unknown':
      return 0
  }
}

/** R1, R2, R1, R2… as pairs; a trailing single file is single-end (no fastq_2). */
export function fastqPairs(fastq: readonly string[]): Array<[string, string | undefined]> {
  const pairs: Array<[string, string | undefined]> = []
  for (let i = 0; i < fastq.length; i += 2) pairs.push([fastq[i]!, fastq[i + 1]])
  return pairs
}

/** What a row is made of: a sample of the order, its subject and its role. */
export interface SheetEntry {
  sample: { id: string; external_id: string; fastq: readonly string[] }
  subject: { id: string; sex: Sex; affected_status: AffectedStatus; mother_id?: string; father_id?: string }
  role: SampleRole
}

/**
 * The rows of an order's samplesheet. A parent is the sample in the order whose subject the
 * pedigree names as the parent; failing that, for the proband and siblings, the sample with the
 * mother or father role. A sample without FASTQ files is a 409 naming it.
 */
export function samplesheetRows(caseId: string, entries: readonly SheetEntry[]): SamplesheetRow[] {
  const missing = entries.filter((e) => e.sample.fastq.length === 0).map((e) => e.sample.external_id)
  if (missing.length) throw conflict(`sample ${missing.join(', ')} has no FASTQ files; a samplesheet needs at least one FASTQ pair per sample`)
  const bySubject = new Map(entries.map((e) => [e.subject.id, e.sample.external_id]))
  const byRole = (role: SampleRole) => entries.find((e) => e.role === role)?.sample.external_id
  const parentOf = (e: SheetEntry, role: 'mother' | 'father') => {
    const recorded = e.subject[`${role}_id`]
    const inOrder = recorded ? bySubject.get(recorded) : undefined
    if (inOrder) return inOrder
    if (e.role === 'proband' || e.role === 'sibling') return byRole(role) ?? '0'
    return '0'
  }
  return entries.flatMap((e) =>
    fastqPairs(e.sample.fastq).map(([r1, r2], i) => ({
      sample: e.sample.external_id,
      lane: i + 1,
      fastq_1: r1,
      fastq_2: r2 ?? '',
      sex: pedSex(e.subject.sex),
      phenotype: pedPhenotype(e.subject.affected_status),
      paternal_id: parentOf(e, 'father'),
      maternal_id: parentOf(e, 'mother'),
      case_id: caseId,
    })),
  )
}

/** One sample of an order as the API shows it: the sample, its role and its subject. */
export interface OrderSampleView {
  entry: OrderSampleEntry
  sample: SampleRecord
  subject?: SubjectRecord
}

/** The order's samples in its order, each with its role and subject, from the records as stored (a sample gone is left out). */
export function orderSampleViews(
  order: Pick<OrderRecord, 'project_id' | 'samples'>,
  samples: ReadonlyMap<string, SampleRecord>,
  subjects: ReadonlyMap<string, SubjectRecord>,
): OrderSampleView[] {
  return order.samples.flatMap((entry) => {
    const sample = samples.get(entry.sample_id)
    return sample && sample.project_id === order.project_id ? [{ entry, sample, subject: subjects.get(sample.subject_id) }] : []
  })
}

/** The order's samplesheet from its sample views (409 for an order without samples or a sample without FASTQ). */
export function orderSamplesheet(order: Pick<OrderRecord, 'accession'>, views: readonly OrderSampleView[]): SamplesheetRow[] {
  if (!views.length) throw conflict(`order ${order.accession} has no samples`)
  return samplesheetRows(
    order.accession,
    views.map((v) => ({
      sample: v.sample,
      subject: v.subject ?? { id: v.sample.subject_id, sex: 'unknown', affected_status: 'unknown' },
      role: v.entry.role,
    })),
  )
}

export function samplesheetCsv(rows: readonly SamplesheetRow[]): string {
  return stringify(rows as SamplesheetRow[], { header: true, columns: [...SAMPLESHEET_COLUMNS], record_delimiter: 'unix' })
}
