import { FieldValue, Timestamp } from '@google-cloud/firestore'
import { grantPath, type Letterhead, type OrgRecord, type ProjectRecord, type UserRecord } from '../../lib/auth/access.js'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { conflict, notFound } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { OrgRole, ProjectRole } from '../../lib/auth/roles.js'

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

/** Organizations, projects, users and role grants: every change commits with its audit event. */
export class AdminStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
  ) {}

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

  async createProject(
    ctx: AuditContext,
    input: { org: OrgRecord; name: string; slug?: string; bucketName?: string; serviceAccountEmail?: string },
  ): Promise<ProjectRecord> {
    const slug = input.slug ?? slugify(input.name)
    const now = this.now()
    const project: ProjectRecord = {
      id: newId(),
      org_id: input.org.id,
      name: input.name,
      slug,
      bucket_name: input.bucketName ?? `${input.org.slug}-${slug}`.slice(0, 63),
      credentials: input.serviceAccountEmail ? { service_account_email: input.serviceAccountEmail, configured_at: now } : undefined,
      created: now,
    }
    await this.db.transaction(async (tx) => {
      const clash = await tx.get(this.db.col('projects').where('org_id', '==', input.org.id).where('slug', '==', slug).limit(1))
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project', id: project.id } })
      // A retried transaction may find the project its first attempt committed: that is not a clash.
      if (!clash.empty && clash.docs[0]!.id !== project.id)
        throw conflict(`project slug '${slug}' already exists in organization '${input.org.slug}'`)
      if (!clash.empty) return
      tx.create(this.db.col('projects').doc(project.id), project)
      chain.write(ctx, {
        action: 'project.created',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'project', id: project.id, parent: project.org_id },
      })
    })
    return project
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

  async setCredentials(ctx: AuditContext, project: ProjectRecord, serviceAccountEmail: string | null): Promise<ProjectRecord> {
    const credentials = serviceAccountEmail ? { service_account_email: serviceAccountEmail, configured_at: this.now() } : undefined
    await this.db.transaction(async (tx) => {
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project', id: project.id } })
      tx.update(this.db.col('projects').doc(project.id), { credentials: credentials ?? FieldValue.delete() })
      chain.write(ctx, {
        action: credentials ? 'credentials.configured' : 'credentials.removed',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'project', id: project.id },
        change: { fields: ['credentials'] },
      })
    })
    return { ...project, credentials }
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

  async setMemberRoles(ctx: AuditContext, project: ProjectRecord, user: UserRecord, roles: ProjectRole[]): Promise<MemberRecord> {
    const ref = this.db.col('project_members').doc(memberId(project.id, user.id))
    const record: MemberRecord = { project_id: project.id, org_id: project.org_id, user_id: user.id, roles: [...new Set(roles)], updated: this.now() }
    await this.db.transaction(async (tx) => {
      const before = await tx.get(ref)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project_member', id: user.id } })
      tx.set(ref, record)
      tx.update(this.db.col('users').doc(user.id), grantPath.project(project.id), record.roles)
      chain.write(ctx, {
        action: before.exists ? 'member.roles_changed' : 'member.added',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'project_member', id: user.id, parent: project.id },
        change: { from: (before.get('roles') as string[] | undefined)?.join(','), to: record.roles.join(',') },
      })
    })
    return record
  }

  async removeMember(ctx: AuditContext, project: ProjectRecord, userId: string): Promise<void> {
    const ref = this.db.col('project_members').doc(memberId(project.id, userId))
    await this.db.transaction(async (tx) => {
      const [before, account] = await Promise.all([tx.get(ref), tx.get(this.db.col('users').doc(userId))])
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'project_member', id: userId } })
      if (!before.exists) throw notFound('member')
      tx.delete(ref)
      if (account.exists) tx.update(account.ref, grantPath.project(project.id), FieldValue.delete())
      chain.write(ctx, {
        action: 'member.removed',
        org_id: project.org_id,
        project_id: project.id,
        entity: { type: 'project_member', id: userId, parent: project.id },
        change: { from: (before.get('roles') as string[]).join(',') },
      })
    })
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
