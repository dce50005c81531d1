import { FieldPath, type Query, type Timestamp } from '@google-cloud/firestore'
import type { Db } from '../../lib/db.js'
import { badRequest } from '../../lib/errors.js'
import { sha256 } from '../../lib/ids.js'
import { pageSizeOf, SCAN_BUDGET, type Page, type PageQuery } from '../../lib/pagination.js'
import type { Assembly } from './assembly.js'
import { regionKeyRange } from './genome-order.js'
import { ZYGOSITIES, type SampleCall, type VariantRecord, type Zygosity } from './records.js'

/**
 * The variant cache of an order (DOMAIN.md, "Variants and the variant cache"): the variants of one
 * VCF, each with every order sample's call under its role, paged in genome order with filters.
 *
 * Storage. A build is the variants one ingestion wrote: one document per variant in `cache_variants`,
 * `<build id>~<variant id>`, so that writing it again (a retried step) overwrites the same document.
 * The order's head, `variant_caches/<order id>`, names the active build; readers read the head, then
 * query that build only, so a build being written (or deleted) is never seen, and the switch to a
 * new build is one transaction on the head.
 */

/** Roles that are unique in an order (signing guarantees it), so a variant has one zygosity for each: the zygosity filters' roles. */
export const FILTER_ROLES = ['proband', 'mother', 'father', 'tumor', 'normal'] as const
export type FilterRole = (typeof FILTER_ROLES)[number]
/** The order roles in the order calls are shown (proband first), then any other. */
export const ROLE_ORDER = ['proband', 'mother', 'father', 'sibling', 'relative', 'tumor', 'normal']

/** A zygosity filter value: one of ZYGOSITIES, or `alt` (the sample carries the ALT: het, hom_alt or hemi). */
export const CARRIER_ZYGOSITIES: readonly Zygosity[] = ['het', 'hom_alt', 'hemi']

/** One order sample as a build saw it: matched to a VCF column, or missing from the VCF. */
export interface BuildSample {
  sample_id: string
  /** The sample's external id (its name in the samplesheet). */
  sample: string
  role: string
  /** The VCF column it was matched to, or null when the VCF has none for it. */
  vcf_sample: string | null
}

/** A sample's call of one variant as stored (the matched samples of the build). */
export interface CachedCall extends Omit<SampleCall, 'sample'> {
  sample_id: string
  sample: string
  role: string
  vcf_sample: string
}

/** A call as readers get it: every order sample of the build, with `in_vcf: false` for one the VCF did not have. */
export type OrderVariantCall =
  | (CachedCall & { in_vcf: true })
  | {
      sample_id: string
      sample: string
      role: string
      vcf_sample: null
      in_vcf: false
      genotype: null
      source_genotype: null
      zygosity: null
      depth: null
      genotype_quality: null
      allele_fraction: null
      allele_depths: null
    }

/**
 * The document of one variant of one build (Firestore `cache_variants/<build id>~<variant id>`):
 * the variant as the VCF record gave it (`VariantRecord`, its id as `variant_id`), with the order's
 * calls in place of the VCF's samples.
 */
export interface CacheVariantDoc extends Omit<VariantRecord, 'id' | 'samples'> {
  project_id: string
  order_id: string
  build_id: string
  variant_id: string
  /** FILTER is PASS: the `filter=PASS` query is an equality. */
  pass: boolean
  calls: CachedCall[]
  /** Order samples whose call carries the ALT (het, hom_alt, hemi): GET /samples/{id}/variants, and the catalogue's counts. */
  carriers: string[]
  /** Of those, the homozygous or hemizygous ones. */
  hom_carriers: string[]
  /** zyg_proband, zyg_mother, …: the zygosity of the sample of each unique role, for the zygosity filters. */
  [zyg: `zyg_${string}`]: Zygosity | undefined
}

/** A variant of an order's active cache, as the variant-cache service and the report service read it. */
export interface OrderVariant extends Omit<VariantRecord, 'samples' | 'genome_order'> {
  order_id: string
  build_id: string
  /** Every order sample of the build (proband first), each with its call or `in_vcf: false`. */
  calls: OrderVariantCall[]
  /** The order's samples and roles as the build saw them. */
  roles: BuildSample[]
}

/** One sample's call of a variant, across the project's ready caches (GET /samples/{id}/variants). */
export interface SampleVariant extends Omit<OrderVariant, 'calls' | 'roles' | 'annotations'> {
  order_accession: string
  call: CachedCall
}

/** Firestore's bound on the values of one `in` filter: the ready caches a sample's variants are read from. */
export const MAX_SAMPLE_ORDERS = 30

/** What the head says of the active build. */
export interface ActiveBuild {
  build_id: string
  ingestion_id: string
  source_uri: string
  run_id: string | null
  variant_count: number
  samples: BuildSample[]
  assembly: Assembly | null
  switched_at: Timestamp
}

/** The head of an order's cache (Firestore `variant_caches/<order id>`). */
export interface CacheHead {
  project_id: string
  order_id: string
  order_accession: string
  /** The build readers see; absent until the first ingestion is ready. */
  active?: ActiveBuild
  /** The newest ingestion requested for the order: an older one still waiting is superseded by it. */
  latest_ingestion?: { id: string; created: Timestamp }
  /** The one ingestion run (an ingestion and who runs it) that may take steps for this order now, until `expires`. */
  lock?: { ingestion_id: string; holder: string; expires: Timestamp }
  /** Builds that have documents in cache_variants (the active one, and any being written or left to delete). */
  builds: string[]
  /** Builds whose observations are in the catalogue. */
  catalogued: string[]
  updated: Timestamp
}

export const cacheDocId = (buildId: string, variantId: string) => `${buildId}~${variantId}`

/** The cache of one variant in a build, from the reader's variant and the build's sample matching. */
export function toCacheDoc(
  v: VariantRecord,
  ids: { project_id: string; order_id: string; build_id: string },
  samples: ReadonlyArray<BuildSample>,
): CacheVariantDoc {
  const byColumn = new Map(samples.flatMap((s) => (s.vcf_sample === null ? [] : [[s.vcf_sample, s] as const])))
  const calls: CachedCall[] = []
  for (const call of v.samples) {
    const s = byColumn.get(call.sample)
    if (!s) continue
    const { sample: vcf_sample, ...rest } = call
    calls.push({ ...rest, sample_id: s.sample_id, sample: s.sample, role: s.role, vcf_sample })
  }
  calls.sort((a, b) => roleRank(a.role) - roleRank(b.role))
  const doc: CacheVariantDoc = {
    ...ids,
    variant_id: v.id,
    id_type: v.id_type,
    genome_order: v.genome_order,
    assembly: v.assembly,
    chrom: v.chrom,
    pos: v.pos,
    end: v.end,
    ref: v.ref,
    alt: v.alt,
    variant_type: v.variant_type,
    qual: v.qual,
    filter: v.filter,
    pass: v.filter.length === 1 && v.filter[0] === 'PASS',
    vcf_ids: v.vcf_ids,
    svtype: v.svtype,
    svlen: v.svlen,
    mate: v.mate,
    genes: v.genes,
    consequence: v.consequence,
    impact: v.impact,
    transcript: v.transcript,
    hgvs_c: v.hgvs_c,
    hgvs_p: v.hgvs_p,
    annotations: v.annotations,
    calls,
    carriers: calls.filter((c) => CARRIER_ZYGOSITIES.includes(c.zygosity)).map((c) => c.sample_id),
    hom_carriers: calls.filter((c) => c.zygosity === 'hom_alt' || c.zygosity === 'hemi').map((c) => c.sample_id),
    alt_index: v.alt_index,
    alt_count: v.alt_count,
    source_line: v.source_line,
  }
  for (const role of FILTER_ROLES) {
    const ofRole = calls.filter((c) => c.role === role)
    if (ofRole.length === 1) doc[`zyg_${role}`] = ofRole[0]!.zygosity
  }
  return doc
}

const roleRank = (role: string) => {
  const i = ROLE_ORDER.indexOf(role)
  return i < 0 ? ROLE_ORDER.length : i
}

/** The reader's view of a stored variant: every sample of the build, in role order. */
export function toOrderVariant(doc: CacheVariantDoc, samples: ReadonlyArray<BuildSample>): OrderVariant {
  const byId = new Map(doc.calls.map((c) => [c.sample_id, c]))
  const roles = [...samples].sort((a, b) => roleRank(a.role) - roleRank(b.role))
  const calls: OrderVariantCall[] = roles.map((s) => {
    const call = byId.get(s.sample_id)
    if (call) return { ...call, in_vcf: true }
    return {
      sample_id: s.sample_id,
      sample: s.sample,
      role: s.role,
      vcf_sample: null,
      in_vcf: false,
      genotype: null,
      source_genotype: null,
      zygosity: null,
      depth: null,
      genotype_quality: null,
      allele_fraction: null,
      allele_depths: null,
    }
  })
  return {
    id: doc.variant_id,
    order_id: doc.order_id,
    build_id: doc.build_id,
    id_type: doc.id_type,
    assembly: doc.assembly,
    chrom: doc.chrom,
    pos: doc.pos,
    end: doc.end,
    ref: doc.ref,
    alt: doc.alt,
    variant_type: doc.variant_type,
    qual: doc.qual,
    filter: doc.filter,
    vcf_ids: doc.vcf_ids,
    svtype: doc.svtype,
    svlen: doc.svlen,
    mate: doc.mate,
    genes: doc.genes,
    consequence: doc.consequence,
    impact: doc.impact,
    transcript: doc.transcript,
    hgvs_c: doc.hgvs_c,
    hgvs_p: doc.hgvs_p,
    annotations: doc.annotations ?? [],
    calls,
    roles,
    alt_index: doc.alt_index,
    alt_count: doc.alt_count,
    source_line: doc.source_line,
  }
}

// -------------------------------------------------------------------------------------------
// Filters and their query plan

export interface CacheFilters {
  gene?: string
  region?: { chrom: string; start: number; end: number }
  /** The most severe consequence is one of these (SO terms). */
  consequence?: string[]
  min_qual?: number
  /** Only `PASS` is a filter value. */
  filter?: 'PASS'
  /** Per unique role, the zygosities accepted. */
  zygosity?: Partial<Record<FilterRole, Zygosity[]>>
}

/** Firestore's bound on the alternatives of one query (the product of its `in` lists, in disjunctive normal form). */
export const MAX_DISJUNCTIONS = 30

/**
 * The roles whose zygosity filters go into one query together: a family's, a tumour's. Every
 * subset of a group's roles, with or without a consequence, has an index of its own: 22 query
 * shapes, where every subset of all five roles would make 64.
 */
export const ROLE_GROUPS: ReadonlyArray<readonly FilterRole[]> = [
  ['proband', 'mother', 'father'],
  ['tumor', 'normal'],
]

export interface CacheQueryPlan {
  /** Fields under `==` (one value) or `in` (several), build_id first. */
  equal: Array<[field: string, values: unknown[]]>
  contains?: [field: string, value: string]
  /** A genome_order range (a region). */
  range?: { start: string; end: string }
  orderBy: Array<[string, 'asc' | 'desc']>
  /** What the query cannot say, checked on each document read (a page may then hold fewer items). */
  post: Array<(doc: CacheVariantDoc) => boolean>
}

/**
 * How a filtered listing of a build is asked of Firestore, each query shape served by an index of
 * its own (firestore.indexes.json; Firestore documents merging indexes for equalities and an order,
 * not with a region's range, and not reliably for `in` lists). With a gene, the query is the gene's
 * array-contains and every other filter is checked on the documents read, a gene's variants being
 * few. Without one, the query holds the consequence and the zygosities of the roles of one
 * ROLE_GROUPS group (the first the filters name), as `in` lists while they make at most
 * MAX_DISJUNCTIONS alternatives (else the longest lists are checked on the documents instead); the
 * other group's roles and `filter=PASS` (most variants pass: an index would spare little) are
 * checked on the documents, as is `min_qual`: a range on qual would make Firestore order by qual
 * first, not by genome order.
 */
export function cacheQueryPlan(buildId: string, f: CacheFilters): CacheQueryPlan {
  const post: CacheQueryPlan['post'] = []
  const check = ([field, values]: [string, unknown[]]) => post.push((d) => values.includes((d as unknown as Record<string, unknown>)[field]))
  const roles = FILTER_ROLES.filter((role) => f.zygosity?.[role]?.length)
  const group = ROLE_GROUPS.find((g) => roles.some((role) => g.includes(role))) ?? []
  const lists: Array<[string, unknown[]]> = [
    ...(f.consequence?.length ? [['consequence', f.consequence] as [string, unknown[]]] : []),
    ...roles.filter((role) => group.includes(role)).map((role): [string, unknown[]] => [`zyg_${role}`, f.zygosity![role]!]),
  ]
  roles.filter((role) => !group.includes(role)).forEach((role) => check([`zyg_${role}`, f.zygosity![role]!]))
  // With a gene the query is the gene's alone: its variants are few, and indexes for a gene with each
  // combination of the other filters would double their number.
  const inQuery = f.gene ? [] : [...lists]
  const alternatives = () => inQuery.reduce((n, [, values]) => n * values.length, 1)
  while (alternatives() > MAX_DISJUNCTIONS) {
    const longest = inQuery.reduce((at, [, values], i) => (values.length > inQuery[at]![1].length ? i : at), 0)
    inQuery.splice(longest, 1)
  }
  lists.filter((list) => !inQuery.includes(list)).forEach(check)
  if (f.filter === 'PASS') post.push((d) => d.pass)
  if (f.min_qual !== undefined) {
    const min = f.min_qual
    post.push((d) => d.qual !== null && d.qual >= min)
  }
  const range = f.region ? regionKeyRange(f.region.chrom, f.region.start, f.region.end) : undefined
  return {
    equal: [['build_id', [buildId]], ...inQuery],
    contains: f.gene ? ['genes', f.gene] : undefined,
    range,
    orderBy: [['genome_order', 'asc']],
    post,
  }
}

/** Parses `proband:het|hom_alt,mother:hom_ref` (or `proband=het`); `alt` stands for het, hom_alt and hemi. */
export function parseZygosityFilter(text: string): Partial<Record<FilterRole, Zygosity[]>> {
  const out: Partial<Record<FilterRole, Zygosity[]>> = {}
  for (const clause of text.split(',').map((c) => c.trim())) {
    const m = /^([a-z_]+)\s*[:=]\s*([a-z_|]+)$/.exec(clause)
    if (!m) throw badRequest(`zygosity: '${clause}' is not <role>:<zygosity> (e.g. proband:het, mother:hom_ref)`)
    const role = m[1] as FilterRole
    if (!FILTER_ROLES.includes(role)) {
      throw badRequest(`zygosity: role '${m[1]}' is not one a sample holds alone in an order; use one of ${FILTER_ROLES.join(', ')}`)
    }
    if (out[role]) throw badRequest(`zygosity: ${role} is named twice`)
    const values = new Set<Zygosity>()
    for (const v of m[2]!.split('|')) {
      if (v === 'alt') CARRIER_ZYGOSITIES.forEach((z) => values.add(z))
      else if ((ZYGOSITIES as readonly string[]).includes(v)) values.add(v as Zygosity)
      else throw badRequest(`zygosity: '${v}' is not one of ${[...ZYGOSITIES, 'alt'].join(', ')}`)
    }
    out[role] = [...values]
  }
  return out
}

// -------------------------------------------------------------------------------------------
// Keyset pages on genome order, with filters checked on the documents read

interface CacheCursor {
  /** The last genome_order key read (unique in a build: it ends with the variant id). */
  g: string
  /** Its document id, where several builds are read at once (the same variant in two orders). */
  i?: string
  /** The filters' fingerprint. */
  f: string
}

const fingerprint = (filters: unknown) => sha256(JSON.stringify(filters)).slice(0, 16)

export function encodeCursor(c: CacheCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url')
}

export function decodeCursor(token: string, filters: unknown): { g: string; i?: string } {
  let c: CacheCursor
  try {
    c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as CacheCursor
  } catch {
    throw badRequest('page_token is not valid')
  }
  if (typeof c?.g !== 'string' || typeof c.f !== 'string' || (c.i !== undefined && typeof c.i !== 'string'))
    throw badRequest('page_token is not valid')
  if (c.f !== fingerprint(filters)) throw badRequest('page_token was made for other filters; start again without it')
  return { g: c.g, i: c.i }
}

/**
 * One page of a query ordered by genome_order, keyset-paged on that key (which stays valid across a
 * rebuild of the cache: the next page continues after the same position in the new build). Documents
 * failing `post` are skipped; at most SCAN_BUDGET more are read, so a page can be short (even empty)
 * and still carry a token.
 */
export async function genomePage<D, T>(
  base: Query,
  opts: {
    range?: { start: string; end: string }
    post?: Array<(doc: D) => boolean>
    filters: unknown
    query: PageQuery
    map: (doc: D) => T
    /** Order by document id after genome_order: for queries over several builds, where a key repeats. */
    byId?: boolean
  },
): Promise<Page<T>> {
  const pageSize = pageSizeOf(opts.query)
  const start = opts.query.page_token ? decodeCursor(opts.query.page_token, opts.filters) : undefined
  if (start && Boolean(opts.byId) !== (start.i !== undefined)) throw badRequest('page_token is not valid here')
  const post = opts.post ?? []
  let q = base
  if (opts.range) q = q.where('genome_order', '>=', opts.range.start).where('genome_order', '<', opts.range.end)
  q = q.orderBy('genome_order', 'asc')
  if (opts.byId) q = q.orderBy(FieldPath.documentId(), 'asc')
  const items: T[] = []
  const token = (at: { g: string; i?: string }) => encodeCursor({ ...at, f: fingerprint(opts.filters) })
  let last = start
  let read = 0
  const limit = pageSize + SCAN_BUDGET
  for (;;) {
    const chunk = post.length ? Math.min(Math.max(pageSize * 2, 200), limit - read) : pageSize + 1
    const from = last === undefined ? q : opts.byId ? q.startAfter(last.g, last.i) : q.startAfter(last.g)
    const snap = await from.limit(chunk).get()
    for (const d of snap.docs) {
      const doc = d.data() as D
      read++
      if (post.every((p) => p(doc))) {
        // A match beyond a full page: there is a next page, which starts after the last document before it.
        if (items.length === pageSize) return { items, nextPageToken: token(last!) }
        items.push(opts.map(doc))
      }
      last = { g: d.get('genome_order') as string, ...(opts.byId ? { i: d.id } : {}) }
    }
    if (snap.docs.length < chunk) return { items }
    if (read >= limit) return { items, nextPageToken: token(last!) }
  }
}

// -------------------------------------------------------------------------------------------
// The reader

export const cacheRefs = (db: Db) => ({
  head: (orderId: string) => db.col('variant_caches').doc(orderId),
  variant: (buildId: string, variantId: string) => db.col('cache_variants').doc(cacheDocId(buildId, variantId)),
  variants: () => db.col('cache_variants'),
})

/** The documents of one build, for streaming reads and deletion. */
export const buildQuery = (db: Db, buildId: string) => cacheRefs(db).variants().where('build_id', '==', buildId)

/**
 * The active variant cache of an order, read: what the variant-cache service lists and the report
 * service reads a variant from. Only the active build is ever read, so a rebuild shows readers
 * the old cache until the switch and the new one after it, never a mix.
 */
export class VariantCacheStore {
  readonly refs: ReturnType<typeof cacheRefs>
  constructor(private readonly db: Db) {
    this.refs = cacheRefs(db)
  }

  /** The head of an order's cache, or undefined (never ingested, or another project's order). */
  async head(projectId: string, orderId: string): Promise<CacheHead | undefined> {
    const head = (await this.refs.head(orderId).get()).data() as CacheHead | undefined
    return head?.project_id === projectId ? head : undefined
  }

  /**
   * One variant of an order's active cache with every order sample's call under its role, or
   * undefined when the order (of this project) has no ready cache or the cache has no such variant.
   * `orderId` is the order's id (a UUID), as other records store it.
   */
  async getVariant(projectId: string, orderId: string, variantId: string): Promise<OrderVariant | undefined> {
    const active = (await this.head(projectId, orderId))?.active
    if (!active) return undefined
    const snap = await this.refs.variant(active.build_id, variantId).get()
    const doc = snap.data() as CacheVariantDoc | undefined
    return doc && doc.order_id === orderId ? toOrderVariant(doc, active.samples) : undefined
  }

  /** A page of the active cache in genome order with the filters; undefined without a ready cache. */
  async listVariants(
    projectId: string,
    orderId: string,
    filters: CacheFilters,
    query: PageQuery,
  ): Promise<{ page: Page<OrderVariant>; active: ActiveBuild } | undefined> {
    const active = (await this.head(projectId, orderId))?.active
    if (!active) return undefined
    const plan = cacheQueryPlan(active.build_id, filters)
    let q: Query = this.refs.variants()
    for (const [field, values] of plan.equal) q = values.length === 1 ? q.where(field, '==', values[0]) : q.where(field, 'in', values)
    if (plan.contains) q = q.where(plan.contains[0], 'array-contains', plan.contains[1])
    // A page omits the transcript list (the detail has it).
    const page = await genomePage<CacheVariantDoc, OrderVariant>(q, {
      range: plan.range,
      post: plan.post,
      filters: { order: orderId, ...filters },
      query,
      map: (doc) => ({ ...toOrderVariant(doc, active.samples), annotations: [] }),
    })
    return { page, active }
  }

  /**
   * One sample's calls carrying the ALT, across the ready caches of the orders that hold it (at
   * most MAX_SAMPLE_ORDERS, the newest), in genome order; a variant called in two orders is listed
   * once for each.
   */
  async sampleVariants(
    projectId: string,
    sampleId: string,
    orders: ReadonlyArray<{ order_id: string }>,
    filters: { region?: { chrom: string; start: number; end: number } },
    query: PageQuery,
  ): Promise<Page<SampleVariant>> {
    const ids = [...new Set(orders.map((o) => o.order_id))].slice(-MAX_SAMPLE_ORDERS)
    const heads = ids.length ? await this.db.firestore.getAll(...ids.map((id) => this.refs.head(id))) : []
    const active = heads.flatMap((snap) => {
      const h = snap.data() as CacheHead | undefined
      return h?.project_id === projectId && h.active ? [{ build: h.active.build_id, accession: h.order_accession }] : []
    })
    if (!active.length) return { items: [] }
    const accessionOf = new Map(active.map((a) => [a.build, a.accession]))
    const builds = active.map((a) => a.build)
    const q = this.refs
      .variants()
      .where('build_id', builds.length === 1 ? '==' : 'in', builds.length === 1 ? builds[0] : builds)
      .where('carriers', 'array-contains', sampleId)
    return genomePage<CacheVariantDoc, SampleVariant>(q, {
      range: filters.region ? regionKeyRange(filters.region.chrom, filters.region.start, filters.region.end) : undefined,
      filters: { sample: sampleId, ...filters },
      query,
      byId: true,
      map: (doc) => {
        const { calls: _calls, roles: _roles, annotations: _annotations, ...variant } = toOrderVariant(doc, [])
        return { ...variant, order_accession: accessionOf.get(doc.build_id) ?? '', call: doc.calls.find((c) => c.sample_id === sampleId)! }
      },
    })
  }
}
