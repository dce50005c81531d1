/** The human views of subjects, samples and orders: tables for listings, label/value lines for one record. */
import { fields, paint, PLAIN, table, type Column, type Style } from './format.js'
import { formatTime } from './output.js'
import type { Order, OrderLabflow, OrderSample, Sample, SampleInfo, Subject } from './client.js'

export const subjectColumns: Column<Subject>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'EXTERNAL ID', value: (s) => s.external_id },
  { header: 'NAME', value: (s) => s.display_name, fit: true },
  { header: 'SEX', value: (s) => s.sex },
  { header: 'AFFECTED', value: (s) => s.affected_status },
  { header: 'FAMILY', value: (s) => s.family_id },
  { header: 'SAMPLES', value: (s) => s.sample_count },
  { header: 'CREATED', value: (s) => formatTime(s.created) },
]

/** A related record as a person reads it: its external id and its id, or the id alone when it was not read. */
const named = (id: string | undefined, record: { external_id: string } | undefined) => (id && record ? `${record.external_id} (${id})` : id)

/** A subject; its parents by external id when they were read. */
export function subjectDetails(subject: Subject, parents: { mother?: Subject; father?: Subject } = {}): string {
  return fields([
    ['id', subject.id],
    ['external id', subject.external_id],
    ['name', subject.display_name],
    ['sex', subject.sex],
    ['birth date', subject.birth_date],
    ['affected', subject.affected_status],
    ['phenotypes', subject.phenotypes],
    ['family', subject.family_id],
    ['mother', named(subject.mother_id, parents.mother)],
    ['father', named(subject.father_id, parents.father)],
    ['samples', subject.sample_count],
    ['created', formatTime(subject.created)],
    ['updated', formatTime(subject.updated)],
  ])
}

/** The orders holding a sample: `ORD-2026-000001 (signed)` for those that freeze it. */
const orderRefs = (sample: Sample) => sample.orders.map((o) => (o.frozen ? `${o.accession} (signed)` : o.accession))

export const sampleColumns: Column<Sample>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'EXTERNAL ID', value: (s) => s.external_id },
  { header: 'TYPE', value: (s) => s.type },
  { header: 'SUBJECT', value: (s) => s.subject_id },
  { header: 'FASTQ', value: (s) => s.fastq.length },
  { header: 'ORDERS', value: orderRefs, fit: true },
  { header: 'CREATED', value: (s) => formatTime(s.created) },
]

/** A sample; its subject by external id when it was read. */
export function sampleDetails(sample: Sample, subject?: Subject): string {
  return fields([
    ['id', sample.id],
    ['external id', sample.external_id],
    ['subject', named(sample.subject_id, subject)],
    ['type', sample.type],
    ['collected', formatTime(sample.collected_at)],
    ['received', formatTime(sample.received_at)],
    ['fastq', sample.fastq.join('\n')],
    ['bam', sample.bam],
    ['cram', sample.cram],
    ['vcf', sample.vcf],
    ['orders', orderRefs(sample)],
    ['frozen', sample.frozen ? 'yes: a signed order holds it' : 'no'],
    ['created', formatTime(sample.created)],
    ['updated', formatTime(sample.updated)],
  ])
}

export function sampleInfoDetails(info: SampleInfo): string {
  return fields([
    ['sample', info.sample],
    ['subject', `${info.subject.external_id} (${info.subject.id})`],
    ['lane', info.lane],
    ['fastq_1', info.fastq_1],
    ['fastq_2', info.fastq_2],
    ['sex', info.sex],
    ['phenotype', info.phenotype],
    ['paternal_id', info.paternal_id],
    ['maternal_id', info.maternal_id],
    ['case_id', info.case_id],
    ['hpo_terms', info.hpo_terms],
  ])
}

export const orderColumns: Column<Order>[] = [
  { header: 'ACCESSION', value: (o) => o.accession },
  { header: 'STATUS', value: (o) => o.status, status: true },
  { header: 'PRIORITY', value: (o) => o.priority },
  { header: 'TEST', value: (o) => o.test_code, fit: true },
  { header: 'SAMPLES', value: (o) => o.samples.length },
  { header: 'STAGE', value: (o) => o.labflow_stage },
  { header: 'DUE', value: (o) => o.due_date },
  { header: 'CREATED', value: (o) => formatTime(o.created) },
  { header: 'ID', value: (o) => o.id },
]

const orderSampleColumns: Column<OrderSample>[] = [
  { header: 'ROLE', value: (s) => s.role },
  { header: 'SAMPLE', value: (s) => s.external_id },
  { header: 'TYPE', value: (s) => s.type },
  { header: 'SUBJECT', value: (s) => s.subject_id },
  { header: 'FASTQ', value: (s) => s.fastq.length },
]

/** An order, and its samples with their roles when they were read. */
export function orderDetails(order: Order, samples: OrderSample[] | undefined, style: Style = PLAIN): string {
  const pairs: Array<[string, unknown]> = [
    ['accession', order.accession],
    ['id', order.id],
    ['status', paint(style, order.status)],
    ...(order.held_from ? [['held from', order.held_from] as [string, unknown]] : []),
    ['priority', order.priority],
    ['test', order.test_code],
    ['indication', order.indication],
    ['requester', order.requester ? [order.requester.name, order.requester.organization].filter(Boolean).join(', ') : undefined],
    ['assignee', order.assignee],
    ['due', order.due_date],
    ['outcome', order.outcome],
    ['labflow stage', order.labflow_stage],
    ['signed', order.signed ? `${formatTime(order.signed.at)} by ${order.signed.by}` : undefined],
    ['notes', order.notes],
    ['next', order.available_transitions],
    ['created', formatTime(order.created)],
  ]
  if (order.runs?.length) pairs.push(['runs', order.runs.map((r) => `${r.name} (${r.status})`).join('\n')])
  const text = fields(pairs)
  if (!samples) return text
  return `${text}\n\nSAMPLES\n${samples.length ? table(samples, orderSampleColumns, style) : 'none yet: platform orders add-sample <order> <sample> --role <role>'}`
}

const transitionColumns: Column<OrderLabflow['available_transitions'][number]>[] = [
  { header: 'TRANSITION', value: (t) => t.id },
  { header: 'KIND', value: (t) => t.kind },
  { header: 'TO', value: (t) => t.to },
  { header: 'REASON', value: (t) => (t.requires_reason ? 'required' : '') },
]

export function labflowDetails(state: OrderLabflow, style: Style = PLAIN): string {
  const text = fields([
    ['order', state.accession],
    ['labflow', `${state.labflow.name} (${state.labflow.key}${state.labflow.version ? ` v${state.labflow.version}` : ''})`],
    ['status', state.status],
    ['stage', state.stage ? `${state.stage.name} (${state.stage.key})` : undefined],
    ['assignee', state.assignee],
    ['last move', state.history.at(-1) ? `${state.history.at(-1)!.transition} at ${formatTime(state.history.at(-1)!.at)}` : undefined],
  ])
  const moves = state.available_transitions
  return `${text}\n\nTRANSITIONS YOU MAY TAKE\n${moves.length ? table(moves, transitionColumns, style) : 'none now'}`
}
