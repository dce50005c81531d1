import { Timestamp } from '@google-cloud/firestore'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPublicAddress, urlProblem, addressesProblem } from '../../../../domain/webhooks/addresses.js'
import {
  decideAttempt,
  decideClaim,
  decideRedeliver,
  decideRegister,
  decideRotate,
  decideUpdate,
  MAX_ATTEMPTS,
  MAX_WEBHOOKS_PER_PROJECT,
  retryDelayMs,
  RETRY_SCHEDULE_MS,
  SECRET_OVERLAP_MS,
  signingSecrets,
  urlRefusal,
  type RegisterWebhook,
} from '../../../../domain/webhooks/decide.js'
import { EVENT_FILTERS, eventTypeOf, hookWants, payloadOf, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../../domain/webhooks/events.js'
import type { WebhookRecord } from '../../../../domain/webhooks/model.js'

const HOUR = 3600_000

describe('the retry schedule', () => {
  it('is the Standard Webhooks one: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR])
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(retryDelayMs)).toEqual([5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, undefined])
  })

  it.each([
    ['a 200', { status_code: 200 }, 'succeeded'],
    ['a 204', { status_code: 204 }, 'succeeded'],
    ['a 299', { status_code: 299 }, 'succeeded'],
    ['a 301 (redirects are not followed)', { status_code: 301 }, 'pending'],
    ['a 410', { status_code: 410 }, 'pending'],
    ['a 500', { status_code: 500 }, 'pending'],
    ['a timeout', { error: 'no answer within 15 s' }, 'pending'],
  ])('takes %s as %s', (_, outcome, status) => {
    expect(decideAttempt({ round: 1, round_attempts: 0 }, { at: 1000, duration_ms: 5, ...outcome }).status).toBe(status)
  })

  it('keeps a delivery failed after its eighth failed attempt, never sooner', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 300, max: 599 }), { minLength: MAX_ATTEMPTS, maxLength: MAX_ATTEMPTS }), (codes) => {
        let d = { round: 1, round_attempts: 0 }
        let at = 0
        const statuses: string[] = []
        for (const code of codes) {
          const change = decideAttempt(d, { at, duration_ms: 1, status_code: code })
          statuses.push(change.status)
          if (change.next_attempt_at !== undefined) {
            expect(change.next_attempt_at - at).toBe(RETRY_SCHEDULE_MS[change.round_attempts])
            at = change.next_attempt_at
          }
          d = { round: 1, round_attempts: change.round_attempts }
        }
        expect(statuses).toEqual([...Array(MAX_ATTEMPTS - 1).fill('pending'), 'failed'])
        // Over hours: the last attempt comes about 27.6 hours after the first.
        expect(at).toBe(RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0))
        expect(at / HOUR).toBeCloseTo(27.6, 1)
      }),
    )
  })

  it('ends a delivery at its first 2xx, whatever failed before', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_ATTEMPTS - 1 }), fc.integer({ min: 200, max: 299 }), (failures, ok) => {
        let d = { round: 1, round_attempts: 0 }
        for (let i = 0; i < failures; i++)
          d = { round: 1, round_attempts: decideAttempt(d, { at: i, duration_ms: 1, error: 'refused' }).round_attempts }
        const change = decideAttempt(d, { at: 99, duration_ms: 1, status_code: ok })
        expect(change).toMatchObject({ status: 'succeeded', round_attempts: failures + 1, attempt: { succeeded: true, number: failures + 1 } })
        expect(change.next_attempt_at).toBeUndefined()
      }),
    )
  })
})

describe('claiming a delivery', () => {
  const ts = (ms: number) => Timestamp.fromMillis(ms)
  it.each([
    ['a due pending delivery', { status: 'pending' as const, next_attempt_at: ts(1000) }, true],
    ['one not due yet', { status: 'pending' as const, next_attempt_at: ts(3000) }, false],
    ['one another dispatcher holds', { status: 'pending' as const, lease_until: ts(2500) }, false],
    ['one whose lease ran out', { status: 'pending' as const, lease_until: ts(1500) }, true],
    ['a succeeded one (a duplicate message)', { status: 'succeeded' as const }, false],
    ['a failed one', { status: 'failed' as const }, false],
  ])('claims %s: %s', (_, state, ok) => {
    expect(decideClaim(state, 2000).ok).toBe(ok)
  })
})

describe('the URL policy', () => {
  it.each([
    ['127.0.0.1', false],
    ['127.255.0.9', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['198.18.0.1', false],
    ['8.8.8.8', true],
    ['142.250.74.46', true],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd00:ec2::254', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:a9fe:a9fe', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a9fe:a9fe', false],
    ['2002:a9fe:a9fe::1', false],
    ['2001:db8::1', false],
    ['2a00:1450:4001:82b::200e', true],
    ['not an address', false],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected)
  })

  it('refuses every address of the private ranges, in IPv4 and in its IPv4-mapped IPv6 forms', () => {
    const v4 = fc.oneof(
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    )
    fc.assert(
      fc.property(v4, (parts) => {
        const dotted = parts.join('.')
        const hex = `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`
        expect([dotted, `::ffff:${dotted}`, `::ffff:${hex}`, `::FFFF:${hex.toUpperCase()}`].map(isPublicAddress)).toEqual([
          false,
          false,
          false,
          false,
        ])
      }),
    )
  })

  it('judges an IPv4-mapped address as its IPv4 address', () => {
    fc.assert(fc.property(fc.ipV4(), (a) => isPublicAddress(`::ffff:${a}`) === isPublicAddress(a)))
  })

  it.each([
    ['https://hooks.example.org/platform', 'public', undefined],
    ['https://hooks.example.org:8443/platform?token=x', 'public', undefined],
    ['http://hooks.example.org/platform', 'public', 'must be https://'],
    ['ftp://hooks.example.org/', 'public', 'must be https://'],
    ['https://user:pw@hooks.example.org/', 'public', 'must not carry a user name or password'],
    ['https://hooks.example.org/#x', 'public', 'must not have a fragment'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'public', 'metadata.google.internal is the metadata server'],
    ['https://metadata.google.internal./computeMetadata/v1/', 'public', 'metadata.google.internal is the metadata server'],
    ['https://169.254.169.254/', 'public', '169.254.169.254 is not a public address'],
    ['https://[::1]/', 'public', '::1 is not a public address'],
    ['https://[::ffff:10.0.0.1]/', 'public', '::ffff:a00:1 is not a public address'],
    ['https://intranet/', 'public', 'intranet is not a public host name'],
    ['not a url', 'public', 'not an absolute URL'],
    ['http://127.0.0.1:9000/hook', 'local', undefined],
    ['ftp://127.0.0.1/', 'local', 'must be http:// or https://'],
  ] as const)('%s under %s: %s', (url, policy, problem) => {
    expect(urlProblem(url, policy)).toBe(problem)
  })

  it.each([
    [['93.184.215.14'], undefined],
    [['93.184.215.14', '10.0.0.7'], 'hooks.example.org resolves to 10.0.0.7, which is not a public address'],
    [['::1'], 'hooks.example.org resolves to ::1, which is not a public address'],
    [[], 'hooks.example.org does not resolve to any address'],
  ])('a host resolving to %j: %s', (addresses, problem) => {
    expect(addressesProblem('hooks.example.org', addresses, 'public')).toBe(problem)
    expect(urlRefusal({ url: 'https://hooks.example.org/x', addresses }, 'public')).toBe(problem)
  })

  it('lets the local suite deliver to loopback', () => {
    expect(urlRefusal({ url: 'http://127.0.0.1:9000/hook', addresses: ['127.0.0.1'] }, 'local')).toBeUndefined()
    expect(urlRefusal({ url: 'http://127.0.0.1:9000/hook', addresses: ['127.0.0.1'] }, 'public')).toBe('must be https://')
  })
})

describe('which events a webhook gets', () => {
  it.each([
    [['*'], 'report.signed', true],
    [['run.*'], 'run.failed', true],
    [['run.*'], 'order.transitioned', false],
    [['run.failed'], 'run.failed', true],
    [['run.failed'], 'run.succeeded', false],
    [['ingestion.ready', 'report.signed'], 'report.signed', true],
    [['ingestion.*'], 'ingestion.failed', true],
    [[], 'run.failed', false],
  ] as Array<[string[], WebhookEventType, boolean]>)('%j gets %s: %s', (filters, type, wanted) => {
    expect(hookWants(filters, type)).toBe(wanted)
  })

  it('gives a webhook an event exactly when one of its filters is the event, its group, or *', () => {
    fc.assert(
      fc.property(fc.subarray([...EVENT_FILTERS]), fc.constantFrom(...WEBHOOK_EVENT_TYPES), (filters, type) => {
        expect(hookWants(filters, type)).toBe(filters.some((f) => hookWants([f], type)))
        expect(hookWants(['*', ...filters], type)).toBe(true)
        expect(hookWants([`${type.split('.')[0]}.*`], type)).toBe(true)
      }),
    )
  })

  it.each([
    ['run.submitted', 'run.queued'],
    ['run.running', 'run.running'],
    ['run.succeeded', 'run.succeeded'],
    ['run.failed', 'run.failed'],
    ['run.cancelled', 'run.cancelled'],
    ['variant_ingestion.completed', 'ingestion.ready'],
    ['variant_ingestion.failed', 'ingestion.failed'],
    ['order.transitioned', 'order.transitioned'],
    ['report.signed', 'report.signed'],
    ['run.job_created', undefined],
    ['report.drafted', undefined],
    ['token.created', undefined],
  ])('delivers the audit action %s as %s', (action, type) => {
    expect(eventTypeOf(action)).toBe(type)
  })

  it('makes a thin payload: ids, statuses and the reason, no more', () => {
    const at = new Date('2026-11-26T10:00:00Z')
    expect(
      payloadOf({
        id: 'ev1',
        action: 'run.failed',
        project_id: 'p1',
        occurred_at: at,
        entity: { type: 'run', id: 'r1', parent: 'pl1' },
        change: { from: 'running', to: 'failed', reason: 'exit 1' },
      }),
    ).toEqual({
      type: 'run.failed',
      timestamp: '2026-11-26T10:00:00.000Z',
      data: {
        project_id: 'p1',
        audit_event_id: 'ev1',
        run_id: 'r1',
        pipeline_id: 'pl1',
        status: 'failed',
        previous_status: 'running',
        error_message: 'exit 1',
      },
    })
    expect(
      payloadOf({
        id: 'ev2',
        action: 'order.transitioned',
        project_id: 'p1',
        occurred_at: at,
        entity: { type: 'order', id: 'o1', parent: 'ORD-2026-000001' },
        change: { from: 'signed', to: 'in_progress' },
      })?.data,
    ).toEqual({ project_id: 'p1', audit_event_id: 'ev2', order_id: 'o1', accession: 'ORD-2026-000001', from: 'signed', to: 'in_progress' })
    expect(payloadOf({ id: 'ev3', action: 'token.created', project_id: 'p1', occurred_at: at, entity: { type: 'token', id: 't' } })).toBeUndefined()
  })
})

describe('registering and changing a webhook', () => {
  const cmd = (over: Partial<RegisterWebhook> = {}): RegisterWebhook => ({
    id: 'h1',
    project: { id: 'p1', org_id: 'o1' },
    url: { url: 'https://hooks.example.org/x', addresses: ['93.184.215.14'] },
    events: ['run.*'],
    description: 'LIMS',
    policy: 'public',
    secret: { key_id: 'k1', generation: 1 },
    by: 'u1',
    now: 1000,
    ...over,
  })

  it.each([
    [
      'a private address',
      { url: { url: 'https://hooks.example.org/x', addresses: ['10.0.0.1'] } },
      400,
      /url: hooks.example.org resolves to 10.0.0.1/,
    ],
    ['no events', { events: [] }, 400, /events: name at least one/],
    ['an unknown event', { events: ['run.exploded'] }, 400, /events: 'run.exploded' is not an event type/],
  ])('refuses %s', (_, over, status, detail) => {
    const d = decideRegister(0, cmd(over))
    expect(d.ok).toBe(false)
    if (!d.ok) expect(d.refusal).toMatchObject({ kind: status === 400 ? 'invalid' : 'conflict', detail: expect.stringMatching(detail) })
  })

  it(`refuses a webhook beyond ${MAX_WEBHOOKS_PER_PROJECT} per project`, () => {
    expect(decideRegister(MAX_WEBHOOKS_PER_PROJECT, cmd())).toMatchObject({ ok: false, refusal: { kind: 'conflict' } })
    expect(decideRegister(MAX_WEBHOOKS_PER_PROJECT - 1, cmd()).ok).toBe(true)
  })

  it('records webhook.created without the URL (it may carry a token)', () => {
    const d = decideRegister(0, cmd({ url: { url: 'https://hooks.example.org/x?token=secret', addresses: ['93.184.215.14'] } }))
    expect(d.ok && d.events).toEqual([
      { action: 'webhook.created', project_id: 'p1', org_id: 'o1', entity: { type: 'webhook', id: 'h1' }, change: { to: 'enabled' } },
    ])
    expect(JSON.stringify(d.ok && d.events)).not.toContain('secret')
  })

  const hook = (over: Partial<WebhookRecord> = {}): WebhookRecord => ({
    id: 'h1',
    project_id: 'p1',
    org_id: 'o1',
    url: 'https://hooks.example.org/x',
    events: ['run.*'],
    description: 'LIMS',
    enabled: true,
    secrets: [{ key_id: 'k1', generation: 1, created: Timestamp.fromMillis(0) }],
    created: Timestamp.fromMillis(0),
    created_by: 'u1',
    updated: Timestamp.fromMillis(0),
    ...over,
  })

  it('names the changed fields of an update, and records nothing when nothing changes', () => {
    const d = decideUpdate(hook(), { events: ['run.*', 'report.signed'], enabled: false, description: 'LIMS', policy: 'public' })
    expect(d).toMatchObject({ ok: true, changes: { events: ['run.*', 'report.signed'], enabled: false } })
    expect(d.ok && d.events[0]?.change).toEqual({ from: 'enabled', to: 'disabled', fields: ['events', 'enabled'] })
    expect(decideUpdate(hook(), { description: 'LIMS', policy: 'public' })).toEqual({ ok: true, changes: {}, events: [] })
    expect(decideUpdate(undefined, { policy: 'public' })).toMatchObject({ ok: false, refusal: { kind: 'not_found' } })
  })

  it('keeps the rotated secret signing for a day beside the new one, and drops older ones', () => {
    const first = decideRotate(hook(), { key_id: 'k2', now: 10_000 })
    expect(first.ok && first.changes).toEqual([
      { key_id: 'k2', generation: 2, created: 10_000 },
      { key_id: 'k1', generation: 1, created: 0, expires: 10_000 + SECRET_OVERLAP_MS },
    ])
    const rotated = hook({
      secrets: [
        { key_id: 'k2', generation: 2, created: Timestamp.fromMillis(10_000) },
        { key_id: 'k1', generation: 1, created: Timestamp.fromMillis(0), expires: Timestamp.fromMillis(10_000 + SECRET_OVERLAP_MS) },
      ],
    })
    expect(signingSecrets(rotated, 20_000).map((s) => s.generation)).toEqual([2, 1])
    expect(signingSecrets(rotated, 10_000 + SECRET_OVERLAP_MS).map((s) => s.generation)).toEqual([2])
    const second = decideRotate(rotated, { key_id: 'k2', now: 20_000 })
    expect(second.ok && second.changes.map((s) => s.generation)).toEqual([3, 2])
  })

  it('redelivers in any status, as a new round from now, with webhook.redelivered', () => {
    for (const status of ['pending', 'succeeded', 'failed'] as const) {
      const d = decideRedeliver({ id: 'msg_1', status, round: 2 }, hook(), 5000)
      expect(d).toMatchObject({ ok: true, changes: { status: 'pending', round: 3, round_attempts: 0, next_attempt_at: 5000 } })
      expect(d.ok && d.events[0]).toMatchObject({ action: 'webhook.redelivered', change: { from: status, to: 'pending' } })
    }
  })
})
