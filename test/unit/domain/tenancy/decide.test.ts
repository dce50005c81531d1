import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProjectRecord } from '../../../../lib/auth/access.js'
import { ORG_ROLES, PROJECT_LADDER, PROJECT_ROLES, type OrgRole, type ProjectRole } from '../../../../lib/auth/roles.js'
import { refusalDetail, refusalStatus, type Decision, type Refusal } from '../../../../lib/decision.js'
import {
  bucketNameProblem,
  claimKey,
  creationResources,
  credentialResources,
  decideClaimsOf,
  decideCredentials,
  decideMemberRemoval,
  decideMemberRoles,
  decideProjectCreation,
  derivedBucketNames,
  orgGrantRefusal,
  type CreateProject,
  type OrgGrantState,
  type Holding,
  type MemberState,
  type Resource,
  type ResourceClaim,
} from '../../../../domain/tenancy/decide.js'

const now = Timestamp.fromMillis(1_700_000_000_000)
const A = '11111111-1111-4111-8111-111111111111'
const B = '22222222-2222-4222-8222-222222222222'
const NEW = 'abcdef01-2345-4678-9abc-def012345678'
/** The functions' runtime account of the deploy (PLATFORM_SERVICE_ACCOUNTS). */
const PLATFORM_ACCOUNT = 'platform-functions@lab-prod.iam.gserviceaccount.com'

const holdings = (...entries: Array<[Resource, Holding]>) => new Map(entries.map(([r, h]) => [claimKey(r), h]))
const bucket = (name: string): Resource => ({ kind: 'bucket', name })
const account = (name: string): Resource => ({ kind: 'service_account', name })
const claimed = (projectId: string): Holding => ({ claim: projectId, records: [projectId] })
const legacy = (projectId: string): Holding => ({ records: [projectId] })

/** What a refusal answers over HTTP, or 'ok'. */
const outcome = (d: Decision<unknown>) => (d.ok ? 'ok' : `${refusalStatus(d.refusal)} ${refusalDetail(d.refusal)}`)

const create = (over: Partial<CreateProject> = {}): CreateProject => ({
  projectId: NEW,
  org: { id: 'org-b', slug: 'org-b' },
  name: 'Mirror',
  slug: 'mirror',
  operator: false,
  sharedBuckets: ['genomes-reference'],
  platformAccounts: [PLATFORM_ACCOUNT],
  now,
  ...over,
})

describe('bucket names follow Cloud Storage naming rules', () => {
  it.each([
    ['lab-germline', undefined],
    ['a_b.c-1', undefined],
    ['ab', 'at least 3 characters'],
    ['Lab', 'lowercase letters'],
    ['-lab', 'begins and ends'],
    ['lab-', 'begins and ends'],
    ['lab bucket', 'lowercase letters'],
    ['x'.repeat(64), 'at most 63'],
    [`${'x'.repeat(63)}.${'y'.repeat(63)}`, undefined],
    [`${'x'.repeat(64)}.yy`, 'each dot-separated part'],
    ['a..b', 'each dot-separated part'],
    ['192.168.5.4', 'IP address'],
    ['goog-data', 'begin with "goog"'],
    ['my-google-data', 'google'],
    ['my-g00gle-data', 'google'],
  ])('%s: %s', (name, problem) => {
    if (problem === undefined) expect(bucketNameProblem(name)).toBeUndefined()
    else expect(bucketNameProblem(name)).toContain(problem)
  })
})

describe('the bucket names the platform derives', () => {
  it('prefers <org>-<project>, then a suffix from the project id, then project-<id>', () => {
    expect(derivedBucketNames('demo-lab', 'germline', NEW)).toEqual([
      'demo-lab-germline',
      'demo-lab-germline-abcdef01',
      `project-${NEW.replaceAll('-', '')}`,
    ])
  })

  it('gives org "a-b" + project "c" and org "a" + project "b-c" different names once the plain one is taken', () => {
    const first = derivedBucketNames('a-b', 'c', A)
    const second = derivedBucketNames('a', 'b-c', B)
    expect(first[0]).toBe(second[0])
    expect(first[1]).not.toBe(second[1])
  })

  it('cuts at 63 characters without a trailing hyphen, and never offers a name Cloud Storage refuses', () => {
    const names = derivedBucketNames('x'.repeat(40), `${'y'.repeat(21)}-z`, NEW)
    expect(names[0]).toBe(`${'x'.repeat(40)}-${'y'.repeat(21)}`)
    for (const n of names) expect(bucketNameProblem(n)).toBeUndefined()
    expect(derivedBucketNames('google-fans', 'lab', NEW)).toEqual([`project-${NEW.replaceAll('-', '')}`])
  })
})

describe('creating a project', () => {
  const plain = bucket('org-b-mirror')
  it.each<[string, Parameters<typeof decideProjectCreation>[0], Partial<CreateProject>, string]>([
    ['derives the bucket for an org admin', { slugTaken: false, holdings: holdings() }, {}, 'ok'],
    [
      'refuses a slug the organization already has',
      { slugTaken: true, holdings: holdings() },
      {},
      "409 project slug 'mirror' already exists in organization 'org-b'",
    ],
    [
      'refuses an org admin naming a bucket (an operator act), whoever holds it',
      { slugTaken: false, holdings: holdings() },
      { bucketName: 'lab-a' },
      '403 only a platform administrator brings an existing bucket under a project (bucket_name); leave it out and the platform assigns the project a bucket of its own',
    ],
    [
      'refuses naming a bucket before telling whether the slug is taken',
      { slugTaken: true, holdings: holdings() },
      { bucketName: 'lab-a' },
      '403 only a platform administrator brings an existing bucket under a project (bucket_name); leave it out and the platform assigns the project a bucket of its own',
    ],
    ['lets an operator name a free bucket', { slugTaken: false, holdings: holdings() }, { bucketName: 'lab-a', operator: true }, 'ok'],
    [
      'refuses an operator naming a claimed bucket, naming the bucket only',
      { slugTaken: false, holdings: holdings([bucket('lab-a'), claimed(A)]) },
      { bucketName: 'lab-a', operator: true },
      '409 bucket lab-a belongs to another project: a bucket serves one project only',
    ],
    [
      'refuses a bucket a project from before claims names',
      { slugTaken: false, holdings: holdings([bucket('lab-a'), legacy(A)]) },
      { bucketName: 'lab-a', operator: true },
      '409 bucket lab-a belongs to another project: a bucket serves one project only',
    ],
    [
      'refuses a shared reference bucket',
      { slugTaken: false, holdings: holdings() },
      { bucketName: 'genomes-reference', operator: true },
      "409 bucket genomes-reference is a shared reference bucket (SHARED_REFERENCE_BUCKETS): it cannot be a project's bucket",
    ],
    [
      'refuses a malformed bucket name, naming the field',
      { slugTaken: false, holdings: holdings() },
      { bucketName: 'Bad', operator: true },
      '400 bucket_name: a bucket name has only lowercase letters, digits, hyphens, underscores and dots, and begins and ends with a letter or digit',
    ],
    [
      'refuses a service account another project holds, naming it',
      { slugTaken: false, holdings: holdings([account('runner@a.iam.gserviceaccount.com'), claimed(A)]) },
      { serviceAccountEmail: 'Runner@A.iam.gserviceaccount.com' },
      '409 service account runner@a.iam.gserviceaccount.com is bound to another project: a service account serves one project only',
    ],
    [
      "refuses the platform's own identity, even unclaimed",
      { slugTaken: false, holdings: holdings() },
      { serviceAccountEmail: 'Platform-Functions@lab-prod.iam.gserviceaccount.com' },
      `409 service account ${PLATFORM_ACCOUNT} is one of the platform's own identities (PLATFORM_SERVICE_ACCOUNTS): it is never a project's service account`,
    ],
    [
      'refuses an address that is no service account',
      { slugTaken: false, holdings: holdings() },
      { serviceAccountEmail: 'alice@example.org' },
      '400 service_account_email: must be a Google Cloud service account address (…@….iam.gserviceaccount.com)',
    ],
    ['takes the suffixed name when the plain one is claimed', { slugTaken: false, holdings: holdings([plain, claimed(A)]) }, {}, 'ok'],
  ])('%s', (_, state, over, expected) => {
    expect(outcome(decideProjectCreation(state, create(over)))).toBe(expected)
  })

  it('claims the bucket and the account it binds, and records project.created', () => {
    const d = decideProjectCreation(
      { slugTaken: false, holdings: holdings([plain, claimed(A)]) },
      create({ serviceAccountEmail: 'r@b.iam.gserviceaccount.com' }),
    )
    expect(d.ok && d.changes.project).toMatchObject({
      id: NEW,
      bucket_name: 'org-b-mirror-abcdef01',
      credentials: { service_account_email: 'r@b.iam.gserviceaccount.com' },
    })
    expect(d.ok && d.changes.claims.map(claimKey)).toEqual(['bucket:org-b-mirror-abcdef01', 'service_account:r@b.iam.gserviceaccount.com'])
    expect(d.ok && d.events).toEqual([
      expect.objectContaining({ action: 'project.created', project_id: NEW, change: { fields: ['bucket_name', 'credentials'] } }),
    ])
  })

  it('reads the holdings of every name it may take', () => {
    expect(creationResources(create({ serviceAccountEmail: 'R@b.iam.gserviceaccount.com' })).map(claimKey)).toEqual([
      'bucket:org-b-mirror',
      'bucket:org-b-mirror-abcdef01',
      `bucket:project-${NEW.replaceAll('-', '')}`,
      'service_account:r@b.iam.gserviceaccount.com',
    ])
  })
})

describe('binding and releasing a service account', () => {
  const sa = 'runner@a.iam.gserviceaccount.com'
  const project: ProjectRecord = {
    id: A,
    org_id: 'org-a',
    name: 'A',
    slug: 'a',
    bucket_name: 'lab-a',
    credentials: { service_account_email: sa, configured_at: Timestamp.fromMillis(1) },
    created: Timestamp.fromMillis(1),
  }
  const bare: ProjectRecord = { ...project, credentials: undefined }
  it.each<[string, ProjectRecord, Map<string, Holding>, string | null, string, Partial<ReturnType<typeof changesOf>>]>([
    [
      'binds a free account, claiming it',
      bare,
      holdings(),
      'new@b.iam.gserviceaccount.com',
      'ok',
      { claim: 'service_account:new@b.iam.gserviceaccount.com' },
    ],
    [
      'refuses an account another project claimed',
      bare,
      holdings([account('new@b.iam.gserviceaccount.com'), claimed(B)]),
      'new@b.iam.gserviceaccount.com',
      '409 service account new@b.iam.gserviceaccount.com is bound to another project: a service account serves one project only',
      {},
    ],
    [
      "refuses the platform's own identity",
      bare,
      holdings(),
      PLATFORM_ACCOUNT,
      `409 service account ${PLATFORM_ACCOUNT} is one of the platform's own identities (PLATFORM_SERVICE_ACCOUNTS): it is never a project's service account`,
      {},
    ],
    [
      'refuses an account a project from before claims names',
      bare,
      holdings([account('new@b.iam.gserviceaccount.com'), legacy(B)]),
      'new@b.iam.gserviceaccount.com',
      '409 service account new@b.iam.gserviceaccount.com is bound to another project: a service account serves one project only',
      {},
    ],
    [
      'binds the same account again: unchanged, nothing claimed twice',
      project,
      holdings([account(sa), claimed(A)]),
      sa,
      'ok',
      { claim: undefined, release: undefined, configured: 1 },
    ],
    [
      'claims its own account from before claims when bound again',
      project,
      holdings([account(sa), legacy(A)]),
      sa,
      'ok',
      { claim: `service_account:${sa}`, release: undefined },
    ],
    [
      'replaces the account, releasing the old claim',
      project,
      holdings([account(sa), claimed(A)]),
      'new@b.iam.gserviceaccount.com',
      'ok',
      { claim: 'service_account:new@b.iam.gserviceaccount.com', release: `service_account:${sa}` },
    ],
    [
      'removes the account, releasing its claim',
      project,
      holdings([account(sa), claimed(A)]),
      null,
      'ok',
      { release: `service_account:${sa}`, removed: true },
    ],
    [
      'removes an account from before claims: no claim to release',
      project,
      holdings([account(sa), legacy(A)]),
      null,
      'ok',
      { release: undefined, removed: true },
    ],
    ['answers 404 when there is nothing to remove', bare, holdings(), null, `404 cloud credentials of project ${A} not found`, {}],
  ])('%s', (_, p, h, email, expected, changes) => {
    const d = decideCredentials({ project: p, holdings: h }, { serviceAccountEmail: email, platformAccounts: [PLATFORM_ACCOUNT], now })
    expect(outcome(d)).toBe(expected)
    if (d.ok) expect(changesOf(d.changes)).toMatchObject(changes)
  })

  function changesOf(c: { credentials: ProjectRecord['credentials'] | null; claim?: ResourceClaim; release?: Resource }) {
    return {
      claim: c.claim && claimKey(c.claim),
      release: c.release && claimKey(c.release),
      removed: c.credentials === null,
      configured: c.credentials?.configured_at.toMillis(),
    }
  }

  it('reads the holdings of the new and the replaced account', () => {
    expect(credentialResources(project, { serviceAccountEmail: 'New@b.iam.gserviceaccount.com' }).map(claimKey)).toEqual([
      'service_account:new@b.iam.gserviceaccount.com',
      `service_account:${sa}`,
    ])
  })

  it("claims a found project's resources once, and refuses when another project holds one (the seed)", () => {
    expect(outcome(decideClaimsOf(holdings(), project, now))).toBe('ok')
    const first = decideClaimsOf(holdings([bucket('lab-a'), legacy(A)]), project, now)
    expect(first.ok && first.changes.map(claimKey)).toEqual(['bucket:lab-a', `service_account:${sa}`])
    const again = decideClaimsOf(holdings([bucket('lab-a'), claimed(A)], [account(sa), claimed(A)]), project, now)
    expect(again.ok && again.changes).toEqual([])
    expect(again.ok && again.events).toEqual([])
    expect(outcome(decideClaimsOf(holdings([bucket('lab-a'), claimed(B)]), project, now))).toBe(
      "409 bucket lab-a of project 'a' belongs to another project",
    )
  })
})

/**
 * A model of the store: projects and claim documents, read the way AdminStore reads them (a claim,
 * else the project records naming a resource), with each decision's changes applied as it writes them.
 */
class Model {
  projects = new Map<string, ProjectRecord>()
  claims = new Map<string, ResourceClaim>()

  holdings(resources: Resource[]) {
    const out = new Map<string, Holding>()
    for (const r of resources) {
      const records = [...this.projects.values()]
        .filter((p) => (r.kind === 'bucket' ? p.bucket_name === r.name : p.credentials?.service_account_email === r.name))
        .map((p) => p.id)
      out.set(claimKey(r), { claim: this.claims.get(claimKey(r))?.project_id, records })
    }
    return out
  }

  create(cmd: CreateProject) {
    const slugTaken = [...this.projects.values()].some((p) => p.org_id === cmd.org.id && p.slug === cmd.slug)
    const d = decideProjectCreation({ slugTaken, holdings: this.holdings(creationResources(cmd)) }, cmd)
    if (!d.ok) return
    this.projects.set(d.changes.project.id, d.changes.project)
    for (const c of d.changes.claims) this.claim(c)
  }

  setCredentials(projectId: string, email: string | null) {
    const project = this.projects.get(projectId)!
    const cmd = { serviceAccountEmail: email, platformAccounts: [PLATFORM_ACCOUNT], now }
    const d = decideCredentials({ project, holdings: this.holdings(credentialResources(project, cmd)) }, cmd)
    if (!d.ok) return
    this.projects.set(projectId, { ...project, credentials: d.changes.credentials ?? undefined })
    if (d.changes.claim) this.claim(d.changes.claim)
    if (d.changes.release) this.claims.delete(claimKey(d.changes.release))
  }

  /** As Firestore's `tx.create`: a claim document is never overwritten. */
  private claim(c: ResourceClaim) {
    expect(this.claims.has(claimKey(c)), `claim ${claimKey(c)} written twice`).toBe(false)
    this.claims.set(claimKey(c), c)
  }
}

const repeated = <T>(values: T[]) => values.filter((v, i) => values.indexOf(v) !== i)

describe('properties', () => {
  const orgs = [
    { id: 'org-1', slug: 'a' },
    { id: 'org-2', slug: 'a-b' },
    { id: 'org-3', slug: 'x'.repeat(50) },
  ]
  const slugs = ['b-c', 'c', `${'y'.repeat(20)}-1`, `${'y'.repeat(20)}-2`]
  const buckets = ['lab-a', 'a-b-c', 'genomes-reference', 'a-b-c-00000000']
  const accounts = [
    'r1@p.iam.gserviceaccount.com',
    'R1@P.iam.gserviceaccount.com',
    'r2@p.iam.gserviceaccount.com',
    'r3@p.iam.gserviceaccount.com',
    PLATFORM_ACCOUNT,
  ]

  const command = fc.oneof(
    fc.record({
      kind: fc.constant('create' as const),
      id: fc.uuid({ version: 4 }),
      org: fc.constantFrom(...orgs),
      slug: fc.constantFrom(...slugs),
      bucketName: fc.option(fc.constantFrom(...buckets), { nil: undefined }),
      serviceAccountEmail: fc.option(fc.constantFrom(...accounts), { nil: undefined }),
      operator: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('credentials' as const), target: fc.nat(), email: fc.option(fc.constantFrom(...accounts), { nil: null }) }),
  )
  /** Projects from before claims: records naming a bucket and an account, no claim documents. */
  const legacyProjects = fc.subarray([
    { bucket: 'lab-a', account: accounts[2] },
    { bucket: 'a-b-c', account: undefined },
  ])

  it("no sequence of project-creation and credential commands by any callers makes two projects share a bucket or a service account, or binds the platform's own", () => {
    fc.assert(
      fc.property(legacyProjects, fc.array(command, { maxLength: 25 }), (old, commands) => {
        const model = new Model()
        old.forEach((o, i) => {
          const id = `0000000${i}-0000-4000-8000-000000000000`
          model.projects.set(id, {
            id,
            org_id: 'org-old',
            name: 'Old',
            slug: `old-${i}`,
            bucket_name: o.bucket,
            credentials: o.account ? { service_account_email: o.account, configured_at: now } : undefined,
            created: now,
          })
        })
        for (const c of commands) {
          if (c.kind === 'create') {
            if (model.projects.has(c.id)) continue
            model.create(
              create({
                projectId: c.id,
                org: c.org,
                slug: c.slug,
                name: c.slug,
                bucketName: c.bucketName,
                serviceAccountEmail: c.serviceAccountEmail,
                operator: c.operator,
              }),
            )
          } else {
            const ids = [...model.projects.keys()]
            if (!ids.length) continue
            model.setCredentials(ids[c.target % ids.length]!, c.email)
          }
          const projects = [...model.projects.values()]
          expect(repeated(projects.map((p) => p.bucket_name))).toEqual([])
          expect(repeated(projects.flatMap((p) => (p.credentials ? [p.credentials.service_account_email] : [])))).toEqual([])
          expect(projects.map((p) => p.bucket_name)).not.toContain('genomes-reference')
          expect(projects.map((p) => p.credentials?.service_account_email)).not.toContain(PLATFORM_ACCOUNT)
          // Every claim document names a project that holds the resource.
          for (const claim of model.claims.values()) {
            const holder = model.projects.get(claim.project_id)!
            expect(claim.kind === 'bucket' ? holder.bucket_name : holder.credentials?.service_account_email).toBe(claim.name)
          }
        }
      }),
      { numRuns: 300 },
    )
  })

  /** A role's rank as a grant (side roles count as admin: only admins grant them), and a granter's: their highest ladder role. */
  const rankOf = (r: ProjectRole) =>
    (PROJECT_LADDER as readonly string[]).indexOf(r) >= 0 ? (PROJECT_LADDER as readonly string[]).indexOf(r) : PROJECT_LADDER.indexOf('admin')
  const granterRank = (roles: readonly ProjectRole[]) => Math.max(-1, ...roles.map((r) => (PROJECT_LADDER as readonly string[]).indexOf(r)))

  it('no grant sequence lets a caller give a role above their own or change their own roles', () => {
    const people = ['u0', 'u1', 'u2', 'u3']
    const grant = fc.record({
      granter: fc.constantFrom(...people),
      target: fc.constantFrom(...people),
      roles: fc.option(fc.uniqueArray(fc.constantFrom(...PROJECT_ROLES), { minLength: 1, maxLength: 3 }), { nil: null }),
    })
    fc.assert(
      fc.property(fc.constantFrom(...PROJECT_ROLES), fc.array(grant, { maxLength: 30 }), (first, grants) => {
        const members = new Map<string, ProjectRole[]>([['u0', [first]]])
        for (const g of grants) {
          const before = members.get(g.target)
          const granterRoles = members.get(g.granter) ?? []
          const state: MemberState = {
            project: { id: 'p', org_id: 'o' },
            granter: { id: g.granter, roles: granterRoles },
            targetId: g.target,
            account: { kind: 'user' },
            current: before,
          }
          const d = g.roles ? decideMemberRoles(state, g.roles) : decideMemberRemoval(state)
          if (!d.ok) continue
          expect(g.granter).not.toBe(g.target)
          for (const r of [...(g.roles ?? []), ...(before ?? [])]) expect(rankOf(r)).toBeLessThanOrEqual(granterRank(granterRoles))
          if (g.roles) members.set(g.target, [...new Set(g.roles)])
          else members.delete(g.target)
        }
        // Nobody ever holds a role above the highest the first member had.
        const top = granterRank([first])
        for (const roles of [...members.entries()].filter(([id]) => id !== 'u0').map(([, r]) => r)) {
          for (const r of roles) expect(rankOf(r)).toBeLessThanOrEqual(top)
        }
      }),
      { numRuns: 500 },
    )
  })
})

describe('member changes', () => {
  const state = (over: Partial<MemberState> = {}): MemberState => ({
    project: { id: 'p', org_id: 'o' },
    granter: { id: 'admin', roles: ['admin'] },
    targetId: 't',
    account: { kind: 'user' },
    ...over,
  })
  it.each<[string, MemberState, ProjectRole[] | 'remove', string]>([
    ['an admin adds a viewer', state(), ['viewer'], 'ok'],
    ['an admin grants a side role (ranked as admin)', state(), ['auditor', 'pipeline'], 'ok'],
    [
      'an admin may not make an owner',
      state(),
      ['owner'],
      '403 you cannot grant, change or remove the role owner: it is above your own highest role in this project',
    ],
    [
      'an admin may not demote an owner',
      state({ current: ['owner'] }),
      ['viewer'],
      '403 you cannot grant, change or remove the role owner: it is above your own highest role in this project',
    ],
    [
      'an admin may not remove an owner',
      state({ current: ['owner'] }),
      'remove',
      '403 you cannot grant, change or remove the role owner: it is above your own highest role in this project',
    ],
    [
      'nobody changes their own roles',
      state({ targetId: 'admin', current: ['admin'] }),
      ['viewer'],
      '403 nobody changes their own roles; ask another project admin',
    ],
    [
      'nobody removes themselves',
      state({ targetId: 'admin', current: ['admin'] }),
      'remove',
      '403 nobody changes their own roles; ask another project admin',
    ],
    ['an owner makes an owner', state({ granter: { id: 'o1', roles: ['owner'] } }), ['owner'], 'ok'],
    ['an unknown account', state({ account: undefined }), ['viewer'], '404 user not found'],
    [
      "another organization's service user, as if unknown",
      state({ account: { kind: 'service_user', org_id: 'other' } }),
      ['pipeline'],
      '404 user not found',
    ],
    ['its own organization service user', state({ account: { kind: 'service_user', org_id: 'o' } }), ['pipeline'], 'ok'],
    ['removing someone who is no member', state(), 'remove', '404 member not found'],
  ])('%s', (_, s, cmd, expected) => {
    expect(outcome(cmd === 'remove' ? decideMemberRemoval(s) : decideMemberRoles(s, cmd))).toBe(expected)
  })

  it('records member.added, member.roles_changed and member.removed with what changed', () => {
    const added = decideMemberRoles(state(), ['lab', 'lab'])
    expect(added.ok && added.changes.roles).toEqual(['lab'])
    expect(added.ok && added.events[0]).toMatchObject({
      action: 'member.added',
      entity: { type: 'project_member', id: 't', parent: 'p' },
      change: { to: 'lab' },
    })
    const changed = decideMemberRoles(state({ current: ['lab'] }), ['viewer'])
    expect(changed.ok && changed.events[0]).toMatchObject({ action: 'member.roles_changed', change: { from: 'lab', to: 'viewer' } })
    const removed = decideMemberRemoval(state({ current: ['viewer'] }))
    expect(removed.ok && removed.events[0]).toMatchObject({ action: 'member.removed', change: { from: 'viewer' } })
  })
})

describe('organization role changes', () => {
  const rank = (r: OrgRole | undefined) => (r === undefined ? -1 : ORG_ROLES.indexOf(r))
  const judged = (r: Refusal | undefined) => (r ? `${refusalStatus(r)} ${refusalDetail(r)}` : 'ok')
  const org = (over: Partial<OrgGrantState> = {}): OrgGrantState => ({
    granter: { id: 'a', role: 'org_admin' },
    targetId: 't',
    current: undefined,
    ...over,
  })
  it.each<[string, OrgGrantState, OrgRole[], string]>([
    ['an admin adds a member', org(), ['org_member'], 'ok'],
    ['an admin makes an admin', org(), ['org_admin'], 'ok'],
    [
      'an admin may not make an owner',
      org(),
      ['org_owner'],
      '403 you cannot grant, change or remove the role org_owner: it is above your own role in this organization',
    ],
    [
      'an admin may not remove an owner',
      org({ current: 'org_owner' }),
      [],
      '403 you cannot grant, change or remove the role org_owner: it is above your own role in this organization',
    ],
    ['an owner makes an owner', org({ granter: { id: 'o', role: 'org_owner' } }), ['org_owner'], 'ok'],
    [
      'nobody changes their own role',
      org({ targetId: 'a', current: 'org_admin' }),
      ['org_member'],
      '403 nobody changes their own roles; ask another organization admin',
    ],
    [
      'someone with no role in the organization grants no role in it',
      org({ granter: { id: 'p', role: undefined } }),
      ['org_member'],
      '403 you cannot grant, change or remove the role org_member: it is above your own role in this organization',
    ],
  ])('%s', (_, s, roles, expected) => {
    expect(judged(orgGrantRefusal(s, roles))).toBe(expected)
  })

  it("property: no change is allowed that gives or takes a role above the granter's own, or touches their own", () => {
    const role = fc.option(fc.constantFrom(...ORG_ROLES), { nil: undefined })
    fc.assert(
      fc.property(role, role, fc.boolean(), fc.array(fc.constantFrom(...ORG_ROLES), { maxLength: 2 }), (granter, current, self, roles) => {
        const refusal = orgGrantRefusal({ granter: { id: 'g', role: granter }, targetId: self ? 'g' : 't', current }, roles)
        const allowed = !self && [...roles, ...(current ? [current] : [])].every((r) => granter !== undefined && rank(r) <= rank(granter))
        expect(refusal === undefined).toBe(allowed)
      }),
    )
  })
})
