import { describe, expect, it } from 'vitest'
import { BATCH_STATES } from '../../../../lib/batch/state.js'
import { fromBatchState } from '../../../../domain/runs/status.js'

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
