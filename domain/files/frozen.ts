import type { Db } from '../../lib/db.js'
import { gsUri } from '../../lib/storage/port.js'
import { clinicalRefs, type SampleRecord } from '../clinical/model.js'
import type { FileProject, FrozenSample } from './decide.js'

/** The sample fields that hold a single data file's gs:// URI (`fastq` holds a list). */
const SINGLE_FILE_FIELDS = ['bam', 'cram', 'vcf'] as const

const names = (s: SampleRecord, uri: string) => s.fastq.includes(uri) || SINGLE_FILE_FIELDS.some((field) => s[field] === uri)

/**
 * The frozen samples of the project that name each of `paths` (DOMAIN.md: a sample in a signed
 * order is frozen; its data are `gs://<bucket>/<path>` URIs in `fastq`, `bam`, `cram`, `vcf`), by
 * path. Four queries whatever the number of paths (`array-contains-any` on fastq, `in` on each
 * other field; at most the two paths of a copy or move, far under Firestore's 30 values), each
 * served by a composite index with project_id (firestore.indexes.json). Whether a sample is frozen
 * is read from its own `orders[].frozen`, which signing and entered_in_error write on the sample.
 * Not transactional: the file service acts on storage, which no Firestore transaction covers
 * (docs/files.md says what that leaves open).
 */
export async function frozenSamplesNaming(db: Db, project: FileProject, paths: readonly string[]): Promise<Map<string, FrozenSample[]>> {
  const byPath = new Map(paths.map((path) => [path, [] as FrozenSample[]]))
  const uris = [...new Set(paths)].map((path) => gsUri(project.bucket_name, path))
  if (!uris.length) return byPath
  const samples = clinicalRefs(db).samples().where('project_id', '==', project.id)
  const answers = await Promise.all([
    samples.where('fastq', 'array-contains-any', uris).get(),
    ...SINGLE_FILE_FIELDS.map((field) => samples.where(field, 'in', uris).get()),
  ])
  const found = new Map<string, SampleRecord>()
  for (const answer of answers) for (const doc of answer.docs) found.set(doc.id, doc.data() as SampleRecord)
  const ordered = [...found.values()].sort((a, b) => (a.external_id < b.external_id ? -1 : a.external_id > b.external_id ? 1 : 0))
  for (const sample of ordered) {
    const orders = sample.orders.filter((o) => o.frozen).map((o) => o.accession)
    if (!orders.length) continue
    for (const [path, frozen] of byPath) {
      if (names(sample, gsUri(project.bucket_name, path))) frozen.push({ id: sample.id, external_id: sample.external_id, orders })
    }
  }
  return byPath
}
