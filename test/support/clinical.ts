import { SYSTEM_ACTOR } from '../../lib/audit.js'
import type { ProjectRecord } from '../../lib/auth/access.js'
import { createKernel, type KernelDeps } from '../../lib/kernel.js'
import { clinicalDeps } from '../../functions/clinical/deps.js'
import { createClinicalApp } from '../../functions/clinical/service.js'
import type { OrderRecord } from '../../domain/clinical/model.js'
import type { OrderStatus } from '../../domain/clinical/order-status.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { apiFor, makeWorld, rand } from './world.js'

/** A tenant (makeWorld) with the clinical-data service on the same emulators, and an `api` that calls it as the owner unless told. */
export async function makeClinicalWorld() {
  const world = await makeWorld({ LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent' })
  // A kernel of its own, so that its audit events say service 'clinical', on the world's Firestore.
  const deps = clinicalDeps(createKernel(world.deps.config, 'clinical', { firestore: world.deps.db.firestore }))
  const app = createClinicalApp(deps)
  const api = apiFor(app, world)
  const bucket = world.project.bucket_name
  const fq = (name: string) => [`gs://${bucket}/fastq/${name}_R1.fastq.gz`, `gs://${bucket}/fastq/${name}_R2.fastq.gz`]

  /** A subject through the API (201 expected). */
  async function subject(body: Record<string, unknown> = {}) {
    const res = await api('POST', '/subjects', { body: { external_id: `P-${rand()}`, sex: 'female', affected_status: 'unaffected', ...body } })
    if (res.status !== 201) throw new Error(`subject: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body as { id: string; external_id: string }
  }
  /** A blood sample of a subject with one FASTQ pair (201 expected). */
  async function sample(subjectId: string, body: Record<string, unknown> = {}) {
    const external_id = (body.external_id as string | undefined) ?? `S-${rand()}`
    const res = await api('POST', '/samples', { body: { external_id, subject_id: subjectId, type: 'blood', fastq: fq(external_id), ...body } })
    if (res.status !== 201) throw new Error(`sample: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body as { id: string; external_id: string }
  }
  /** A trio: proband (affected boy) with mother and father, a sample each, and a draft order holding the three. */
  async function trio() {
    const family = `FAM-${rand()}`
    const mother = await subject({ sex: 'female', family_id: family })
    const father = await subject({ sex: 'male', family_id: family })
    const proband = await subject({
      sex: 'male',
      affected_status: 'affected',
      family_id: family,
      mother_id: mother.id,
      father_id: father.id,
      phenotypes: ['HP:0001250'],
    })
    const samples = { proband: await sample(proband.id), mother: await sample(mother.id), father: await sample(father.id) }
    const res = await api('POST', '/orders', {
      body: {
        test_code: 'WGS-trio',
        samples: [
          { sample_id: samples.proband.id, role: 'proband' },
          { sample_id: samples.mother.id, role: 'mother' },
          { sample_id: samples.father.id, role: 'father' },
        ],
      },
    })
    if (res.status !== 201) throw new Error(`order: ${res.status} ${JSON.stringify(res.body)}`)
    return { family, subjects: { proband, mother, father }, samples, order: res.body as { id: string; accession: string; status: string } }
  }
  const move = (order: string, to: string, reason?: string, token?: string) =>
    api('POST', `/orders/${order}/transition`, { body: { to, reason }, token })

  return { ...world, deps, app, api, fq, subject, sample, trio, move }
}

/**
 * A clinical order of `project` made through the domain stores (no HTTP): one subject, one sample
 * with a FASTQ pair, the order, moved to `status` (signed by default). For tests of other services
 * (compute, the CLI) that link runs to a real order.
 */
export async function makeOrder(kernel: KernelDeps, project: ProjectRecord, status: OrderStatus = 'signed'): Promise<OrderRecord> {
  const stores = clinicalStores(kernel)
  const p = { id: project.id, org_id: project.org_id, bucket_name: project.bucket_name }
  const by = 'test'
  const subject = await stores.subjects.create(
    SYSTEM_ACTOR,
    p,
    { external_id: `P-${rand()}`, sex: 'male', affected_status: 'affected', phenotypes: [] },
    by,
  )
  const fastq = ['R1', 'R2'].map((r) => `gs://${project.bucket_name}/fastq/${subject.external_id}_${r}.fastq.gz`)
  const sample = await stores.samples.create(SYSTEM_ACTOR, p, { external_id: `S-${rand()}`, subject_id: subject.id, type: 'blood', fastq }, by)
  let order = await stores.orders.create(
    SYSTEM_ACTOR,
    p,
    { priority: 'routine', test_code: 'WGS-single', samples: [{ sample_id: sample.id, role: 'proband' }] },
    by,
  )
  const path: Partial<Record<OrderStatus, OrderStatus[]>> = {
    draft: [],
    signed: ['signed'],
    in_progress: ['signed', 'in_progress'],
    in_review: ['signed', 'in_progress', 'in_review'],
    completed: ['signed', 'in_progress', 'in_review', 'completed'],
    on_hold: ['signed', 'on_hold'],
    cancelled: ['cancelled'],
    entered_in_error: ['entered_in_error'],
  }
  for (const to of path[status] ?? []) {
    order = await stores.orders.transition(SYSTEM_ACTOR, p, order.id, { to, reason: 'test' }, () => true, by)
  }
  return order
}
