import { describe, expect, it } from 'vitest'
import type { protos } from '@google-cloud/batch'
import { CloudBatchBackend, createJobRequest, toBatchError, toView, type BatchRpc } from '../../../../lib/batch/cloud.js'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import { BatchError, GRPC } from '../../../../lib/batch/port.js'
import { createLogger } from '../../../../lib/log.js'
import { EXECUTIONS, runFor, SETTINGS } from './fixtures.js'

type ICreateJobRequest = protos.google.cloud.batch.v1.ICreateJobRequest

const grpcError = (code: number, message = `grpc error ${code}`) => Object.assign(new Error(message), { code })

/** A scripted stand-in at the gRPC client boundary: each call takes the next outcome. */
function scriptedRpc(outcomes: { createJob?: Array<Error | 'ok'>; getJob?: Array<Error | 'ok'>; deleteJob?: Array<Error | 'ok'> }) {
  const calls: { createJob: ICreateJobRequest[]; getJob: string[]; deleteJob: string[] } = { createJob: [], getJob: [], deleteJob: [] }
  const next = (kind: keyof typeof outcomes) => {
    const o = outcomes[kind]?.shift() ?? 'ok'
    if (o !== 'ok') throw o
  }
  const rpc: BatchRpc = {
    async createJob(req) {
      calls.createJob.push(req)
      next('createJob')
      return { ...req.job, name: `${req.parent}/jobs/${req.jobId}`, uid: `${req.jobId}-uid`, status: { state: 'QUEUED' } }
    },
    async getJob({ name }) {
      calls.getJob.push(name)
      next('getJob')
      return { name, uid: 'existing-uid', status: { state: 'RUNNING' } }
    },
    async deleteJob({ name }) {
      calls.deleteJob.push(name)
      next('deleteJob')
    },
  }
  return { rpc, calls }
}

const noSleep = { attempts: 4, initialDelayMs: 1, multiplier: 2, sleep: async () => {} }
const log = createLogger('silent')

describe('the Cloud Batch backend', () => {
  it('sends the parent, the job id and the job exactly as built', async () => {
    const run = runFor(EXECUTIONS.direct_wdl)
    const request = buildRunJob(SETTINGS, run)
    const { rpc, calls } = scriptedRpc({})
    const created = await new CloudBatchBackend(rpc, log, noSleep).createJob(request)

    expect(calls.createJob).toEqual([createJobRequest(request)])
    expect(calls.createJob[0]).toEqual({ parent: 'projects/lab-prod/locations/europe-west4', jobId: `run-${run.id}`, job: request.job })
    expect(created).toEqual({ name: `projects/lab-prod/locations/europe-west4/jobs/run-${run.id}`, uid: `run-${run.id}-uid`, alreadyExisted: false })
  })

  it('treats ALREADY_EXISTS as done and reports the existing job', async () => {
    const { rpc, calls } = scriptedRpc({ createJob: [grpcError(GRPC.ALREADY_EXISTS)] })
    const request = buildRunJob(SETTINGS, runFor(EXECUTIONS.container_entrypoint))
    const created = await new CloudBatchBackend(rpc, log, noSleep).createJob(request)
    expect(created).toEqual({ name: `${request.parent}/jobs/${request.jobId}`, uid: 'existing-uid', alreadyExisted: true })
    expect(calls.createJob).toHaveLength(1)
    expect(calls.getJob).toEqual([`${request.parent}/jobs/${request.jobId}`])
  })

  it.each([
    ['UNAVAILABLE', GRPC.UNAVAILABLE],
    ['DEADLINE_EXCEEDED', GRPC.DEADLINE_EXCEEDED],
    ['RESOURCE_EXHAUSTED', GRPC.RESOURCE_EXHAUSTED],
  ])('retries %s with backoff, then succeeds', async (_, code) => {
    const delays: number[] = []
    const { rpc, calls } = scriptedRpc({ createJob: [grpcError(code), grpcError(code)] })
    const backend = new CloudBatchBackend(rpc, log, { ...noSleep, initialDelayMs: 100, sleep: async (ms) => void delays.push(ms) })
    const created = await backend.createJob(buildRunJob(SETTINGS, runFor(EXECUTIONS.container_entrypoint)))
    expect(created.alreadyExisted).toBe(false)
    expect(calls.createJob).toHaveLength(3)
    expect(delays).toHaveLength(2)
    expect(delays[0]).toBeGreaterThanOrEqual(50)
    expect(delays[0]).toBeLessThanOrEqual(100)
    expect(delays[1]).toBeGreaterThanOrEqual(100)
    expect(delays[1]).toBeLessThanOrEqual(200)
  })

  it("writes each retry with the logger of the call's scope, so the line carries the event's ids", async () => {
    const backendLines: string[] = []
    const eventLines: Array<Record<string, unknown>> = []
    const backendLog = createLogger('debug', { service: 'orchestrator' }, (line) => backendLines.push(line))
    const eventLog = createLogger('debug', { service: 'orchestrator' }, (line) => eventLines.push(JSON.parse(line))).with({ event_id: 'e-1' })
    const { rpc } = scriptedRpc({ deleteJob: [grpcError(GRPC.UNAVAILABLE)] })
    await new CloudBatchBackend(rpc, backendLog, noSleep).deleteJob('projects/p/locations/r/jobs/j', eventLog)
    expect(backendLines).toEqual([])
    expect(eventLines).toEqual([
      expect.objectContaining({ severity: 'WARNING', message: 'batch deleteJob: transient error, retrying', event_id: 'e-1' }),
    ])
  })

  it('gives up on a transient error after the last attempt, saying which problem it was', async () => {
    const { rpc, calls } = scriptedRpc({ createJob: Array.from({ length: 4 }, () => grpcError(GRPC.RESOURCE_EXHAUSTED, 'Quota CPUS exceeded')) })
    const err = await new CloudBatchBackend(rpc, log, noSleep)
      .createJob(buildRunJob(SETTINGS, runFor(EXECUTIONS.container_entrypoint)))
      .catch((e: unknown) => e)
    expect(calls.createJob).toHaveLength(4)
    expect(err).toBeInstanceOf(BatchError)
    expect((err as BatchError).problem).toBe('quota')
    expect((err as BatchError).retryable).toBe(true)
    expect((err as BatchError).message).toContain('Quota CPUS exceeded')
  })

  it.each([
    [GRPC.PERMISSION_DENIED, 'permissions', true],
    [GRPC.UNAUTHENTICATED, 'permissions', true],
    [GRPC.INVALID_ARGUMENT, 'invalid', false],
    [GRPC.FAILED_PRECONDITION, 'invalid', false],
  ] as const)('does not retry gRPC code %i: a %s problem', async (code, problem, retryable) => {
    const { rpc, calls } = scriptedRpc({ createJob: [grpcError(code)] })
    const err = (await new CloudBatchBackend(rpc, log, noSleep)
      .createJob(buildRunJob(SETTINGS, runFor(EXECUTIONS.container_entrypoint)))
      .catch((e: unknown) => e)) as BatchError
    expect(calls.createJob).toHaveLength(1)
    expect(err.problem).toBe(problem)
    expect(err.retryable).toBe(retryable)
  })

  it('counts a network failure without a gRPC code as connectivity', () => {
    expect(toBatchError(new Error('connect ECONNREFUSED 10.0.0.1:443'), 'create the Batch job').problem).toBe('connectivity')
  })

  it('reads a missing job as absent and deletes a missing job as done', async () => {
    const { rpc } = scriptedRpc({ getJob: [grpcError(GRPC.NOT_FOUND)], deleteJob: [grpcError(GRPC.NOT_FOUND)] })
    const backend = new CloudBatchBackend(rpc, log, noSleep)
    expect(await backend.getJob('projects/p/locations/r/jobs/run-x')).toBeUndefined()
    await expect(backend.deleteJob('projects/p/locations/r/jobs/run-x')).resolves.toBeUndefined()
  })

  it('reads the state, labels and status events of a job, with numeric or named enums', () => {
    const view = toView({
      name: 'projects/p/locations/r/jobs/run-1',
      uid: 'run-1-abc',
      labels: { 'run-id': '1' },
      status: {
        state: 5,
        statusEvents: [
          {
            description: 'Job state is set from SCHEDULED to RUNNING for job projects/p/locations/r/jobs/run-1.',
            eventTime: { seconds: 1_700_000_000, nanos: 500_000_000 },
          },
          { description: 'Task state is updated from RUNNING to FAILED on zones/r-a/instances/123 with exit code 3.', taskState: 4 },
        ],
      },
    })
    expect(view.state).toBe('FAILED')
    expect(view.labels).toEqual({ 'run-id': '1' })
    expect(view.events[0]).toEqual({ at: new Date(1_700_000_000_500), description: expect.stringContaining('to RUNNING'), newState: 'RUNNING' })
    expect(view.events[1]!.newState).toBe('FAILED')
    expect(toView({ name: 'n', status: { state: 'SUCCEEDED' } }).state).toBe('SUCCEEDED')
  })
})
