import type { Timestamp } from '@google-cloud/firestore'
import { sha256 } from '../../lib/ids.js'

/**
 * The pipeline catalogue's domain: what a pipeline is, what its inputs are, how versions order,
 * and how a run's params are checked against the inputs. Shared by the compute service (which
 * serves the catalogue) and the orchestrator (which builds Batch jobs from a run's snapshot).
 */
export const PIPELINE_TYPES = ['direct_nextflow', 'direct_wdl', 'container_entrypoint'] as const
export type PipelineType = (typeof PIPELINE_TYPES)[number]

export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'file', 'storage_path', 'array'] as const
export type InputType = (typeof INPUT_TYPES)[number]
export const ITEM_TYPES = ['string', 'file', 'storage_path'] as const
export type ItemType = (typeof ITEM_TYPES)[number]

/**
 * One declared input. `file` is a gs:// URI of one object; `storage_path` a gs:// URI of an object
 * or a folder (it may end in '/'). Arrays name their item type and, optionally, how many entries
 * they take (paired reads: exactly two).
 */
export interface PipelineInput {
  name: string
  type: InputType
  items?: ItemType
  min_items?: number
  max_items?: number
  required: boolean
  description?: string
  /** A string input's allowed values (nextflow_schema.json's `enum`): a launch form offers them as a choice. */
  enum?: string[]
  /**
   * The value a launch form starts with (nextflow_schema.json's `default`). Informative: the
   * platform never fills it into a run's params, the pipeline applies its own default to a param not sent.
   */
  default?: InputValue
}

/** A value an input declares as its default: what a launch form can show in one field. */
export type InputValue = string | number | boolean | string[]

/** What the Batch job needs, snapshotted into each run so that a later overwrite never changes a submitted run. */
export interface PipelineExecution {
  type: PipelineType
  /** The image the job runs: the engine (Nextflow, Cromwell) or, for container_entrypoint, the tool itself. */
  container: string
  /** container_entrypoint: the entrypoint of the container (e.g. /bin/sh) and its arguments. */
  entrypoint?: string
  commands?: string[]
  /** direct_nextflow and direct_wdl: where the workflow comes from (a URL or Nextflow repository, or inline source). */
  workflow?: { url?: string; source?: string; revision?: string }
  default_profile?: string
  resources: { cpu_milli: number; memory_mib: number; max_run_duration_seconds?: number }
}

export interface PipelineRecord extends PipelineExecution {
  id: string
  /** 'platform' for the catalogue every project sees, else the id of the project that created it. */
  scope: string
  slug: string
  name: string
  version: string
  /** A string whose lexical order is semantic-version order within a slug (for listing). */
  version_key: string
  tags: string[]
  description: string
  inputs: PipelineInput[]
  /** True when params beyond the declared inputs are passed through (nfcore-demo: inputs not listed). */
  additional_params: boolean
  created: Timestamp
  updated: Timestamp
  created_by: string
}

/** What a client (or the seeder) declares; the store adds identity, scope and timestamps. */
export type PipelineDefinition = Omit<PipelineRecord, 'id' | 'scope' | 'version_key' | 'created' | 'updated' | 'created_by'>

export const PLATFORM_SCOPE = 'platform'

export const executionOf = (p: PipelineExecution): PipelineExecution => ({
  type: p.type,
  container: p.container,
  entrypoint: p.entrypoint,
  commands: p.commands,
  workflow: p.workflow,
  default_profile: p.default_profile,
  resources: p.resources,
})

export const requiredInputs = (p: Pick<PipelineRecord, 'inputs'>) => p.inputs.filter((i) => i.required).map((i) => i.name)

/**
 * The id of a (scope, slug, version): a name-based UUID (RFC 9562 version 5 layout over SHA-256),
 * so that creating the same slug and version twice collides on one document, inside a transaction.
 */
export function pipelineId(scope: string, slug: string, version: string): string {
  const h = sha256(`pipeline\n${scope}\n${slug}\n${version}`)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}
