import { Timestamp, type DocumentSnapshot } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from './audit.js'
import type { Clock } from './clock.js'
import type { Db } from './db.js'
import { conflict } from './errors.js'
import { sha256 } from './ids.js'
import { paginate, type Page, type PageQuery } from './pagination.js'

/**
 * The pipeline catalogue's domain: what a pipeline is, what its inputs are, how versions order,
 * and how a run's params are checked against the inputs. Shared by the compute service (which
 * serves the catalogue) and the orchestrator (which builds Batch jobs from a run's snapshot).
 */
export const PIPELINE_TYPES = ['direct_nextflow', 'direct_wdl', 'container_entrypoint'] as const
export type PipelineType = (typeof PIPELINE_TYPES)[number]

export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'file', 'storage_path', 'array'] as const
export type InputType = (typeof INPUT_TYPES)[number]
export const ITEM_TYPES = ['string', 'file', 'storage_path'] as const
export type ItemType = (typeof ITEM_TYPES)[number]

/**
 * One declared input. `file` is a gs:// URI of one object; `storage_path` a gs:// URI of an object
 * or a folder (it may end in '/'). Arrays name their item type and, optionally, how many entries
 * they take (paired reads: exactly two).
 */
export interface PipelineInput {
  name: string
  type: InputType
  items?: ItemType
  min_items?: number
  max_items?: number
  required: boolean
  description?: string
}

/** What the Batch job needs, snapshotted into each run so that a later overwrite never changes a submitted run. */
export interface PipelineExecution {
  type: PipelineType
  /** The image the job runs: the engine (Nextflow, Cromwell) or, for container_entrypoint, the tool itself. */
  container: string
  /** container_entrypoint: the entrypoint of the container (e.g. /bin/sh) and its arguments. */
  entrypoint?: string
  commands?: string[]
  /** direct_nextflow and direct_wdl: where the workflow comes from (a URL or Nextflow repository, or inline source). */
  workflow?: { url?: string; source?: string; revision?: string }
  default_profile?: string
  resources: { cpu_milli: number; memory_mib: number; max_run_duration_seconds?: number }
}

export interface PipelineRecord extends PipelineExecution {
  id: string
  /** 'platform' for the catalogue every project sees, else the id of the project that created it. */
  scope: string
  slug: string
  name: string
  version: string
  /** A string whose lexical order is semantic-version order within a slug (for listing). */
  version_key: string
  tags: string[]
  description: string
  inputs: PipelineInput[]
  /** True when params beyond the declared inputs are passed through (nfcore-demo: inputs not listed). */
  additional_params: boolean
  created: Timestamp
  updated: Timestamp
  created_by: string
}

/** What a client (or the seeder) declares; the store adds identity, scope and timestamps. */
export type PipelineDefinition = Omit<PipelineRecord, 'id' | 'scope' | 'version_key' | 'created' | 'updated' | 'created_by'>

export const PLATFORM_SCOPE = 'platform'

export const executionOf = (p: PipelineExecution): PipelineExecution => ({
  type: p.type,
  container: p.container,
  entrypoint: p.entrypoint,
  commands: p.commands,
  workflow: p.workflow,
  default_profile: p.default_profile,
  resources: p.resources,
})

export const requiredInputs = (p: Pick<PipelineRecord, 'inputs'>) => p.inputs.filter((i) => i.required).map((i) => i.name)

// ---------------------------------------------------------------------------------------------
// Semantic versions (semver.org 2.0.0)

const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

export interface SemVer {
  major: number
  minor: number
  patch: number
  prerelease: string[]
}

export function parseSemver(version: string): SemVer | undefined {
  const m = SEMVER_RE.exec(version)
  if (!m) return undefined
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), prerelease: m[4] ? m[4].split('.') : [] }
}

export const isSemver = (version: string) => parseSemver(version) !== undefined

/** Semantic-version precedence: negative when a < b. Build metadata is ignored, as semver says. */
export function compareSemver(a: string, b: string): number {
  const x = parseSemver(a)
  const y = parseSemver(b)
  if (!x || !y) throw new Error(`not a semantic version: ${!x ? a : b}`)
  for (const k of ['major', 'minor', 'patch'] as const) if (x[k] !== y[k]) return x[k] - y[k]
  // A release outranks its pre-releases.
  if (!x.prerelease.length || !y.prerelease.length) return y.prerelease.length - x.prerelease.length
  for (let i = 0; i < Math.max(x.prerelease.length, y.prerelease.length); i++) {
    const p = x.prerelease[i]
    const q = y.prerelease[i]
    if (p === undefined) return -1
    if (q === undefined) return 1
    const pn = /^\d+$/.test(p)
    const qn = /^\d+$/.test(q)
    if (pn && qn && Number(p) !== Number(q)) return Number(p) - Number(q)
    if (pn !== qn) return pn ? -1 : 1
    if (p !== q) return p < q ? -1 : 1
  }
  return 0
}

/** Zero-padded numbers, then '~' for releases (sorting after any pre-release tag), for ordered listing. */
export function versionKey(version: string): string {
  const v = parseSemver(version)
  if (!v) throw new Error(`not a semantic version: ${version}`)
  const pad = (n: number) => String(n).padStart(10, '0')
  return `${pad(v.major)}.${pad(v.minor)}.${pad(v.patch)}${v.prerelease.length ? `-${v.prerelease.join('.')}` : '~'}`
}

export function latestVersion<T extends { version: string }>(items: T[]): T | undefined {
  return items.reduce<T | undefined>((best, p) => (!best || compareSemver(p.version, best.version) > 0 ? p : best), undefined)
}

// ---------------------------------------------------------------------------------------------
// Params against inputs

const GS_URI_RE = /^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](\/.*)?$/

function checkScalar(type: ItemType | Exclude<InputType, 'array'>, value: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'expected a string'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : 'expected an integer'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number'
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected a boolean'
    case 'file':
      return typeof value === 'string' && GS_URI_RE.test(value) && !value.endsWith('/') && /^gs:\/\/[^/]+\/./.test(value)
        ? undefined
        : 'expected a file (gs://<bucket>/<object>)'
    case 'storage_path':
      return typeof value === 'string' && GS_URI_RE.test(value) ? undefined : 'expected a storage path (gs://<bucket>/<path>)'
  }
}

const NOUN: Record<ItemType, [string, string]> = {
  string: ['string', 'strings'],
  file: ['file', 'files'],
  storage_path: ['storage path', 'storage paths'],
}

function arrayExpectation(input: PipelineInput): string {
  const [one, many] = NOUN[input.items ?? 'string']
  const { min_items: min, max_items: max } = input
  if (min !== undefined && min === max) return `expected an array of ${min} ${min === 1 ? one : many}`
  if (min !== undefined && max !== undefined) return `expected an array of ${min} to ${max} ${many}`
  if (min !== undefined) return `expected an array of at least ${min} ${many}`
  if (max !== undefined) return `expected an array of at most ${max} ${many}`
  return `expected an array of ${many}`
}

function checkInput(input: PipelineInput, value: unknown): string | undefined {
  if (input.type !== 'array') return checkScalar(input.type, value)
  const expectation = arrayExpectation(input)
  if (!Array.isArray(value)) return expectation
  if (input.min_items !== undefined && value.length < input.min_items) return `${expectation}, got ${value.length}`
  if (input.max_items !== undefined && value.length > input.max_items) return `${expectation}, got ${value.length}`
  const bad = value.findIndex((v) => checkScalar(input.items ?? 'string', v) !== undefined)
  return bad >= 0 ? `${expectation}; entry ${bad}: ${checkScalar(input.items ?? 'string', value[bad])}` : undefined
}

/**
 * Every problem with `params` for this pipeline, each naming its param ("params.case_id: required"),
 * in the order the inputs are declared, then unknown names. Empty when the params are acceptable.
 * null counts as absent, so a client can send a full form with blanks.
 */
export function validateParams(pipeline: Pick<PipelineRecord, 'inputs' | 'additional_params'>, params: Record<string, unknown>): string[] {
  const problems: string[] = []
  for (const input of pipeline.inputs) {
    const value = params[input.name]
    if (value === undefined || value === null) {
      if (input.required) problems.push(`params.${input.name}: required`)
      continue
    }
    const problem = checkInput(input, value)
    if (problem) problems.push(`params.${input.name}: ${problem}`)
  }
  if (!pipeline.additional_params) {
    const known = new Set(pipeline.inputs.map((i) => i.name))
    for (const name of Object.keys(params)) {
      if (!known.has(name)) problems.push(`params.${name}: not an input of this pipeline`)
    }
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// The catalogue in Firestore

/**
 * The id of a (scope, slug, version): a name-based UUID (RFC 9562 version 5 layout over SHA-256),
 * so that creating the same slug and version twice collides on one document, inside a transaction.
 */
export function pipelineId(scope: string, slug: string, version: string): string {
  const h = sha256(`pipeline\n${scope}\n${slug}\n${version}`)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

export interface PipelineFilters {
  type?: PipelineType
  tag?: string
  slug?: string
}

/**
 * Pipelines are platform-wide (scope 'platform': the pre-registered catalogue, seen by every
 * project) or belong to the project that created them. A project sees both; a slug and version
 * is unique among what a project sees, and a project can never overwrite a platform pipeline.
 */
export class PipelineStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

  private col() {
    return this.db.col('pipelines')
  }
  private static data(snap: DocumentSnapshot): PipelineRecord | undefined {
    return snap.exists ? (snap.data() as PipelineRecord) : undefined
  }
  private static scopesOf(projectId: string) {
    return [PLATFORM_SCOPE, projectId]
  }

  /**
   * Creates a pipeline in `scope` (a project id, or 'platform'). An existing slug and version is
   * a 409 naming the force option; with `force` the pipeline is overwritten in place (same id).
   */
  async create(
    ctx: AuditContext,
    input: { scope: string; org_id?: string; definition: PipelineDefinition; force: boolean; createdBy: string },
  ): Promise<{ pipeline: PipelineRecord; overwritten: boolean }> {
    const { scope, definition: d } = input
    const id = pipelineId(scope, d.slug, d.version)
    const ref = this.col().doc(id)
    const platformRef = scope === PLATFORM_SCOPE ? undefined : this.col().doc(pipelineId(PLATFORM_SCOPE, d.slug, d.version))
    return this.db.firestore.runTransaction(async (tx) => {
      const existing = PipelineStore.data(await tx.get(ref))
      const platform = platformRef ? await tx.get(platformRef) : undefined
      const chainScope = scope === PLATFORM_SCOPE ? {} : { project_id: scope, org_id: input.org_id }
      const chain = await this.audit.prepare(tx, { ...chainScope, entity: { type: 'pipeline', id } })
      if (platform?.exists) {
        throw conflict(`pipeline '${d.slug}' version ${d.version} is a platform pipeline and cannot be replaced; choose another version or slug`)
      }
      if (existing && !input.force) {
        throw conflict(`pipeline '${d.slug}' version ${d.version} already exists; send ?force=true to overwrite it`)
      }
      const now = Timestamp.fromDate(this.clock.now())
      const pipeline: PipelineRecord = {
        ...d,
        id,
        scope,
        version_key: versionKey(d.version),
        created: existing?.created ?? now,
        updated: now,
        created_by: existing?.created_by ?? input.createdBy,
      }
      tx.set(ref, pipeline)
      chain.write(ctx, {
        action: existing ? 'pipeline.overwritten' : 'pipeline.created',
        ...chainScope,
        entity: { type: 'pipeline', id, parent: d.slug },
        change: { to: d.version },
      })
      return { pipeline, overwritten: Boolean(existing) }
    })
  }

  /** A pipeline the project can see, by id. */
  async get(projectId: string, id: string): Promise<PipelineRecord | undefined> {
    const p = PipelineStore.data(await this.col().doc(id).get())
    return p && PipelineStore.scopesOf(projectId).includes(p.scope) ? p : undefined
  }

  async getById(id: string): Promise<PipelineRecord | undefined> {
    return PipelineStore.data(await this.col().doc(id).get())
  }

  /** Every version of a slug the project can see, newest version first (semantic-version order). */
  async versions(projectId: string, slug: string): Promise<PipelineRecord[]> {
    const q = await this.col().where('scope', 'in', PipelineStore.scopesOf(projectId)).where('slug', '==', slug).get()
    return q.docs.map((doc) => doc.data() as PipelineRecord).sort((a, b) => compareSemver(b.version, a.version))
  }

  /** The pipelines the project can see, by slug, then newest version first. */
  async list(projectId: string, filters: PipelineFilters, query: PageQuery): Promise<Page<PipelineRecord>> {
    let q = this.col().where('scope', 'in', PipelineStore.scopesOf(projectId))
    if (filters.type) q = q.where('type', '==', filters.type)
    if (filters.tag) q = q.where('tags', 'array-contains', filters.tag)
    if (filters.slug) q = q.where('slug', '==', filters.slug)
    return paginate(
      q,
      {
        orderBy: [
          ['slug', 'asc'],
          ['version_key', 'desc'],
        ],
        filters: { ...filters },
        query,
      },
      (doc) => doc.data() as PipelineRecord,
    )
  }
}
