import { Timestamp } from '@google-cloud/firestore'
import { afterAll, describe, expect, it } from 'vitest'
import { SERVICES } from '../../../functions/services.js'
import type { ProjectRecord } from '../../../lib/auth/access.js'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { newId } from '../../../lib/ids.js'
import { seedToken, seedUser } from '../../../domain/tenancy/seed.js'
import { fetchDoc, operationsOf, type OpenApiDoc } from '../functions/openapi-doc.js'
import { FIXTURES, operationsWorld } from '../../support/operations.js'
import { call, rand } from '../../support/world.js'

/**
 * The attacker's checklist for cloud resources (issue 17): every operation of every service whose
 * request body has a field naming a bucket or a service account, found in the service's OpenAPI
 * document (so a new field is covered the day it is added), is tried with a bucket or an account
 * another project holds, by a platform operator and by an organization admin who is none. It is
 * refused (409; 403 for a non-operator naming a bucket, which only operators do) and changes
 * nothing: no project, no claim.
 */
type Kind = 'bucket' | 'service_account'
interface ResourceField {
  /** The property path in the body; `[]` steps into an array's items. */
  path: string[]
  kind: Kind
  /** The field is a list of names. */
  list: boolean
}

/** What a property's name says it holds: `bucket`, `bucket_name`, `output_bucket`, `service_account_email`, … */
function kindOf(name: string): Kind | undefined {
  if (/bucket(s|_name|_names)?$/.test(name)) return 'bucket'
  if (/service_account(s|_email|_emails|_id)?$/.test(name)) return 'service_account'
  return undefined
}

type Schema = Record<string, any>

/** The resource fields of a request body schema, following $refs, nested objects, arrays and compositions. */
function resourceFields(doc: OpenApiDoc, schema: Schema | undefined, path: string[] = [], seen = new Set<string>()): ResourceField[] {
  if (!schema) return []
  if (typeof schema.$ref === 'string') {
    if (seen.has(schema.$ref)) return []
    const target = doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]
    return resourceFields(doc, target, path, new Set([...seen, schema.$ref]))
  }
  const out: ResourceField[] = []
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const)
    for (const s of (schema[key] ?? []) as Schema[]) out.push(...resourceFields(doc, s, path, seen))
  if (schema.items) out.push(...resourceFields(doc, schema.items as Schema, [...path, '[]'], seen))
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const kind = kindOf(name)
    const list = property.type === 'array' || (Array.isArray(property.type) && property.type.includes('array'))
    if (kind) out.push({ path: [...path, name], kind, list })
    else out.push(...resourceFields(doc, property, [...path, name], seen))
  }
  return out
}

/** `body` with the field at `path` set to `value` (an array step keeps or makes one element). */
function withValue(body: unknown, path: string[], value: unknown): unknown {
  const [head, ...rest] = path
  if (head === undefined) return value
  if (head === '[]') return [withValue(Array.isArray(body) ? body[0] : undefined, rest, value)]
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
  return { ...object, [head]: withValue(object[head], rest, value) }
}

describe('every operation that names a cloud resource refuses one another project holds', async () => {
  const w = await operationsWorld()
  afterAll(() => w.close())
  const { world, ctx, appOf, scoped } = w

  const targets: Array<{ service: string; id: string; method: string; field: ResourceField }> = []
  for (const service of SERVICES) {
    const doc = await fetchDoc(appOf(service.name))
    for (const o of operationsOf(doc)) {
      const body = (o.op as { requestBody?: { content?: Record<string, { schema?: Schema }> } }).requestBody?.content?.['application/json']?.schema
      for (const field of resourceFields(doc, body))
        targets.push({ service: service.name, id: o.op.operationId ?? `${o.method} ${o.path}`, method: o.method, field })
    }
  }

  // Two holders: a project whose resources are claimed (made through the store), and one from before claims (a record, no claim).
  const claimedHolder = (await world.otherProject()).project
  const legacyHolder: ProjectRecord = {
    id: newId(),
    org_id: claimedHolder.org_id,
    name: 'From before claims',
    slug: `legacy-${rand()}`,
    bucket_name: `legacy-${rand()}`,
    credentials: { service_account_email: `legacy-${rand()}@old.iam.gserviceaccount.com`, configured_at: Timestamp.now() },
    created: Timestamp.now(),
  }
  await world.deps.db.col('projects').doc(legacyHolder.id).set(legacyHolder)
  const holders = [
    ['a claimed project', claimedHolder],
    ['a project from before claims', legacyHolder],
  ] as const
  const held = (p: ProjectRecord, kind: Kind) => (kind === 'bucket' ? p.bucket_name : p.credentials!.service_account_email)

  // An admin of this organization who is no platform operator.
  const orgAdmin = await seedUser(world.deps, { email: `org-admin-${rand()}@example.org` })
  await world.deps.store.setOrgRole(SYSTEM_ACTOR, world.org.id, orgAdmin, 'org_admin')
  const callers = [
    ['a platform operator', world.owner.token, true],
    ['an organization admin', await seedToken(world.deps, orgAdmin, 'org admin'), false],
  ] as const

  /** The records that say who holds what: every project and every claim. */
  const tenancyState = async () => {
    const [projects, claims] = await Promise.all(['projects', 'resource_claims'].map((c) => world.deps.db.col(c).get()))
    return { projects: projects!.docs.map((d) => [d.id, d.data()]), claims: claims!.docs.map((d) => [d.id, d.data()]) }
  }

  it('finds the fields it must cover in the documents (a field the walk no longer sees fails here)', () => {
    expect(targets.map((t) => `${t.service} ${t.id} ${t.field.path.join('.')}`)).toEqual(
      expect.arrayContaining([
        'admin createProject bucket_name',
        'admin createProject service_account_email',
        'admin setProjectCredentials service_account_email',
      ]),
    )
    expect(targets.filter((t) => !FIXTURES[t.id]).map((t) => `${t.service} ${t.id}: add a fixture to test/support/operations.ts`)).toEqual([])
  })

  const cases = targets.flatMap((t) =>
    holders.flatMap(([holderLabel, holder]) =>
      callers.map(
        ([callerLabel, token, operator]) =>
          [`${t.service} ${t.id} ${t.field.path.join('.')}: ${callerLabel}, naming what ${holderLabel} holds`, t, holder, token, operator] as const,
      ),
    ),
  )
  it.each(cases)('%s', async (_, t, holder, token, operator) => {
    const m = await FIXTURES[t.id]!(ctx)
    const name = held(holder, t.field.kind)
    const body = withValue(m.body, t.field.path, t.field.list ? [name] : name)
    const before = await tenancyState()
    const res = await call(appOf(t.service), t.method.toUpperCase(), `/api/v1${m.path}`, {
      token,
      body,
      project: scoped(t.service) ? (m.project ?? world.project.id) : undefined,
      headers: m.headers,
    })
    if (t.field.kind === 'bucket' && !operator) {
      expect(res.status, JSON.stringify(res.body)).toBe(403)
    } else {
      expect(res.status, JSON.stringify(res.body)).toBe(409)
      expect(res.body.detail).toContain(name)
    }
    // The refusal names the resource, never the project that holds it.
    expect(JSON.stringify(res.body)).not.toContain(holder.id)
    expect(await tenancyState()).toEqual(before)
  })
})
