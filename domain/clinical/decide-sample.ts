import { Timestamp } from '@google-cloud/firestore'
import { absent, allow, conflictWith, deny, invalid, type Decision } from '../../lib/decision.js'
import { parseGsUri } from '../../lib/storage.js'
import { applyPatch, clinicalEvent, create, frozenBy, put, remove, type Patch } from './decide.js'
import { withoutSamples } from './decide-order.js'
import type { ClinicalChange, ClinicalProject, ClinicalWrite, KeyRecord, OrderRecord, SampleRecord, SampleType, SubjectRecord } from './model.js'

/**
 * The rules of samples, as pure decisions: what a create, a PATCH or a delete writes and records, or
 * why it is refused. A sample held by a signed order is frozen whole (409 naming the order): its
 * name, data files and subject are what the order's samplesheet rows are made of. The store
 * (samples.ts) reads the state named here in its transaction and writes what the decision returns.
 */

export interface SampleInput {
  external_id: string
  subject_id: string
  type: SampleType
  collected_at?: Date
  received_at?: Date
  fastq: string[]
  bam?: string
  cram?: string
  vcf?: string
}

/** A PATCH: absent fields stay; null clears an optional field (the schema refuses null for the required ones). */
export type SamplePatch = Patch<SampleInput>

const DATA_PATTERNS = {
  fastq: { re: /\.f(ast)?q\.gz$/, what: '.fastq.gz or .fq.gz' },
  bam: { re: /\.bam$/, what: '.bam' },
  cram: { re: /\.cram$/, what: '.cram' },
  vcf: { re: /\.(vcf|vcf\.gz|vcf\.bgz|bcf)$/, what: '.vcf, .vcf.gz or .bcf' },
} as const

/** Each data URI must be a gs:// object of the project's bucket with the file type's extension; problems name the field. */
export function dataUriProblems(data: Partial<Pick<SampleInput, 'fastq' | 'bam' | 'cram' | 'vcf'>>, bucket: string): string[] {
  const problems: string[] = []
  const check = (field: string, uri: string, kind: keyof typeof DATA_PATTERNS) => {
    let parsed: { bucket: string; path: string } | undefined
    try {
      parsed = parseGsUri(uri)
    } catch {
      parsed = undefined
    }
    if (!parsed || parsed.bucket !== bucket || !parsed.path || parsed.path.endsWith('/')) {
      problems.push(`${field}: must be a gs:// object in the project bucket (gs://${bucket}/…)`)
    } else if (/\s/.test(uri)) {
      problems.push(`${field}: must not contain whitespace`)
    } else if (!DATA_PATTERNS[kind].re.test(parsed.path)) {
      problems.push(`${field}: must end in ${DATA_PATTERNS[kind].what}`)
    }
  }
  data.fastq?.forEach((uri, i) => check(`fastq.${i}`, uri, 'fastq'))
  if (data.fastq && new Set(data.fastq).size !== data.fastq.length) problems.push('fastq: a file appears twice')
  for (const kind of ['bam', 'cram', 'vcf'] as const) {
    const uri = data[kind]
    if (uri) check(kind, uri, kind)
  }
  return problems
}

export const sampleKeyTaken = (externalId: string) => `a sample with external_id '${externalId}' already exists in this project`

export const sampleKeyOf = (project: ClinicalProject, s: Pick<SampleRecord, 'id' | 'external_id'>): KeyRecord => ({
  project_id: project.id,
  kind: 'sample',
  external_id: s.external_id,
  entity_id: s.id,
})
const timestamp = (d: Date | null | undefined) => (d === undefined ? undefined : d === null ? null : Timestamp.fromDate(d))
/** A subject whose sample count moves by `by` (it serializes sample changes with the subject's deletion, which reads it). */
const counted = (subject: SubjectRecord, by: number, now: Timestamp): SubjectRecord => ({
  ...subject,
  sample_count: subject.sample_count + by,
  updated: now,
})

export interface CreateSample {
  project: ClinicalProject
  /** The new sample's id (the store draws it). */
  id: string
  input: SampleInput
  by: string
  now: Timestamp
}

export interface CreateSampleState {
  /** Another sample of the project holds the external_id. */
  keyTaken: boolean
  /** The subject the input names, if it is one of the project's. */
  subject?: SubjectRecord
}

export function decideCreateSample(state: CreateSampleState, cmd: CreateSample): Decision<ClinicalChange<SampleRecord>> {
  const { project, id, input, now } = cmd
  const problems = dataUriProblems(input, project.bucket_name)
  if (problems.length) return deny(invalid(problems.join('; ')))
  if (state.keyTaken) return deny(conflictWith(sampleKeyTaken(input.external_id)))
  const { subject } = state
  if (!subject) return deny(invalid('subject_id: no such subject in this project'))
  const sample: SampleRecord = {
    id,
    project_id: project.id,
    org_id: project.org_id,
    external_id: input.external_id,
    subject_id: subject.id,
    type: input.type,
    collected_at: timestamp(input.collected_at) ?? undefined,
    received_at: timestamp(input.received_at) ?? undefined,
    fastq: input.fastq,
    bam: input.bam,
    cram: input.cram,
    vcf: input.vcf,
    orders: [],
    created: now,
    updated: now,
    created_by: cmd.by,
  }
  const writes = [create('sample', sample), create('key', sampleKeyOf(project, sample)), put('subject', counted(subject, 1, now))]
  return allow({ result: sample, writes }, [
    clinicalEvent(project, 'sample.created', { type: 'sample', id, parent: subject.id }, { fields: Object.keys(input).sort() }),
  ])
}

export interface UpdateSample {
  project: ClinicalProject
  id: string
  patch: SamplePatch
  now: Timestamp
}

export interface UpdateSampleState {
  /** The sample, if it is one of the project's. */
  current?: SampleRecord
  /** Another sample of the project holds the external_id the patch sets. */
  newKeyTaken: boolean
  /** When the patch moves the sample: its subject now, and the one it names (if it is one of the project's). */
  from?: SubjectRecord
  to?: SubjectRecord
}

/**
 * A PATCH of a sample: refused whole while a signed order holds it (fields sent with their stored
 * value are no change); moved to another subject only while no order holds it.
 */
export function decideUpdateSample(state: UpdateSampleState, cmd: UpdateSample): Decision<ClinicalChange<SampleRecord>> {
  const { project, patch, now } = cmd
  const { bam, cram, vcf, collected_at, received_at, ...rest } = patch
  const problems = dataUriProblems(
    { fastq: patch.fastq ?? undefined, bam: bam ?? undefined, cram: cram ?? undefined, vcf: vcf ?? undefined },
    project.bucket_name,
  )
  if (problems.length) return deny(invalid(problems.join('; ')))
  const current = state.current
  if (!current) return deny(absent('sample'))
  const { changed, next } = applyPatch<SampleRecord>(current, {
    ...rest,
    bam,
    cram,
    vcf,
    collected_at: timestamp(collected_at),
    received_at: timestamp(received_at),
  })
  if (!changed.length) return allow({ result: current, writes: [] })
  const signed = frozenBy([current])
  if (signed.length) return deny(conflictWith(`sample ${current.external_id} is in signed order ${signed.join(', ')} and cannot be changed`))
  const renames = changed.includes('external_id')
  if (renames && state.newKeyTaken) return deny(conflictWith(sampleKeyTaken(next.external_id)))
  const moves = changed.includes('subject_id')
  if (moves && current.orders.length) {
    return deny(
      conflictWith(
        `sample ${current.external_id} is in order ${current.orders.map((o) => o.accession).join(', ')}; remove it from the order before moving it to another subject`,
      ),
    )
  }
  if (moves && !state.to) return deny(invalid('subject_id: no such subject in this project'))
  const updated: SampleRecord = { ...next, updated: now }
  const writes: ClinicalWrite[] = [put('sample', updated)]
  if (renames) writes.push(remove('key', sampleKeyOf(project, current)), create('key', sampleKeyOf(project, updated)))
  if (moves) {
    if (state.from) writes.push(put('subject', counted(state.from, -1, now)))
    writes.push(put('subject', counted(state.to!, 1, now)))
  }
  return allow({ result: updated, writes }, [
    clinicalEvent(project, 'sample.updated', { type: 'sample', id: current.id, parent: updated.subject_id }, { fields: changed }),
  ])
}

export interface DeleteSampleState {
  sample?: SampleRecord
  /** Its subject (whose sample count drops), if it still exists. */
  subject?: SubjectRecord
  /** The orders holding it. */
  orders: readonly OrderRecord[]
}

/** Deletes a sample not held by a signed order (409 naming the order otherwise), taking it out of the unsigned orders that hold it. */
export function decideDeleteSample(
  state: DeleteSampleState,
  cmd: { project: ClinicalProject; now: Timestamp },
): Decision<ClinicalChange<SampleRecord>> {
  const { project, now } = cmd
  const { sample } = state
  if (!sample) return deny(absent('sample'))
  const signed = frozenBy([sample])
  if (signed.length) return deny(conflictWith(`sample ${sample.external_id} is in signed order ${signed.join(', ')} and cannot be deleted`))
  const out = withoutSamples(project, state.orders, new Set([sample.id]), now, () => `sample ${sample.external_id} deleted`)
  const writes: ClinicalWrite[] = [...out.writes, remove('sample', sample), remove('key', sampleKeyOf(project, sample))]
  if (state.subject) writes.push(put('subject', counted(state.subject, -1, now)))
  return allow({ result: sample, writes }, [
    ...out.events,
    clinicalEvent(project, 'sample.deleted', { type: 'sample', id: sample.id, parent: sample.subject_id }),
  ])
}
