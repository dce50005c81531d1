import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { canInProject, rolesFrom } from '../../lib/auth/access.js'
import type { Permission } from '../../lib/auth/roles.js'
import { iso } from '../../lib/db.js'
import { badRequest } from '../../lib/errors.js'
import { UUID_RE } from '../../lib/ids.js'
import { availableTransitions } from '../../domain/clinical/order-status.js'
import type { ClinicalProject, OrderRecord, SampleRecord, SubjectRecord } from '../../domain/clinical/model.js'
import type { ClinicalEnv } from './deps.js'
import type { Order, Sample, Subject } from './schemas.js'

/** Records as the API shows them, and the per-request helpers every clinical route uses. */
export function toSubject(s: SubjectRecord): z.infer<typeof Subject> {
  return {
    id: s.id,
    project_id: s.project_id,
    external_id: s.external_id,
    display_name: s.display_name,
    sex: s.sex,
    birth_date: s.birth_date,
    affected_status: s.affected_status,
    phenotypes: s.phenotypes,
    family_id: s.family_id,
    mother_id: s.mother_id,
    father_id: s.father_id,
    sample_count: s.sample_count,
    created: iso(s.created)!,
    updated: iso(s.updated)!,
    created_by: s.created_by,
  }
}

export function toSample(s: SampleRecord): z.infer<typeof Sample> {
  return {
    id: s.id,
    project_id: s.project_id,
    external_id: s.external_id,
    subject_id: s.subject_id,
    type: s.type,
    collected_at: iso(s.collected_at),
    received_at: iso(s.received_at),
    fastq: s.fastq,
    bam: s.bam,
    cram: s.cram,
    vcf: s.vcf,
    orders: s.orders.map((o) => ({ id: o.order_id, accession: o.accession, frozen: o.frozen })),
    frozen: s.orders.some((o) => o.frozen),
    created: iso(s.created)!,
    updated: iso(s.updated)!,
    created_by: s.created_by,
  }
}

/** Whether the caller holds `permission` in the request's project. */
export const canFor = (c: Context<ClinicalEnv>) => (permission: Permission) => canInProject(c.get('principal'), c.get('project'), permission)

export function toOrder(c: Context<ClinicalEnv>, o: OrderRecord, runs?: Array<{ id: string; name: string; status: string }>): z.infer<typeof Order> {
  return {
    id: o.id,
    project_id: o.project_id,
    accession: o.accession,
    status: o.status,
    held_from: o.held_from,
    priority: o.priority,
    test_code: o.test_code,
    indication: o.indication,
    requester: o.requester,
    assignee: o.assignee,
    due_date: o.due_date,
    notes: o.notes,
    outcome: o.outcome,
    labflow: o.labflow,
    labflow_stage: o.labflow_state?.stage,
    signed: o.signed ? { by: o.signed.by, at: iso(o.signed.at)! } : undefined,
    samples: o.samples.map((e) => ({ sample_id: e.sample_id, role: e.role, added_at: iso(e.added_at)!, added_by: e.added_by })),
    status_history: o.status_history.map((h) => ({
      from: h.from as OrderRecord['status'],
      to: h.to as OrderRecord['status'],
      by: h.by,
      at: iso(h.at)!,
      reason: h.reason,
    })),
    available_transitions: availableTransitions(o, canFor(c)),
    runs,
    created: iso(o.created)!,
    updated: iso(o.updated)!,
    created_by: o.created_by,
  }
}

export function projectOf(c: Context<ClinicalEnv>): ClinicalProject {
  const p = c.get('project')
  return { id: p.id, org_id: p.org_id, bucket_name: p.bucket_name }
}

/** An assignee must be a user who can read the project's clinical data (400 naming the field otherwise). */
export async function checkAssignee(c: Context<ClinicalEnv>, userId: string | null | undefined, field = 'assignee') {
  if (!userId) return
  const user = UUID_RE.test(userId) ? await c.get('deps').access.getUser(userId) : undefined
  const member = user && !user.disabled && canInProject({ user, method: 'personal_token', ...rolesFrom(user) }, c.get('project'), 'clinical.read')
  if (!member) throw badRequest(`${field}: user ${userId} is not a member of this project`)
}
