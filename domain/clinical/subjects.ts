import { FieldValue, Timestamp, type DocumentReference, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { badRequest, conflict, isContention, notFound } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { clinicalRefs, readAll, type AffectedStatus, type OrderRecord, type SampleRecord, type Sex, type SubjectRecord } from './model.js'
import { hpoProblems, parentProblems, sexChangeProblems, type ParentRole, type PedigreeNode } from './pedigree.js'

export interface ClinicalProject {
  id: string
  org_id: string
  bucket_name: string
}

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
export type SubjectPatch = {
  [K in keyof SubjectInput]?: K extends 'external_id' | 'sex' | 'affected_status' | 'phenotypes' ? SubjectInput[K] : SubjectInput[K] | null
}

export interface SubjectFilters {
  external_id?: string
  family_id?: string
  affected_status?: AffectedStatus
}

/** How far up a pedigree the loop check reads (generations × parents); real pedigrees are far smaller. */
const MAX_PEDIGREE_READS = 200

/** Why a subject (or sample, or order) cannot be removed: the signed orders holding its samples. */
export function frozenBy(samples: readonly SampleRecord[]): string[] {
  return [...new Set(samples.flatMap((s) => s.orders.filter((o) => o.frozen).map((o) => o.accession)))]
}

/**
 * Subjects: the people tested. external_id is unique in a project through a key document
 * created in the same transaction; the pedigree links are checked against the stored subjects;
 * deleting a subject deletes its samples (and takes them out of unsigned orders) in the same
 * transaction, refused while a signed order holds any of them.
 */
export class SubjectStore {
  private readonly refs: ReturnType<typeof clinicalRefs>
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {
    this.refs = clinicalRefs(db)
  }

  async get(projectId: string, id: string): Promise<SubjectRecord | undefined> {
    const snap = await this.refs.subject(id).get()
    const s = snap.data() as SubjectRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  async list(projectId: string, filters: SubjectFilters, query: PageQuery): Promise<Page<SubjectRecord>> {
    let q = this.refs.subjects().where('project_id', '==', projectId)
    if (filters.external_id !== undefined) {
      // Unique in the project: one record at most, whatever the other filters.
      const found = (await q.where('external_id', '==', filters.external_id).limit(1).get()).docs.map((d) => d.data() as SubjectRecord)
      return {
        items: found.filter(
          (s) =>
            (filters.family_id === undefined || s.family_id === filters.family_id) &&
            (filters.affected_status === undefined || s.affected_status === filters.affected_status),
        ),
      }
    }
    if (filters.family_id !== undefined) q = q.where('family_id', '==', filters.family_id)
    if (filters.affected_status !== undefined) q = q.where('affected_status', '==', filters.affected_status)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as SubjectRecord)
  }

  /** Reads `parent` and its ancestors in the transaction, then checks it as the subject's `role`. */
  private async checkParent(
    tx: Transaction,
    projectId: string,
    subjectId: string | undefined,
    role: ParentRole,
    parentId: string,
  ): Promise<string[]> {
    const nodes = new Map<string, PedigreeNode>()
    const todo = [parentId]
    let reads = 0
    while (todo.length && reads < MAX_PEDIGREE_READS) {
      const id = todo.pop()!
      if (nodes.has(id)) continue
      reads += 1
      const s = (await tx.get(this.refs.subject(id))).data() as SubjectRecord | undefined
      if (!s || s.project_id !== projectId) continue
      nodes.set(id, s)
      for (const p of [s.mother_id, s.father_id]) if (p && !nodes.has(p)) todo.push(p)
    }
    return parentProblems(subjectId, role, nodes.get(parentId), nodes)
  }

  private async children(tx: Transaction, projectId: string, id: string, role: ParentRole): Promise<SubjectRecord[]> {
    const q = await tx.get(this.refs.subjects().where('project_id', '==', projectId).where(`${role}_id`, '==', id))
    return q.docs.map((d) => d.data() as SubjectRecord)
  }

  async create(ctx: AuditContext, project: ClinicalProject, input: SubjectInput, by: string): Promise<SubjectRecord> {
    const problems = hpoProblems(input.phenotypes)
    if (problems.length) throw badRequest(problems.join('; '))
    const id = newId()
    const keyRef = this.refs.key(project.id, 'subject', input.external_id)
    try {
      return await this.db.transaction(async (tx) => {
        const key = await tx.get(keyRef)
        if (key.exists) throw conflict(`a subject with external_id '${input.external_id}' already exists in this project`)
        const parentProblems = [
          ...(input.mother_id ? await this.checkParent(tx, project.id, undefined, 'mother', input.mother_id) : []),
          ...(input.father_id ? await this.checkParent(tx, project.id, undefined, 'father', input.father_id) : []),
        ]
        if (parentProblems.length) throw badRequest(parentProblems.join('; '))
        const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'subject', id } })
        const now = Timestamp.fromDate(this.clock.now())
        const subject: SubjectRecord = {
          ...input,
          id,
          project_id: project.id,
          org_id: project.org_id,
          sample_count: 0,
          created: now,
          updated: now,
          created_by: by,
        }
        tx.create(this.refs.subject(id), subject)
        tx.create(keyRef, { project_id: project.id, kind: 'subject', external_id: input.external_id, entity_id: id })
        chain.write(ctx, {
          action: 'subject.created',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'subject', id, parent: input.family_id },
          change: { fields: Object.keys(input).sort() },
        })
        return subject
      })
    } catch (err) {
      throw await this.namedKeyConflict(err, keyRef, `a subject with external_id '${input.external_id}' already exists in this project`)
    }
  }

  /** A creation that lost a race for its key document answers the same 409 as one that came second. */
  private async namedKeyConflict(err: unknown, keyRef: DocumentReference, message: string): Promise<unknown> {
    if (isContention(err) && (await keyRef.get()).exists) return conflict(message)
    return err
  }

  async update(ctx: AuditContext, project: ClinicalProject, id: string, patch: SubjectPatch): Promise<SubjectRecord> {
    if (patch.phenotypes) {
      const problems = hpoProblems(patch.phenotypes)
      if (problems.length) throw badRequest(problems.join('; '))
    }
    const newKey = patch.external_id !== undefined ? this.refs.key(project.id, 'subject', patch.external_id) : undefined
    try {
      return await this.db.transaction(async (tx) => {
        const current = (await tx.get(this.refs.subject(id))).data() as SubjectRecord | undefined
        if (!current || current.project_id !== project.id) throw notFound('subject')
        const changesKey = patch.external_id !== undefined && patch.external_id !== current.external_id
        if (changesKey && (await tx.get(newKey!)).exists) {
          throw conflict(`a subject with external_id '${patch.external_id}' already exists in this project`)
        }
        const problems: string[] = []
        for (const role of ['mother', 'father'] as const) {
          const value = patch[`${role}_id`]
          if (value) problems.push(...(await this.checkParent(tx, project.id, id, role, value)))
        }
        if (patch.sex !== undefined && patch.sex !== current.sex) {
          const asMother = (await this.children(tx, project.id, id, 'mother')).map((c) => c.external_id)
          const asFather = (await this.children(tx, project.id, id, 'father')).map((c) => c.external_id)
          problems.push(...sexChangeProblems(patch.sex, asMother, asFather))
        }
        if (problems.length) throw badRequest(problems.join('; '))
        const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'subject', id } })
        const now = Timestamp.fromDate(this.clock.now())
        const changed = (Object.keys(patch) as Array<keyof SubjectPatch>).filter((k) => patch[k] !== undefined).sort()
        const update: Record<string, unknown> = { updated: now }
        const next: Record<string, unknown> = { ...current, updated: now }
        for (const k of changed) {
          const v = patch[k]
          update[k] = v === null ? FieldValue.delete() : v
          if (v === null) delete next[k]
          else next[k] = v
        }
        tx.update(this.refs.subject(id), update)
        if (changesKey) {
          tx.delete(this.refs.key(project.id, 'subject', current.external_id))
          tx.create(newKey!, { project_id: project.id, kind: 'subject', external_id: patch.external_id, entity_id: id })
        }
        chain.write(ctx, {
          action: 'subject.updated',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'subject', id, parent: (next.family_id as string | undefined) ?? current.family_id },
          change: { fields: changed },
        })
        return next as unknown as SubjectRecord
      })
    } catch (err) {
      throw newKey
        ? await this.namedKeyConflict(err, newKey, `a subject with external_id '${patch.external_id}' already exists in this project`)
        : err
    }
  }

  /**
   * Deletes the subject and its samples in one transaction, with an audit event for each, and
   * takes the samples out of the unsigned orders that hold them. Refused (409) while a signed order
   * holds one of its samples, or while another subject names it as a parent.
   */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<{ subject: SubjectRecord; samples: SampleRecord[] }> {
    return this.db.transaction(async (tx) => {
      const subject = (await tx.get(this.refs.subject(id))).data() as SubjectRecord | undefined
      if (!subject || subject.project_id !== project.id) throw notFound('subject')
      const samples = (await tx.get(this.refs.samples().where('subject_id', '==', id))).docs
        .map((d) => d.data() as SampleRecord)
        .filter((s) => s.project_id === project.id)
      const signed = frozenBy(samples)
      if (signed.length) {
        throw conflict(`subject ${subject.external_id} has samples in signed order ${signed.join(', ')}; a signed order's samples cannot be deleted`)
      }
      const children = [...(await this.children(tx, project.id, id, 'mother')), ...(await this.children(tx, project.id, id, 'father'))]
      if (children.length) {
        throw conflict(
          `subject ${subject.external_id} is a parent of ${children.map((c) => c.external_id).join(', ')}; clear those mother_id/father_id links first`,
        )
      }
      const orderIds = [...new Set(samples.flatMap((s) => s.orders.map((o) => o.order_id)))]
      const orders = (
        await readAll<OrderRecord>(
          tx,
          orderIds.map((o) => this.refs.order(o)),
        )
      ).filter((o): o is OrderRecord => o !== undefined)
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'subject', id } },
        ...samples.map((s) => ({ project_id: project.id, entity: { type: 'sample', id: s.id } })),
        ...orders.map((o) => ({ project_id: project.id, entity: { type: 'order', id: o.id } })),
      ])
      const now = Timestamp.fromDate(this.clock.now())
      const by = ctx.actor.id
      removeSamplesFromOrders(tx, this.refs, orders, new Set(samples.map((s) => s.id)), now, (order, sampleId) =>
        audit.write(ctx, {
          action: 'order.sample_removed',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'order', id: order.id, parent: order.accession },
          change: { reason: `sample ${sampleId} deleted with subject ${subject.external_id} by ${by}` },
        }),
      )
      for (const s of samples) {
        tx.delete(this.refs.sample(s.id))
        tx.delete(this.refs.key(project.id, 'sample', s.external_id))
        audit.write(ctx, {
          action: 'sample.deleted',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'sample', id: s.id, parent: id },
          change: { reason: `subject ${subject.external_id} deleted` },
        })
      }
      tx.delete(this.refs.subject(id))
      tx.delete(this.refs.key(project.id, 'subject', subject.external_id))
      audit.write(ctx, {
        action: 'subject.deleted',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'subject', id, parent: subject.family_id },
        change: { reason: samples.length ? `deleted with ${samples.length} sample(s)` : undefined },
      })
      return { subject, samples }
    })
  }
}

/** Takes deleted samples out of the (unsigned) orders holding them; `onRemoved` audits each removal. */
export function removeSamplesFromOrders(
  tx: Transaction,
  refs: ReturnType<typeof clinicalRefs>,
  orders: readonly OrderRecord[],
  sampleIds: ReadonlySet<string>,
  now: Timestamp,
  onRemoved: (order: OrderRecord, sampleId: string) => void,
) {
  for (const order of orders) {
    const removed = order.samples.filter((e) => sampleIds.has(e.sample_id))
    if (!removed.length) continue
    const samples = order.samples.filter((e) => !sampleIds.has(e.sample_id))
    tx.update(refs.order(order.id), { samples, sample_ids: samples.map((e) => e.sample_id), updated: now })
    for (const e of removed) onRemoved(order, e.sample_id)
  }
}
