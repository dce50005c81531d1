import { FieldValue, Timestamp } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { badRequest, conflict, isContention, notFound } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { parseGsUri } from '../../lib/storage.js'
import { clinicalRefs, readAll, type OrderRecord, type SampleRecord, type SampleType, type SubjectRecord } from './model.js'
import { fastqPairs, pedPhenotype, pedSex, type PedPhenotype, type PedSex } from './samplesheet.js'
import { frozenBy, removeSamplesFromOrders, type ClinicalProject } from './subjects.js'

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

export type SamplePatch = {
  [K in keyof SampleInput]?: K extends 'external_id' | 'subject_id' | 'type' | 'fastq' ? SampleInput[K] : SampleInput[K] | null
}

export interface SampleFilters {
  external_id?: string
  subject_id?: string
  type?: SampleType
}

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
 * Samples: material from one subject and its data files. external_id is unique in the project; a
 * sample held by a signed order is frozen (409 naming the order). Creating, moving and deleting a
 * sample write its subject's sample_count, so they serialize with the subject's deletion.
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

  async create(ctx: AuditContext, project: ClinicalProject, input: SampleInput, by: string): Promise<SampleRecord> {
    const problems = dataUriProblems(input, project.bucket_name)
    if (problems.length) throw badRequest(problems.join('; '))
    const id = newId()
    const keyRef = this.refs.key(project.id, 'sample', input.external_id)
    const taken = `a sample with external_id '${input.external_id}' already exists in this project`
    try {
      return await this.db.transaction(async (tx) => {
        if ((await tx.get(keyRef)).exists) throw conflict(taken)
        const subject = (await tx.get(this.refs.subject(input.subject_id))).data() as SubjectRecord | undefined
        if (!subject || subject.project_id !== project.id) throw badRequest('subject_id: no such subject in this project')
        const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'sample', id } })
        const now = Timestamp.fromDate(this.clock.now())
        const sample: SampleRecord = {
          id,
          project_id: project.id,
          org_id: project.org_id,
          external_id: input.external_id,
          subject_id: input.subject_id,
          type: input.type,
          collected_at: input.collected_at ? Timestamp.fromDate(input.collected_at) : undefined,
          received_at: input.received_at ? Timestamp.fromDate(input.received_at) : undefined,
          fastq: input.fastq,
          bam: input.bam,
          cram: input.cram,
          vcf: input.vcf,
          orders: [],
          created: now,
          updated: now,
          created_by: by,
        }
        tx.create(this.refs.sample(id), sample)
        tx.create(keyRef, { project_id: project.id, kind: 'sample', external_id: input.external_id, entity_id: id })
        tx.update(this.refs.subject(subject.id), { sample_count: FieldValue.increment(1), updated: now })
        chain.write(ctx, {
          action: 'sample.created',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'sample', id, parent: subject.id },
          change: { fields: Object.keys(input).sort() },
        })
        return sample
      })
    } catch (err) {
      if (isContention(err) && (await keyRef.get()).exists) throw conflict(taken)
      throw err
    }
  }

  async update(ctx: AuditContext, project: ClinicalProject, id: string, patch: SamplePatch): Promise<SampleRecord> {
    const problems = dataUriProblems(
      { fastq: patch.fastq, bam: patch.bam ?? undefined, cram: patch.cram ?? undefined, vcf: patch.vcf ?? undefined },
      project.bucket_name,
    )
    if (problems.length) throw badRequest(problems.join('; '))
    const newKey = patch.external_id !== undefined ? this.refs.key(project.id, 'sample', patch.external_id) : undefined
    const taken = `a sample with external_id '${patch.external_id}' already exists in this project`
    try {
      return await this.db.transaction(async (tx) => {
        const current = (await tx.get(this.refs.sample(id))).data() as SampleRecord | undefined
        if (!current || current.project_id !== project.id) throw notFound('sample')
        const signed = frozenBy([current])
        if (signed.length) throw conflict(`sample ${current.external_id} is in signed order ${signed.join(', ')} and cannot be changed`)
        const changesKey = patch.external_id !== undefined && patch.external_id !== current.external_id
        if (changesKey && (await tx.get(newKey!)).exists) throw conflict(taken)
        const moves = patch.subject_id !== undefined && patch.subject_id !== current.subject_id
        if (moves) {
          if (current.orders.length) {
            throw conflict(
              `sample ${current.external_id} is in order ${current.orders.map((o) => o.accession).join(', ')}; remove it from the order before moving it to another subject`,
            )
          }
          const target = (await tx.get(this.refs.subject(patch.subject_id!))).data() as SubjectRecord | undefined
          if (!target || target.project_id !== project.id) throw badRequest('subject_id: no such subject in this project')
        }
        const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'sample', id } })
        const now = Timestamp.fromDate(this.clock.now())
        const changed = (Object.keys(patch) as Array<keyof SamplePatch>).filter((k) => patch[k] !== undefined).sort()
        const update: Record<string, unknown> = { updated: now }
        const next: Record<string, unknown> = { ...current, updated: now }
        for (const k of changed) {
          const raw = patch[k]
          const v = raw instanceof Date ? Timestamp.fromDate(raw) : raw
          update[k] = v === null ? FieldValue.delete() : v
          if (v === null) delete next[k]
          else next[k] = v
        }
        tx.update(this.refs.sample(id), update)
        if (changesKey) {
          tx.delete(this.refs.key(project.id, 'sample', current.external_id))
          tx.create(newKey!, { project_id: project.id, kind: 'sample', external_id: patch.external_id, entity_id: id })
        }
        if (moves) {
          tx.update(this.refs.subject(current.subject_id), { sample_count: FieldValue.increment(-1), updated: now })
          tx.update(this.refs.subject(patch.subject_id!), { sample_count: FieldValue.increment(1), updated: now })
        }
        chain.write(ctx, {
          action: 'sample.updated',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'sample', id, parent: (next.subject_id as string) ?? current.subject_id },
          change: { fields: changed },
        })
        return next as unknown as SampleRecord
      })
    } catch (err) {
      if (newKey && isContention(err) && (await newKey.get()).exists) throw conflict(taken)
      throw err
    }
  }

  /** Deletes a sample not held by a signed order, taking it out of the unsigned orders that hold it. */
  async delete(ctx: AuditContext, project: ClinicalProject, id: string): Promise<SampleRecord> {
    return this.db.transaction(async (tx) => {
      const sample = (await tx.get(this.refs.sample(id))).data() as SampleRecord | undefined
      if (!sample || sample.project_id !== project.id) throw notFound('sample')
      const signed = frozenBy([sample])
      if (signed.length) throw conflict(`sample ${sample.external_id} is in signed order ${signed.join(', ')} and cannot be deleted`)
      const subjectSnap = await tx.get(this.refs.subject(sample.subject_id))
      const orders = (
        await readAll<OrderRecord>(
          tx,
          sample.orders.map((o) => this.refs.order(o.order_id)),
        )
      ).filter((o): o is OrderRecord => o !== undefined)
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'sample', id } },
        ...orders.map((o) => ({ project_id: project.id, entity: { type: 'order', id: o.id } })),
      ])
      const now = Timestamp.fromDate(this.clock.now())
      removeSamplesFromOrders(tx, this.refs, orders, new Set([id]), now, (order) =>
        audit.write(ctx, {
          action: 'order.sample_removed',
          project_id: project.id,
          org_id: project.org_id,
          entity: { type: 'order', id: order.id, parent: order.accession },
          change: { reason: `sample ${sample.external_id} deleted` },
        }),
      )
      tx.delete(this.refs.sample(id))
      tx.delete(this.refs.key(project.id, 'sample', sample.external_id))
      if (subjectSnap.exists) tx.update(subjectSnap.ref, { sample_count: FieldValue.increment(-1), updated: now })
      audit.write(ctx, {
        action: 'sample.deleted',
        project_id: project.id,
        org_id: project.org_id,
        entity: { type: 'sample', id, parent: sample.subject_id },
      })
      return sample
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
