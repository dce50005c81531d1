import type { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { iso } from '../../lib/db.js'
import { badRequest, notFound } from '../../lib/errors.js'
import type { OrderRecord } from '../../domain/clinical/model.js'
import type { CacheFilters, CacheHead } from '../../domain/variants/cache.js'
import { parseZygosityFilter } from '../../domain/variants/cache.js'
import { parseRegion } from '../../domain/variants/genome-order.js'
import { INGESTION_STEPS, type IngestionRecord } from '../../domain/variants/ingestions.js'
import type { VariantCacheEnv } from './deps.js'
import type { CacheStatus, Ingestion, VariantListQuery } from './schemas.js'

/** An order of the request's project by id or accession; another project's is a 404, as if it did not exist. */
export async function loadOrder(c: Context<VariantCacheEnv>, idOrAccession: string): Promise<OrderRecord> {
  const order = await c.get('deps').orders.resolve(c.get('project').id, idOrAccession)
  if (!order) throw notFound('order')
  return order
}

/** A region (chr17:43044295-43125483), or a 400 naming the parameter. */
export function regionFilter(text: string | undefined): CacheFilters['region'] {
  if (text === undefined) return undefined
  const region = parseRegion(text)
  if (!region || region.end >= 1e10) throw badRequest(`region: '${text}' is not a region such as chr17:43044295-43125483`)
  return region
}

export function cacheFilters(q: z.infer<typeof VariantListQuery>): CacheFilters {
  return {
    gene: q.gene,
    region: regionFilter(q.region),
    consequence: q.consequence
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    min_qual: q.min_qual,
    filter: q.filter,
    zygosity: q.zygosity ? parseZygosityFilter(q.zygosity) : undefined,
  }
}

export function toIngestion(r: IngestionRecord): z.infer<typeof Ingestion> {
  return {
    id: r.id,
    order_id: r.order_id,
    order_accession: r.order_accession,
    status: r.status,
    status_reason: r.status_reason,
    source_uri: r.source_uri,
    run_id: r.run_id,
    trigger: r.trigger,
    requested_by: r.requested_by,
    created: iso(r.created)!,
    started: iso(r.started),
    finished: iso(r.finished),
    variant_count: r.variant_count,
    record_count: r.counts?.records,
    counts: r.counts,
    assembly: r.assembly,
    assembly_reason: r.assembly_reason,
    samples: r.samples,
    sample_mismatch: r.sample_mismatch,
    error: r.error,
    replaced_build_id: r.replaced_build_id,
    steps: INGESTION_STEPS.map((name) => {
      const s = r.steps[name]
      return {
        name,
        status: s?.finished ? 'done' : s?.started ? 'running' : 'pending',
        started: iso(s?.started),
        finished: iso(s?.finished),
        progress: s?.progress,
      }
    }),
  }
}

export function toStatus(order: OrderRecord, head: CacheHead | undefined, latest: IngestionRecord | undefined): z.infer<typeof CacheStatus> {
  const active = head?.active
  return {
    order_id: order.id,
    order_accession: order.accession,
    status: latest?.status ?? 'none',
    ingestion: latest ? toIngestion(latest) : null,
    active: active
      ? {
          ingestion_id: active.ingestion_id,
          source_uri: active.source_uri,
          run_id: active.run_id,
          variant_count: active.variant_count,
          assembly: active.assembly,
          ready_at: iso(active.switched_at)!,
          samples: active.samples,
        }
      : null,
  }
}
