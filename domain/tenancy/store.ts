import { FieldValue, Timestamp, type Transaction } from '@google-cloud/firestore'
import { grantPath, type Letterhead, type OrgRecord, type ProjectRecord, type UserRecord } from '../../lib/auth/access.js'
import { SYSTEM_ACTOR, type AuditContext, type AuditInput, type AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse, type DeniedOn } from '../../lib/decision.js'
import { conflict, notFound } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { OrgRole, ProjectRole } from '../../lib/auth/roles.js'
import {
  claimKey,
  creationResources,
  credentialResources,
  decideClaimsOf,
  decideCredentials,
  decideMemberRemoval,
  decideMemberRoles,
  decideProjectCreation,
  projectResources,
  type Granter,
  type Holding,
  type Holdings,
  type Resource,
  type ResourceKind,
} from './decide.js'

export interface MemberRecord {
  project_id: string
  org_id: string
  user_id: string
  roles: ProjectRole[]
  updated: Timestamp
}

export interface OrgMemberRecord {
  org_id: string
  user_id: string
  role: OrgRole
  updated: Timestamp
}

export const slugify = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'project'

const memberId = (scopeId: string, userId: string) => `${scopeId}_${userId}`

/** The field of a project record that names each kind of resource: what a project from before claims holds without a claim document. */
const RECORD_FIELD: Record<ResourceKind, string> = { bucket: 'bucket_name', service_account: 'credentials.service_account_email' }

/**
 * Organizations, projects, users and role grants: every change commits with its audit event. The
 * rules of projects, their cloud resources and their members are decided in decide.ts: here a
 * transaction reads what a decision needs, calls it and writes what it returns.
 */
export class AdminStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

  private claimRef(r: Resource) {
    return this.db.col('resource_claims').doc(claimKey(r))
  }

  /**
   * Who holds each resource, read in `tx`: its claim document, and the projects whose record names
   * it (a query, so that a project made before claims existed still holds its bucket and account).
   */
  private async holdings(tx: Transaction, resources: Resource[]): Promise<Holdings> {
    if (!resources.length) return new Map()
    const kinds = [...new Set(resources.map((r) => r.kind))]
    const [claims, ...records] = await Promise.all([
      tx.getAll(...resources.map((r) => this.claimRef(r))),
      ...kinds.map((kind) =>
        tx.get(
          this.db.col('projects').where(
            RECORD_FIELD[kind],
            'in',
            resources.filter((r) => r.kind === kind).map((r) => r.name),
          ),
        ),
      ),
    ])
    const out = new Map<string, Holding>()
    resources.forEach((r, i) => {
      const found = records[kinds.indexOf(r.kind)]!.docs.filter((d) => d.get(RECORD_FIELD[r.kind]) === r.name)
      out.set(claimKey(r), { claim: claims[i]!.get('project_id') as string | undefined, records: found.map((d) => d.id) })
    })
    return out
  }

  /** Writes the audit events a decision returned, on the chain prepared in the transaction. */
  private record(chain: { write(ctx: AuditContext, input: AuditInput): unknown }, ctx: AuditContext, events: AuditInput[]) {
    for (const event of events) chain.write(ctx, event)
  }

  private now() {
    return Timestamp.fromDate(this.clock.now())
  }

  async createOrg(ctx: AuditContext, input: { name: string; slug?: string; ownerId: string }): Promise<OrgRecord> {
    const org: OrgRecord = { id: newId(), name: input.name, slug: input.slug ?? slugify(input.name), created: this.now() }
    await this.db.transaction(async (tx) => {
      const clash = await tx.get(this.db.col('organizations').where('slug', '==', org.slug).limit(1))
      const chain = await this.audit.prepare(tx, { org_id: org.id, entity: { type: 'organization', id: org.id } })
      // A retried transaction may find the organization its first attempt committed: that is not a clash.
      if (!clash.empty && clash.docs[0]!.id !== org.id) throw conflict(`an organization with slug '${org.slug}' already exists`)
      if (!clash.empty) return
      tx.create(this.db.col('organizations').doc(org.id), org)
      const owner: OrgMemberRecord = { org_id: org.id, user_id: input.ownerId, role: 'org_owner', updated: org.created }
      tx.set(this.db.col('org_members').doc(memberId(org.id, input.ownerId)), owner)
      tx.update(this.db.col('users').doc(input.ownerId), grantPath.org(org.id), 'org_owner')
      chain.write(ctx, { action: 'organization.created', org_id: org.id, entity: { type: 'organization', id: org.id } })
    })
    return org
  }

  async listOrgs(ids: string[] | 'all'): Promise<OrgRecord[]> {
    if (ids === 'all') {
      const q = await this.db.col('organizations').get()
      return q.docs.map((d) => d.data() as OrgRecord)
    }
    if (ids.length === 0) return []
    const refs = ids.map((id) => this.db.col('organizations').doc(id))
    const snaps = await this.db.firestore.getAll(...refs)
    return snaps.filter((s) => s.exists).map((s) => s.data() as OrgRecord)
  }

  /**
   * Creates a project with its bucket (derived by the platform, or named by an operator) and,
   * optionally, its service account, claiming both in the same transaction (decideProjectCreation).
   */
  async createProject(
    ctx: AuditContext,
    input: {
      org: OrgRecord
      name: string
      slug?: string
      bucketName?: string
      serviceAccountEmail?: string
      /** The caller is a platform administrator (or the platform itself, seeding). */
      operator: boolean
      /** config.storage.sharedBuckets: SHARED_REFERENCE_BUCKETS, never a project's own bucket. */
      sharedBuckets: readonly string[]
      /** config.storage.platformAccounts: PLATFORM_SERVICE_ACCOUNTS, never a project's service account. */
      platformAccounts: readonly string[]
    },
  ): Promise<ProjectRecord> {
    const cmd = {
      projectId: newId(),
      org: input.org,
      name: input.name,
      slug: input.slug ?? slugify(input.name),
      bucketName: input.bucketName,
      serviceAccountEmail: input.serviceAccountEmail,
      operator: input.operator,
      sharedBuckets: input.sharedBuckets,
      platformAccounts: input.platformAccounts,
      now: this.now(),
    }
    const ref = this.db.col('projects').doc(cmd.projectId)
    const on: DeniedOn = { scope: { org_id: input.org.id }, entity: { type: 'bucket', id: input.bucketName ?? '-', parent: input.org.id } }
    return this.db.transaction(async (tx) => {
      const [existing, clash, holdings] = await Promise.all([
        tx.get(ref),
        tx.get(this.db.col('projects').where('org_id', '==', input.org.id).where('slug', '==', cmd.slug).limit(2)),
        this.holdings(tx, creationResources(cmd)),
      ])
      const chain = await this.audit.prepare(tx, { project_id: cmd.projectId, entity: { type: 'project', id: cmd.projectId } })
      // A retried transaction may find the project its first attempt committed.
      if (existing.exists) return existing.data() as ProjectRecord
      const slugTaken = clash.docs.some((d) => d.id !== cmd.projectId)
      const { changes, events } = orRefuse(decideProjectCreation({ slugTaken, holdings }, cmd), on)
      tx.create(ref, changes.project)
      for (const claim of changes.claims) tx.create(this.claimRef(claim), claim)
      this.record(chain, ctx, events)
      return changes.project
    })
  }

  /**
   * Claims the bucket and service account of a project that has none claimed (local data from
   * before claims existed): what the seed does with a project it finds. 409 when another project holds one.
   */
  async claimResourcesOf(project: ProjectRecord): Promise<void> {
    await this.db.transaction(async (tx) => {
      const holdings = await this.holdings(tx, projectResources(project))
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project', id: project.id } })
      const { changes, events } = orRefuse(decideClaimsOf(holdings, project, this.now()))
      for (const claim of changes) tx.create(this.claimRef(claim), claim)
      this.record(chain, SYSTEM_ACTOR, events)
    })
  }

  /** The projects with these ids, plus every project of these organizations. */
  async listProjects(projectIds: string[], orgIds: string[]): Promise<ProjectRecord[]> {
    const byId = new Map<string, ProjectRecord>()
    if (projectIds.length) {
      const snaps = await this.db.firestore.getAll(...projectIds.map((id) => this.db.col('projects').doc(id)))
      for (const s of snaps) if (s.exists) byId.set(s.id, s.data() as ProjectRecord)
    }
    for (let i = 0; i < orgIds.length; i += 30) {
      const q = await this.db
        .col('projects')
        .where('org_id', 'in', orgIds.slice(i, i + 30))
        .get()
      for (const d of q.docs) byId.set(d.id, d.data() as ProjectRecord)
    }
    return [...byId.values()]
  }

  /**
   * Binds the project's service account (claiming it, and releasing the one it replaces), or with
   * null removes it (releasing its claim): decideCredentials, on the project as read in the transaction.
   */
  async setCredentials(
    ctx: AuditContext,
    project: ProjectRecord,
    serviceAccountEmail: string | null,
    /** config.storage.platformAccounts: PLATFORM_SERVICE_ACCOUNTS, never a project's service account. */
    platformAccounts: readonly string[],
  ): Promise<ProjectRecord> {
    const ref = this.db.col('projects').doc(project.id)
    const cmd = { serviceAccountEmail, platformAccounts, now: this.now() }
    return this.db.transaction(async (tx) => {
      const snap = await tx.get(ref)
      if (!snap.exists) throw notFound('project')
      const current = snap.data() as ProjectRecord
      const holdings = await this.holdings(tx, credentialResources(current, cmd))
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project', id: project.id } })
      const { changes, events } = orRefuse(decideCredentials({ project: current, holdings }, cmd))
      tx.update(ref, { credentials: changes.credentials ?? FieldValue.delete() })
      if (changes.claim) tx.create(this.claimRef(changes.claim), changes.claim)
      if (changes.release) tx.delete(this.claimRef(changes.release))
      this.record(chain, ctx, events)
      return { ...current, credentials: changes.credentials ?? undefined }
    })
  }

  /** Sets (or with null removes) the letterhead the project's reports carry. */
  async setLetterhead(ctx: AuditContext, project: ProjectRecord, letterhead: Letterhead | null): Promise<ProjectRecord> {
    await this.db.transaction(async (tx) => {
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project', id: project.id } })
      tx.update(this.db.col('projects').doc(project.id), { letterhead: letterhead ?? FieldValue.delete() })
      chain.write(ctx, {
        action: letterhead ? 'project.letterhead_set' : 'project.letterhead_removed',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'project', id: project.id },
        change: { fields: ['letterhead'] },
      })
    })
    const { letterhead: _previous, ...rest } = project
    return letterhead ? { ...rest, letterhead } : rest
  }

  /** Finds a user by e-mail, creating an account with no roles when none exists (linked to the IdP at first login). */
  async ensureUser(email: string): Promise<UserRecord> {
    const normalized = email.toLowerCase()
    return this.db.transaction(async (tx) => {
      const q = await tx.get(this.db.col('users').where('email', '==', normalized).limit(1))
      if (!q.empty) return q.docs[0]!.data() as UserRecord
      const user: UserRecord = { id: newId(), kind: 'user', email: normalized, name: normalized, created: this.now() }
      tx.create(this.db.col('users').doc(user.id), user)
      return user
    })
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const s = await this.db.col('users').doc(id).get()
    return s.exists ? (s.data() as UserRecord) : undefined
  }

  async listMembers(projectId: string): Promise<Array<MemberRecord & { user?: UserRecord }>> {
    const q = await this.db.col('project_members').where('project_id', '==', projectId).get()
    const members = q.docs.map((d) => d.data() as MemberRecord)
    const users = members.length ? await this.db.firestore.getAll(...members.map((m) => this.db.col('users').doc(m.user_id))) : []
    return members.map((m, i) => ({ ...m, user: users[i]?.exists ? (users[i]!.data() as UserRecord) : undefined }))
  }

  /** Gives a user project roles, replacing theirs, as `granter` (decideMemberRoles: grants never escalate). */
  async setMemberRoles(ctx: AuditContext, granter: Granter, project: ProjectRecord, user: UserRecord, roles: ProjectRole[]): Promise<MemberRecord> {
    const ref = this.db.col('project_members').doc(memberId(project.id, user.id))
    const now = this.now()
    return this.db.transaction(async (tx) => {
      const before = await tx.get(ref)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project_member', id: user.id } })
      const state = { project, granter, targetId: user.id, account: user, current: before.get('roles') as ProjectRole[] | undefined }
      const { changes, events } = orRefuse(decideMemberRoles(state, roles), this.memberDeniedOn(project, user.id))
      const record: MemberRecord = { project_id: project.id, org_id: project.org_id, user_id: user.id, roles: changes.roles, updated: now }
      tx.set(ref, record)
      tx.update(this.db.col('users').doc(user.id), grantPath.project(project.id), record.roles)
      this.record(chain, ctx, events)
      return record
    })
  }

  /** Removes a user from a project, as `granter` (decideMemberRemoval). */
  async removeMember(ctx: AuditContext, granter: Granter, project: ProjectRecord, userId: string): Promise<void> {
    const ref = this.db.col('project_members').doc(memberId(project.id, userId))
    await this.db.transaction(async (tx) => {
      const [before, account] = await Promise.all([tx.get(ref), tx.get(this.db.col('users').doc(userId))])
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project_member', id: userId } })
      const state = { project, granter, targetId: userId, current: before.get('roles') as ProjectRole[] | undefined }
      const { events } = orRefuse(decideMemberRemoval(state), this.memberDeniedOn(project, userId))
      tx.delete(ref)
      if (account.exists) tx.update(account.ref, grantPath.project(project.id), FieldValue.delete())
      this.record(chain, ctx, events)
    })
  }

  private memberDeniedOn(project: ProjectRecord, userId: string): DeniedOn {
    return { scope: { project_id: project.id, org_id: project.org_id }, entity: { type: 'project_member', id: userId } }
  }

  async listOrgMembers(orgId: string): Promise<Array<OrgMemberRecord & { user?: UserRecord }>> {
    const q = await this.db.col('org_members').where('org_id', '==', orgId).get()
    const members = q.docs.map((d) => d.data() as OrgMemberRecord)
    const users = members.length ? await this.db.firestore.getAll(...members.map((m) => this.db.col('users').doc(m.user_id))) : []
    return members.map((m, i) => ({ ...m, user: users[i]?.exists ? (users[i]!.data() as UserRecord) : undefined }))
  }

  async setOrgRole(ctx: AuditContext, orgId: string, user: UserRecord, role: OrgRole): Promise<OrgMemberRecord> {
    const ref = this.db.col('org_members').doc(memberId(orgId, user.id))
    const record: OrgMemberRecord = { org_id: orgId, user_id: user.id, role, updated: this.now() }
    await this.db.transaction(async (tx) => {
      const before = await tx.get(ref)
      const chain = await this.audit.prepare(tx, { org_id: orgId, entity: { type: 'org_member', id: user.id } })
      tx.set(ref, record)
      tx.update(this.db.col('users').doc(user.id), grantPath.org(orgId), role)
      chain.write(ctx, {
        action: before.exists ? 'org_member.role_changed' : 'org_member.added',
        org_id: orgId,
        entity: { type: 'org_member', id: user.id, parent: orgId },
        change: { from: before.get('role') as string | undefined, to: role },
      })
    })
    return record
  }

  async removeOrgMember(ctx: AuditContext, orgId: string, userId: string): Promise<void> {
    const ref = this.db.col('org_members').doc(memberId(orgId, userId))
    await this.db.transaction(async (tx) => {
      const [before, account] = await Promise.all([tx.get(ref), tx.get(this.db.col('users').doc(userId))])
      const chain = await this.audit.prepare(tx, { org_id: orgId, entity: { type: 'org_member', id: userId } })
      if (!before.exists) throw notFound('member')
      tx.delete(ref)
      if (account.exists) tx.update(account.ref, grantPath.org(orgId), FieldValue.delete())
      chain.write(ctx, {
        action: 'org_member.removed',
        org_id: orgId,
        entity: { type: 'org_member', id: userId, parent: orgId },
        change: { from: before.get('role') as string },
      })
    })
  }

  async getDefaultProject(userId: string): Promise<string | undefined> {
    const s = await this.db.col('users').doc(userId).get()
    return s.get('default_project_id') as string | undefined
  }

  async setDefaultProject(ctx: AuditContext, user: UserRecord, project: ProjectRecord): Promise<void> {
    await this.db.transaction(async (tx) => {
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'user', id: user.id } })
      tx.update(this.db.col('users').doc(user.id), { default_project_id: project.id })
      chain.write(ctx, {
        action: 'user.default_context_set',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'user', id: user.id },
        change: { to: project.id },
      })
    })
  }
}
