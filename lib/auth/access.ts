import { FieldPath, type Timestamp } from '@google-cloud/firestore'
import type { AuditWriter } from '../audit.js'
import type { Db } from '../db.js'
import { unauthorized } from '../errors.js'
import { newId } from '../ids.js'
import { recordOf } from '../reads.js'
import { projectRoleFromOrg, projectRolesGrant, orgRoleGrants, type OrgRole, type ProjectRole, type Permission, type OrgPermission } from './roles.js'

export interface UserRecord {
  id: string
  kind: 'user' | 'service_user'
  email?: string
  name: string
  /** Operators of the platform: may create organizations. Grants no access to any project's data. */
  platform_admin?: boolean
  disabled?: boolean
  oidc_subject?: string
  org_id?: string
  created: Timestamp
  /**
   * The user's role grants, kept on the account so that a request resolves its caller in one read.
   * The admin store writes them in the same transaction as the member records (org_members,
   * project_members), which stay the listing of each organization's and project's members.
   */
  grants?: Grants
  /** The project the console and the CLI open when none is named (PUT /users/me/default-context). */
  default_project_id?: string
}

export interface Grants {
  orgs?: Record<string, OrgRole>
  projects?: Record<string, ProjectRole[]>
}

/** Where one grant lives on the user document (ids contain hyphens, so paths are built, not spelled). */
export const grantPath = {
  org: (orgId: string) => new FieldPath('grants', 'orgs', orgId),
  project: (projectId: string) => new FieldPath('grants', 'projects', projectId),
}

/** The roles a user holds, from the grants on their account. */
export function rolesFrom(user: Pick<UserRecord, 'grants'>): Pick<Principal, 'orgRoles' | 'projectRoles'> {
  return {
    orgRoles: new Map(Object.entries(user.grants?.orgs ?? {})),
    projectRoles: new Map(Object.entries(user.grants?.projects ?? {}).filter(([, roles]) => roles.length > 0)),
  }
}

export interface ProjectRecord {
  id: string
  org_id: string
  name: string
  slug: string
  bucket_name: string
  credentials?: { service_account_email: string; configured_at: Timestamp }
  /** How the laboratory names itself on the documents it issues (reports); the organization's name without one. */
  letterhead?: Letterhead
  created: Timestamp
}

/** The laboratory's identification on its reports (ISO 15189: who issued the report, and how to reach them). */
export interface Letterhead {
  laboratory: string
  address?: string[]
  phone?: string
  email?: string
  website?: string
  /** Accreditation and licences, e.g. "ISO 15189:2022 accredited (DAkkS D-ML-00000-00-00); CLIA 00D0000000". */
  accreditation?: string
  /** The laboratory director, as the report names them. */
  director?: string
  /** A closing line under every report (disclaimers, contact for questions). */
  footer?: string
}

export interface OrgRecord {
  id: string
  name: string
  slug: string
  created: Timestamp
}

export type AuthMethod = 'oidc' | 'personal_token' | 'service_token' | 'session' | 'cli_token'

/** Who is calling, and with which roles, resolved afresh on every request. */
export interface Principal {
  user: UserRecord
  method: AuthMethod
  credentialId?: string
  orgRoles: Map<string, OrgRole>
  projectRoles: Map<string, ProjectRole[]>
}

export function projectRolesOf(p: Principal, project: Pick<ProjectRecord, 'id' | 'org_id'>): ProjectRole[] {
  const roles = [...(p.projectRoles.get(project.id) ?? [])]
  const fromOrg = projectRoleFromOrg(p.orgRoles.get(project.org_id))
  if (fromOrg) roles.push(fromOrg)
  return roles
}

export const canInProject = (p: Principal, project: Pick<ProjectRecord, 'id' | 'org_id'>, permission: Permission) =>
  projectRolesGrant(projectRolesOf(p, project), permission)

export const canInOrg = (p: Principal, orgId: string, permission: OrgPermission) => orgRoleGrants(p.orgRoles.get(orgId), permission)

/** Users and their role grants. */
export class AccessStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
  ) {}

  /** The account's document, for a request's batched reads (lib/http.ts). */
  userRef(id: string) {
    return this.db.col('users').doc(id)
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    return recordOf<UserRecord>(await this.userRef(id).get())
  }

  /**
   * The people an order of the project may be assigned to (the rule checkAssignee applies): the
   * project's members whose account is enabled and whose roles there read clinical data, by name.
   */
  async assignableMembers(project: Pick<ProjectRecord, 'id' | 'org_id'>): Promise<UserRecord[]> {
    const members = await this.db.col('project_members').where('project_id', '==', project.id).get()
    const snaps = members.empty ? [] : await this.db.firestore.getAll(...members.docs.map((d) => this.userRef(d.get('user_id') as string)))
    return snaps
      .flatMap((snap) => (snap.exists ? [snap.data() as UserRecord] : []))
      .filter((user) => !user.disabled && canInProject({ user, method: 'personal_token', ...rolesFrom(user) }, project, 'clinical.read'))
      .sort((a, b) => (a.name || a.email || a.id).localeCompare(b.name || b.email || b.id))
  }

  async findUserBy(field: 'email' | 'oidc_subject', value: string): Promise<UserRecord | undefined> {
    const q = await this.db.col('users').where(field, '==', value).limit(1).get()
    return q.empty ? undefined : (q.docs[0]!.data() as UserRecord)
  }

  /** The platform account of an identity-provider user: by subject, else by e-mail (then linked), else a new one with no roles. */
  async userForIdentity(claims: { sub: string; email?: string; email_verified?: boolean; name?: string }, now: Timestamp): Promise<UserRecord> {
    const bySub = await this.findUserBy('oidc_subject', claims.sub)
    if (bySub) return bySub
    // Only an address the provider vouches for may claim an invited account.
    const email = claims.email_verified === false ? undefined : claims.email?.toLowerCase()
    return this.db.transaction(async (tx) => {
      const existing = email ? (await tx.get(this.db.col('users').where('email', '==', email).limit(1))).docs[0] : undefined
      const found = existing?.data() as UserRecord | undefined
      if (found?.oidc_subject && found.oidc_subject !== claims.sub) {
        // Another identity already owns this account: a reassigned address must not take it over.
        throw unauthorized(`the account of ${email} belongs to another identity at the provider; an administrator must resolve it`)
      }
      const user: UserRecord = found
        ? { ...found, oidc_subject: claims.sub }
        : { id: newId(), kind: 'user', email, name: claims.name ?? email ?? claims.sub, oidc_subject: claims.sub, created: now }
      const chain = await this.audit.prepare(tx, { entity: { type: 'user', id: user.id } })
      if (existing) tx.update(existing.ref, { oidc_subject: claims.sub })
      else tx.create(this.db.col('users').doc(user.id), user)
      chain.write(
        { actor: { type: 'user', id: user.id, email: user.email, auth_method: 'oidc' } },
        { action: existing ? 'user.linked' : 'user.created', entity: { type: 'user', id: user.id }, change: { fields: ['oidc_subject'] } },
      )
      return user
    })
  }

  async rolesOf(userId: string): Promise<Pick<Principal, 'orgRoles' | 'projectRoles'>> {
    return rolesFrom((await this.getUser(userId)) ?? {})
  }

  /** The project's document, for a request's batched reads (lib/http.ts). */
  projectRef(id: string) {
    return this.db.col('projects').doc(id)
  }

  async getProject(id: string): Promise<ProjectRecord | undefined> {
    return recordOf<ProjectRecord>(await this.projectRef(id).get())
  }

  /** The projects of that slug (slugs are unique within an organization only): the console's addresses may name a project by it. */
  async projectsWithSlug(slug: string): Promise<ProjectRecord[]> {
    const q = await this.db.col('projects').where('slug', '==', slug).limit(20).get()
    return q.docs.map((d) => d.data() as ProjectRecord)
  }

  async getOrg(id: string): Promise<OrgRecord | undefined> {
    const snap = await this.db.col('organizations').doc(id).get()
    return snap.exists ? (snap.data() as OrgRecord) : undefined
  }
}
