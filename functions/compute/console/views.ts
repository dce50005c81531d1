import { badge, csrfField, html, Raw, time, type Tone } from '../../../lib/console/index.js'
import type { PageSession } from '../../../lib/pages.js'
import { paramField, EXTRA_FIELD } from '../../../domain/pipelines/launch-form.js'
import type { PipelineInput, PipelineRecord } from '../../../domain/pipelines/model.js'
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../../domain/runs/status.js'
import type { RunRecord } from '../../../domain/runs/store.js'

/**
 * The compute console's HTML, without the layout: the runs list, a run, the catalogue, a pipeline,
 * and its launch form. Pure functions of what the pages read; addresses come from `Links`.
 */

export interface Links {
  run(id: string): string
  runs(query?: Record<string, string | undefined>): string
  pipelines(): string
  pipeline(id: string): string
  launch(id: string): string
  /** Where the cancel form posts (its confirmation page, without JavaScript, is the answer to that post). */
  cancel(runId: string): string
  /** Where the Relaunch and Resume buttons post. */
  relaunch(runId: string): string
  download(runId: string, path: string): string
  /** The run's whole log, a page at a time (of one stream, when given). */
  log(runId: string, stream?: 'stdout' | 'stderr'): string
  /** The clinical console's order page, when the clinical service's address is known. */
  order?(id: string): string
  /** A run's audit history, for a person who may read it (lib/console historyUrl). */
  history(runId: string): string | undefined
}

/** An attribute when it has a value, nothing otherwise (an empty aria-describedby or inputmode is no better than none). */
const attr = (name: string, value: string | undefined): Raw | string => (value ? html` ${new Raw(name)}="${value}"` : '')

const STATUS_TEXT: Record<RunStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
}

const STATUS_TONE: Record<RunStatus, Tone> = { queued: 'pending', running: 'info', succeeded: 'ok', failed: 'warn', cancelled: 'neutral' }

/** A status as text in a badge (its colour only repeats what the text says). */
export const statusBadge = (status: RunStatus) => badge(STATUS_TEXT[status], STATUS_TONE[status])

/** Seconds as people read a duration: 42 s, 3 min 5 s, 2 h 4 min. */
export function duration(seconds: number): string {
  const s = Math.round(seconds)
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

const runDuration = (run: RunRecord) =>
  run.started && run.finished ? duration(Math.max(0, run.finished.toMillis() - run.started.toMillis()) / 1000) : undefined

const orderLink = (run: RunRecord, links: Links): Raw | string => {
  if (!run.order_id) return ''
  const text = run.order_accession ?? run.order_id
  return links.order && run.order_accession ? html`<a href="${links.order(run.order_id)}">${text}</a>` : text
}

/** A param's value as text: strings as they are, other values as JSON. */
const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

export interface RunsFilter {
  status?: RunStatus
  order?: string
}

export function runsList(opts: { runs: RunRecord[]; filter: RunsFilter; pager: Raw; links: Links; canLaunch: boolean }): Raw {
  const { runs, filter, links } = opts
  const filtered = filter.status || filter.order
  return html`<h1>Runs</h1>
    ${opts.canLaunch ? html`<p><a class="button" href="${links.pipelines()}" id="launch-a-run">Launch a run</a></p>` : ''}
    <form class="inline" method="get" action="${links.runs()}" role="search" aria-label="Filter the runs">
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">Any status</option>
        ${RUN_STATUSES.map((s) => html`<option value="${s}" ${filter.status === s ? 'selected' : ''}>${STATUS_TEXT[s]}</option>`)}
      </select>
      <label for="order">Order</label>
      <input id="order" name="order" value="${filter.order ?? ''}" placeholder="ORD-2026-000123" autocomplete="off" />
      <button type="submit">Filter</button>
      ${filtered ? html`<a href="${links.runs()}">Clear the filters</a>` : ''}
    </form>
    ${
      runs.length
        ? html`<div class="table-wrap">
            <table id="runs">
              <caption>
                Runs${filter.status ? ` that are ${STATUS_TEXT[filter.status].toLowerCase()}` : ''}${filter.order ? ` for order ${filter.order}` : ''},
                newest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Pipeline</th>
                  <th scope="col">Status</th>
                  <th scope="col">Order</th>
                  <th scope="col">Created</th>
                  <th scope="col">Duration</th>
                </tr>
              </thead>
              <tbody>
                ${runs.map(
                  (r) =>
                    html`<tr>
                      <td><a href="${links.run(r.id)}">${r.name}</a></td>
                      <td>${r.pipeline_slug} <span class="muted">${r.pipeline_version}</span></td>
                      <td>${statusBadge(r.status)}</td>
                      <td>${orderLink(r, links)}</td>
                      <td>${time(r.created)}</td>
                      <td>${runDuration(r) ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p id="no-runs">${filtered ? 'No run matches these filters.' : 'This project has no runs yet.'}</p>`
    }
    ${opts.pager}`
}

export interface Output {
  name: string
  path: string
  size: number
  updated: string
}

export function runPage(opts: {
  run: RunRecord
  links: Links
  /** The log's last lines (RUN_PAGE_LOG_LINES at most). */
  logTail: LogLine[]
  outputs?: { items: Output[]; pager: Raw }
  canCancel: boolean
  /** The idempotency key of the Relaunch and Resume form (a form sent twice makes one run), when the person may submit runs. */
  relaunchKey?: string
  canReadFiles: boolean
  session: PageSession
}): Raw {
  const { run, links } = opts
  // Resuming waits for the end: two engines must not share one work session (domain/runs/relaunch.ts).
  const resumable = TERMINAL.has(run.status) && run.work_session !== undefined
  const active = !TERMINAL.has(run.status)
  const params = Object.entries(run.params)
  return html`<h1>Run ${run.name}</h1>
    <p id="run-status">${statusBadge(run.status)}</p>
    ${run.status === 'queued' && run.status_reason ? html`<p class="notice info" id="status-reason">Waiting: ${run.status_reason}</p>` : ''}
    ${run.status === 'failed' ? html`<p class="notice warn" id="error-message">Error: ${run.error_message ?? 'the run failed.'}</p>` : ''}
    ${
      active && opts.canCancel
        ? html`<form method="post" action="${links.cancel(run.id)}" class="actions" data-confirm="${cancelQuestion(run)}">
            ${csrfField(opts.session)}<button type="submit" class="danger" id="cancel">Cancel this run</button>
          </form>`
        : ''
    }
    ${
      opts.relaunchKey
        ? html`<form method="post" action="${links.relaunch(run.id)}" class="actions" id="relaunch-form">
            ${csrfField(opts.session)}<input type="hidden" name="idempotency_key" value="${opts.relaunchKey}" />
            <button type="submit" name="resume" value="no" class="secondary" id="relaunch">Relaunch</button>
            ${resumable ? html`<button type="submit" name="resume" value="yes" class="secondary" id="resume">Resume</button>` : ''}
            <span class="muted"
              >${resumable ? 'A new run with these settings; Resume reuses the work this run completed.' : 'A new run with these settings.'}</span
            >
          </form>`
        : ''
    }
    <h2>Details</h2>
    <dl class="facts">
      <dt>Pipeline</dt>
      <dd>
        <a href="${links.pipeline(run.pipeline_id)}">${run.pipeline_slug}</a> version ${run.pipeline_version}
        <span class="muted">(${run.pipeline_type})</span>
      </dd>
      <dt>Order</dt>
      <dd>${run.order_id ? orderLink(run, links) : html`<span class="muted">none</span>`}</dd>
      <dt>Tags</dt>
      <dd>${run.tags.length ? run.tags.join(', ') : html`<span class="muted">none</span>`}</dd>
      ${
        run.profile
          ? html`<dt>Profile</dt>
              <dd>${run.profile}</dd>`
          : ''
      }
      ${
        run.relaunched_from
          ? html`<dt>Relaunched from</dt>
              <dd id="relaunched-from">
                <a href="${links.run(run.relaunched_from.id)}">${run.relaunched_from.name}</a>${run.relaunched_from.resume ? ' (resumed)' : ''}
              </dd>`
          : ''
      }
      ${
        run.relaunches?.length
          ? html`<dt>Relaunches</dt>
              <dd id="relaunches">${run.relaunches.map((id, i) => html`${i ? ', ' : ''}<a href="${links.run(id)}"><code>${id}</code></a>`)}</dd>`
          : ''
      }
      <dt>Run id</dt>
      <dd><code id="run-id">${run.id}</code> <button type="button" class="secondary" data-copy="run-id">Copy the id</button></dd>
    </dl>
    <h2>Timeline</h2>
    <dl class="facts" id="timeline">
      <dt>Created</dt>
      <dd>${time(run.created)}</dd>
      <dt>Started</dt>
      <dd>${run.started ? time(run.started) : html`<span class="muted">not yet</span>`}</dd>
      <dt>Finished</dt>
      <dd>${run.finished ? time(run.finished) : html`<span class="muted">not yet</span>`}</dd>
      <dt>Duration</dt>
      <dd>${runDuration(run) ?? html`<span class="muted">once started and finished</span>`}</dd>
    </dl>
    ${links.history(run.id) ? html`<p><a href="${links.history(run.id)}" id="history-run">Its history</a> (who submitted, cancelled or changed it, and when)</p>` : ''}
    <h2>Parameters</h2>
    ${
      params.length
        ? html`<div class="table-wrap">
            <table id="params">
              <caption>
                Parameters the run was submitted with
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                ${params.map(
                  ([name, value]) =>
                    html`<tr>
                      <th scope="row"><code>${name}</code></th>
                      <td><code class="wrap">${valueText(value)}</code></td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">No parameters.</p>`
    }
    <h2>Log</h2>
    ${
      opts.logTail.length
        ? html`<p class="muted">
              The last ${opts.logTail.length === RUN_PAGE_LOG_LINES ? `${RUN_PAGE_LOG_LINES} lines` : 'lines'} the run's tasks wrote.
              <a href="${links.log(run.id)}" id="whole-log">The whole log</a>,
              <a href="${links.log(run.id, 'stderr')}" id="stderr-log">its stderr alone</a>.
            </p>
            ${logTable(opts.logTail, 'The end of the log')}`
        : html`<p class="muted" id="no-log">${run.job ? 'Nothing written yet.' : 'The log begins once the run has started.'}</p>`
    }
    <h2>Outputs</h2>
    ${outputsSection(opts)}`
}

/** How many of its last log lines a run's page shows. */
export const RUN_PAGE_LOG_LINES = 50

/** A run's log lines as the API gives them (functions/compute/logs.ts). */
export interface LogLine {
  time: string
  task: string
  stream: string
  text: string
}

/** Log lines as a table: time, stream, line (stderr lines marked, in words and in colour). */
function logTable(lines: LogLine[], caption: string): Raw {
  return html`<div class="table-wrap log" tabindex="0" role="region" aria-label="${caption}">
    <table id="log">
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Stream</th>
          <th scope="col">Line</th>
        </tr>
      </thead>
      <tbody>
        ${lines.map(
          (l) =>
            html`<tr class="${l.stream}">
              <td>${time(l.time)}</td>
              <td>${l.stream}</td>
              <td><code class="line">${l.text}</code></td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`
}

/** The run's whole log, a page of lines at a time, of one stream or both. */
export function runLogPage(opts: {
  run: RunRecord
  links: Links
  lines: LogLine[]
  stream?: 'stdout' | 'stderr'
  pager: Raw
  complete: boolean
}): Raw {
  const { run, links, stream } = opts
  const choice = (to: 'stdout' | 'stderr' | undefined, text: string) =>
    to === stream ? html`<strong aria-current="page">${text}</strong>` : html`<a href="${links.log(run.id, to)}">${text}</a>`
  return html`<h1>Log of run ${run.name}</h1>
    <p id="run-status">${statusBadge(run.status)} <a href="${links.run(run.id)}">Back to the run</a></p>
    <p>Show: ${choice(undefined, 'both streams')} · ${choice('stdout', 'stdout')} · ${choice('stderr', 'stderr')}</p>
    ${
      opts.lines.length
        ? logTable(opts.lines, stream ? `Lines of ${stream}` : 'Lines of stdout and stderr')
        : html`<p class="muted" id="no-log">${opts.complete ? 'No lines.' : 'No lines yet: this page reloads while the run goes on.'}</p>`
    }
    ${opts.pager}`
}

function outputsSection(opts: { run: RunRecord; links: Links; outputs?: { items: Output[]; pager: Raw }; canReadFiles: boolean }): Raw {
  const { run, links, outputs } = opts
  if (!opts.canReadFiles) return html`<p class="muted">Reading the run's files needs the file.read permission.</p>`
  if (!TERMINAL.has(run.status)) return html`<p class="muted">The outputs are listed once the run has ended.</p>`
  if (!outputs?.items.length) return html`<p class="muted" id="no-outputs">The run left no output files.</p>`
  return html`<p class="muted">
      In <code class="wrap">${run.output ?? `gs://${run.bucket_name}/runs/${run.id}/`}</code>. A download link is a signed address, valid 15 minutes.
    </p>
    <div class="table-wrap">
      <table id="outputs">
        <caption>
          Output files
        </caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Size</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          ${outputs.items.map(
            (o) =>
              html`<tr>
                <td><a href="${links.download(run.id, o.path)}" download>${o.name}</a></td>
                <td>${bytes(o.size)}</td>
                <td>${time(o.updated)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${outputs.pager}`
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  for (; v >= 1024 && i < units.length - 1; i++) v /= 1024
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}

/** The question before a run is cancelled: the dialog's (console.js) and the confirmation page's. */
export const cancelQuestion = (run: RunRecord) =>
  `Cancel run ${run.name}? It is ${STATUS_TEXT[run.status].toLowerCase()}; cancelling stops it for good (its Batch job is deleted) and it cannot be resumed.`

export function catalogue(opts: { pipelines: PipelineRecord[]; pager: Raw; links: Links }): Raw {
  return html`<h1>Pipelines</h1>
    <p>Choose a pipeline to read its inputs and launch a run.</p>
    <div class="table-wrap">
      <table id="pipelines">
        <caption>
          Pipelines this project can run, by name, newest version first
        </caption>
        <thead>
          <tr>
            <th scope="col">Pipeline</th>
            <th scope="col">Version</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          ${opts.pipelines.map(
            (p) =>
              html`<tr>
                <td><a href="${opts.links.pipeline(p.id)}">${p.slug}</a><br /><span class="muted">${p.name}</span></td>
                <td>${p.version}</td>
                <td>${p.type}</td>
                <td>${p.description}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${opts.pager}`
}

const inputType = (i: PipelineInput) =>
  i.type === 'array'
    ? `list of ${i.items ?? 'string'}${i.min_items !== undefined || i.max_items !== undefined ? ` (${countText(i)})` : ''}`
    : i.enum
      ? `one of ${i.enum.join(', ')}`
      : i.type

function countText(i: PipelineInput): string {
  const { min_items: min, max_items: max } = i
  if (min !== undefined && min === max) return `exactly ${min}`
  if (min !== undefined && max !== undefined) return `${min} to ${max}`
  return min !== undefined ? `at least ${min}` : `at most ${max}`
}

export function pipelinePage(opts: { pipeline: PipelineRecord; versions: PipelineRecord[]; links: Links; canLaunch: boolean }): Raw {
  const { pipeline: p, links } = opts
  return html`<h1>${p.name}</h1>
    <p>${p.description}</p>
    ${opts.canLaunch ? html`<p><a class="button" id="launch" href="${links.launch(p.id)}">Launch</a></p>` : ''}
    <dl class="facts">
      <dt>Slug and version</dt>
      <dd><code>${p.slug}</code> ${p.version}</dd>
      <dt>Type</dt>
      <dd>${p.type}</dd>
      <dt>Container</dt>
      <dd><code class="wrap">${p.container}</code></dd>
      ${
        p.tags.length
          ? html`<dt>Tags</dt>
              <dd>${p.tags.join(', ')}</dd>`
          : ''
      }
      ${
        opts.versions.length > 1
          ? html`<dt>Versions</dt>
              <dd>
                ${opts.versions.map((v, i) => html`${i ? ', ' : ''}${v.id === p.id ? v.version : html`<a href="${links.pipeline(v.id)}">${v.version}</a>`}`)}
              </dd>`
          : ''
      }
    </dl>
    <h2>Inputs</h2>
    ${
      p.inputs.length
        ? html`<div class="table-wrap">
            <table id="inputs">
              <caption>
                Inputs a run of ${p.slug} ${p.version} takes
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Required</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                ${p.inputs.map(
                  (i) =>
                    html`<tr>
                      <th scope="row"><code>${i.name}</code></th>
                      <td>${inputType(i)}</td>
                      <td>${i.required ? 'required' : 'optional'}</td>
                      <td>
                        ${i.description ?? ''}${i.default !== undefined ? html` <span class="muted">Default: ${valueText(i.default)}</span>` : ''}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">No declared inputs.</p>`
    }
    ${p.additional_params ? html`<p>This pipeline also takes params it does not declare: they are passed to it as they are.</p>` : ''}`
}

/** What the launch form shows again after a refusal: the fields as posted, and what is wrong with each. */
export interface LaunchState {
  values: Readonly<Record<string, string>>
  /** Field name → the problem shown next to it. */
  problems: ReadonlyMap<string, string>
  /** A refusal that is about no one field (the project's credentials, the order's state). */
  summary?: string
}

/** A field's element id: an input's apart from the run's own fields (an input may be called `tags`). */
const fieldId = (field: string) => (field.startsWith('param.') ? `f-param-${field.slice('param.'.length)}` : `f-${field}`)
const fieldLabel = (field: string) => (field.startsWith('param.') ? field.slice('param.'.length) : field)

/** Help text ends as a sentence, since more may follow it. */
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`)

function fieldProblem(id: string, problem: string | undefined): Raw | string {
  return problem ? html`<span class="error" id="${id}-error">${problem}</span>` : ''
}

function describedBy(id: string, help: boolean, problem: boolean): string | undefined {
  const ids = [help ? `${id}-hint` : '', problem ? `${id}-error` : ''].filter(Boolean)
  return ids.length ? ids.join(' ') : undefined
}

function inputControl(input: PipelineInput, state: LaunchState): Raw {
  const name = paramField(input.name)
  const id = fieldId(name)
  const value = state.values[name] ?? ''
  const problem = state.problems.get(name)
  const help = [
    input.description && sentence(input.description),
    input.type === 'array'
      ? `One entry per line${input.min_items !== undefined || input.max_items !== undefined ? `, ${countText(input)}` : ''}.`
      : '',
  ]
    .filter(Boolean)
    .join(' ')
  const hint =
    input.type === 'file' || input.type === 'storage_path' || (input.type === 'array' && input.items !== 'string')
      ? ' A gs:// address in the project bucket.'
      : ''
  const aria = describedBy(id, Boolean(help || hint), Boolean(problem))
  const common = { aria, invalid: problem ? 'true' : undefined }
  let control: Raw
  if (input.enum || input.type === 'boolean') {
    const options = input.enum ?? ['true', 'false']
    control = html`<select
      id="${id}"
      name="${name}"
      ${attr('aria-describedby', common.aria)}${attr('aria-invalid', common.invalid)}
      ${input.required ? 'required' : ''}
    >
      ${input.required ? '' : html`<option value="">not given</option>`}
      ${options.map((o) => html`<option value="${o}" ${value === o ? 'selected' : ''}>${o}</option>`)}
    </select>`
  } else if (input.type === 'array') {
    control = html`<textarea
      id="${id}"
      name="${name}"
      rows="3"
      ${attr('aria-describedby', common.aria)}${attr('aria-invalid', common.invalid)}
      ${input.required ? 'required' : ''}
    >
${value}</textarea>`
  } else {
    const mode = input.type === 'integer' ? 'numeric' : input.type === 'number' ? 'decimal' : undefined
    control = html`<input
      id="${id}"
      name="${name}"
      value="${value}"
      ${attr('inputmode', mode)}
      autocomplete="off"
      spellcheck="false"
      ${attr('aria-describedby', common.aria)}${attr('aria-invalid', common.invalid)}
      ${input.required ? 'required' : ''}
    />`
  }
  return html`<div class="field${problem ? ' invalid' : ''}">
    <label for="${id}"
      ><code>${input.name}</code> <span class="muted">(${inputType(input)}${input.required ? ', required' : ', optional'})</span></label
    >
    ${help || hint ? html`<span class="hint" id="${id}-hint">${help}${hint}</span>` : ''} ${control} ${fieldProblem(id, problem)}
  </div>`
}

function textField(opts: { name: string; label: string; help: string; state: LaunchState; placeholder?: string }): Raw {
  const id = `f-${opts.name}`
  const problem = opts.state.problems.get(opts.name)
  return html`<div class="field${problem ? ' invalid' : ''}">
    <label for="${id}">${opts.label}</label>
    <span class="hint" id="${id}-hint">${opts.help}</span>
    <input
      id="${id}"
      name="${opts.name}"
      value="${opts.state.values[opts.name] ?? ''}"
      ${attr('placeholder', opts.placeholder)}
      autocomplete="off"
      ${attr('aria-describedby', describedBy(id, true, Boolean(problem)))}${attr('aria-invalid', problem ? 'true' : undefined)}
    />
    ${fieldProblem(id, problem)}
  </div>`
}

export function launchForm(opts: { pipeline: PipelineRecord; links: Links; state: LaunchState; hidden: Raw }): Raw {
  const { pipeline: p, state } = opts
  const problems = [...state.problems.entries()]
  const extraProblem = state.problems.get(EXTRA_FIELD)
  return html`<h1>Launch ${p.slug} ${p.version}</h1>
    <p>${p.description}</p>
    ${
      problems.length || state.summary
        ? html`<div class="notice warn" role="alert" id="form-errors">
            <h2>The run was not submitted</h2>
            ${state.summary ? html`<p id="form-summary">${state.summary}</p>` : ''}
            ${
              problems.length
                ? html`<ul>
                    ${problems.map(([field, problem]) => html`<li><a href="#${fieldId(field)}">${fieldLabel(field)}</a>: ${problem}</li>`)}
                  </ul>`
                : ''
            }
          </div>`
        : ''
    }
    <form method="post" action="${opts.links.launch(p.id)}" class="stack" novalidate>
      ${opts.hidden}
      <fieldset>
        <legend>Parameters</legend>
        ${p.inputs.length ? p.inputs.map((i) => inputControl(i, state)) : html`<p class="muted">This pipeline declares no inputs.</p>`}
        ${
          p.additional_params
            ? html`<div class="field${extraProblem ? ' invalid' : ''}">
                <label for="f-${EXTRA_FIELD}">More params (JSON object)</label>
                <span class="hint" id="f-${EXTRA_FIELD}-hint"
                  >Params the pipeline does not declare, passed to it as they are, e.g. {"outdir": "gs://bucket/out/"}.</span
                >
                <textarea
                  id="f-${EXTRA_FIELD}"
                  name="${EXTRA_FIELD}"
                  rows="4"
                  spellcheck="false"
                  ${attr('aria-describedby', describedBy(`f-${EXTRA_FIELD}`, true, Boolean(extraProblem)))}${attr('aria-invalid', extraProblem ? 'true' : undefined)}
                >
${state.values[EXTRA_FIELD] ?? ''}</textarea>
                ${fieldProblem(`f-${EXTRA_FIELD}`, extraProblem)}
              </div>`
            : ''
        }
      </fieldset>
      <fieldset>
        <legend>The run</legend>
        ${textField({ name: 'order_id', label: 'Order (optional)', help: 'The clinical order the run is for, by accession or id: it must be signed, in progress or in review.', state, placeholder: 'ORD-2026-000123' })}
        ${textField({ name: 'tags', label: 'Tags (optional)', help: 'Separated by commas.', state })}
        ${
          p.type === 'direct_nextflow' || p.default_profile
            ? textField({
                name: 'profile',
                label: 'Profile (optional)',
                help: `The Nextflow profile; empty runs with the pipeline's default (${p.default_profile ?? 'none'}).`,
                state,
              })
            : ''
        }
      </fieldset>
      <div class="actions">
        <button type="submit" id="submit">Launch the run</button>
        <a class="button secondary" href="${opts.links.pipeline(p.id)}">Back to the pipeline</a>
      </div>
    </form>`
}
