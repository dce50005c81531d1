import type { protos } from '@google-cloud/batch'
import type { Logger } from '../log.js'

/** The job description Cloud Batch takes; the local executor runs the very same object. */
export type BatchJob = protos.google.cloud.batch.v1.IJob
export type BatchRunnable = protos.google.cloud.batch.v1.IRunnable
export type BatchVolume = protos.google.cloud.batch.v1.IVolume
export type BatchState = keyof typeof protos.google.cloud.batch.v1.JobStatus.State
export type BatchTaskState = keyof typeof protos.google.cloud.batch.v1.TaskStatus.State

export interface BatchJobEvent {
  at?: Date
  description: string
  newState?: string
  /**
   * On a task's failure, the last lines the failing runnable wrote to stderr: the local executor
   * knows them (as Batch's v1alpha `taskExecution.stderrSnippet` does; its v1 API has no such
   * field, so for Cloud Batch they are read from Cloud Logging).
   */
  stderr?: string
}

/** What the orchestrator needs to know about a job, from either backend. */
export interface BatchJobView {
  name: string
  uid?: string
  state: BatchState
  labels: Record<string, string>
  events: BatchJobEvent[]
}

export interface CreateJobRequest {
  /** projects/<project>/locations/<region> */
  parent: string
  jobId: string
  job: BatchJob
}

/**
 * Each call takes the logger of the request or event it serves (lib/kernel.ts `inScope`), so that
 * what the backend logs on the way (a retried call) carries that scope's ids; without one, the
 * backend's own.
 */
export interface BatchBackend {
  /** Idempotent: a job id that already exists is reported with `alreadyExisted`, never created twice. */
  createJob(req: CreateJobRequest, log?: Logger): Promise<{ name: string; uid?: string; alreadyExisted: boolean }>
  /** undefined when the job does not exist (never created, or deleted). */
  getJob(name: string, log?: Logger): Promise<BatchJobView | undefined>
  /** Deletes (and so cancels) a job; a job that no longer exists counts as deleted. */
  deleteJob(name: string, log?: Logger): Promise<void>
}

/**
 * Why a Batch call failed, in the terms a user sees on a queued run. `retryable` says whether the
 * same request may succeed later (quota freed, permission granted, network back); `invalid` jobs
 * never will.
 */
export type BatchProblem = 'quota' | 'permissions' | 'connectivity' | 'invalid' | 'unknown'

export class BatchError extends Error {
  override name = 'BatchError'
  constructor(
    readonly problem: BatchProblem,
    message: string,
    readonly code?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
  get retryable() {
    return this.problem !== 'invalid'
  }
}

/** gRPC status codes the Batch client reports (google.rpc.Code). */
export const GRPC = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const

/** Transient codes: the same call is retried with backoff before giving up. */
export const TRANSIENT_CODES: ReadonlySet<number> = new Set([GRPC.UNAVAILABLE, GRPC.DEADLINE_EXCEEDED, GRPC.RESOURCE_EXHAUSTED])

export function problemOf(code: number | undefined): BatchProblem {
  switch (code) {
    case GRPC.RESOURCE_EXHAUSTED:
      return 'quota'
    case GRPC.PERMISSION_DENIED:
    case GRPC.UNAUTHENTICATED:
      return 'permissions'
    case GRPC.UNAVAILABLE:
    case GRPC.DEADLINE_EXCEEDED:
    case GRPC.CANCELLED:
      return 'connectivity'
    case GRPC.INVALID_ARGUMENT:
    case GRPC.FAILED_PRECONDITION:
    case GRPC.OUT_OF_RANGE:
    case GRPC.UNIMPLEMENTED:
      return 'invalid'
    default:
      return 'unknown'
  }
}

export const jobParent = (gcpProject: string, region: string) => `projects/${gcpProject}/locations/${region}`
export const jobName = (parent: string, jobId: string) => `${parent}/jobs/${jobId}`
