import type { Timestamp } from '@google-cloud/firestore'
import { absent, allow, conflictWith, deny, invalid, type Decision } from '../../lib/decision.js'
import { applyPatch, clinicalEvent, create, frozenBy, put, remove, type Patch } from './decide.js'
import { withoutSamples } from './decide-order.js'
import { sampleKeyOf } from './decide-sample.js'
import type {
  AffectedStatus,
  ClinicalChange,
  ClinicalProject,
  ClinicalWrite,
  KeyRecord,
  OrderRecord,
  SampleRecord,
  Sex,
  SubjectRecord,
} from './model.js'
import { hpoProblems, parentProblems, sexChangeProblems, type PedigreeNode } from './pedigree.js'

/**
 * The rules of subjects, as pure decisions: what a create, a PATCH or a delete writes and records,
 * or why it is refused. The store (subjects.ts) reads the state named here in its transaction and
 * writes what the decision returns.
 */

export interface SubjectInput {
  external_id: string
  display_name?: string
  sex: Sex
  birth_date?: string
  affected_status: AffectedStatus
  phenotypes: string[]
  family_id?: string
  mother_id?: string
  father_id?: string
}

/** A PATCH: absent fields stay; null clears an optional field (the schema refuses null for the required ones). */
export type SubjectPatch = Patch<SubjectInput>

/**
 * The fields of a subject that a signed order freezes while it holds one of the subject's samples:
 * those an order's samplesheet (sex, phenotype, paternal_id, maternal_id) and the pedigree behind it
 * are made of, and the identity the order was signed for. `sex` is the samplesheet's sex and the
 * parents' sex the signing guards checked; `affected_status` its phenotype; `mother_id`/`father_id`
 * its parents and the roles signing checked against them; `family_id` the pedigree's family and the
 * case id of the sample's sampleinfo; `external_id` that case id where no family is recorded, and
 * the patient the requisition names. display_name, birth_date and phenotypes (HPO terms, refined as
 * the clinical picture is) feed neither and stay editable. docs/clinical.md says the same for users.
 */
export const FROZEN_SUBJECT_FIELDS = ['external_id', 'sex', 'affected_status', 'family_id', 'mother_id', 'father_id'] as const
const FROZEN: ReadonlySet<string> = new Set(FROZEN_SUBJECT_FIELDS)

export const subjectKeyTaken = (externalId: string) => `a subject with external_id '${externalId}' already exists in this project`

const keyOf = (project: ClinicalProject, s: Pick<SubjectRecord, 'id' | 'external_id'>): KeyRecord => ({
  project_id: project.id,
  kind: 'subject',
  external_id: s.external_id,
  entity_id: s.id,
})

export interface CreateSubject {
  project: ClinicalProject
  /** The new subject's id (the store draws it). */
  id: string
  input: SubjectInput
  by: string
  now: Timestamp
}

export interface CreateSubjectState {
  /** Another subject of the project holds the external_id. */
  keyTaken: boolean
  /** The parents named and their ancestors, as far as the store read them (the project's subjects only). */
  pedigree: ReadonlyMap<string, PedigreeNode>
}

export function decideCreateSubject(state: CreateSubjectState, cmd: CreateSubject): Decision<ClinicalChange<SubjectRecord>> {
  const { project, id, input } = cmd
  const hpo = hpoProblems(input.phenotypes)
  if (hpo.length) return deny(invalid(hpo.join('; ')))
  if (state.keyTaken) return deny(conflictWith(subjectKeyTaken(input.external_id)))
  const problems = (['mother', 'father'] as const).flatMap((role) => {
    const parent = input[`${role}_id`]
    return parent ? parentProblems(undefined, role, state.pedigree.get(parent), state.pedigree) : []
  })
  if (problems.length) return deny(invalid(problems.join('; ')))
  const subject: SubjectRecord = {
    ...input,
    id,
    project_id: project.id,
    org_id: project.org_id,
    sample_count: 0,
    created: cmd.now,
    updated: cmd.now,
    created_by: cmd.by,
  }
  return allow({ result: subject, writes: [create('subject', subject), create('key', keyOf(project, subject))] }, [
    clinicalEvent(project, 'subject.created', { type: 'subject', id, parent: input.family_id }, { fields: Object.keys(input).sort() }),
  ])
}

export interface UpdateSubject {
  project: ClinicalProject
  id: string
  patch: SubjectPatch
  now: Timestamp
}

export interface UpdateSubjectState {
  /** The subject, if it is one of the project's. */
  current?: SubjectRecord
  /** Every sample of the subject, read in the same transaction: a signed order holding any of them freezes it. */
  samples: readonly SampleRecord[]
  /** Another subject of the project holds the external_id the patch sets. */
  newKeyTaken: boolean
  /** The parents the patch names and their ancestors (the project's subjects only). */
  pedigree: ReadonlyMap<string, PedigreeNode>
  /** The subjects naming this one as their mother, and as their father (read when the patch changes its sex). */
  children: { mother: readonly SubjectRecord[]; father: readonly SubjectRecord[] }
}

/**
 * A PATCH of a subject. While a signed order holds one of its samples, the fields that feed the
 * order's samplesheet and pedigree (FROZEN_SUBJECT_FIELDS) are refused with 409 naming the order;
 * fields sent with their stored value are no change, so a client may send the subject back whole.
 */
export function decideUpdateSubject(state: UpdateSubjectState, cmd: UpdateSubject): Decision<ClinicalChange<SubjectRecord>> {
  const { project, patch } = cmd
  const hpo = patch.phenotypes ? hpoProblems(patch.phenotypes) : []
  if (hpo.length) return deny(invalid(hpo.join('; ')))
  const current = state.current
  if (!current) return deny(absent('subject'))
  const { changed, next } = applyPatch<SubjectRecord>(current, patch)
  if (!changed.length) return allow({ result: current, writes: [] })
  const frozenFields = changed.filter((k) => FROZEN.has(k))
  const signed = frozenBy(state.samples)
  if (frozenFields.length && signed.length) {
    return deny(
      conflictWith(
        `subject ${current.external_id} has samples in signed order ${signed.join(', ')}; its ${frozenFields.join(', ')} cannot change while the order is signed (they feed its samplesheet and pedigree; to correct them, enter the order in error)`,
      ),
    )
  }
  const renames = changed.includes('external_id')
  if (renames && state.newKeyTaken) return deny(conflictWith(subjectKeyTaken(next.external_id)))
  const problems: string[] = []
  for (const role of ['mother', 'father'] as const) {
    const parent = next[`${role}_id`]
    if (parent && changed.includes(`${role}_id`)) problems.push(...parentProblems(current.id, role, state.pedigree.get(parent), state.pedigree))
  }
  if (changed.includes('sex')) {
    const names = (children: readonly SubjectRecord[]) => children.map((c) => c.external_id)
    problems.push(...sexChangeProblems(next.sex, names(state.children.mother), names(state.children.father)))
  }
  if (problems.length) return deny(invalid(problems.join('; ')))
  const updated: SubjectRecord = { ...next, updated: cmd.now }
  const writes: ClinicalWrite[] = [put('subject', updated)]
  if (renames) writes.push(remove('key', keyOf(project, current)), create('key', keyOf(project, updated)))
  return allow({ result: updated, writes }, [
    clinicalEvent(
      project,
      'subject.updated',
      { type: 'subject', id: current.id, parent: updated.family_id ?? current.family_id },
      { fields: changed },
    ),
  ])
}

export interface DeleteSubject {
  project: ClinicalProject
  id: string
  /** Who deletes it, named in the reason recorded on the orders that lose its samples. */
  by: string
  now: Timestamp
}

export interface DeleteSubjectState {
  subject?: SubjectRecord
  /** Every sample of the subject: they go with it. */
  samples: readonly SampleRecord[]
  /** The subjects naming it as their mother or father. */
  children: readonly SubjectRecord[]
  /** The orders holding its samples. */
  orders: readonly OrderRecord[]
}

/**
 * Deletes the subject with its samples, taking them out of the unsigned orders that hold them, with
 * an audit event for each; refused (409) while a signed order holds one of its samples, or while
 * another subject names it as a parent.
 */
export function decideDeleteSubject(state: DeleteSubjectState, cmd: DeleteSubject): Decision<ClinicalChange<SubjectRecord>> {
  const { project } = cmd
  const { subject, samples } = state
  if (!subject) return deny(absent('subject'))
  const signed = frozenBy(samples)
  if (signed.length) {
    return deny(
      conflictWith(`subject ${subject.external_id} has samples in signed order ${signed.join(', ')}; a signed order's samples cannot be deleted`),
    )
  }
  if (state.children.length) {
    return deny(
      conflictWith(
        `subject ${subject.external_id} is a parent of ${state.children.map((c) => c.external_id).join(', ')}; clear those mother_id/father_id links first`,
      ),
    )
  }
  const out = withoutSamples(
    project,
    state.orders,
    new Set(samples.map((s) => s.id)),
    cmd.now,
    (sampleId) => `sample ${sampleId} deleted with subject ${subject.external_id} by ${cmd.by}`,
  )
  const writes: ClinicalWrite[] = [...out.writes]
  const events = [...out.events]
  for (const s of samples) {
    writes.push(remove('sample', s), remove('key', sampleKeyOf(project, s)))
    events.push(
      clinicalEvent(
        project,
        'sample.deleted',
        { type: 'sample', id: s.id, parent: subject.id },
        { reason: `subject ${subject.external_id} deleted` },
      ),
    )
  }
  writes.push(remove('subject', subject), remove('key', keyOf(project, subject)))
  events.push(
    clinicalEvent(
      project,
      'subject.deleted',
      { type: 'subject', id: subject.id, parent: subject.family_id },
      { reason: samples.length ? `deleted with ${samples.length} sample(s)` : undefined },
    ),
  )
  return allow({ result: subject, writes }, events)
}
