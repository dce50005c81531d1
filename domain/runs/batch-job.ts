import { outputLocation, type RunRecord } from './store.js'
import { jobParent, type BatchJob, type BatchRunnable, type CreateJobRequest } from '../../lib/batch/port.js'

/**
 * The Cloud Batch job of a run, built by small pure functions and tested as data. Paths inside the
 * job only ever come from environment variables (PLATFORM_OUTPUT_DIR…), never from file contents,
 * so that the local executor, which maps the bucket mount to a local folder by rewriting the job's
 * environment, commands and scripts, runs the very same job.
 */

export interface JobSettings {
  gcpProject: string
  region: string
  /** Topic id of the job-status topic (config.topics.jobStatus). */
  jobStatusTopic: string
}

export type RunForJob = Pick<
  RunRecord,
  | 'id'
  | 'name'
  | 'project_id'
  | 'pipeline_slug'
  | 'pipeline_version'
  | 'pipeline_type'
  | 'execution'
  | 'params'
  | 'profile'
  | 'bucket_name'
  | 'service_account_email'
  | 'work_session'
  | 'relaunched_from'
>

/** A pipeline that cannot become a job (no workflow source, a source in another bucket): the run fails with this message. */
export class JobBuildError extends Error {
  override name = 'JobBuildError'
}

/** A Batch job id for a run: deterministic, so a redelivered request finds the job it already made. */
export function jobIdForRun(runId: string): string {
  const id = `run-${runId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63).replace(/-+$/, '')
  if (!/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/.test(id)) throw new Error(`cannot derive a Batch job id from run id ${runId}`)
  return id
}

/** The run a job belongs to, from its labels (preferred) or its job id. */
export function runIdOfJob(job: { name?: string | null; labels?: Record<string, string> | null }): string | undefined {
  const fromLabel = job.labels?.['run-id']
  if (fromLabel) return fromLabel
  const jobId = job.name?.split('/').pop()
  const m = jobId?.match(/^run-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/)
  return m?.[1]
}

export const PLATFORM_LABEL = 'pipeline-platform'
export const mountPathOf = (bucket: string) => `/mnt/disks/${bucket}`
export const outputDirOf = (bucket: string, runId: string) => `${mountPathOf(bucket)}/runs/${runId}/`
/**
 * A work session's folder: in the bucket, beside (not inside) the outputs a user lists, named by the
 * session (the run that began it), so that a resumed relaunch works where its first run worked.
 */
export const workDirOf = (bucket: string, session: string) => `${mountPathOf(bucket)}/work/${session}/`
/** Nextflow's cloud cache of a session (NXF_CLOUDCACHE_PATH): the task cache lives on with the work folder, not on the VM. */
export const nextflowCacheOf = (bucket: string, session: string) => `gs://${bucket}/work/${session}/.nextflow-cache`

/** The work session a run works in: its own (named by its id) unless it resumes another's; runs from before sessions had their id. */
export const sessionOf = (run: Pick<RunForJob, 'id' | 'work_session'>) => run.work_session ?? run.id
/** Whether the run continues its session's cached work: a resumed relaunch. */
export const resumes = (run: Pick<RunForJob, 'relaunched_from'>) => run.relaunched_from?.resume === true

export function buildRunJob(settings: JobSettings, run: RunForJob): CreateJobRequest {
  const jobId = jobIdForRun(run.id)
  const labels = runLabels(run)
  const runnables: BatchRunnable[] = [prepareRunnable(run), ...mainRunnables(run)]
  const { resources } = run.execution
  const job: BatchJob = {
    labels,
    taskGroups: [
      {
        taskCount: 1,
        parallelism: 1,
        taskSpec: {
          runnables,
          environment: { variables: runEnvironment(run) },
          volumes: [{ gcs: { remotePath: run.bucket_name }, mountPath: mountPathOf(run.bucket_name) }],
          computeResource: { cpuMilli: resources.cpu_milli, memoryMib: resources.memory_mib },
          ...(resources.max_run_duration_seconds ? { maxRunDuration: { seconds: resources.max_run_duration_seconds } } : {}),
          // A retried task would run the whole pipeline again; the engines retry their own steps.
          maxRetryCount: 0,
        },
      },
    ],
    allocationPolicy: {
      serviceAccount: { email: run.service_account_email },
      location: { allowedLocations: [`regions/${settings.region}`] },
      labels,
    },
    logsPolicy: { destination: 'CLOUD_LOGGING' },
    notifications: jobNotifications(`projects/${settings.gcpProject}/topics/${settings.jobStatusTopic}`),
  }
  return { parent: jobParent(settings.gcpProject, settings.region), jobId, job }
}

/** Batch/GCE label rules: lowercase letters, digits, _ and -, at most 63 characters; keys start with a letter. */
export function labelValue(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 63)
}
export function labelKey(key: string): string {
  const v = labelValue(key)
  return /^[a-z]/.test(v) ? v : `x-${v}`.slice(0, 63)
}

export function runLabels(run: RunForJob): Record<string, string> {
  const raw: Record<string, string> = {
    'run-id': run.id,
    'project-id': run.project_id,
    pipeline: run.pipeline_slug,
    'pipeline-version': run.pipeline_version,
    'pipeline-type': run.pipeline_type,
    platform: PLATFORM_LABEL,
  }
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [labelKey(k), labelValue(v)]))
}

/** The environment contract every job's runnables see (documented in docs/pipelines-and-runs.md, what a job sees). */
export function runEnvironment(run: RunForJob): Record<string, string> {
  const outputDir = outputDirOf(run.bucket_name, run.id)
  return {
    PLATFORM_RUN_ID: run.id,
    PLATFORM_RUN_NAME: run.name,
    PLATFORM_PROJECT_ID: run.project_id,
    PLATFORM_PIPELINE: run.pipeline_slug,
    PLATFORM_PIPELINE_VERSION: run.pipeline_version,
    PLATFORM_BUCKET: run.bucket_name,
    PLATFORM_BUCKET_DIR: mountPathOf(run.bucket_name),
    PLATFORM_OUTPUT_DIR: outputDir,
    PLATFORM_OUTPUT_URI: outputLocation(run.bucket_name, run.id),
    PLATFORM_PARAMS_FILE: `${outputDir}params.json`,
    PLATFORM_WORK_DIR: workDirOf(run.bucket_name, sessionOf(run)),
    // Set only on a resumed relaunch: the session whose completed work may be reused.
    ...(resumes(run) ? { PLATFORM_RESUME: sessionOf(run) } : {}),
    ...(run.profile ? { PLATFORM_PROFILE: run.profile } : {}),
  }
}

/** Every state change of the job, and a failed task at once (its exit code is in the task's events). */
export function jobNotifications(topic: string): NonNullable<BatchJob['notifications']> {
  return [
    // Only the states that move a run: QUEUED and SCHEDULED leave it queued, and each notification
    // is one more function invocation (and, locally, one more push through the emulator's two slots).
    ...(['RUNNING', 'SUCCEEDED', 'FAILED'] as const).map((state) => ({
      pubsubTopic: topic,
      message: { type: 'JOB_STATE_CHANGED' as const, newJobState: state },
    })),
    { pubsubTopic: topic, message: { type: 'TASK_STATE_CHANGED', newTaskState: 'FAILED' } },
  ]
}

/** PARAM_CASE_ID for case_id: strings as they are, everything else as JSON. */
export function paramEnvironment(params: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [`PARAM_${k.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`, typeof v === 'string' ? v : JSON.stringify(v)]),
  )
}

/** Single-quotes a value for sh. */
export const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
const writeFileLine = (content: string, to: string) => `printf '%s' ${shq(b64(content))} | base64 -d > ${to}`

/**
 * Runs on the VM before the pipeline: makes the run's output folder and writes the run's params
 * there (provenance beside the results, and the engines' params file), plus any inline workflow.
 */
export function prepareRunnable(run: RunForJob): BatchRunnable {
  const lines = ['set -eu', 'mkdir -p "$PLATFORM_OUTPUT_DIR"', writeFileLine(JSON.stringify(run.params, null, 2), '"$PLATFORM_PARAMS_FILE"')]
  const inline = run.execution.workflow?.source
  if (inline && run.execution.type === 'direct_nextflow') {
    lines.push('mkdir -p "${PLATFORM_OUTPUT_DIR}workflow"', writeFileLine(inline, '"${PLATFORM_OUTPUT_DIR}workflow/main.nf"'))
  }
  if (run.execution.type === 'direct_wdl') {
    if (inline) lines.push(writeFileLine(inline, '"${PLATFORM_OUTPUT_DIR}workflow.wdl"'))
    lines.push(writeFileLine(JSON.stringify(wdlInputsTemplate(run.params), null, 2), '"${PLATFORM_OUTPUT_DIR}inputs.template.json"'))
  }
  return { displayName: 'prepare-run-folder', script: { text: lines.join('\n') } }
}

export function mainRunnables(run: RunForJob): BatchRunnable[] {
  const e = run.execution
  switch (e.type) {
    case 'container_entrypoint':
      return [containerEntrypointRunnable(run)]
    case 'direct_nextflow':
      return [engineRunnable('nextflow', e.container, nextflowScript(run))]
    case 'direct_wdl':
      return [engineRunnable('cromwell', e.container, cromwellScript(run))]
  }
}

/** The pipeline's own container, its entrypoint and commands; params as PARAM_* variables and the params file. */
export function containerEntrypointRunnable(run: RunForJob): BatchRunnable {
  const e = run.execution
  if (!e.entrypoint && !e.commands?.length) {
    throw new JobBuildError(
      `pipeline ${run.pipeline_slug} ${run.pipeline_version} (container_entrypoint) declares neither an entrypoint nor commands`,
    )
  }
  return {
    displayName: run.pipeline_slug,
    container: { imageUri: e.container, ...(e.entrypoint ? { entrypoint: e.entrypoint } : {}), commands: e.commands ?? [] },
    environment: { variables: paramEnvironment(run.params) },
  }
}

function engineRunnable(engine: string, image: string, script: string): BatchRunnable {
  return { displayName: engine, container: { imageUri: image, entrypoint: '/bin/bash', commands: ['-c', script] } }
}

const missingEngine = (command: string, type: string, image: string) =>
  `echo ${shq(`${command}: command not found; a ${type} job needs the engine of ${image}`)} >&2; exit 127`

/** `nextflow run <source> -profile <profile> -params-file … -with-trace`, the work folder in the bucket. */
export function nextflowScript(run: RunForJob): string {
  const e = run.execution
  const source = e.workflow?.url ? shq(e.workflow.url) : e.workflow?.source ? '"${PLATFORM_OUTPUT_DIR}workflow/main.nf"' : undefined
  if (!source) throw new JobBuildError(`pipeline ${run.pipeline_slug} ${run.pipeline_version} (direct_nextflow) has no workflow url or source`)
  const args = [
    'nextflow',
    '-log "${PLATFORM_OUTPUT_DIR}nextflow.log"',
    'run',
    source,
    ...(e.workflow?.url && e.workflow.revision ? ['-r', shq(e.workflow.revision)] : []),
    ...(run.profile ? ['-profile', shq(run.profile)] : []),
    '-params-file "$PLATFORM_PARAMS_FILE"',
    // The run's output location wins over any outdir in the params: outputs are listed there.
    '--outdir "${PLATFORM_OUTPUT_DIR}results"',
    '-work-dir "$PLATFORM_WORK_DIR"',
    // The session id is the platform's (NXF_UUID below), so a resume names it without the history file of a VM long gone.
    ...(resumes(run) ? ['-resume "$PLATFORM_RESUME"'] : []),
    '-with-trace "${PLATFORM_OUTPUT_DIR}trace.txt"',
    '-with-report "${PLATFORM_OUTPUT_DIR}report.html"',
    '-ansi-log false',
  ]
  return [
    'set -euo pipefail',
    `command -v nextflow >/dev/null 2>&1 || { ${missingEngine('nextflow', 'direct_nextflow', e.container)}; }`,
    // .nextflow/ history stays in a scratch folder, not among the outputs; the task cache is in the
    // bucket with the work folder (Nextflow's cloud cache), under the session id the platform
    // chose, which a resume names without a history file (NXF_IGNORE_RESUME_HISTORY).
    'cd "$(mktemp -d)"',
    `export NXF_UUID=${shq(sessionOf(run))} NXF_CLOUDCACHE_PATH=${shq(nextflowCacheOf(run.bucket_name, sessionOf(run)))} NXF_IGNORE_RESUME_HISTORY=true`,
    args.join(' '),
  ].join('\n')
}

/** Params keyed for Cromwell: `<workflow>.<input>`, the workflow's name filled in once the WDL is fetched. */
export const WDL_WORKFLOW_PLACEHOLDER = '@WORKFLOW@'
export function wdlInputsTemplate(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k.includes('.') ? k : `${WDL_WORKFLOW_PLACEHOLDER}.${k}`, v]))
}

/** How the job gets the WDL: over HTTP(S), from the project bucket through its mount, or the inline copy. */
export function wdlFetch(run: RunForJob): string {
  const w = run.execution.workflow
  if (w?.url) {
    if (/^https?:\/\//.test(w.url)) {
      const failed = shq(`could not fetch the WDL from ${w.url}`)
      return `{ curl -fsSL ${shq(w.url)} -o workflow.wdl || wget -q -O workflow.wdl ${shq(w.url)}; } || { echo ${failed} >&2; exit 1; }`
    }
    const gs = /^gs:\/\/([^/]+)\/(.+)$/.exec(w.url)
    if (gs && gs[1] === run.bucket_name) return `cp ${shq(`${mountPathOf(run.bucket_name)}/${gs[2]}`)} workflow.wdl`
    throw new JobBuildError(
      `pipeline ${run.pipeline_slug} ${run.pipeline_version}: the WDL must come from an http(s) URL or the project bucket gs://${run.bucket_name}/, not ${w.url}`,
    )
  }
  if (w?.source) return 'cp "${PLATFORM_OUTPUT_DIR}workflow.wdl" workflow.wdl'
  throw new JobBuildError(`pipeline ${run.pipeline_slug} ${run.pipeline_version} (direct_wdl) has no workflow url or source`)
}

/**
 * Cromwell's configuration for call caching across the runs of a work session: the executions and
 * the call-cache database live on with the session's work folder in the bucket (HOCON reads
 * PLATFORM_WORK_DIR and CROMWELL_DB_DIR from the environment, which the local executor maps too).
 * The database is a file HSQLDB, worked on in a local copy and saved back when Cromwell exits:
 * a database's random writes and locks do not belong on a bucket mount.
 */
export const CROMWELL_CONF = [
  'include required(classpath("application"))',
  'call-caching { enabled = true, invalidate-bad-cache-results = true }',
  'backend.providers.Local.config.root = ${PLATFORM_WORK_DIR}"cromwell-executions"',
  'database {',
  '  profile = "slick.jdbc.HsqldbProfile$"',
  '  db {',
  '    driver = "org.hsqldb.jdbcDriver"',
  '    url = "jdbc:hsqldb:file:"${CROMWELL_DB_DIR}"/cromwell;shutdown=false;hsqldb.default_table_type=cached;hsqldb.tx=mvcc;hsqldb.large_data=true;hsqldb.lob_compressed=true;hsqldb.script_format=3"',
  '    connectionTimeout = 120000',
  '    numThreads = 1',
  '  }',
  '}',
].join('\n')

/**
 * Cromwell in single-workflow mode: fetch the WDL, validate it (womtool when the image has it;
 * otherwise Cromwell parses and validates it before running), run it with the inputs JSON and
 * keep the metadata JSON, the outputs and the logs in the run's output folder. Every run writes
 * its calls to its session's call cache; a resumed relaunch also reads them (read_from_cache), so
 * the calls its first run completed are not run again.
 */
export function cromwellScript(run: RunForJob): string {
  const e = run.execution
  const fetch = wdlFetch(run)
  return [
    'set -euo pipefail',
    'if command -v cromwell >/dev/null 2>&1; then CROMWELL="cromwell"',
    'elif [ -f /app/cromwell.jar ]; then CROMWELL="java -jar /app/cromwell.jar"',
    `else ${missingEngine('cromwell', 'direct_wdl', e.container)}; fi`,
    'cd "$(mktemp -d)"',
    writeFileLine(CROMWELL_CONF, 'cromwell.conf'),
    'mkdir -p "${PLATFORM_WORK_DIR}cromwell-executions" "${PLATFORM_WORK_DIR}cromwell-db"',
    'export CROMWELL_DB_DIR="$PWD/cromwell-db"',
    'cp -R "${PLATFORM_WORK_DIR}cromwell-db/." "$CROMWELL_DB_DIR/" 2>/dev/null || mkdir -p "$CROMWELL_DB_DIR"',
    // Saved back whatever the outcome: a failed run's completed calls are what a resume reuses.
    `trap 'cp -R "$CROMWELL_DB_DIR/." "\${PLATFORM_WORK_DIR}cromwell-db/"' EXIT`,
    // The JVM reads it whichever way Cromwell is started (a wrapper script or java -jar).
    'export JAVA_TOOL_OPTIONS="-Dconfig.file=$PWD/cromwell.conf ${JAVA_TOOL_OPTIONS:-}"',
    fetch,
    ...(e.workflow?.url ? ['cp workflow.wdl "${PLATFORM_OUTPUT_DIR}workflow.wdl"'] : []),
    `WF="$(sed -n 's/^[[:space:]]*workflow[[:space:]][[:space:]]*\\([A-Za-z_][A-Za-z0-9_]*\\).*/\\1/p' workflow.wdl | head -n 1)"`,
    `[ -n "$WF" ] || { echo 'no workflow block found in the WDL' >&2; exit 1; }`,
    `sed "s/\\"${WDL_WORKFLOW_PLACEHOLDER}\\./\\"$WF./g" "\${PLATFORM_OUTPUT_DIR}inputs.template.json" > inputs.json`,
    'cp inputs.json "${PLATFORM_OUTPUT_DIR}inputs.json"',
    'if command -v womtool >/dev/null 2>&1; then womtool validate workflow.wdl -i inputs.json',
    'elif [ -f /app/womtool.jar ]; then java -jar /app/womtool.jar validate workflow.wdl -i inputs.json',
    'else echo "womtool not in the image: cromwell validates the WDL as it parses it"; fi',
    `printf '{"final_workflow_outputs_dir":"%soutputs","use_relative_output_paths":true,"final_workflow_log_dir":"%slogs","final_call_logs_dir":"%scall-logs","write_to_cache":true,"read_from_cache":${resumes(run)}}' "$PLATFORM_OUTPUT_DIR" "$PLATFORM_OUTPUT_DIR" "$PLATFORM_OUTPUT_DIR" > options.json`,
    '$CROMWELL run workflow.wdl --inputs inputs.json --options options.json --metadata-output "${PLATFORM_OUTPUT_DIR}metadata.json"',
  ].join('\n')
}
