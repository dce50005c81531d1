import { fields, paint, PLAIN, table, type Column, type Style } from './format.js'
import { formatDuration, formatTime } from './output.js'
import type { Pipeline, PipelineInput, Run } from './client.js'

/** Duration of a run: the service's, or for a running run the time since it started. */
export function runDuration(run: Run, now = Date.now()): string | undefined {
  if (run.duration !== undefined && run.duration !== null) return formatDuration(run.duration)
  if (run.started && !run.finished) {
    const elapsed = formatDuration((now - Date.parse(run.started)) / 1000)
    return elapsed && `${elapsed} so far`
  }
  return undefined
}

export function runDetails(run: Run, style: Style = PLAIN): string {
  const pairs: Array<[string, unknown]> = [
    ['id', run.id],
    ['name', run.name],
    ['status', paint(style, run.status)],
    ['pipeline', run.pipeline_slug ? `${run.pipeline_slug} ${run.pipeline_version ?? ''} (${run.pipeline_id})` : run.pipeline_id],
    ['order', run.order_id],
    ['profile', run.profile],
    ['tags', run.tags],
    ['created', formatTime(run.created)],
    ['started', formatTime(run.started)],
    ['finished', formatTime(run.finished)],
    ['duration', runDuration(run)],
  ]
  if (run.status_reason && run.status === 'queued') pairs.push(['waiting for', run.status_reason])
  if (run.output) pairs.push(['output', run.output])
  if (run.error_message) pairs.push(['error', run.error_message])
  const params = Object.entries(run.params ?? {})
  const text = fields(pairs)
  if (!params.length) return text
  return `${text}\n\nPARAMS\n${fields(params.map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`
}

export const runColumns: Column<Run>[] = [
  { header: 'ID', value: (r) => r.id },
  { header: 'NAME', value: (r) => r.name, fit: true },
  { header: 'STATUS', value: (r) => r.status, status: true },
  { header: 'CREATED', value: (r) => formatTime(r.created) },
  { header: 'DURATION', value: (r) => runDuration(r) },
  { header: 'ORDER', value: (r) => r.order_id },
]

export const pipelineColumns: Column<Pipeline>[] = [
  { header: 'SLUG', value: (p) => p.slug },
  { header: 'VERSION', value: (p) => p.version },
  { header: 'TYPE', value: (p) => p.type },
  { header: 'TAGS', value: (p) => p.tags, fit: true },
  { header: 'NAME', value: (p) => p.name, fit: true },
]

/** "string", "array<storage_path>[2]", "array<file>[1..]" */
export function inputType(input: PipelineInput): string {
  if (input.type !== 'array') return input.type
  const { min_items: min, max_items: max } = input
  const count = min === undefined && max === undefined ? '' : min === max ? `[${min}]` : `[${min ?? 0}..${max ?? ''}]`
  return `array<${input.items ?? 'string'}>${count}`
}

const inputColumns: Column<PipelineInput>[] = [
  { header: 'NAME', value: (i) => i.name },
  { header: 'TYPE', value: inputType },
  { header: 'REQUIRED', value: (i) => (i.required ? 'yes' : 'no') },
  { header: 'DESCRIPTION', value: (i) => i.description, fit: true },
]

export function pipelineDetails(pipeline: Pipeline, versions?: string[], style: Style = PLAIN): string {
  const pairs: Array<[string, unknown]> = [
    ['slug', pipeline.slug],
    ['name', pipeline.name],
    ['version', pipeline.version],
    ['id', pipeline.id],
    ['type', pipeline.type],
    ['container', pipeline.container],
    ['tags', pipeline.tags],
    ['description', pipeline.description],
  ]
  if (versions?.length) pairs.push(['versions', versions])
  const inputs = pipeline.inputs ?? []
  const section = !inputs.length
    ? pipeline.additional_params
      ? 'none declared: any params are passed to the pipeline as given'
      : 'none'
    : pipeline.additional_params
      ? `${table(inputs, inputColumns, style)}\nOther params are passed to the pipeline as given.`
      : table(inputs, inputColumns, style)
  return `${fields(pairs)}\n\nINPUTS\n${section}`
}
