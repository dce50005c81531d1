import { createHmac, randomBytes } from 'node:crypto'
import { FieldValue, Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { AuditKeyRing, newAuditKeyEntry } from '../../../../lib/audit-keys.js'
import { auditChainKey, AuditWriter, type AuditEvent, type AuditInput } from '../../../../lib/audit.js'
import { canonicalJson } from '../../../../lib/canonical.js'
import { newId, sha256 } from '../../../../lib/ids.js'
import type { OrgRole, ProjectRole } from '../../../../lib/auth/roles.js'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { grant, seedOrgAndProject, seedToken, seedUser } from '../../../../domain/tenancy/seed.js'
import { localAudit } from '../../../support/audit.js'
import { makeWorld, rand, type Caller } from '../../../support/world.js'

const T0 = Date.parse('2020-03-01T10:00:00Z')
const minute = (n: number) => new Date(T0 + n * 60_000)
/** Bounds that exclude the audit.queried events the test's own reads add (they happen now). */
const PAST = 'to=2021-01-01T00:00:00Z'

describe('audit: GET /events and GET /events/{id}', async () => {
  const world = await makeWorld()
  const { api } = localAudit(world)
  const { project, org } = world
  const lab = await world.caller(['lab'])
  let clockAt = minute(0)
  const writer = new AuditWriter(world.deps.db, 'test', { now: () => clockAt }, world.deps.audit.keys, world.deps.log)
  const ctxOf = (c: Caller) => ({ actor: { type: 'user' as const, id: c.user.id, email: c.user.email } })
  const write = async (n: number, who: Caller, input: Omit<AuditInput, 'project_id' | 'org_id'> & { project_id?: string; org_id?: string }) => {
    clockAt = minute(n)
    return writer.record(ctxOf(who), { project_id: project.id, org_id: org.id, ...input })
  }
  const e1 = await write(1, world.owner, { action: 'run.submitted', entity: { type: 'run', id: 'r1' }, change: { to: 'queued' } })
  const e2 = await write(2, world.owner, { action: 'run.cancelled', entity: { type: 'run', id: 'r1' }, change: { from: 'queued', to: 'cancelled' } })
  const e3 = await write(3, lab, { action: 'run.submitted', entity: { type: 'run', id: 'r2' } })
  const e4 = await write(4, lab, { action: 'order.transitioned', entity: { type: 'order', id: 'o1' }, change: { to: 'signed' } })
  const e5 = await write(5, lab, { action: 'access.denied', outcome: 'denied', entity: { type: 'project', id: project.id } })
  const ids = (body: Array<{ id: string }>) => body.map((e) => e.id)
  const q = (query: string, opts: { token?: string } = {}) => api(`/events?${query}`, { project: project.id, ...opts })

  describe('filters', () => {
    it.each<[string, string, AuditEvent[]]>([
      ['no filter, newest first', PAST, [e5, e4, e3, e2, e1]],
      ['an entity type', `entity=run&${PAST}`, [e3, e2, e1]],
      ['an entity type:id', `entity=run:r1&${PAST}`, [e2, e1]],
      ['an exact action', `action=run.submitted&${PAST}`, [e3, e1]],
      ['an action group', `action=run.*&${PAST}`, [e3, e2, e1]],
      ['an actor by id', `actor=${lab.user.id}&${PAST}`, [e5, e4, e3]],
      ['an actor by e-mail, in any case', `actor=${encodeURIComponent(lab.user.email!.toUpperCase())}&${PAST}`, [e5, e4, e3]],
      ['an outcome', `outcome=denied&${PAST}`, [e5]],
      ['a time range, from inclusive and to exclusive', `from=${minute(2).toISOString()}&to=${minute(4).toISOString()}`, [e3, e2]],
      ['a date', `from=2020-03-01&to=2020-03-02&action=run.*`, [e3, e2, e1]],
      ['several filters together', `entity=run&action=run.submitted&actor=${lab.user.id}&outcome=success&${PAST}`, [e3]],
    ])('by %s', async (_, query, expected) => {
      const res = await q(query)
      expect(res.status).toBe(200)
      expect(ids(res.body)).toEqual(ids(expected))
    })

    it('pages filters checked on the events read (all but the narrowest) to exactly the filtered set, whatever the page size', async () => {
      const queries = [
        `action=run.*&actor=${world.owner.user.id}`,
        `entity=run&outcome=success`,
        `entity=run:r1&action=run.cancelled`,
        `outcome=denied&actor=${lab.user.id}`,
      ]
      for (const query of queries) {
        const expected = ids((await q(`${query}&${PAST}&page_size=1000`)).body)
        expect(expected.length, query).toBeGreaterThan(0)
        for (const size of [1, 2]) {
          const seen: string[] = []
          let token: string | null = null
          do {
            const res = await q(`${query}&${PAST}&page_size=${size}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`)
            expect(res.status).toBe(200)
            expect(res.body.length).toBeLessThanOrEqual(size)
            seen.push(...ids(res.body))
            token = res.headers.get('x-next-page-token')
          } while (token)
          expect(seen, `${query} by ${size}`).toEqual(expected)
        }
      }
    })

    it('shows each event with its actor, entity, change and chain', async () => {
      const res = await q(`entity=run:r1&action=run.cancelled&${PAST}`)
      expect(res.body).toEqual([
        {
          id: e2.id,
          occurred_at: minute(2).toISOString(),
          org_id: org.id,
          project_id: project.id,
          service: 'test',
          action: 'run.cancelled',
          outcome: 'success',
          actor: { type: 'user', id: world.owner.user.id, email: world.owner.user.email },
          entity: { type: 'run', id: 'r1' },
          change: { from: 'queued', to: 'cancelled' },
          chain: e2.chain,
          seq: e2.seq,
          prev_hash: e2.prev_hash,
          key_id: world.deps.audit.keys.activeId,
          hash: e2.hash,
        },
      ])
    })

    it('pages newest first with keyset tokens that do not shift when newer events arrive', async () => {
      const first = await q(`page_size=2&${PAST}`)
      expect(ids(first.body)).toEqual([e5.id, e4.id])
      const token = first.headers.get('x-next-page-token')!
      await write(6, lab, { action: 'run.submitted', entity: { type: 'run', id: 'r-late' } })
      const second = await q(`page_size=2&${PAST}&page_token=${token}`)
      expect(ids(second.body)).toEqual([e3.id, e2.id])
      expect((await q(`page_size=2&action=run.*&page_token=${token}`)).status).toBe(400)
    })

    it.each([
      ['entity=Run!', /^entity: /],
      ['entity=run:', /^entity: /],
      ['action=run', /^action: /],
      ['action=*', /^action: /],
      ['outcome=maybe', /^query.outcome: /],
      ['from=yesterday', /^query.from: /],
      [`from=${minute(3).toISOString()}&to=${minute(1).toISOString()}`, /^from: must be before to/],
    ])('answers 400 to %s', async (query, detail) => {
      const res = await q(query)
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(detail)
    })

    it('needs one scope: a project, an organization or the platform', async () => {
      expect((await api('/events')).body.detail).toMatch(/send X-Project-ID/)
      expect((await api(`/events?org_id=${org.id}`, { project: project.id })).status).toBe(400)
      expect((await api(`/events?project_id=${world.project.id}`, { project: '00000000-0000-4000-8000-000000000000' })).status).toBe(400)
      expect(ids((await api(`/events?project_id=${project.id}&${PAST}&entity=order`)).body)).toEqual([e4.id])
    })
  })

  describe('the organization scope', () => {
    it("gathers the organization's own events and every one of its projects'", async () => {
      const { project: second } = await seedOrgAndProject(world.deps, {
        owner: world.owner.user,
        orgName: 'Test Lab',
        orgSlug: (await world.deps.access.getOrg(org.id))!.slug,
        projectName: 'Second',
        projectSlug: `second-${rand()}`,
        bucketName: `second-${rand()}`,
      })
      const inSecond = await write(7, world.owner, { project_id: second.id, action: 'run.submitted', entity: { type: 'run', id: 'r-second' } })
      const orgLevel = await writer.record(ctxOf(world.owner), {
        org_id: org.id,
        action: 'service_user.created',
        entity: { type: 'service_user', id: 'su1' },
      })
      const res = await api(`/events?org_id=${org.id}&action=run.*&${PAST}`)
      expect(ids(res.body)).toEqual(expect.arrayContaining([inSecond.id, e3.id, e1.id]))
      expect(ids((await api(`/events?org_id=${org.id}&entity=service_user:su1`)).body)).toEqual([orgLevel.id])
    })
  })

  describe('GET /events/{id}', () => {
    it('answers the event and that its chain link verifies', async () => {
      const res = await api(`/events/${e2.id}`)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        id: e2.id,
        action: 'run.cancelled',
        key_id: world.deps.audit.keys.activeId,
        chain_verified: true,
        chain_problems: [],
        verification: { method: 'hmac-sha256', key_id: world.deps.audit.keys.activeId, result: 'verified' },
      })
    })

    it('says why the link does not verify when an event was altered, or the one before it removed', async () => {
      const altered = await write(8, world.owner, {
        action: 'report.signed',
        entity: { type: 'report', id: `rep-${rand()}` },
        change: { to: 'signed' },
      })
      await world.deps.db.col('audit_events').doc(altered.id).update({ 'change.to': 'draft' })
      const res = await api(`/events/${altered.id}`)
      expect(res.body.chain_verified).toBe(false)
      expect(res.body.chain_problems).toEqual(['its content does not match its hash: it was altered'])
      expect(res.body.verification).toEqual({ method: 'hmac-sha256', key_id: world.deps.audit.keys.activeId, result: 'failed' })

      const entity = { type: 'order', id: `o-${rand()}` }
      const first = await write(9, world.owner, { action: 'order.created', entity })
      const second = await write(10, world.owner, { action: 'order.transitioned', entity })
      await world.deps.db.col('audit_events').doc(first.id).delete()
      const after = await api(`/events/${second.id}`)
      expect(after.body.chain_verified).toBe(false)
      expect(after.body.chain_problems).toEqual([`the event before it (seq ${second.seq - 1}) is missing`])
    })

    it('answers 404 for an unknown or malformed id', async () => {
      expect((await api('/events/00000000-0000-4000-8000-000000000000')).status).toBe(404)
      expect((await api('/events/not-an-id')).status).toBe(404)
    })
  })

  describe('an operator who writes to the database without the key', () => {
    const events = world.deps.db.col('audit_events')
    const heads = world.deps.db.col('audit_heads')
    const hashed = (e: Omit<AuditEvent, 'hash'>) => {
      const { action_group: _g, scope: _s, ...body } = e
      return canonicalJson(body)
    }
    const theirKey = randomBytes(32)
    const theirHmac = (text: string) => createHmac('sha256', theirKey).update(text).digest('hex')
    // Each test breaks the chain it writes to, on purpose: the next one writes to a chain none has touched
    // (an entity drawn at random shares one of a project's 256 chains with an earlier one about one run in fifty).
    const touched = new Set<string>()
    const freshEntity = () => {
      for (;;) {
        const entity = { type: 'report', id: `rep-${rand()}` }
        const chain = auditChainKey({ project_id: project.id, entity })
        if (touched.has(chain)) continue
        touched.add(chain)
        return entity
      }
    }
    const signed = () => write(20, world.owner, { action: 'report.signed', entity: freshEntity(), change: { to: 'signed' } })

    // The review's attack: edit the event, recompute its hash as best one can without the key, move the chain's head onto it.
    it.each<[string, (e: AuditEvent) => { event: AuditEvent; head: Record<string, unknown> }, { method: string; key_id?: boolean }, string[]]>([
      [
        'a plain SHA-256, the key id removed (a legacy event, it would seem)',
        ({ hash: _h, key_id: _k, ...body }) => {
          const hash = sha256(hashed(body))
          return { event: { ...body, hash }, head: { hash } }
        },
        { method: 'sha256' },
        ['it is not keyed, but its chain is: it was rewritten without the key'],
      ],
      [
        'a plain SHA-256, the key id kept',
        ({ hash: _h, ...body }) => {
          const hash = sha256(hashed(body))
          return { event: { ...body, hash }, head: { hash } }
        },
        { method: 'hmac-sha256', key_id: true },
        ['its content does not match its hash: it was altered'],
      ],
      [
        'an HMAC with a key of their own, the head signed with it too',
        ({ hash: _h, ...body }) => {
          const hash = theirHmac(hashed(body))
          return { event: { ...body, hash }, head: { hash, mac: theirHmac(canonicalJson({ head: body.chain, seq: body.seq, hash })) } }
        },
        { method: 'hmac-sha256', key_id: true },
        ['its content does not match its hash: it was altered'],
      ],
    ])('an event edited with %s, and its chain head moved, does not verify', async (_, forge, verification, eventProblems) => {
      const original = await signed()
      const { event, head } = forge({ ...original, change: { to: 'draft' } })
      await events.doc(original.id).set(event)
      await heads.doc(original.chain).update(head)
      const res = await api(`/events/${original.id}`)
      expect(res.body.change).toEqual({ to: 'draft' })
      expect(res.body.chain_verified).toBe(false)
      expect(res.body.verification).toEqual({
        method: verification.method,
        ...(verification.key_id ? { key_id: world.deps.audit.keys.activeId } : {}),
        result: 'failed',
      })
      expect(res.body.chain_problems).toEqual([
        ...eventProblems,
        "the chain's head does not match its signature: it was changed outside the platform",
      ])
    })

    it('shows the newest event deleted and the head moved back onto the one before it (truncation)', async () => {
      const entity = freshEntity()
      const created = await write(21, world.owner, { action: 'report.created', entity })
      const deleted = await write(22, world.owner, { action: 'report.signed', entity })
      await events.doc(deleted.id).delete()
      await heads.doc(created.chain).update({ seq: created.seq, hash: created.hash })
      const res = await api(`/events/${created.id}`)
      expect(res.body.verification.result).toBe('failed')
      expect(res.body.chain_problems).toEqual(["the chain's head does not match its signature: it was changed outside the platform"])
    })

    it("shows a chain's head deleted, and one whose signature was removed", async () => {
      const gone = await signed()
      await heads.doc(gone.chain).delete()
      expect((await api(`/events/${gone.id}`)).body.chain_problems).toEqual(['its chain has no head: it was deleted'])
      const stripped = await signed()
      await heads.doc(stripped.chain).update({ key_id: FieldValue.delete(), mac: FieldValue.delete() })
      expect((await api(`/events/${stripped.id}`)).body.chain_problems).toEqual(["the chain's head is not signed"])
    })
  })

  describe('keys', async () => {
    const k1 = newAuditKeyEntry('k1')
    const k2 = newAuditKeyEntry('k2')
    const keyed = await makeWorld({ AUDIT_HMAC_KEYS: k1 })
    const submitted = (entity = { type: 'run', id: `r-${rand()}` }): AuditInput => ({
      project_id: keyed.project.id,
      org_id: keyed.project.org_id,
      action: 'run.submitted',
      entity,
    })
    const before = await keyed.deps.audit.record(SYSTEM_ACTOR, submitted())

    it('after a rotation, keys new events with the active key and still verifies those of the older one', async () => {
      const rotated = localAudit(keyed, AuditKeyRing.parse(`${k1},${k2}`, 'k2'))
      const old = await rotated.api(`/events/${before.id}`)
      expect(old.body).toMatchObject({
        key_id: 'k1',
        chain_verified: true,
        verification: { method: 'hmac-sha256', key_id: 'k1', result: 'verified' },
      })
      const after = await rotated.deps.audit.record(SYSTEM_ACTOR, submitted())
      expect(after.key_id).toBe('k2')
      expect((await rotated.api(`/events/${after.id}`)).body.verification).toEqual({ method: 'hmac-sha256', key_id: 'k2', result: 'verified' })
      // The same chain, written on under the new key: its head is now k2's, and the k1 event still links to it.
      const next = await rotated.deps.audit.record(SYSTEM_ACTOR, submitted(before.entity))
      expect(next).toMatchObject({ chain: before.chain, seq: before.seq + 1, prev_hash: before.hash, key_id: 'k2' })
      expect((await rotated.api(`/events/${before.id}`)).body.chain_verified).toBe(true)
    })

    it('reports an event whose key is not in the ring as unverifiable, not as verified or altered', async () => {
      const without = localAudit(keyed, AuditKeyRing.parse(k2))
      const res = await without.api(`/events/${before.id}`)
      expect(res.body.chain_verified).toBe(false)
      expect(res.body.verification).toEqual({ method: 'unverifiable', key_id: 'k1', result: 'unverifiable' })
      expect(res.body.chain_problems).toEqual(expect.arrayContaining(['its key k1 is not in the key ring: its hash cannot be checked']))
      expect(res.body.chain_problems.every((p: string) => p.includes('not in the key ring'))).toBe(true)
    })

    it('reports a legacy event, written before events were keyed, as sha256: verified, or altered when edited', async () => {
      const chain = auditChainKey({ project_id: project.id, entity: { type: 'run', id: 'legacy' } }).replace('~hmac~', '~')
      const body: Omit<AuditEvent, 'hash'> = {
        id: newId(),
        occurred_at: Timestamp.fromDate(minute(30)),
        service: 'compute',
        outcome: 'success',
        org_id: org.id,
        project_id: project.id,
        action: 'run.submitted',
        entity: { type: 'run', id: 'legacy' },
        actor: { type: 'system', id: 'platform' },
        chain,
        seq: 1,
        prev_hash: '',
      }
      const legacy = { ...body, hash: sha256(canonicalJson(body)) }
      await world.deps.db
        .col('audit_events')
        .doc(legacy.id)
        .set({ ...legacy, action_group: 'run', scope: 'project' })
      await world.deps.db.col('audit_heads').doc(chain).set({ seq: 1, hash: legacy.hash })
      const res = await api(`/events/${legacy.id}`)
      expect(res.body).not.toHaveProperty('key_id')
      expect(res.body).toMatchObject({ chain, chain_verified: true, chain_problems: [], verification: { method: 'sha256', result: 'verified' } })
      await world.deps.db.col('audit_events').doc(legacy.id).update({ 'entity.id': 'edited' })
      expect((await api(`/events/${legacy.id}`)).body).toMatchObject({ chain_verified: false, verification: { method: 'sha256', result: 'failed' } })
    })
  })

  describe('who reads what', async () => {
    const member = async (roles: ProjectRole[]) => (await world.caller(roles)).token
    const orgMember = async (role: OrgRole) => {
      const user = await seedUser(world.deps, { email: `${role}-${rand()}@example.org` })
      await world.deps.store.setOrgRole(SYSTEM_ACTOR, org.id, user, role)
      return seedToken(world.deps, user, 'test')
    }
    // Another tenant: an organization of another owner, with a project and an event of its own.
    const stranger = await seedUser(world.deps, { email: `stranger-${rand()}@example.org` })
    const foreign = await seedOrgAndProject(world.deps, {
      owner: stranger,
      orgName: 'Elsewhere',
      orgSlug: `elsewhere-${rand()}`,
      projectName: 'Theirs',
      projectSlug: 'theirs',
      bucketName: `theirs-${rand()}`,
    })
    await grant(world.deps, foreign.project, stranger, ['admin'])
    const strangerToken = await seedToken(world.deps, stranger, 'test')
    const foreignEvent = await writer.record(SYSTEM_ACTOR, {
      project_id: foreign.project.id,
      org_id: foreign.org.id,
      action: 'run.submitted',
      entity: { type: 'run', id: 'theirs' },
    })
    const platformEvent = await writer.record(SYSTEM_ACTOR, {
      action: 'login.failed',
      outcome: 'failure',
      entity: { type: 'login', id: `x-${rand()}` },
    })

    const tokens: Record<string, () => Promise<string>> = {
      'project admin': () => member(['admin']),
      'project auditor': () => member(['auditor']),
      'project owner': () => member(['owner']),
      'project viewer': () => member(['viewer']),
      'project lab': () => member(['lab']),
      'project reviewer': () => member(['reviewer']),
      'project pipeline': () => member(['pipeline']),
      'org owner (and platform admin)': async () => world.owner.token,
      'org admin': () => orgMember('org_admin'),
      'org member': () => orgMember('org_member'),
      "another tenant's admin": async () => strangerToken,
    }
    type Row = [who: string, project: number, org: number, eventOfProject: number, eventOfOtherTenant: number, platform: number]
    const table: Row[] = [
      ['project admin', 200, 404, 200, 404, 403],
      ['project auditor', 200, 404, 200, 404, 403],
      ['project owner', 200, 404, 200, 404, 403],
      ['project viewer', 403, 404, 403, 404, 403],
      ['project lab', 403, 404, 403, 404, 403],
      ['project reviewer', 403, 404, 403, 404, 403],
      ['project pipeline', 403, 404, 403, 404, 403],
      ['org owner (and platform admin)', 200, 200, 200, 404, 200],
      ['org admin', 200, 200, 200, 404, 403],
      ['org member', 404, 403, 404, 404, 403],
      ["another tenant's admin", 404, 404, 404, 200, 403],
    ]
    it.each(table)(
      '%s: project %i, organization %i, an event of the project %i, of another tenant %i, platform %i',
      async (who, p, o, ev, other, platform) => {
        const token = await tokens[who]!()
        const got = [
          (await api(`/events?${PAST}`, { token, project: project.id })).status,
          (await api(`/events?org_id=${org.id}&${PAST}`, { token })).status,
          (await api(`/events/${e1.id}`, { token })).status,
          (await api(`/events/${foreignEvent.id}`, { token })).status,
          (await api('/events?scope=platform', { token })).status,
        ]
        expect(got).toEqual([p, o, ev, other, platform])
      },
    )

    it("shows the platform's own events to platform administrators", async () => {
      const res = await api(`/events?scope=platform&entity=${platformEvent.entity.type}:${platformEvent.entity.id}`)
      expect(ids(res.body)).toEqual([platformEvent.id])
      expect((await api(`/events/${platformEvent.id}`)).status).toBe(200)
    })
  })

  describe('reading the log is itself recorded', () => {
    it('as audit.queried with the filters, and audit.viewed with the event, by the reader', async () => {
      const auditor = await world.caller(['auditor'])
      await q(`action=run.*&outcome=success&${PAST}`, { token: auditor.token })
      await api(`/events/${e3.id}`, { token: auditor.token })
      const queried = await q(`action=audit.queried&actor=${auditor.user.id}`)
      expect(queried.body).toHaveLength(1)
      expect(queried.body[0]).toMatchObject({
        project_id: project.id,
        entity: { type: 'audit_query' },
        actor: { id: auditor.user.id },
        change: { query: { action: 'run.*', outcome: 'success', to: '2021-01-01T00:00:00.000Z', scope: 'project' } },
      })
      const viewed = await q(`action=audit.viewed&actor=${auditor.user.id}`)
      expect(viewed.body.map((e: { entity: unknown }) => e.entity)).toEqual([{ type: 'audit_event', id: e3.id }])
    })
  })
})
