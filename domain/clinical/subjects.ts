import { Timestamp, type DocumentReference, type DocumentSnapshot, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse } from '../../lib/decision.js'
import { conflict, isContention } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import {
  decideCreateSubject,
  decideDeleteSubject,
  decideUpdateSubject,
  subjectKeyTaken,
  type SubjectInput,
  type SubjectPatch,
} from './decide-subject.js'
import {
  clinicalRefs,
  commit,
  readAll,
  type AffectedStatus,
  type ClinicalProject,
  type OrderRecord,
  type SampleRecord,
  type SubjectRecord,
} from './model.js'
import type { ParentRole, PedigreeNode } from './pedigree.js'

/** Whether a display name contains the (lower-case) text, whatever the name's case. */
const nameHas = (name: string | undefined, needle: string) => (name ?? '').toLowerCase().includes(needle)

export interface SubjectFilters {
  external_id?: string
  family_id?: string
  affected_status?: AffectedStatus
  /** A part of the display name, whatever its case (checked on each subject read: no index can serve it). */
  name?: string
}

/** How far up a pedigree the loop check reads (generations × parents); real pedigrees are far smaller. */
const MAX_PEDIGREE_READS = 200

/**
 * Subjects: the people tested. The store reads in a transaction what the decisions of
 * decide-subject.ts need (the subject, its samples, the key document of an external_id, the
 * pedigree around it) and writes what they return; external_id is unique in a project through a
 * key document created in the same transaction.
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
    const needle = filters.name?.toLowerCase()
    if (filters.external_id !== undefined) {
      // Unique in the project: one record at most, whatever the other filters.
      const found = (await q.where('external_id', '==', filters.external_id).limit(1).get()).docs.map((d) => d.data() as SubjectRecord)
      return {
        items: found.filter(
          (s) =>
            (filters.family_id === undefined || s.family_id === filters.family_id) &&
            (filters.affected_status === undefined || s.affected_status === filters.affected_status) &&
            (needle === undefined || nameHas(s.display_name, needle)),
        ),
      }
    }
    if (filters.family_id !== undefined) q = q.where('family_id', '==', filters.family_id)
    if (filters.affected_status !== undefined) q = q.where('affected_status', '==', filters.affected_status)
    const post = needle === undefined ? {} : { post: (d: DocumentSnapshot) => nameHas(d.get('display_name') as string | undefined, needle) }
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query, ...post }, (d) => d.data() as SubjectRecord)
  }

  /** Reads the subjects `ids` name and their ancestors in the transaction, as far as MAX_PEDIGREE_READS goes (the project's subjects only). */
  private async pedigree(tx: Transaction, projectId: string, ids: ReadonlyArray<string | null | undefined>): Promise<Map<string, PedigreeNode>> {
    const nodes = new Map<string, PedigreeNode>()
    const todo = ids.filter((id): id is string => !!id)
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
    return nodes
  }

  private async children(tx: Transaction, projectId: string, id: string, role: ParentRole): Promise<SubjectRecord[]> {
    const q = await tx.get(this.refs.subjects().where('project_id', '==', projectId).where(`${role}_id`, '==', id))
    return q.docs.map((d) => d.data() as SubjectRecord)
  }

  private async subjectIn(tx: Transaction, projectId: string, id: string): Promise<SubjectRecord | undefined> {
    const s = (await tx.get(this.refs.subject(id))).data() as SubjectRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  /** Every sample of the subject, read in the transaction (a signed order holding one freezes the subject). */
  private async samplesOf(tx: Transaction, projectId: string, id: string): Promise<SampleRecord[]> {
    return (await tx.get(this.refs.samples().where('subject_id', '==', id))).docs
      .map((d) => d.data() as SampleRecord)
      .filter((s) => s.project_id === projectId)
  }

  async create(ctx: AuditContext, project: ClinicalProject, input: SubjectInput, by: string): Promise<SubjectRecord> {
    const id = newId()
    const keyRef = this.refs.key(project.id, 'subject', input.external_id)
    try {
      return await this.db.transaction(async (tx) => {
        const keyTaken = (await tx.get(keyRef)).exists
        const pedigree = await this.pedigree(tx, project.id, [input.mother_id, input.father_id])
        const now = Timestamp.fromDate(this.clock.now())
        const decision = decideCreateSubject({ keyTaken, pedigree }, { project, id, input, by, now })
        return commit(tx, this.refs, this.audit, ctx, orRefuse(decision))
      })
    } catch (err) {
      throw await this.namedKeyConflict(err, keyRef, subjectKeyTaken(input.external_id))
    }
  }

  /** A creation that lost a race for its key document answers the same 409 as one that came second. */
  private async namedKeyConflict(err: unknown, keyRef: DocumentReference, message: string): Promise<unknown> {
    if (isContention(err) && (await keyRef.get()).exists) return conflict(message)
    return err
  }

  /**
   * A PATCH, decided on the subject and all its samples read in the transaction: while a signed
   * order holds one of them, the fields feeding the order's samplesheet and pedigree are refused.
   */
  async update(ctx: AuditContext, project: ClinicalProject, id: string, patch: SubjectPatch): Promise<SubjectRecord> {
    const newKey = patch.external_id !== undefined ? this.refs.key(project.id, 'subject', patch.external_id) : undefined
    try {
      return await this.db.transaction(async (tx) => {
        const current = await this.subjectIn(tx, project.id, id)
        const samples = current ? await this.samplesOf(tx, project.id, id) : []
        const newKeyTaken = !!newKey && patch.external_id !== current?.external_id && (await tx.get(newKey)).exists
        const pedigree = await this.pedigree(tx, project.id, [patch.mother_id, patch.father_id])
        const sexChanges = current !== undefined && patch.sex !== undefined && patch.sex !== current.sex
        const children = {
          mother: sexChanges ? await this.children(tx, project.id, id, 'mother') : [],
          father: sexChanges ? await this.children(tx, project.id, id, 'father') : [],
        }
        const now = Timestamp.fromDate(this.clock.now())
        const decision = decideUpdateSubject({ current, samples, newKeyTaken, pedigree, children }, { project, id, patch, now })
        return commit(tx, this.refs, this.audit, ctx, orRefuse(decision))
      })
    } catch (err) {
      throw newKey ? await this.namedKeyConflict(err, newKey, subjectKeyTaken(patch.external_id!)) : err
    }
  }

  /**
   * Deletes the subject and its samples in one transaction, with an audit event for each, and
   * takes the samples out of the unsigned orders that hold them. Refused (409) while a signed order
   * holds one of its samples, or while another subject names it as a parent.
   */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<SubjectRecord> {
    return this.db.transaction(async (tx) => {
      const subject = await this.subjectIn(tx, project.id, id)
      const samples = subject ? await this.samplesOf(tx, project.id, id) : []
      const children = subject ? [...(await this.children(tx, project.id, id, 'mother')), ...(await this.children(tx, project.id, id, 'father'))] : []
      const orderIds = [...new Set(samples.flatMap((s) => s.orders.map((o) => o.order_id)))]
      const orders = (
        await readAll<OrderRecord>(
          tx,
          orderIds.map((o) => this.refs.order(o)),
        )
      ).filter((o): o is OrderRecord => o !== undefined)
      const now = Timestamp.fromDate(this.clock.now())
      const decision = decideDeleteSubject({ subject, samples, children, orders }, { project, id, by: ctx.actor.id, now })
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decision))
    })
  }
}
