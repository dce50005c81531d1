import type { Timestamp } from '@google-cloud/firestore'
import type { ProjectRecord } from '../../lib/auth/access.js'
import type { AuditInput } from '../../lib/audit.js'
import { orgRoleAboveGranter, rolesAboveGranter, type OrgRole, type ProjectRole } from '../../lib/auth/roles.js'
import { absent, allow, conflictWith, deny, forbiddenBy, invalid, type Decision, type Refusal } from '../../lib/decision.js'

/**
 * The rules of tenancy, decided once (lib/decision.ts): which cloud resources a project may hold,
 * and who may grant which project roles. Plain data in, plain data out; AdminStore reads the state
 * in its transaction, calls these and writes what they return (docs/tenancy.md).
 */

// ---------------------------------------------------------------------------------------------
// Cloud resources: a bucket and a service account belong to exactly one project
// ---------------------------------------------------------------------------------------------

export type ResourceKind = 'bucket' | 'service_account'
export interface Resource {
  kind: ResourceKind
  name: string
}

/** The id of a resource's claim document (`resource_claims/bucket:<name>`): the unique key that makes it one project's. */
export const claimKey = (r: Resource) => `${r.kind}:${r.name}`

/** The claim document: which project holds the resource, since when. */
export interface ResourceClaim extends Resource {
  project_id: string
  org_id: string
  claimed_at: Timestamp
}

/**
 * Who holds a resource, as read in the transaction: `claim`, the project of its claim document;
 * `records`, projects whose record names it (those made before claims existed have no claim
 * document, yet they hold what they name). A claim is authoritative when there is one.
 */
export interface Holding {
  claim?: string
  records: readonly string[]
}
/** Holdings by `claimKey`; a resource missing from the map is held by nobody. */
export type Holdings = ReadonlyMap<string, Holding>

const heldElsewhere = (holdings: Holdings, r: Resource, projectId: string): boolean => {
  const h = holdings.get(claimKey(r))
  if (!h) return false
  return h.claim !== undefined ? h.claim !== projectId : h.records.some((id) => id !== projectId)
}
const claimedBy = (holdings: Holdings, r: Resource, projectId: string) => holdings.get(claimKey(r))?.claim === projectId

/** How a refusal names a resource: itself, never the project that holds it (another tenant's id is not this caller's to learn). */
const named = (r: Resource) => (r.kind === 'bucket' ? `bucket ${r.name}` : `service account ${r.name}`)

/**
 * Why `name` is not a Cloud Storage bucket name, or undefined when it is one
 * (https://cloud.google.com/storage/docs/buckets#naming).
 */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3) return 'a bucket name has at least 3 characters'
  if (!/^[a-z0-9][a-z0-9._-]*[a-z0-9]$/.test(name))
    return 'a bucket name has only lowercase letters, digits, hyphens, underscores and dots, and begins and ends with a letter or digit'
  if (name.length > (name.includes('.') ? 222 : 63)) return 'a bucket name has at most 63 characters (222 with dots)'
  if (name.split('.').some((part) => part.length === 0 || part.length > 63)) return 'each dot-separated part of a bucket name has 1 to 63 characters'
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) return 'a bucket name cannot be an IP address'
  if (name.startsWith('goog')) return 'a bucket name cannot begin with "goog"'
  if (/g[o0]{2}g[l1]e/.test(name)) return 'a bucket name cannot contain "google" or a misspelling of it'
  return undefined
}

/** Why `email` is not a Google Cloud service account address, or undefined when it is one. */
export function serviceAccountProblem(email: string): string | undefined {
  return /^[a-z0-9][a-z0-9._-]*@[a-z0-9][a-z0-9.-]*\.gserviceaccount\.com$/.test(email)
    ? undefined
    : 'must be a Google Cloud service account address (…@….iam.gserviceaccount.com)'
}

/** Service-account addresses are case-insensitive: one spelling is stored and claimed. */
export const normalizeServiceAccount = (email: string) => email.trim().toLowerCase()

/**
 * Why a project may not bind `account`: another project holds it, or it is one of the platform's own
 * identities (PLATFORM_SERVICE_ACCOUNTS), as which the platform acts for every project.
 */
function accountRefusal(holdings: Holdings, account: Resource, projectId: string, platformAccounts: readonly string[]): Refusal | undefined {
  if (platformAccounts.includes(account.name))
    return conflictWith(
      `${named(account)} is one of the platform's own identities (PLATFORM_SERVICE_ACCOUNTS): it is never a project's service account`,
    )
  if (heldElsewhere(holdings, account, projectId))
    return conflictWith(`${named(account)} is bound to another project: a service account serves one project only`)
  return undefined
}

/**
 * The bucket names the platform may give a project, in order of preference: `<org>-<project>`
 * (what a person reads), then with 8 hex digits of the project id (so `a-b`+`c` and `a`+`b-c`, or
 * two names cut at 63 characters, never share one), then `project-<the whole id>`, which no other
 * project derives. Names Cloud Storage would refuse (one holding "google") are left out.
 */
export function derivedBucketNames(orgSlug: string, projectSlug: string, projectId: string): string[] {
  const hex = projectId.replaceAll('-', '').toLowerCase()
  const base = `${orgSlug}-${projectSlug}`
  const cut = (s: string, n: number) => s.slice(0, n).replace(/[^a-z0-9]+$/, '')
  return [cut(base, 63), `${cut(base, 54)}-${hex.slice(0, 8)}`, `project-${hex}`].filter((n) => !bucketNameProblem(n))
}

export interface CreateProject {
  projectId: string
  org: { id: string; slug: string }
  name: string
  slug: string
  /** An existing bucket the caller brings under the project: an operator's act. Absent: the platform derives one. */
  bucketName?: string
  serviceAccountEmail?: string
  /** The caller is a platform administrator (or the platform itself, seeding). */
  operator: boolean
  /** SHARED_REFERENCE_BUCKETS: readable by every project's runs, so never one project's own. */
  sharedBuckets: readonly string[]
  /** PLATFORM_SERVICE_ACCOUNTS (lowercase): the platform's own identities, never a project's. */
  platformAccounts: readonly string[]
  now: Timestamp
}

/** The resources a project creation may claim, whose holdings the store reads in its transaction. */
export function creationResources(cmd: Pick<CreateProject, 'projectId' | 'org' | 'slug' | 'bucketName' | 'serviceAccountEmail'>): Resource[] {
  const buckets = cmd.bucketName !== undefined ? [cmd.bucketName] : derivedBucketNames(cmd.org.slug, cmd.slug, cmd.projectId)
  const out: Resource[] = buckets.map((name) => ({ kind: 'bucket', name }))
  if (cmd.serviceAccountEmail !== undefined) out.push({ kind: 'service_account', name: normalizeServiceAccount(cmd.serviceAccountEmail) })
  return out
}

export interface CreateProjectState {
  /** Another project of the organization already has the slug. */
  slugTaken: boolean
  /** The holdings of every resource of `creationResources`. */
  holdings: Holdings
}

export interface ProjectCreation {
  project: ProjectRecord
  /** Claim documents to create with it. */
  claims: ResourceClaim[]
}

export function decideProjectCreation(state: CreateProjectState, cmd: CreateProject): Decision<ProjectCreation> {
  // Naming a bucket is refused to a non-operator as an act, before anything about the state is told.
  if (cmd.bucketName !== undefined && !cmd.operator) {
    return deny(
      forbiddenBy(
        'a bucket named by a caller who is not a platform administrator',
        'only a platform administrator brings an existing bucket under a project (bucket_name); leave it out and the platform assigns the project a bucket of its own',
      ),
    )
  }
  if (state.slugTaken) return deny(conflictWith(`project slug '${cmd.slug}' already exists in organization '${cmd.org.slug}'`))
  const free = (r: Resource) => !heldElsewhere(state.holdings, r, cmd.projectId)

  let bucket: Resource
  if (cmd.bucketName !== undefined) {
    const problem = bucketNameProblem(cmd.bucketName)
    if (problem) return deny(invalid(`bucket_name: ${problem}`))
    bucket = { kind: 'bucket', name: cmd.bucketName }
    if (cmd.sharedBuckets.includes(bucket.name))
      return deny(conflictWith(`${named(bucket)} is a shared reference bucket (SHARED_REFERENCE_BUCKETS): it cannot be a project's bucket`))
    if (!free(bucket)) return deny(conflictWith(`${named(bucket)} belongs to another project: a bucket serves one project only`))
  } else {
    const candidate = derivedBucketNames(cmd.org.slug, cmd.slug, cmd.projectId)
      .map((name): Resource => ({ kind: 'bucket', name }))
      .find((r) => free(r) && !cmd.sharedBuckets.includes(r.name))
    if (!candidate) return deny(conflictWith(`no free bucket name for project '${cmd.slug}': a platform administrator names one (bucket_name)`))
    bucket = candidate
  }

  let account: Resource | undefined
  if (cmd.serviceAccountEmail !== undefined) {
    account = { kind: 'service_account', name: normalizeServiceAccount(cmd.serviceAccountEmail) }
    const problem = serviceAccountProblem(account.name)
    if (problem) return deny(invalid(`service_account_email: ${problem}`))
    const refusal = accountRefusal(state.holdings, account, cmd.projectId, cmd.platformAccounts)
    if (refusal) return deny(refusal)
  }

  const project: ProjectRecord = {
    id: cmd.projectId,
    org_id: cmd.org.id,
    name: cmd.name,
    slug: cmd.slug,
    bucket_name: bucket.name,
    credentials: account ? { service_account_email: account.name, configured_at: cmd.now } : undefined,
    created: cmd.now,
  }
  const claims = [bucket, ...(account ? [account] : [])]
    .filter((r) => !claimedBy(state.holdings, r, project.id))
    .map((r): ResourceClaim => ({ ...r, project_id: project.id, org_id: project.org_id, claimed_at: cmd.now }))
  const event: AuditInput = {
    action: 'project.created',
    org_id: project.org_id,
    project_id: project.id,
    entity: { type: 'project', id: project.id, parent: project.org_id },
    change: { fields: ['bucket_name', ...(account ? ['credentials'] : [])] },
  }
  return allow({ project, claims }, [event])
}

export interface SetCredentials {
  /** The service account to bind; null removes the project's credentials. */
  serviceAccountEmail: string | null
  /** PLATFORM_SERVICE_ACCOUNTS (lowercase): the platform's own identities, never a project's. */
  platformAccounts: readonly string[]
  now: Timestamp
}

/** The resources a credentials change touches: the account to bind, and the one it replaces. */
export function credentialResources(project: ProjectRecord, cmd: Pick<SetCredentials, 'serviceAccountEmail'>): Resource[] {
  const names = [cmd.serviceAccountEmail && normalizeServiceAccount(cmd.serviceAccountEmail), project.credentials?.service_account_email]
  return [...new Set(names.filter((n): n is string => Boolean(n)))].map((name) => ({ kind: 'service_account', name }))
}

export interface CredentialsState {
  /** The project as read in the transaction. */
  project: ProjectRecord
  /** The holdings of `credentialResources`. */
  holdings: Holdings
}

export interface CredentialsChange {
  credentials: NonNullable<ProjectRecord['credentials']> | null
  claim?: ResourceClaim
  /** The claim to delete: the replaced or removed account, once it is no longer this project's. */
  release?: Resource
}

export function decideCredentials(state: CredentialsState, cmd: SetCredentials): Decision<CredentialsChange> {
  const { project, holdings } = state
  const current = project.credentials
  const old: Resource | undefined = current ? { kind: 'service_account', name: current.service_account_email } : undefined
  const scope = { org_id: project.org_id, project_id: project.id, entity: { type: 'project', id: project.id } }
  // Only the project's own claim is released: an old account claimed by no one (a project made before claims) has nothing to release.
  const releaseOld = old && claimedBy(holdings, old, project.id) ? old : undefined

  if (cmd.serviceAccountEmail === null) {
    if (!current || !old) return deny(absent(`cloud credentials of project ${project.id}`))
    return allow({ credentials: null, release: releaseOld }, [
      { ...scope, action: 'credentials.removed', change: { fields: ['credentials'], from: old.name } },
    ])
  }

  const account: Resource = { kind: 'service_account', name: normalizeServiceAccount(cmd.serviceAccountEmail) }
  const problem = serviceAccountProblem(account.name)
  if (problem) return deny(invalid(`service_account_email: ${problem}`))
  const refusal = accountRefusal(holdings, account, project.id, cmd.platformAccounts)
  if (refusal) return deny(refusal)

  const same = old?.name === account.name
  const claim: ResourceClaim | undefined = claimedBy(holdings, account, project.id)
    ? undefined
    : { ...account, project_id: project.id, org_id: project.org_id, claimed_at: cmd.now }
  return allow(
    {
      // Binding the same account again changes nothing but its claim (made if a project from before claims had none).
      credentials: same && current ? current : { service_account_email: account.name, configured_at: cmd.now },
      claim,
      release: same ? undefined : releaseOld,
    },
    [{ ...scope, action: 'credentials.configured', change: { fields: ['credentials'], from: old?.name, to: account.name } }],
  )
}

/** The resources a project's record names: its bucket, and its service account when it has one. */
export function projectResources(project: ProjectRecord): Resource[] {
  const held: Resource[] = [{ kind: 'bucket', name: project.bucket_name }]
  if (project.credentials) held.push({ kind: 'service_account', name: project.credentials.service_account_email })
  return held
}

/** What the seed asserts of a project it finds: its bucket and account claimed by it (local data from before claims). */
export function decideClaimsOf(holdings: Holdings, project: ProjectRecord, now: Timestamp): Decision<ResourceClaim[]> {
  const held = projectResources(project)
  const taken = held.find((r) => heldElsewhere(holdings, r, project.id))
  if (taken) return deny(conflictWith(`${named(taken)} of project '${project.slug}' belongs to another project`))
  const claims = held
    .filter((r) => !claimedBy(holdings, r, project.id))
    .map((r): ResourceClaim => ({ ...r, project_id: project.id, org_id: project.org_id, claimed_at: now }))
  const event: AuditInput = {
    action: 'project.resources_claimed',
    org_id: project.org_id,
    project_id: project.id,
    entity: { type: 'project', id: project.id, parent: project.org_id },
    change: { fields: claims.map(claimKey) },
  }
  return allow(claims, claims.length ? [event] : [])
}

// ---------------------------------------------------------------------------------------------
// Project role grants never escalate
// ---------------------------------------------------------------------------------------------

/** Who grants: their account id and their roles in the project (explicit and from their organization role). */
export interface Granter {
  id: string
  roles: readonly ProjectRole[]
}

export interface MemberState {
  project: Pick<ProjectRecord, 'id' | 'org_id'>
  granter: Granter
  targetId: string
  /** The target's account; absent when there is none. */
  account?: { kind: 'user' | 'service_user'; org_id?: string }
  /** The target's roles in the project, read in the transaction; absent when not a member. */
  current?: readonly ProjectRole[]
}

/**
 * Grants never escalate: nobody changes their own roles, and a granter gives, changes or takes
 * away only roles up to their own highest one in the project (an admin cannot make anyone an
 * owner, nor demote or remove one). `roles`: what the change gives; the target's current roles
 * count too, since they are taken away.
 */
function escalation(state: MemberState, roles: readonly ProjectRole[]): Refusal | undefined {
  if (state.targetId === state.granter.id)
    return forbiddenBy("a change to one's own roles", 'nobody changes their own roles; ask another project admin')
  const above = [...new Set(rolesAboveGranter(state.granter.roles, [...roles, ...(state.current ?? [])]))]
  if (!above.length) return undefined
  const list = above.join(', ')
  return forbiddenBy(
    `a grant above the granter's own role (${list})`,
    `you cannot grant, change or remove the role ${list}: it is above your own highest role in this project`,
  )
}

const memberScope = (state: MemberState) => ({
  org_id: state.project.org_id,
  project_id: state.project.id,
  entity: { type: 'project_member', id: state.targetId, parent: state.project.id },
})

/**
 * Gives the target these roles, replacing theirs. A service user acts only inside its own
 * organization: a grant to another organization's is refused as if the account did not exist.
 */
export function decideMemberRoles(state: MemberState, roles: readonly ProjectRole[]): Decision<{ roles: ProjectRole[] }> {
  if (!state.account || (state.account.kind === 'service_user' && state.account.org_id !== state.project.org_id)) return deny(absent('user'))
  const refusal = escalation(state, roles)
  if (refusal) return deny(refusal)
  const granted = [...new Set(roles)]
  const { current } = state
  return allow({ roles: granted }, [
    {
      ...memberScope(state),
      action: current ? 'member.roles_changed' : 'member.added',
      change: { from: current?.join(','), to: granted.join(',') },
    },
  ])
}

/** Removes the target from the project (the same rule: not oneself, not someone above one's own role). */
export function decideMemberRemoval(state: MemberState): Decision<{ removed: readonly ProjectRole[] }> {
  const refusal = escalation(state, [])
  if (refusal) return deny(refusal)
  if (!state.current) return deny(absent('member'))
  return allow({ removed: state.current }, [{ ...memberScope(state), action: 'member.removed', change: { from: state.current.join(',') } }])
}

/** An organization role change as the route reads it: who grants with which role, to whom, who holds what now. */
export interface OrgGrantState {
  granter: { id: string; role: OrgRole | undefined }
  targetId: string
  /** The target's current role in the organization, if any. */
  current: OrgRole | undefined
}

/**
 * Organization roles never escalate either: nobody changes their own, and a granter gives, changes
 * or removes only roles up to their own (only owners make or unmake owners). `roles`: what the
 * change gives (none for a removal); the target's current role counts too, since it is taken away.
 * Undefined when the change may go ahead.
 */
export function orgGrantRefusal(state: OrgGrantState, roles: readonly OrgRole[]): Refusal | undefined {
  if (state.targetId === state.granter.id)
    return forbiddenBy("a change to one's own roles", 'nobody changes their own roles; ask another organization admin')
  const above = [...new Set([...roles, ...(state.current ? [state.current] : [])].filter((r) => orgRoleAboveGranter(state.granter.role, r)))]
  if (!above.length) return undefined
  const list = above.join(', ')
  return forbiddenBy(
    `a grant above the granter's own role (${list})`,
    `you cannot grant, change or remove the role ${list}: it is above your own role in this organization`,
  )
}
