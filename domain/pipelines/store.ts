import { Timestamp, type DocumentSnapshot } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { conflict } from '../../lib/errors.js'
import { paginate, type Page, type PageQuery } from '../../lib/pagination.js'
import { pipelineId, PLATFORM_SCOPE, type PipelineDefinition, type PipelineRecord, type PipelineType } from './model.js'
import { compareSemver, versionKey } from './versions.js'

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
    return this.db.transaction(async (tx) => {
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
