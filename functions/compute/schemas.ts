import { z } from '@hono/zod-openapi'
import { pathId } from '../../lib/openapi.js'
import { DEFINITION_LIMITS, PARAMS_LIMITS, storable } from '../../lib/validation.js'
import { INPUT_TYPES, ITEM_TYPES, PIPELINE_TYPES } from '../../domain/pipelines/model.js'
import { defaultProblem } from '../../domain/pipelines/params.js'
import { isSemver } from '../../domain/pipelines/versions.js'
import { RUN_STATUSES } from '../../domain/runs/status.js'

const slug = z.string().regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'lowercase letters, digits and hyphens, 1 to 63 characters')
const version = z
  .string()
  .refine(isSemver, 'a semantic version such as 1.2.0 (major.minor.patch, optional -prerelease)')
  .openapi({ example: '1.2.0' })

export const PipelineTypeSchema = z.enum(PIPELINE_TYPES).openapi('PipelineType', {
  description:
    'direct_nextflow: a Nextflow pipeline; direct_wdl: a WDL workflow run by Cromwell; container_entrypoint: a container run with a custom entrypoint',
})

export const PipelineInput = z
  .object({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a parameter name: a letter or _, then letters, digits or _'),
    type: z
      .enum(INPUT_TYPES)
      .openapi({ description: 'file: gs://<bucket>/<object>; storage_path: gs://<bucket>/<path> (object or folder); array: see items' }),
    items: z.enum(ITEM_TYPES).optional().openapi({ description: 'Item type of an array input' }),
    min_items: z.number().int().min(0).optional(),
    max_items: z.number().int().min(1).optional(),
    required: z.boolean().default(false),
    description: z.string().max(2000).optional(),
    enum: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: "A string input's allowed values (nextflow_schema.json's enum); a run's param must be one of them (400 otherwise)" }),
    default: z
      .union([z.string().max(2000), z.number(), z.boolean(), z.array(z.string().max(2000)).max(100)])
      .optional()
      .openapi({
        description:
          "The value a launch form starts with (nextflow_schema.json's default), checked against the input's type and enum. Informative: a param not sent is not filled in by the platform; the pipeline applies its own default",
      }),
  })
  .superRefine((input, ctx) => {
    if (input.enum && input.type !== 'string') ctx.addIssue({ code: 'custom', path: ['enum'], message: 'applies to string inputs only' })
    const problem = defaultProblem(input)
    if (problem) ctx.addIssue({ code: 'custom', path: ['default'], message: problem })
    if (input.type === 'array' && !input.items) ctx.addIssue({ code: 'custom', path: ['items'], message: 'required for an array input' })
    if (input.type !== 'array' && (input.items || input.min_items !== undefined || input.max_items !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['items'], message: 'items, min_items and max_items apply to array inputs only' })
    }
    if (input.min_items !== undefined && input.max_items !== undefined && input.min_items > input.max_items) {
      ctx.addIssue({ code: 'custom', path: ['min_items'], message: 'must not exceed max_items' })
    }
  })
  .openapi('PipelineInput')

const Resources = z
  .object({
    cpu_milli: z.number().int().min(250).max(224_000).openapi({ description: 'CPU in thousandths of a vCPU, as Cloud Batch counts it' }),
    memory_mib: z.number().int().min(128).max(12_000_000),
    max_run_duration_seconds: z.number().int().min(60).optional(),
  })
  .openapi('PipelineResources')

const Workflow = z
  .object({
    url: z.string().min(1).max(2048).optional().openapi({ description: 'Nextflow repository or workflow URL, or the URL of a WDL file' }),
    source: z.string().min(1).max(200_000).optional().openapi({ description: 'Inline workflow source (WDL or Nextflow)' }),
    revision: z.string().min(1).max(200).optional().openapi({ description: 'Branch, tag or commit of a Nextflow repository' }),
  })
  .openapi('PipelineWorkflow')

const DEFAULT_RESOURCES = { cpu_milli: 2000, memory_mib: 4096 }

export const CreatePipeline = z
  .object({
    slug,
    name: z.string().trim().min(1).max(200),
    type: PipelineTypeSchema,
    container: z
      .string()
      .regex(/^[^\s]+$/, 'a container image reference without spaces')
      .max(500),
    version,
    tags: z.array(z.string().min(1).max(100)).max(50).default([]),
    description: z.string().max(5000).default(''),
    inputs: z.array(PipelineInput).max(200).default([]),
    additional_params: z.boolean().default(false).openapi({ description: 'Accept params beyond the declared inputs and pass them through' }),
    entrypoint: z.string().min(1).max(1024).optional().openapi({ description: 'container_entrypoint: the container entrypoint (e.g. /bin/sh)' }),
    commands: z
      .array(z.string().max(100_000))
      .max(100)
      .optional()
      .openapi({ description: 'container_entrypoint: the arguments given to the entrypoint' }),
    workflow: Workflow.optional(),
    default_profile: z.string().min(1).max(200).optional(),
    resources: Resources.default(DEFAULT_RESOURCES),
  })
  .superRefine((p, ctx) => {
    const names = p.inputs.map((i) => i.name)
    const dup = names.find((n, i) => names.indexOf(n) !== i)
    if (dup) ctx.addIssue({ code: 'custom', path: ['inputs'], message: `input '${dup}' is declared twice` })
    if (p.type === 'container_entrypoint') {
      if (!p.entrypoint && !p.commands?.length)
        ctx.addIssue({ code: 'custom', path: ['commands'], message: 'a container_entrypoint pipeline needs an entrypoint or commands' })
      if (p.workflow) ctx.addIssue({ code: 'custom', path: ['workflow'], message: 'applies to direct_nextflow and direct_wdl pipelines only' })
    } else {
      if (!p.workflow?.url === !p.workflow?.source)
        ctx.addIssue({ code: 'custom', path: ['workflow'], message: 'send exactly one of workflow.url and workflow.source' })
      if (p.entrypoint || p.commands)
        ctx.addIssue({ code: 'custom', path: ['entrypoint'], message: 'applies to container_entrypoint pipelines only' })
    }
  })
  // The whole definition is stored as one document.
  .superRefine(storable(DEFINITION_LIMITS))
  .openapi('CreatePipeline')
export type CreatePipeline = z.infer<typeof CreatePipeline>

export const Pipeline = z
  .object({
    id: z.string().uuid(),
    slug: z.string(),
    name: z.string(),
    type: PipelineTypeSchema,
    container: z.string().openapi({ description: 'Container image of the engine (or, for container_entrypoint, of the tool)' }),
    tags: z.array(z.string()),
    description: z.string(),
    version: z.string(),
    inputs: z.array(PipelineInput),
    required_inputs: z.array(z.string()).openapi({ description: 'Names of the inputs a run must give' }),
    additional_params: z.boolean(),
    entrypoint: z.string().optional(),
    commands: z.array(z.string()).optional(),
    workflow: Workflow.optional(),
    default_profile: z.string().optional(),
    resources: Resources,
    scope: z
      .enum(['platform', 'project'])
      .openapi({ description: 'platform: pre-registered, seen by every project; project: created in this project' }),
    created: z.string(),
    updated: z.string(),
  })
  .openapi('Pipeline')

export const PipelineListQuery = z.object({
  type: PipelineTypeSchema.optional(),
  tag: z.string().min(1).optional(),
  slug: z.string().min(1).optional(),
})

export const ForceQuery = z.object({
  force: z.enum(['true', 'false']).optional().openapi({ description: 'true: overwrite an existing pipeline with the same slug and version' }),
})

export const RunStatusSchema = z.enum(RUN_STATUSES).openapi('RunStatus')

export const Run = z
  .object({
    id: z.string().uuid(),
    name: z.string().openapi({ description: '<slug>-<UTC timestamp>', example: 'hereditary-mock-20261122T061530Z' }),
    status: RunStatusSchema,
    project_id: z.string().uuid(),
    pipeline_id: z.string().uuid(),
    pipeline_slug: z.string(),
    pipeline_version: z.string(),
    pipeline_type: PipelineTypeSchema,
    order_id: z.string().optional().openapi({ description: 'The id of the clinical order the run is for' }),
    order_accession: z.string().optional().openapi({ description: "The order's accession", example: 'ORD-2026-000123' }),
    params: z.record(z.string(), z.unknown()),
    tags: z.array(z.string()),
    profile: z.string().optional(),
    created: z.string(),
    started: z.string().optional(),
    finished: z.string().optional(),
    duration: z.number().optional().openapi({ description: 'Seconds from started to finished, once both are known' }),
    output: z.string().optional().openapi({ description: 'gs://<bucket>/runs/<id>/, on success' }),
    error_message: z.string().optional(),
    status_reason: z.string().optional().openapi({ description: 'Why a run is still queued (quota, permissions, connectivity)' }),
    created_by: z.string(),
    work_session: z.string().optional().openapi({
      description:
        "The id of the run whose work session (work directory in the bucket, Nextflow session, Cromwell call cache) this run works in: its own, or, for a resumed relaunch, its first run's. Absent on runs submitted before relaunch existed, which cannot be resumed",
    }),
    relaunched_from: z
      .object({ id: z.string().uuid(), name: z.string(), resume: z.boolean() })
      .optional()
      .openapi({ description: 'The run this one relaunches, and whether it resumed it' }),
    relaunches: z.array(z.string().uuid()).openapi({ description: "The ids of this run's relaunches, oldest first" }),
  })
  .openapi('Run')

export const RelaunchRun = z
  .object({
    resume: z.boolean().default(false).openapi({
      description:
        "Continue the first run's work session, so that the engine reuses the tasks it completed (Nextflow -resume, Cromwell call caching); only once the first run has ended (409 before)",
    }),
    params: z
      .record(z.string(), z.unknown())
      .superRefine(storable(PARAMS_LIMITS))
      .optional()
      .openapi({
        description:
          "Changes to the first run's params, as a JSON Merge Patch (RFC 7396): a value replaces the param, null removes it; checked against the pipeline",
        example: { fail_at: null },
      }),
    tags: z.array(z.string().min(1).max(100)).max(50).optional().openapi({ description: "Replaces the first run's tags" }),
    profile: z.string().min(1).max(200).optional().openapi({ description: "Replaces the first run's profile" }),
  })
  .openapi('RelaunchRun')
export type RelaunchRun = z.infer<typeof RelaunchRun>

export const SubmitRun = z
  .object({
    pipeline_id: z.string().uuid(),
    order_id: z.string().trim().min(1).max(200).optional().openapi({
      description:
        'A clinical order of the project, by id or accession: it must be signed, in progress or in review (409 otherwise); a signed order moves to in_progress',
      example: 'ORD-2026-000123',
    }),
    params: z.record(z.string(), z.unknown()).superRefine(storable(PARAMS_LIMITS)).default({}),
    tags: z.array(z.string().min(1).max(100)).max(50).default([]),
    profile: z.string().min(1).max(200).optional(),
  })
  .openapi('SubmitRun')
export type SubmitRun = z.infer<typeof SubmitRun>

export const RunListQuery = z.object({
  order_id: z.string().min(1).optional(),
  status: RunStatusSchema.optional(),
  name: z.string().min(1).max(200).optional().openapi({
    description: 'Only the run with this exact name (<slug>-<UTC timestamp>); not combined with order_id or status',
    example: 'hello-local-20261122T171710Z',
  }),
})

export const RunOutput = z
  .object({
    name: z.string().openapi({ description: 'Path below the run output folder' }),
    path: z.string().openapi({ description: 'Object name in the project bucket' }),
    uri: z.string().openapi({ description: 'gs://<bucket>/<path>' }),
    size: z.number().int(),
    updated: z.string(),
    content_type: z.string().optional(),
  })
  .openapi('RunOutput')

export const SlugParam = z.object({ slug: pathId('slug', 'hereditary-mock') })
export const OrderParam = z.object({ order_id: pathId('order_id', 'ORD-2026-000123') })
