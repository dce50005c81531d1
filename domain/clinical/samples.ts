import { Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse } from '../../lib/decision.js'
import { conflict, isContention } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { decideCreateSample, decideDeleteSample, decideUpdateSample, sampleKeyTaken, type SampleInput, type SamplePatch } from './decide-sample.js'
import {
  clinicalRefs,
  commit,
  readAll,
  type ClinicalProject,
  type OrderRecord,
  type SampleRecord,
  type SampleType,
  type SubjectRecord,
} from './model.js'
import { fastqPairs, pedPhenotype, pedSex, type PedPhenotype, type PedSex } from './samplesheet.js'

export interface SampleFilters {
  external_id?: string
  subject_id?: string
  type?: SampleType
}

/** The pipeline-ready view of one sample (DOMAIN.md): the samplesheet keys of its first FASTQ pair, its subject, HPO terms and data. */
export interface SampleInfo {
  sample: string
  lane: number | null
  fastq_1: string | null
  fastq_2: string | null
  sex: PedSex
  phenotype: PedPhenotype
  paternal_id: string
  maternal_id: string
  case_id: string
  subject: Pick<SubjectRecord, 'id' | 'external_id' | 'display_name' | 'sex' | 'affected_status'>
  hpo_terms: string[]
  fastq: string[]
  bam: string | null
  cram: string | null
  vcf: string | null
}

/**
 * Samples: material from one subject and its data files. The store reads in a transaction what the
 * decisions of decide-sample.ts need and writes what they return: a sample held by a signed order
 * is frozen (409 naming the order); creating, moving and deleting a sample write its subject's
 * sample_count, so they serialize with the subject's deletion.
 */
export class SampleStore {
  private readonly refs: ReturnType<typeof clinicalRefs>
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {
    this.refs = clinicalRefs(db)
  }

  async get(projectId: string, id: string): Promise<SampleRecord | undefined> {
    const s = (await this.refs.sample(id).get()).data() as SampleRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  async list(projectId: string, filters: SampleFilters, query: PageQuery): Promise<Page<SampleRecord>> {
    let q = this.refs.samples().where('project_id', '==', projectId)
    if (filters.external_id !== undefined) {
      const found = (await q.where('external_id', '==', filters.external_id).limit(1).get()).docs.map((d) => d.data() as SampleRecord)
      return {
        items: found.filter(
          (s) => (filters.subject_id === undefined || s.subject_id === filters.subject_id) && (filters.type === undefined || s.type === filters.type),
        ),
      }
    }
    if (filters.subject_id !== undefined) q = q.where('subject_id', '==', filters.subject_id)
    if (filters.type !== undefined) q = q.where('type', '==', filters.type)
    return paginate(q, { orderBy: [['created', 'desc']], filters: { ...filters }, query }, (d) => d.data() as SampleRecord)
  }

  private async subjectIn(tx: Transaction, projectId: string, id: string): Promise<SubjectRecord | undefined> {
    const s = (await tx.get(this.refs.subject(id))).data() as SubjectRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  private async sampleIn(tx: Transaction, projectId: string, id: string): Promise<SampleRecord | undefined> {
    const s = (await tx.get(this.refs.sample(id))).data() as SampleRecord | undefined
    return s?.project_id === projectId ? s : undefined
  }

  async create(ctx: AuditContext, project: ClinicalProject, input: SampleInput, by: string): Promise<SampleRecord> {
    const id = newId()
    const keyRef = this.refs.key(project.id, 'sample', input.external_id)
    try {
      return await this.db.transaction(async (tx) => {
        const keyTaken = (await tx.get(keyRef)).exists
        const subject = await this.subjectIn(tx, project.id, input.subject_id)
        const now = Timestamp.fromDate(this.clock.now())
        return commit(tx, this.refs, this.audit, ctx, orRefuse(decideCreateSample({ keyTaken, subject }, { project, id, input, by, now })))
      })
    } catch (err) {
      if (isContention(err) && (await keyRef.get()).exists) throw conflict(sampleKeyTaken(input.external_id))
      throw err
    }
  }

  async update(ctx: AuditContext, project: ClinicalProject, id: string, patch: SamplePatch): Promise<SampleRecord> {
    const newKey = patch.external_id !== undefined ? this.refs.key(project.id, 'sample', patch.external_id) : undefined
    try {
      return await this.db.transaction(async (tx) => {
        const current = await this.sampleIn(tx, project.id, id)
        const newKeyTaken = !!newKey && patch.external_id !== current?.external_id && (await tx.get(newKey)).exists
        const moves = current !== undefined && patch.subject_id !== undefined && patch.subject_id !== current.subject_id
        const [from, to] = moves
          ? await readAll<SubjectRecord>(tx, [this.refs.subject(current.subject_id), this.refs.subject(patch.subject_id!)])
          : []
        const state = { current, newKeyTaken, from, to: to?.project_id === project.id ? to : undefined }
        const now = Timestamp.fromDate(this.clock.now())
        return commit(tx, this.refs, this.audit, ctx, orRefuse(decideUpdateSample(state, { project, id, patch, now })))
      })
    } catch (err) {
      if (newKey && isContention(err) && (await newKey.get()).exists) throw conflict(sampleKeyTaken(patch.external_id!))
      throw err
    }
  }

  /** Deletes a sample not held by a signed order, taking it out of the unsigned orders that hold it. */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<SampleRecord> {
    return this.db.transaction(async (tx) => {
      const sample = await this.sampleIn(tx, project.id, id)
      const [subject, ...orders] = sample
        ? await readAll<SubjectRecord | OrderRecord>(tx, [
            this.refs.subject(sample.subject_id),
            ...sample.orders.map((o) => this.refs.order(o.order_id)),
          ])
        : []
      const state = {
        sample,
        subject: subject as SubjectRecord | undefined,
        orders: orders.filter((o): o is OrderRecord => o !== undefined),
      }
      const now = Timestamp.fromDate(this.clock.now())
      return commit(tx, this.refs, this.audit, ctx, orRefuse(decideDeleteSample(state, { project, now })))
    })
  }

  /** The first sample of a subject (oldest), for naming a parent in sampleinfo. */
  private async firstSampleOf(projectId: string, subjectId: string): Promise<SampleRecord | undefined> {
    const q = await this.refs.samples().where('subject_id', '==', subjectId).get()
    return q.docs
      .map((d) => d.data() as SampleRecord)
      .filter((s) => s.project_id === projectId)
      .sort((a, b) => a.created.toMillis() - b.created.toMillis() || a.id.localeCompare(b.id))[0]
  }

  async sampleInfo(projectId: string, id: string): Promise<SampleInfo | undefined> {
    const sample = await this.get(projectId, id)
    if (!sample) return undefined
    const subject = (await this.refs.subject(sample.subject_id).get()).data() as SubjectRecord | undefined
    if (!subject) return undefined
    const parent = async (parentId: string | undefined) =>
      (parentId ? (await this.firstSampleOf(projectId, parentId))?.external_id : undefined) ?? '0'
    const [first] = fastqPairs(sample.fastq)
    return {
      sample: sample.external_id,
      lane: first ? 1 : null,
      fastq_1: first?.[0] ?? null,
      fastq_2: first?.[1] ?? null,
      sex: pedSex(subject.sex),
      phenotype: pedPhenotype(subject.affected_status),
      paternal_id: await parent(subject.father_id),
      maternal_id: await parent(subject.mother_id),
      case_id: subject.family_id ?? subject.external_id,
      subject: {
        id: subject.id,
        external_id: subject.external_id,
        display_name: subject.display_name,
        sex: subject.sex,
        affected_status: subject.affected_status,
      },
      hpo_terms: subject.phenotypes,
      fastq: sample.fastq,
      bam: sample.bam ?? null,
      cram: sample.cram ?? null,
      vcf: sample.vcf ?? null,
    }
  }
}
