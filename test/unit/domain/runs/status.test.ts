import { describe, expect, it } from 'vitest'
import { advance, RUN_STATUSES, TERMINAL, type RunStatus } from '../../../../domain/runs/status.js'

describe('advance(): the run state machine', () => {
  const cases: Array<[current: RunStatus, incoming: RunStatus, expected: RunStatus | undefined]> = [
    ['queued', 'running', 'running'],
    ['queued', 'succeeded', 'succeeded'],
    ['queued', 'failed', 'failed'],
    ['queued', 'cancelled', 'cancelled'],
    ['running', 'succeeded', 'succeeded'],
    ['running', 'failed', 'failed'],
    ['running', 'cancelled', 'cancelled'],
    ['queued', 'queued', undefined],
    ['running', 'running', undefined],
    ['running', 'queued', undefined],
  ]
  it.each(cases)('moves %s on %s to %s', (current, incoming, expected) => {
    expect(advance(current, incoming)).toBe(expected)
  })

  it('keeps every terminal status final, whatever arrives later', () => {
    for (const terminal of TERMINAL) {
      for (const incoming of RUN_STATUSES) expect(advance(terminal, incoming)).toBeUndefined()
    }
  })

  it('keeps a cancelled run cancelled when a late RUNNING or SUCCEEDED event arrives', () => {
    expect(advance('cancelled', 'running')).toBeUndefined()
    expect(advance('cancelled', 'succeeded')).toBeUndefined()
  })

  it('names exactly succeeded, failed and cancelled as terminal', () => {
    expect([...TERMINAL].sort()).toEqual(['cancelled', 'failed', 'succeeded'])
  })

  it('never moves a run backwards along any sequence of events', () => {
    const rank = (s: RunStatus) => (s === 'queued' ? 0 : s === 'running' ? 1 : 2)
    for (const a of RUN_STATUSES)
      for (const b of RUN_STATUSES)
        for (const c of RUN_STATUSES) {
          let s: RunStatus = 'queued'
          for (const e of [a, b, c]) {
            const next = advance(s, e)
            if (next) {
              expect(rank(next)).toBeGreaterThan(rank(s))
              s = next
            }
          }
        }
  })
})
