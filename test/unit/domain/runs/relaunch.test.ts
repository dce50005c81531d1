import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { applyParamsPatch, decideRelaunch, type RelaunchCommand, type RelaunchSource, type SessionState } from '../../../../domain/runs/relaunch.js'
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../../../domain/runs/status.js'

const first = (over: Partial<RelaunchSource> = {}): RelaunchSource => ({
  id: 'r1',
  name: 'steps-local-20261126T140000Z',
  project_id: 'p1',
  org_id: 'o1',
  pipeline_id: 'pl1',
  status: 'failed',
  params: { fail_at: 3, greeting: 'hi' },
  tags: ['trio'],
  profile: 'docker',
  work_session: 'r1',
  ...over,
})
const cmd = (over: Partial<RelaunchCommand> = {}): RelaunchCommand => ({ resume: false, run: { id: 'r2', name: 'steps-local-2' }, ...over })

describe('decideRelaunch', () => {
  const refusals: Array<[string, Partial<RelaunchSource>, Partial<RelaunchCommand>, SessionState, string]> = [
    ['a resume of a queued run', { status: 'queued' }, { resume: true }, {}, 'still queued'],
    ['a resume of a running run', { status: 'running' }, { resume: true }, {}, 'still running'],
    ['a resume of a run without a work session', { work_session: undefined }, { resume: true }, {}, 'without resume'],
    [
      'a resume while another run of the session is at work',
      {},
      { resume: true },
      { active: { name: 'steps-local-3', status: 'running' } },
      'run steps-local-3 is running in the work session of run steps-local-20261126T140000Z',
    ],
  ]
  it.each(refusals)('refuses %s with a 409', (_, state, command, session, detail) => {
    const d = decideRelaunch(first(state), cmd(command), session)
    expect(d.ok).toBe(false)
    if (!d.ok) {
      expect(d.refusal.kind).toBe('conflict')
      expect(d.refusal).toMatchObject({ detail: expect.stringContaining(detail) })
    }
  })

  const plans: Array<[string, Partial<RelaunchSource>, Partial<RelaunchCommand>, object]> = [
    [
      'keeps every setting of the first run when nothing changes',
      {},
      {},
      { params: { fail_at: 3, greeting: 'hi' }, tags: ['trio'], profile: 'docker', changed: [], work_session: 'r2' },
    ],
    [
      'continues the first run’s work session on resume',
      { work_session: 'r0' },
      { resume: true },
      { work_session: 'r0', relaunched_from: { id: 'r1', name: 'steps-local-20261126T140000Z', resume: true } },
    ],
    [
      'merges changed params (null removes one) and names what changed',
      {},
      { params: { fail_at: 0, greeting: null, extra: 'x' } },
      { params: { fail_at: 0, extra: 'x' }, changed: ['params.extra', 'params.fail_at', 'params.greeting'] },
    ],
    ['replaces tags and profile', {}, { tags: ['rerun'], profile: 'test' }, { tags: ['rerun'], profile: 'test', changed: ['tags', 'profile'] }],
    ['relaunches a running run afresh (only resume waits for the end)', { status: 'running' }, {}, { work_session: 'r2' }],
  ]
  it.each(plans)('%s', (_, state, command, expected) => {
    // A run at work in the session matters to a resume only.
    const d = decideRelaunch(first(state), cmd(command), command.resume ? {} : { active: { name: 'other', status: 'running' } })
    expect(d.ok).toBe(true)
    if (d.ok) expect(d.changes).toMatchObject(expected)
  })

  it('records run.submitted on the new run and run.relaunched on the first, both naming the other', () => {
    const d = decideRelaunch(first(), cmd({ resume: true, params: { fail_at: 0 } }))
    if (!d.ok) throw new Error('refused')
    expect(d.events.map((e) => [e.action, e.entity.id])).toEqual([
      ['run.submitted', 'r2'],
      ['run.relaunched', 'r1'],
    ])
    expect(d.events[0]!.change).toEqual({ to: 'queued', reason: 'resumed from run steps-local-20261126T140000Z', fields: ['params.fail_at'] })
    expect(d.events[1]!.change?.reason).toBe('resumed as run steps-local-2 (r2)')
  })

  const json = fc.jsonValue().filter((v) => v !== null)
  // A first run's params may hold nulls of their own: only a patch's null removes one.
  const params = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue(), { maxKeys: 6 })
  const status = fc.constantFrom<RunStatus>(...RUN_STATUSES)

  it('property: a resume is allowed exactly when the first run has ended in a work session no run is at work in, and then keeps it', () => {
    const active = fc.option(fc.record({ name: fc.string(), status: fc.constantFrom<RunStatus>('queued', 'running') }), { nil: undefined })
    fc.assert(
      fc.property(status, fc.option(fc.uuid(), { nil: undefined }), active, (s, session, other) => {
        const d = decideRelaunch(first({ status: s, work_session: session }), cmd({ resume: true }), { active: other })
        expect(d.ok).toBe(TERMINAL.has(s) && session !== undefined && other === undefined)
        if (d.ok) expect(d.changes.work_session).toBe(session)
      }),
    )
  })

  it('property: a relaunch without changes keeps params, tags and profile, and changes nothing else', () => {
    fc.assert(
      fc.property(status, params, fc.array(fc.string({ minLength: 1 })), (s, p, tags) => {
        const d = decideRelaunch(first({ status: s, params: p, tags }), cmd())
        expect(d.ok).toBe(true)
        if (d.ok) {
          expect(d.changes).toMatchObject({ params: p, tags, profile: 'docker', changed: [], work_session: 'r2' })
        }
      }),
    )
  })

  it('property: the changed list names exactly the params whose value differs', () => {
    fc.assert(
      fc.property(params, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.option(json, { nil: null }), { maxKeys: 6 }), (p, patch) => {
        const d = decideRelaunch(first({ params: p }), cmd({ params: patch }))
        if (!d.ok) throw new Error('refused')
        const next = applyParamsPatch(p, patch)
        const keys = [...new Set([...Object.keys(p), ...Object.keys(next)])]
        const own = (o: Record<string, unknown>, k: string) => (Object.hasOwn(o, k) ? o[k] : undefined)
        const differ = keys.filter((k) => JSON.stringify(own(p, k)) !== JSON.stringify(own(next, k))).map((k) => `params.${k}`)
        expect([...d.changes.changed].sort()).toEqual(differ.sort())
        for (const [k, v] of Object.entries(patch)) expect(own(next, k)).toEqual(v === null ? undefined : v)
      }),
    )
  })
})
