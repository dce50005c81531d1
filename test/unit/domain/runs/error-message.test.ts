import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { BatchJobView } from '../../../../lib/batch/port.js'
import { ERROR_MESSAGE_MAX, errorMessageOf } from '../../../../domain/runs/lifecycle.js'

const jobWith = (events: BatchJobView['events']): BatchJobView => ({
  name: 'projects/p/locations/r/jobs/j',
  uid: 'j-1',
  state: 'FAILED',
  labels: {},
  events,
})
const failed = (description: string, stderr?: string) => ({ description, newState: 'FAILED', ...(stderr === undefined ? {} : { stderr }) })

describe("a failed run's error message", () => {
  it.each([
    [
      'the failure event with its own stderr',
      jobWith([failed('exit code 3 in runnable 1', 'no such file')]),
      undefined,
      'the Batch job failed: exit code 3 in runnable 1\nLast lines of stderr:\nno such file',
    ],
    [
      'the failure event and the stderr read from the log',
      jobWith([failed('exit code 1')]),
      'line a\nline b\n',
      'the Batch job failed: exit code 1\nLast lines of stderr:\nline a\nline b',
    ],
    [
      "the event's stderr over the log's",
      jobWith([failed('exit code 1', 'from the event')]),
      'from the log',
      'the Batch job failed: exit code 1\nLast lines of stderr:\nfrom the event',
    ],
    ['no stderr at all', jobWith([failed('exit code 1')]), '', 'the Batch job failed: exit code 1'],
    [
      'the event naming an exit code over a later bare FAILED',
      jobWith([failed('exit code 2'), failed('Job state is set to the end state')]),
      undefined,
      'the Batch job failed: exit code 2',
    ],
    ['no job', undefined, undefined, 'the Batch job failed without an error message'],
  ])('ends with %s', (_what, job, stderr, expected) => {
    expect(errorMessageOf(job, stderr)).toBe(expected)
  })

  it('stays within its limit and keeps the very end of stderr, cutting the description first', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 3000 }),
        fc.string({ maxLength: 3000 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        (description, before, last) => {
          const stderr = `${before}\n${last.replace(/\s+$/, '')}x`
          const message = errorMessageOf(jobWith([failed(description)]), stderr)
          expect(message.length).toBeLessThanOrEqual(ERROR_MESSAGE_MAX)
          expect(message.startsWith('the Batch job failed')).toBe(true)
          expect(message.endsWith(stderr.slice(-40))).toBe(true)
          expect(message).toContain('\nLast lines of stderr:\n')
        },
      ),
    )
  })
})
