import type { AuditContext } from '../../lib/audit.js'
import { UUID_RE } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Queue } from '../../lib/queue.js'
import { gsUri, type ObjectStorage, type StoredObject } from '../../lib/storage.js'
import { ApiError } from '../../lib/errors.js'
import type { RunRecord } from '../runs/store.js'
import { ingestionIdForRun, type IngestionRecord, type IngestionStore } from './ingestions.js'
import { INGESTION_REQUESTED } from './messages.js'

/**
 * How ingestions get started: publishing ingestion.requested for one that is recorded, and the
 * automatic ingestion of a run's VCF when a run linked to an order succeeds.
 */

/** Why a queued ingestion waits when its message could not be published. */
export const INGESTION_QUEUE_UNREACHABLE = 'waiting to be started: the ingestion queue could not be reached; retrying'

/** Publishes ingestion.requested and marks it published; on failure the ingestion stays queued with a reason and the reconciler publishes it again. */
export async function dispatchIngestion(
  deps: { ingestions: IngestionStore; queue: Queue; log: Logger },
  ingestion: Pick<IngestionRecord, 'id' | 'project_id'>,
): Promise<boolean> {
  try {
    await deps.queue.publish(INGESTION_REQUESTED, { ingestion_id: ingestion.id, project_id: ingestion.project_id }, { ingestion_id: ingestion.id })
  } catch (error) {
    deps.log.warn('ingestion.requested publish failed; the reconciler will publish it again', { ingestion_id: ingestion.id, error })
    await deps.ingestions
      .markDispatchProblem(ingestion.id, INGESTION_QUEUE_UNREACHABLE)
      .catch((e: unknown) => deps.log.error('could not record the dispatch problem', { ingestion_id: ingestion.id, error: e }))
    return false
  }
  await deps.ingestions
    .markPublished(ingestion.id)
    .catch((error: unknown) => deps.log.warn('could not mark the ingestion published', { ingestion_id: ingestion.id, error }))
  return true
}

const VCF_NAME = /\.vcf(\.b?gz)?$/i
const GVCF_NAME = /\.g\.vcf(\.b?gz)?$/i
/** Names of the VCFs a pipeline's last (annotation) step writes. */
const ANNOTATED_NAME = /(vep|annotated|annot|snpeff|csq)/i

/**
 * The run output to ingest: a `*.vcf`, `*.vcf.gz` or `*.vcf.bgz` (bgzipped or plain), never a gVCF
 * (`*.g.vcf*`, reference blocks of one sample). With several, an annotated one (its name says vep,
 * annotated, snpeff or csq) before the others, then the largest (a joint call over a single
 * sample's, a whole genome over a region), then by name.
 */
export function pickVcf(outputs: readonly StoredObject[]): StoredObject | undefined {
  const name = (o: StoredObject) => o.path.slice(o.path.lastIndexOf('/') + 1)
  const candidates = outputs.filter((o) => VCF_NAME.test(o.path) && !GVCF_NAME.test(o.path))
  return [...candidates].sort(
    (a, b) =>
      Number(ANNOTATED_NAME.test(name(b))) - Number(ANNOTATED_NAME.test(name(a))) ||
      b.size - a.size ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  )[0]
}

/** How many output objects are looked at for a VCF. */
const MAX_OUTPUTS = 10_000

export const RUN_INGESTION_ACTOR: AuditContext = { actor: { type: 'system', id: 'orchestrator' } }

export interface RunIngestionDeps {
  ingestions: IngestionStore
  storage: ObjectStorage
  queue: Queue
  log: Logger
}

/**
 * A run linked to an order succeeded: when its outputs hold a VCF, the order's cache is built from
 * it, by an ingestion whose id comes from the run's (so a repeated success is one ingestion).
 * Answers the ingestion, or undefined when there is nothing to ingest (no order, no VCF, an order
 * that is gone or cancelled).
 */
export async function requestRunIngestion(deps: RunIngestionDeps, run: RunRecord): Promise<IngestionRecord | undefined> {
  if (run.status !== 'succeeded' || !run.order_id || !UUID_RE.test(run.order_id)) return undefined
  const prefix = `runs/${run.id}/`
  const outputs: StoredObject[] = []
  let pageToken: string | undefined
  do {
    const page = await deps.storage.list(run.bucket_name, prefix, { pageSize: 1000, pageToken })
    outputs.push(...page.items)
    pageToken = page.nextPageToken
  } while (pageToken && outputs.length < MAX_OUTPUTS)
  const vcf = pickVcf(outputs)
  if (!vcf) return undefined
  let result
  try {
    result = await deps.ingestions.request(RUN_INGESTION_ACTOR, {
      project: { id: run.project_id, org_id: run.org_id },
      order: { id: run.order_id, accession: run.order_accession ?? run.order_id },
      source_uri: gsUri(run.bucket_name, vcf.path),
      run_id: run.id,
      trigger: 'run',
      requested_by: run.created_by,
      id: ingestionIdForRun(run.id),
    })
  } catch (error) {
    // The order is gone or may no longer have variants (cancelled, entered in error): nothing to build.
    if (error instanceof ApiError && (error.status === 404 || error.status === 409)) {
      deps.log.warn('run succeeded with a VCF, but its order takes no variants', { run_id: run.id, order_id: run.order_id, reason: error.detail })
      return undefined
    }
    throw error
  }
  const { ingestion, created } = result
  if (created || (ingestion.pending && !ingestion.dispatch.published)) await dispatchIngestion(deps, ingestion)
  return ingestion
}
