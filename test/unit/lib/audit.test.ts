import { createHmac, randomBytes } from 'node:crypto'
import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AuditKeyRing, newAuditKeyEntry } from '../../../lib/audit-keys.js'
import { checkEvent, keyEvent, signHead, verifyAuditChain, type AuditEvent } from '../../../lib/audit.js'
import { canonicalJson } from '../../../lib/canonical.js'
import { sha256 } from '../../../lib/ids.js'

/** Keyed events, their chain and head, made and checked without Firestore (the writer's own functions). */
const k1 = newAuditKeyEntry('k1')
const k2 = newAuditKeyEntry('k2')
const ring = AuditKeyRing.parse(k1)
const chain = 'project_p~hmac~7'

function chainOf(keys: AuditKeyRing, actions: string[]): AuditEvent[] {
  const events: AuditEvent[] = []
  actions.forEach((action, i) => {
    events.push(
      keyEvent(keys, {
        id: `e${i + 1}`,
        occurred_at: Timestamp.fromMillis(1_700_000_000_000 + i * 1000),
        service: 'test',
        outcome: 'success',
        project_id: 'p',
        org_id: 'o',
        action,
        entity: { type: 'report', id: 'r1' },
        change: { to: 'signed', fields: ['conclusion'] },
        actor: { type: 'user', id: 'u1', email: 'a@example.org' },
        chain,
        seq: i + 1,
        prev_hash: events[i - 1]?.hash ?? '',
      }),
    )
  })
  return events
}
const headOf = (keys: AuditKeyRing, events: AuditEvent[]) => {
  const newest = events.at(-1)!
  return signHead(keys, chain, newest.seq, newest.hash, newest.occurred_at)
}

/** A field of the hashed body, and a value to put there instead. */
const edits: Array<[string, (e: AuditEvent) => AuditEvent]> = [
  ['action', (e) => ({ ...e, action: 'report.deleted' })],
  ['outcome', (e) => ({ ...e, outcome: 'denied' })],
  ['actor', (e) => ({ ...e, actor: { ...e.actor, id: 'u2' } })],
  ['entity', (e) => ({ ...e, entity: { ...e.entity, id: 'r2' } })],
  ['change', (e) => ({ ...e, change: { to: 'draft' } })],
  ['occurred_at', (e) => ({ ...e, occurred_at: Timestamp.fromMillis(e.occurred_at.toMillis() - 86_400_000) })],
  ['seq', (e) => ({ ...e, seq: e.seq + 1 })],
  ['prev_hash', (e) => ({ ...e, prev_hash: sha256('x') })],
  ['chain', (e) => ({ ...e, chain: 'project_p~hmac~8' })],
  ['key_id', (e) => ({ ...e, key_id: e.key_id === 'k1' ? 'k2' : 'k1' })],
  ['project_id', (e) => ({ ...e, project_id: 'q' })],
]

describe('keyed audit events', () => {
  it('verify under their key, and their chain and signed head too', () => {
    const events = chainOf(ring, ['report.created', 'report.updated', 'report.signed'])
    expect(events.map((e) => checkEvent(e, ring))).toEqual(events.map(() => ({ method: 'hmac-sha256', key_id: 'k1', failed: [], unverifiable: [] })))
    expect(verifyAuditChain(events, ring, headOf(ring, events))).toEqual([])
  })

  it('never verify after an edit of any field of their body, whatever hash is recomputed without the key', () => {
    // Both keys in the ring, so that a key id changed to the other one is checked, and fails.
    const both = AuditKeyRing.parse(`${k1},${k2}`, 'k1')
    const events = chainOf(both, ['report.created', 'report.updated', 'report.signed'])
    const theirKey = randomBytes(32)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: events.length - 1 }),
        fc.constantFrom(...edits),
        fc.constantFrom<'kept' | 'sha256' | 'their key'>('kept', 'sha256', 'their key'),
        (i, [, edit], rehash) => {
          const edited = edit(events[i]!)
          const { hash: _h, action_group: _g, scope: _s, ...body } = edited
          const hash =
            rehash === 'kept'
              ? edited.hash
              : rehash === 'sha256'
                ? sha256(canonicalJson(body))
                : createHmac('sha256', theirKey).update(canonicalJson(body)).digest('hex')
          expect(checkEvent({ ...edited, hash }, both).failed).not.toEqual([])
        },
      ),
    )
  })

  it('cannot pass for legacy ones: an event of a keyed chain without its key id fails even with a matching SHA-256', () => {
    const [event] = chainOf(ring, ['report.created'])
    const { hash: _h, key_id: _k, action_group: _g, scope: _s, ...body } = event!
    const downgraded = { ...body, hash: sha256(canonicalJson(body)) }
    expect(checkEvent(downgraded, ring)).toMatchObject({
      method: 'sha256',
      failed: ['it is not keyed, but its chain is: it was rewritten without the key'],
    })
  })

  it('verify after a rotation while their key stays in the ring, and are unverifiable, not altered, once it is gone', () => {
    const events = chainOf(ring, ['report.created', 'report.signed'])
    const rotated = AuditKeyRing.parse(`${k1},${k2}`, 'k2')
    expect(verifyAuditChain(events, rotated, headOf(ring, events))).toEqual([])
    const without = AuditKeyRing.parse(k2)
    expect(checkEvent(events[0]!, without)).toEqual({
      method: 'unverifiable',
      key_id: 'k1',
      failed: [],
      unverifiable: ['its key k1 is not in the key ring: its hash cannot be checked'],
    })
  })

  it('show a head moved back or forward, or re-signed with another key', () => {
    const events = chainOf(ring, ['report.created', 'report.updated', 'report.signed'])
    const head = headOf(ring, events)
    const back = { ...head, seq: 2, hash: events[1]!.hash }
    expect(verifyAuditChain(events.slice(0, 2), ring, back)).toEqual([
      "the chain's head does not match its signature: it was changed outside the platform",
    ])
    const resigned = signHead(AuditKeyRing.parse(newAuditKeyEntry('k1')), chain, 2, events[1]!.hash, head.updated!)
    expect(verifyAuditChain(events.slice(0, 2), ring, resigned)).toEqual([
      "the chain's head does not match its signature: it was changed outside the platform",
    ])
    expect(verifyAuditChain(events, ring, { seq: head.seq, hash: head.hash })).toEqual(["the chain's head is not signed"])
  })
})
