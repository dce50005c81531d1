import { SYSTEM_ACTOR } from '../../lib/audit.js'
import { ApiError } from '../../lib/errors.js'
import { demoFastqPaths } from '../files/demo-fastq.js'
import type { ClinicalStores } from './stores.js'
import type { AffectedStatus, ClinicalProject, SampleRole, Sex } from './model.js'

/**
 * The local suite's demo family: a proband and both parents (family FAM-DEMO), a blood sample each
 * (S-DEMO-PROBAND, S-DEMO-MOTHER, S-DEMO-FATHER) with its FASTQ pair in the project bucket, and a draft trio order, so that a newcomer can sign it
 * and download its samplesheet. Idempotent: each record is looked up by its external id first.
 */
export const DEMO_FAMILY = 'FAM-DEMO'
const MEMBERS: Array<{ subject: string; sample: string; name: string; sex: Sex; affected: AffectedStatus; role: SampleRole; hpo: string[] }> = [
  {
    subject: 'P-DEMO-1',
    sample: 'S-DEMO-PROBAND',
    name: 'Demo Proband',
    sex: 'male',
    affected: 'affected',
    role: 'proband',
    hpo: ['HP:0001263', 'HP:0001250'],
  },
  { subject: 'P-DEMO-2', sample: 'S-DEMO-MOTHER', name: 'Demo Mother', sex: 'female', affected: 'unaffected', role: 'mother', hpo: [] },
  { subject: 'P-DEMO-3', sample: 'S-DEMO-FATHER', name: 'Demo Father', sex: 'male', affected: 'unaffected', role: 'father', hpo: [] },
]

export async function seedDemoFamily(stores: ClinicalStores, project: ClinicalProject, by: string): Promise<void> {
  const ctx = SYSTEM_ACTOR
  const subjectIds = new Map<string, string>()
  // Parents first, so the proband can name them.
  for (const m of [...MEMBERS].reverse()) {
    const find = async () => (await stores.subjects.list(project.id, { external_id: m.subject }, {})).items[0]
    const isProband = m.role === 'proband'
    const subject = await findOrCreate(find, () =>
      stores.subjects.create(
        ctx,
        project,
        {
          external_id: m.subject,
          display_name: m.name,
          sex: m.sex,
          affected_status: m.affected,
          phenotypes: m.hpo,
          family_id: DEMO_FAMILY,
          mother_id: isProband ? subjectIds.get('P-DEMO-2') : undefined,
          father_id: isProband ? subjectIds.get('P-DEMO-3') : undefined,
        },
        by,
      ),
    )
    subjectIds.set(m.subject, subject.id)
  }
  const samples: Array<{ sample_id: string; role: SampleRole; orders: number }> = []
  for (const m of MEMBERS) {
    // The files themselves are the file service's seed (domain/files/demo-fastq.ts), by the same names.
    const paths = demoFastqPaths(m.sample)
    const find = async () => (await stores.samples.list(project.id, { external_id: m.sample }, {})).items[0]
    const sample = await findOrCreate(find, () =>
      stores.samples.create(
        ctx,
        project,
        {
          external_id: m.sample,
          subject_id: subjectIds.get(m.subject)!,
          type: 'blood',
          fastq: paths.map((path) => `gs://${project.bucket_name}/${path}`),
        },
        by,
      ),
    )
    samples.push({ sample_id: sample.id, role: m.role, orders: sample.orders.length })
  }
  if (samples.some((s) => s.orders > 0)) return
  await stores.orders.create(
    ctx,
    project,
    {
      priority: 'routine',
      test_code: 'WGS-trio',
      indication: 'Global developmental delay and seizures in a 4-year-old boy; trio genome sequencing',
      requester: { name: 'Dr. Demo Clinician', organization: 'Demo Children’s Hospital' },
      samples: samples.map(({ sample_id, role }) => ({ sample_id, role })),
    },
    by,
  )
}

/**
 * The record found by its external id, or created. A creation whose commit landed although the
 * client saw an error (an emulator slow to answer under load; the client library retries, and the
 * retry finds its own key) answers 409: then it is there to be found.
 */
async function findOrCreate<T>(find: () => Promise<T | undefined>, create: () => Promise<T>): Promise<T> {
  const found = await find()
  if (found) return found
  try {
    return await create()
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err
    const created = await find()
    if (!created) throw err
    return created
  }
}
