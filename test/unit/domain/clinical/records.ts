import { Timestamp } from '@google-cloud/firestore'
import { GERMLINE_ID } from '../../../../domain/clinical/labflows.js'
import type { OrderRecord, SampleOrderRef, SampleRecord, SubjectRecord } from '../../../../domain/clinical/model.js'
import { PROJECT } from './clinical-model.js'

/** Records for the decision tables: a proband with one sample, by default in no order. */
export const NOW = Timestamp.fromMillis(Date.UTC(2026, 10, 26, 9))
const EARLIER = Timestamp.fromMillis(Date.UTC(2026, 10, 1))
export const ACCESSION = 'ORD-2026-000001'

export const subjectRecord = (over: Partial<SubjectRecord> = {}): SubjectRecord => ({
  id: 'sub-1',
  project_id: PROJECT.id,
  org_id: PROJECT.org_id,
  external_id: 'P-1',
  display_name: 'Proband',
  sex: 'male',
  affected_status: 'affected',
  phenotypes: ['HP:0001250'],
  family_id: 'FAM-1',
  mother_id: 'sub-mum',
  father_id: 'sub-dad',
  sample_count: 1,
  created: EARLIER,
  updated: EARLIER,
  created_by: 'u-lab',
  ...over,
})

/** A sample's reference to the order ORD-2026-000001: frozen while the order is signed. */
export const orderRef = (frozen: boolean): SampleOrderRef => ({ order_id: 'ord-1', accession: ACCESSION, frozen })

export const sampleRecord = (over: Partial<SampleRecord> = {}): SampleRecord => ({
  id: 'sam-1',
  project_id: PROJECT.id,
  org_id: PROJECT.org_id,
  external_id: 'S-1',
  subject_id: 'sub-1',
  type: 'blood',
  fastq: ['gs://lab/fastq/S-1_R1.fastq.gz', 'gs://lab/fastq/S-1_R2.fastq.gz'],
  orders: [],
  created: EARLIER,
  updated: EARLIER,
  created_by: 'u-lab',
  ...over,
})

export const orderRecord = (over: Partial<OrderRecord> = {}): OrderRecord => ({
  id: 'ord-1',
  project_id: PROJECT.id,
  org_id: PROJECT.org_id,
  accession: ACCESSION,
  status: 'draft',
  priority: 'routine',
  test_code: 'WGS',
  outcome: 'pending',
  labflow: { id: GERMLINE_ID },
  samples: [{ sample_id: 'sam-1', role: 'proband', added_at: EARLIER, added_by: 'u-lab' }],
  sample_ids: ['sam-1'],
  frozen: false,
  ever_signed: false,
  status_history: [],
  created: EARLIER,
  updated: EARLIER,
  created_by: 'u-lab',
  ...over,
})
