import { FieldValue, type Query, type Timestamp } from '@google-cloud/firestore'
import type { Db } from '../../lib/db.js'
import type { Page, PageQuery } from '../../lib/pagination.js'
import type { CacheVariantDoc } from './cache.js'
import { genomePage } from './cache.js'
import { regionKeyRange } from './genome-order.js'

/**
 * The project's variant catalogue (the clinical-data service's GET /variants): every distinct
 * variant ever ingested in the project, with how many orders and samples it is seen in now, like
 * Scout's loqusdb. One document per variant and project, `variant_catalogue/<project>~<variant id>`.
 *
 * Observation counts are kept idempotent by construction: each order's observation of a variant is
 * one entry of the document's `observations` map, keyed by the order, written whole (set with merge)
 * and removed when a rebuild of the order's cache no longer has the variant. Writing an entry
 * again (a retried or duplicated ingestion) changes nothing, so nothing is ever counted twice; the
 * counts are derived from the entries when read (orders; distinct samples; homozygous samples).
 * An entry is ~150 bytes, so a variant's document holds the observations of some 5,000 orders
 * within Firestore's 1 MiB: past that, the map would have to be sharded.
 */

export interface Observation {
  accession: string
  /** The build the entry was written from. */
  build_id: string
  /** Order samples carrying the ALT (het, hom_alt, hemi), and those homozygous or hemizygous. */
  samples: string[]
  hom: string[]
}

/** The summary of a variant kept in the catalogue: its identity, place and annotation. */
export const SUMMARY_FIELDS = [
  'variant_id',
  'id_type',
  'genome_order',
  'assembly',
  'chrom',
  'pos',
  'end',
  'ref',
  'alt',
  'variant_type',
  'svtype',
  'genes',
  'consequence',
  'transcript',
  'hgvs_c',
  'hgvs_p',
] as const
export type VariantSummary = Pick<CacheVariantDoc, (typeof SUMMARY_FIELDS)[number]>

export interface CatalogueDoc extends VariantSummary {
  project_id: string
  observations: Record<string, Observation>
  updated: Timestamp
}

export interface ObservationCounts {
  /** Orders whose cache has a sample carrying the variant. */
  orders: number
  /** Distinct samples carrying it, over those orders. */
  samples: number
  /** Of those, homozygous or hemizygous. */
  homozygous: number
}

/** A catalogue entry as the API shows it: the summary, with the variant's id as `id`, and its counts. */
export interface CatalogueVariant extends Omit<VariantSummary, 'variant_id' | 'genome_order'> {
  id: string
  observations: ObservationCounts
  /** The orders observing it (the detail only). */
  observed_in?: Array<{ order_id: string; accession: string; samples: string[]; homozygous: string[] }>
}

export const catalogueDocId = (projectId: string, variantId: string) => `${projectId}~${variantId}`

export function countObservations(observations: Record<string, Observation> | undefined): ObservationCounts {
  const entries = Object.values(observations ?? {}).filter((o) => o.samples.length > 0)
  return {
    orders: entries.length,
    samples: new Set(entries.flatMap((o) => o.samples)).size,
    homozygous: new Set(entries.flatMap((o) => o.hom)).size,
  }
}

/**
 * What one variant of an order's build writes to the catalogue (set with merge): its summary, and
 * the order's observation, or the removal of the order's entry when no sample of the order
 * carries the ALT (a parent-only call of another family member is not the order's observation).
 */
export function catalogueWrite(
  doc: Pick<CacheVariantDoc, (typeof SUMMARY_FIELDS)[number] | 'project_id' | 'carriers' | 'hom_carriers' | 'build_id'>,
  order: { id: string; accession: string },
  now: Timestamp,
) {
  const summary = Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, doc[f]]))
  const entry: Observation | FieldValue = doc.carriers.length
    ? { accession: order.accession, build_id: doc.build_id, samples: doc.carriers, hom: doc.hom_carriers }
    : FieldValue.delete()
  return { ...summary, project_id: doc.project_id, observations: { [order.id]: entry }, updated: now }
}

/** Removes an order's observation of a variant (its rebuilt cache no longer has it). */
export const catalogueRetract = (orderId: string, now: Timestamp) => ({ observations: { [orderId]: FieldValue.delete() }, updated: now })

export function toCatalogueVariant(doc: CatalogueDoc, detail = false): CatalogueVariant {
  const v: CatalogueVariant = {
    id: doc.variant_id,
    id_type: doc.id_type,
    assembly: doc.assembly,
    chrom: doc.chrom,
    pos: doc.pos,
    end: doc.end,
    ref: doc.ref,
    alt: doc.alt,
    variant_type: doc.variant_type,
    svtype: doc.svtype,
    genes: doc.genes,
    consequence: doc.consequence,
    transcript: doc.transcript,
    hgvs_c: doc.hgvs_c,
    hgvs_p: doc.hgvs_p,
    observations: countObservations(doc.observations),
  }
  if (detail) {
    v.observed_in = Object.entries(doc.observations ?? {})
      .filter(([, o]) => o.samples.length > 0)
      .map(([order_id, o]) => ({ order_id, accession: o.accession, samples: o.samples, homozygous: o.hom }))
      .sort((a, b) => (a.accession < b.accession ? -1 : 1))
  }
  return v
}

export interface CatalogueFilters {
  gene?: string
  region?: { chrom: string; start: number; end: number }
}

/** The catalogue's query shape (for the index test): project, optionally a gene, genome order with an optional region range. */
export function catalogueQueryPlan(f: CatalogueFilters) {
  return {
    equal: ['project_id'],
    contains: f.gene ? 'genes' : undefined,
    orderBy: [['genome_order', 'asc']] as Array<[string, 'asc' | 'desc']>,
  }
}

export const catalogueRefs = (db: Db) => ({
  variant: (projectId: string, variantId: string) => db.col('variant_catalogue').doc(catalogueDocId(projectId, variantId)),
  all: () => db.col('variant_catalogue'),
})

/** The catalogue, read (the clinical-data service); ingestion is its only writer (domain/variants/ingest.ts). */
export class VariantCatalogueStore {
  private readonly refs: ReturnType<typeof catalogueRefs>
  constructor(db: Db) {
    this.refs = catalogueRefs(db)
  }

  async get(projectId: string, variantId: string): Promise<CatalogueVariant | undefined> {
    const doc = (await this.refs.variant(projectId, variantId).get()).data() as CatalogueDoc | undefined
    return doc && doc.project_id === projectId ? toCatalogueVariant(doc, true) : undefined
  }

  async list(projectId: string, filters: CatalogueFilters, query: PageQuery): Promise<Page<CatalogueVariant>> {
    let q: Query = this.refs.all().where('project_id', '==', projectId)
    if (filters.gene) q = q.where('genes', 'array-contains', filters.gene)
    return genomePage<CatalogueDoc, CatalogueVariant>(q, {
      range: filters.region ? regionKeyRange(filters.region.chrom, filters.region.start, filters.region.end) : undefined,
      filters: { catalogue: projectId, ...filters },
      query,
      map: (doc) => toCatalogueVariant(doc),
    })
  }
}
