/**
 * The role matrix. Code asks for permissions, never role names; this file is the only place that
 * knows which role grants what. Project roles form a ladder, each including those below it;
 * `auditor` and `pipeline` sit beside the ladder. Org owners and admins act as project
 * owner and admin on every project of their organization.
 */
export const PROJECT_LADDER = ['viewer', 'lab', 'analyst', 'reviewer', 'admin', 'owner'] as const
export const PROJECT_SIDE_ROLES = ['auditor', 'pipeline'] as const
export const PROJECT_ROLES = [...PROJECT_LADDER, ...PROJECT_SIDE_ROLES] as const
export type ProjectRole = (typeof PROJECT_ROLES)[number]

export const ORG_ROLES = ['org_member', 'org_admin', 'org_owner'] as const
export type OrgRole = (typeof ORG_ROLES)[number]

export type Permission =
  | 'project.read'
  | 'pipeline.read'
  | 'run.read'
  | 'clinical.read'
  | 'report.read'
  | 'file.read'
  | 'clinical.write'
  | 'labflow.move'
  | 'file.write'
  | 'run.submit'
  | 'run.cancel'
  | 'report.draft'
  | 'comment.write'
  | 'comment.resolve'
  | 'report.sign'
  | 'report.cancel'
  | 'pipeline.create'
  | 'order.cancel'
  | 'labflow.define'
  | 'file.delete'
  | 'project.manage'
  | 'members.manage'
  | 'credentials.manage'
  | 'credentials.read'
  | 'project.delete'
  | 'audit.read'
  | 'variant.ingest'

export type OrgPermission = 'org.read' | 'org.manage' | 'project.create' | 'service_user.manage' | 'org.audit.read' | 'org.delete'

/** The lowest ladder role that holds each permission, or the side roles that hold it. */
const PROJECT_GRANTS: Record<Permission, { ladder?: (typeof PROJECT_LADDER)[number]; side?: ProjectRole[] }> = {
  'project.read': { ladder: 'viewer', side: ['auditor', 'pipeline'] },
  'pipeline.read': { ladder: 'viewer', side: ['pipeline'] },
  'run.read': { ladder: 'viewer', side: ['pipeline'] },
  'clinical.read': { ladder: 'viewer', side: ['pipeline'] },
  'report.read': { ladder: 'viewer' },
  'file.read': { ladder: 'viewer', side: ['pipeline'] },
  'clinical.write': { ladder: 'lab' },
  'labflow.move': { ladder: 'lab' },
  'file.write': { ladder: 'lab', side: ['pipeline'] },
  'run.submit': { ladder: 'analyst', side: ['pipeline'] },
  'run.cancel': { ladder: 'analyst' },
  'report.draft': { ladder: 'analyst' },
  'comment.write': { ladder: 'analyst' },
  'comment.resolve': { ladder: 'reviewer' },
  'report.sign': { ladder: 'reviewer' },
  /** Cancel a report, or mark any report entered in error. */
  'report.cancel': { ladder: 'admin' },
  'pipeline.create': { ladder: 'admin' },
  'order.cancel': { ladder: 'admin' },
  'labflow.define': { ladder: 'admin' },
  'file.delete': { ladder: 'admin' },
  'project.manage': { ladder: 'admin' },
  'members.manage': { ladder: 'admin' },
  'credentials.manage': { ladder: 'admin' },
  'credentials.read': { ladder: 'admin', side: ['pipeline'] },
  'project.delete': { ladder: 'owner' },
  'audit.read': { ladder: 'admin', side: ['auditor'] },
  /** Service users of the pipeline role ingest a run's variants; admins may start one by hand. */
  'variant.ingest': { ladder: 'admin', side: ['pipeline'] },
}

/** Every project permission, for definitions that name permissions as data (labflow transitions). */
export const PERMISSIONS = Object.keys(PROJECT_GRANTS) as Permission[]
export const isPermission = (value: string): value is Permission => (PERMISSIONS as string[]).includes(value)

const ORG_GRANTS: Record<OrgPermission, OrgRole> = {
  'org.read': 'org_member',
  'org.manage': 'org_admin',
  'project.create': 'org_admin',
  'service_user.manage': 'org_admin',
  /** The audit log of the organization and every one of its projects. */
  'org.audit.read': 'org_admin',
  'org.delete': 'org_owner',
}

const ladderRank = (r: string) => (PROJECT_LADDER as readonly string[]).indexOf(r)
const orgRank = (r: OrgRole) => ORG_ROLES.indexOf(r)

/** The project roles an org role confers on every project of the organization. */
export function projectRoleFromOrg(role: OrgRole | undefined): ProjectRole | undefined {
  if (role === 'org_owner') return 'owner'
  if (role === 'org_admin') return 'admin'
  return undefined
}

export function projectRolesGrant(roles: Iterable<ProjectRole>, permission: Permission): boolean {
  const grant = PROJECT_GRANTS[permission]
  for (const role of roles) {
    if (grant.side?.includes(role)) return true
    if (grant.ladder && ladderRank(role) >= 0 && ladderRank(role) >= ladderRank(grant.ladder)) return true
  }
  return false
}

export function orgRoleGrants(role: OrgRole | undefined, permission: OrgPermission): boolean {
  return role !== undefined && orgRank(role) >= orgRank(ORG_GRANTS[permission])
}

/**
 * The rank of what a set of project roles lets its holder grant: the highest ladder role, with the
 * side roles (auditor, pipeline) ranked as admin, since only admins manage members. -1 for none.
 */
export function grantRank(roles: Iterable<ProjectRole>): number {
  let rank = -1
  for (const role of roles) rank = Math.max(rank, ladderRank(role) >= 0 ? ladderRank(role) : ladderRank('admin'))
  return rank
}

/**
 * The roles among `roles` that a granter holding `granterRoles` may not give or take away: a
 * grant never exceeds the granter's own highest role in the project (an admin cannot make anyone
 * owner, themselves included).
 */
export function rolesAboveGranter(granterRoles: Iterable<ProjectRole>, roles: Iterable<ProjectRole>): ProjectRole[] {
  const mine = Math.max(-1, ...[...granterRoles].map((r) => ladderRank(r)))
  return [...roles].filter((r) => grantRank([r]) > mine)
}

/** True when an organization role is above the granter's own (only owners grant or remove owners). */
export const orgRoleAboveGranter = (granter: OrgRole | undefined, role: OrgRole) => granter === undefined || orgRank(role) > orgRank(granter)
