import { assertNever } from '../../lib/assert.js'
import { allow, deny, invalid, type Decision } from '../../lib/decision.js'
import type { PipelineType } from '../pipelines/model.js'
import { failureOf, type RunFailure } from './failure.js'
import type { RunRecord } from './store.js'

/**
 * The platform's runs in the terms of GA4GH WES 1.1 (the Workflow Execution Service), written once
 * and pure: how a run's status reads as a WES state, how a catalogue pipeline is named by a
 * `workflow_url`, how WES's key/value tags map onto the platform's tag strings, and what a WES run
 * request must say to become a run (`decideWesSubmission`). The HTTP side is functions/compute/wes/.
 */

/** Every state of WES 1.1's State enum; the platform's runs reach the ones `wesState` returns. */
export const WES_STATES = [
  'UNKNOWN',
  'QUEUED',
  'INITIALIZING',
  'RUNNING',
  'PAUSED',
  'COMPLETE',
  'EXECUTOR_ERROR',
  'SYSTEM_ERROR',
  'CANCELED',
  'CANCELING',
  'PREEMPTED',
] as const
export type WesState = (typeof WES_STATES)[number]

export type WesRunView = Pick<RunRecord, 'status' | 'job_cleanup_pending' | 'error_message'> & { failure?: RunFailure }

/**
 * A failed run's failure: recorded when it failed (domain/runs/store.ts applyJobState), or read
 * from its error message for a run that failed before failures were recorded.
 */
export const failureOfRun = (run: Pick<WesRunView, 'failure' | 'error_message'>): RunFailure => run.failure ?? failureOf(run.error_message)

/**
 * A run's status as a WES state, in one exhaustive place. A cancelled run whose Batch job is still
 * to be deleted is CANCELING (WES: "canceled by the user, and in the process of stopping"); a
 * failed run is EXECUTOR_ERROR when the pipeline's own command failed, else SYSTEM_ERROR.
 */
export function wesState(run: WesRunView): WesState {
  switch (run.status) {
    case 'queued':
      return 'QUEUED'
    case 'running':
      return 'RUNNING'
    case 'succeeded':
      return 'COMPLETE'
    case 'failed':
      return failureOfRun(run).kind === 'executor' ? 'EXECUTOR_ERROR' : 'SYSTEM_ERROR'
    case 'cancelled':
      return run.job_cleanup_pending ? 'CANCELING' : 'CANCELED'
    default:
      return assertNever(run.status)
  }
}

/**
 * How each pipeline type reads in WES: its `workflow_type` (NFL and WDL as GA4GH TRS names the
 * descriptor types; CONTAINER for a container run with its own entrypoint), the type versions this
 * service accepts for it, and its engine. The engine's version is the tag of the pipeline's
 * container image (`engineVersionOf`).
 */
export const WES_WORKFLOW_TYPES: Readonly<Record<PipelineType, { type: string; versions: readonly string[]; engine: string }>> = {
  direct_nextflow: { type: 'NFL', versions: ['DSL2'], engine: 'nextflow' },
  direct_wdl: { type: 'WDL', versions: ['1.0', 'draft-2'], engine: 'cromwell' },
  container_entrypoint: { type: 'CONTAINER', versions: ['1.0'], engine: 'container' },
}

/** The tag of a container image reference (`nextflow/nextflow:24.10.0` → 24.10.0); `latest` without one, as Docker reads it. */
export function engineVersionOf(image: string): string {
  const withoutDigest = image.split('@', 1)[0]!
  const lastPart = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1)
  const colon = lastPart.lastIndexOf(':')
  return colon >= 0 ? lastPart.slice(colon + 1) : 'latest'
}

/** A run's engine parameters as WES names them: the only one the platform passes on is the engine profile. */
export const ENGINE_PARAMETERS = ['profile'] as const

/**
 * A catalogue pipeline named by `workflow_url`: `<slug>@<version>`, the slug and semantic version
 * of a pipeline of the project's catalogue (`hello-local@1.0.0`), as a container image or an npm
 * package is named. WES also allows a URL to a workflow file; this service runs only the
 * catalogue's pipelines, whose definitions it holds, so anything else is refused.
 */
const WORKFLOW_URL_RE = /^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)@([0-9A-Za-z.+-]{1,100})$/

export function parseWorkflowUrl(url: string): { slug: string; version: string } | undefined {
  const match = WORKFLOW_URL_RE.exec(url)
  return match ? { slug: match[1]!, version: match[2]! } : undefined
}

export const workflowUrlOf = (run: Pick<RunRecord, 'pipeline_slug' | 'pipeline_version'>) => `${run.pipeline_slug}@${run.pipeline_version}`

/**
 * WES tags are key/value pairs; the platform's are strings. `{key: value}` is the tag `key=value`,
 * and `{key: ''}` the tag `key`, so that a platform tag without '=' reads as a key with an empty
 * value and every WES tag round-trips. A key with '=' could not, and is refused.
 */
export function tagsFromWes(tags: Readonly<Record<string, string>>): string[] {
  return Object.entries(tags).map(([key, value]) => (value === '' ? key : `${key}=${value}`))
}

/** The platform's tags as WES tags; of two tags with one key (possible through the platform API), the later wins. */
export function tagsToWes(tags: readonly string[]): Record<string, string> {
  // Built from entries: a tag '__proto__=…' is then a key like any other, not the object's prototype.
  const pairs = new Map<string, string>()
  for (const tag of tags) {
    const eq = tag.indexOf('=')
    pairs.set(eq < 0 ? tag : tag.slice(0, eq), eq < 0 ? '' : tag.slice(eq + 1))
  }
  return Object.fromEntries(pairs)
}

/** A WES run request, its form fields parsed (the JSON-encoded ones decoded). */
export interface WesRunRequest {
  workflow_url: string
  workflow_type: string
  workflow_type_version: string
  workflow_params: Record<string, unknown>
  tags: Record<string, string>
  workflow_engine?: string
  workflow_engine_version?: string
  workflow_engine_parameters: Record<string, string>
  /** How many workflow_attachment parts came with it. */
  attachments: number
}

/** The pipeline the workflow_url named, as far as the decision needs it. */
export interface WesPipeline {
  slug: string
  version: string
  type: PipelineType
  container: string
}

/** What an accepted request submits (functions/compute/actions.ts submitRun checks the params against the pipeline). */
export interface WesSubmission {
  params: Record<string, unknown>
  tags: string[]
  profile?: string
}

/**
 * Whether a WES run request for this pipeline can be submitted, and as what. Each refusal names
 * the field, as every 400 of the platform does.
 */
export function decideWesSubmission(pipeline: WesPipeline, req: WesRunRequest): Decision<WesSubmission> {
  if (req.attachments > 0) {
    return deny(invalid('workflow_attachment: not accepted; this service runs the pipelines of the project catalogue, named by workflow_url'))
  }
  const wes = WES_WORKFLOW_TYPES[pipeline.type]
  const named = `${pipeline.slug}@${pipeline.version}`
  if (req.workflow_type !== wes.type) {
    return deny(invalid(`workflow_type: ${named} is a ${wes.type} workflow, not ${req.workflow_type || '(empty)'}`))
  }
  if (!wes.versions.includes(req.workflow_type_version)) {
    return deny(
      invalid(
        `workflow_type_version: ${wes.type} ${req.workflow_type_version || '(empty)'} is not supported; send one of ${wes.versions.join(', ')}`,
      ),
    )
  }
  if (req.workflow_engine !== undefined && req.workflow_engine !== wes.engine) {
    return deny(invalid(`workflow_engine: ${named} runs on ${wes.engine}, not ${req.workflow_engine}`))
  }
  const engineVersion = engineVersionOf(pipeline.container)
  if (req.workflow_engine_version !== undefined) {
    if (req.workflow_engine === undefined) return deny(invalid('workflow_engine: required when workflow_engine_version is given'))
    if (req.workflow_engine_version !== engineVersion) {
      return deny(invalid(`workflow_engine_version: ${named} runs on ${wes.engine} ${engineVersion}, not ${req.workflow_engine_version}`))
    }
  }
  const unknown = Object.keys(req.workflow_engine_parameters).filter((k) => !(ENGINE_PARAMETERS as readonly string[]).includes(k))
  if (unknown.length) {
    return deny(invalid(`workflow_engine_parameters.${unknown[0]}: not supported; the accepted parameters are ${ENGINE_PARAMETERS.join(', ')}`))
  }
  const withEquals = Object.keys(req.tags).find((k) => k === '' || k.includes('='))
  if (withEquals !== undefined) return deny(invalid(`tags: a key must be non-empty and without '=' (got '${withEquals}')`))
  const profile = req.workflow_engine_parameters.profile
  return allow({ params: req.workflow_params, tags: tagsFromWes(req.tags), ...(profile ? { profile } : {}) })
}

/** A time as WES writes it: ISO 8601 in UTC to the second ("%Y-%m-%dT%H:%M:%SZ"). */
export const wesTime = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z')
