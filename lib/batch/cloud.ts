import { BatchServiceClient, type protos } from '@google-cloud/batch'
import type { Logger } from '../log.js'
import {
  BatchError,
  GRPC,
  problemOf,
  TRANSIENT_CODES,
  type BatchBackend,
  type BatchJob,
  type BatchJobEvent,
  type BatchJobView,
  type CreateJobRequest,
} from './port.js'
import { BATCH_STATES, isBatchState } from './state.js'

type ICreateJobRequest = protos.google.cloud.batch.v1.ICreateJobRequest

/** The three calls the platform makes, at the gRPC client's boundary. */
export interface BatchRpc {
  createJob(req: ICreateJobRequest): Promise<BatchJob>
  getJob(req: { name: string }): Promise<BatchJob>
  deleteJob(req: { name: string; reason: string }): Promise<void>
}

export function rpcOf(client: BatchServiceClient): BatchRpc {
  return {
    createJob: async (req) => (await client.createJob(req))[0],
    getJob: async (req) => (await client.getJob(req))[0],
    // Deletion is a long-running operation; the job's notifications and getJob tell how it ends.
    deleteJob: async (req) => {
      await client.deleteJob(req)
    },
  }
}

export interface RetryPolicy {
  attempts: number
  initialDelayMs: number
  multiplier: number
  sleep: (ms: number) => Promise<void>
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  initialDelayMs: 500,
  multiplier: 2,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
}

/** The request createJob sends, exactly: the job id makes a repeated request find the job it made. */
export function createJobRequest(req: CreateJobRequest): ICreateJobRequest {
  return { parent: req.parent, jobId: req.jobId, job: req.job }
}

/** Cloud Batch through @google-cloud/batch. */
export class CloudBatchBackend implements BatchBackend {
  constructor(
    private readonly rpc: BatchRpc,
    private readonly log: Logger,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  async createJob(req: CreateJobRequest, log = this.log): Promise<{ name: string; uid?: string; alreadyExisted: boolean }> {
    const name = `${req.parent}/jobs/${req.jobId}`
    try {
      const job = await this.withRetry('createJob', log, () => this.rpc.createJob(createJobRequest(req)))
      return { name: job.name ?? name, uid: job.uid ?? undefined, alreadyExisted: false }
    } catch (err) {
      if (codeOf(err) !== GRPC.ALREADY_EXISTS) throw toBatchError(err, 'create the Batch job')
      // Made by an earlier delivery of the same request (or an attempt whose answer was lost).
      const existing = await this.getJob(name, log)
      return { name, uid: existing?.uid, alreadyExisted: true }
    }
  }

  async getJob(name: string, log = this.log): Promise<BatchJobView | undefined> {
    try {
      return toView(await this.withRetry('getJob', log, () => this.rpc.getJob({ name })))
    } catch (err) {
      if (codeOf(err) === GRPC.NOT_FOUND) return undefined
      throw toBatchError(err, 'read the Batch job')
    }
  }

  async deleteJob(name: string, log = this.log): Promise<void> {
    try {
      await this.withRetry('deleteJob', log, () => this.rpc.deleteJob({ name, reason: 'run cancelled on the platform' }))
    } catch (err) {
      if (codeOf(err) === GRPC.NOT_FOUND) return
      throw toBatchError(err, 'delete the Batch job')
    }
  }

  /** Retries transient failures only (unavailable, deadline exceeded, quota), with exponential backoff and jitter. */
  private async withRetry<T>(what: string, log: Logger, call: () => Promise<T>): Promise<T> {
    let delay = this.retry.initialDelayMs
    for (let attempt = 1; ; attempt++) {
      try {
        return await call()
      } catch (err) {
        const code = codeOf(err)
        if (attempt >= this.retry.attempts || code === undefined || !TRANSIENT_CODES.has(code)) throw err
        log.warn(`batch ${what}: transient error, retrying`, { attempt, code, error: err })
        await this.retry.sleep(delay * (0.5 + Math.random() / 2))
        delay *= this.retry.multiplier
      }
    }
  }
}

export function createCloudBatchBackend(log: Logger): CloudBatchBackend {
  return new CloudBatchBackend(rpcOf(new BatchServiceClient()), log)
}

function codeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code
  return typeof code === 'number' ? code : undefined
}

const NETWORK_RE = /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|socket hang up|network/i

export function toBatchError(err: unknown, doing: string): BatchError {
  if (err instanceof BatchError) return err
  const code = codeOf(err)
  const message = err instanceof Error ? err.message : String(err)
  const problem = code === undefined && NETWORK_RE.test(message) ? 'connectivity' : problemOf(code)
  return new BatchError(problem, `could not ${doing}: ${message}`, code, { cause: err })
}

const TASK_STATES = ['STATE_UNSPECIFIED', 'PENDING', 'ASSIGNED', 'RUNNING', 'FAILED', 'SUCCEEDED', 'UNEXECUTED']

export function toView(job: BatchJob): BatchJobView {
  const raw = job.status?.state
  const state = typeof raw === 'number' ? (BATCH_STATES[raw] ?? 'STATE_UNSPECIFIED') : raw && isBatchState(raw) ? raw : 'STATE_UNSPECIFIED'
  const events = (job.status?.statusEvents ?? []).map((e): BatchJobEvent => {
    const description = e.description ?? ''
    const taskState = typeof e.taskState === 'number' ? TASK_STATES[e.taskState] : (e.taskState ?? undefined)
    return {
      at:
        e.eventTime?.seconds !== undefined && e.eventTime.seconds !== null
          ? new Date(Number(e.eventTime.seconds) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6))
          : undefined,
      description,
      newState: taskState ?? / to ([A-Z_]+)\b/.exec(description)?.[1],
    }
  })
  return { name: job.name ?? '', uid: job.uid ?? undefined, state, labels: { ...(job.labels ?? {}) }, events }
}
