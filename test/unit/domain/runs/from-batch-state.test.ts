import { describe, expect, it } from 'vitest'
import { BATCH_STATES, TASK_STATES } from '../../../../lib/batch/state.js'
import { fromBatchState, fromTaskState } from '../../../../domain/runs/status.js'

describe('fromBatchState', () => {
  it.each([
    ['QUEUED', 'queued'],
    ['SCHEDULED', 'queued'],
    ['RUNNING', 'running'],
    ['SUCCEEDED', 'succeeded'],
    ['FAILED', 'failed'],
    ['DELETION_IN_PROGRESS', undefined],
    ['CANCELLATION_IN_PROGRESS', undefined],
    ['CANCELLED', undefined],
    ['STATE_UNSPECIFIED', undefined],
  ] as const)('maps %s to %s', (state, status) => {
    expect(fromBatchState(state)).toBe(status)
  })

  it('covers every state of the Batch API', async () => {
    const { protos } = await import('@google-cloud/batch')
    const apiStates = Object.keys(protos.google.cloud.batch.v1.JobStatus.State).filter((k) => Number.isNaN(Number(k)))
    expect([...BATCH_STATES].sort()).toEqual(apiStates.sort())
    // BATCH_STATES is in enum order, so a numeric state from the API maps by index.
    BATCH_STATES.forEach((s, i) => expect(protos.google.cloud.batch.v1.JobStatus.State[s]).toBe(i))
  })
})

describe('fromTaskState', () => {
  it.each([
    ['PENDING', 'queued'],
    ['ASSIGNED', 'queued'],
    ['RUNNING', 'running'],
    ['SUCCEEDED', 'job'],
    ['FAILED', 'job'],
    ['UNEXECUTED', 'job'],
    ['STATE_UNSPECIFIED', undefined],
  ] as const)('reads %s as %s', (state, meaning) => {
    expect(fromTaskState(state)).toBe(meaning)
  })

  it('covers every task state of the Batch API', async () => {
    const { protos } = await import('@google-cloud/batch')
    const apiStates = Object.keys(protos.google.cloud.batch.v1.TaskStatus.State).filter((k) => Number.isNaN(Number(k)))
    expect([...TASK_STATES].sort()).toEqual(apiStates.sort())
    TASK_STATES.forEach((s, i) => expect(protos.google.cloud.batch.v1.TaskStatus.State[s]).toBe(i))
  })

  it("never ends a run by itself: a task's end is read as its job's state", () => {
    for (const s of TASK_STATES) expect(['succeeded', 'failed', 'cancelled']).not.toContain(fromTaskState(s))
  })
})
