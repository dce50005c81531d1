import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { logComplete } from '../../../../domain/runs/logs.js'
import { RUN_STATUSES, TERMINAL } from '../../../../domain/runs/status.js'

const now = new Date('2026-11-26T12:00:00Z')
const ago = (ms: number) => new Date(now.getTime() - ms)

describe("when a run's log is complete", () => {
  it.each([
    ['a running run, at the end of its log', { status: 'running', atEnd: true, lagMs: 0 }, false],
    ['a queued run', { status: 'queued', atEnd: true, lagMs: 0 }, false],
    ['a finished run with lines left to read', { status: 'succeeded', finished: ago(10_000), atEnd: false, lagMs: 0 }, false],
    ['a finished run read to the end, locally (no lag)', { status: 'failed', finished: ago(0), atEnd: true, lagMs: 0 }, true],
    [
      'a run finished 10 s ago in the cloud (lines may still arrive)',
      { status: 'succeeded', finished: ago(10_000), atEnd: true, lagMs: 60_000 },
      false,
    ],
    [
      'a run finished two minutes ago in the cloud, read to the end',
      { status: 'cancelled', finished: ago(120_000), atEnd: true, lagMs: 60_000 },
      true,
    ],
    ['a cancelled run that never started (no finish time)', { status: 'cancelled', atEnd: true, lagMs: 60_000 }, true],
  ] as const)('%s: %s', (_what, p, expected) => {
    expect(logComplete({ ...p, now })).toBe(expected)
  })

  it('is never complete while the run can still write, nor while lines are left to read', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RUN_STATUSES), fc.boolean(), fc.nat(600_000), fc.nat(600_000), (status, atEnd, since, lagMs) => {
        const complete = logComplete({ status, finished: ago(since), atEnd, now, lagMs })
        if (!TERMINAL.has(status) || !atEnd) expect(complete).toBe(false)
        else expect(complete).toBe(since >= lagMs)
      }),
    )
  })
})
