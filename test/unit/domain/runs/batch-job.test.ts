import { describe, expect, it } from 'vitest'
import {
  buildRunJob,
  CROMWELL_CONF,
  JobBuildError,
  labelKey,
  labelValue,
  paramEnvironment,
  wdlInputsTemplate,
} from '../../../../domain/runs/batch-job.js'
import { jobIdForRun, runIdOfJob } from '../../../../domain/runs/batch-job.js'
import { EXECUTIONS, runFor, SETTINGS } from '../../lib/batch/fixtures.js'

const TOPIC = 'projects/lab-prod/topics/batch-job-status'

describe('every Batch job of a run', () => {
  for (const execution of Object.values(EXECUTIONS)) {
    it(`carries the run's identity, account, bucket, environment, logs and notifications (${execution.type})`, () => {
      const run = runFor(execution)
      const { parent, jobId, job } = buildRunJob(SETTINGS, run)

      expect(parent).toBe('projects/lab-prod/locations/europe-west4')
      expect(jobId).toBe(`run-${run.id}`)
      expect(job.labels).toEqual({
        'run-id': run.id,
        'project-id': run.project_id,
        pipeline: run.pipeline_slug,
        'pipeline-version': '1-2-0',
        'pipeline-type': execution.type,
        platform: 'pipeline-platform',
      })
      expect(job.allocationPolicy?.serviceAccount).toEqual({ email: 'runner@lab-prod.iam.gserviceaccount.com' })
      expect(job.allocationPolicy?.location).toEqual({ allowedLocations: ['regions/europe-west4'] })
      expect(job.logsPolicy).toEqual({ destination: 'CLOUD_LOGGING' })
      expect(job.notifications).toEqual([
        { pubsubTopic: TOPIC, message: { type: 'JOB_STATE_CHANGED', newJobState: 'RUNNING' } },
        { pubsubTopic: TOPIC, message: { type: 'JOB_STATE_CHANGED', newJobState: 'SUCCEEDED' } },
        { pubsubTopic: TOPIC, message: { type: 'JOB_STATE_CHANGED', newJobState: 'FAILED' } },
        { pubsubTopic: TOPIC, message: { type: 'TASK_STATE_CHANGED', newTaskState: 'FAILED' } },
      ])

      expect(job.taskGroups).toHaveLength(1)
      const group = job.taskGroups![0]!
      expect(group.taskCount).toBe(1)
      const spec = group.taskSpec!
      expect(spec.volumes).toEqual([{ gcs: { remotePath: 'lab-bucket' }, mountPath: '/mnt/disks/lab-bucket' }])
      expect(spec.computeResource).toEqual({ cpuMilli: execution.resources.cpu_milli, memoryMib: execution.resources.memory_mib })
      expect(spec.maxRetryCount).toBe(0)
      expect(spec.environment?.variables).toMatchObject({
        PLATFORM_RUN_ID: run.id,
        PLATFORM_RUN_NAME: run.name,
        PLATFORM_PROJECT_ID: run.project_id,
        PLATFORM_PIPELINE: run.pipeline_slug,
        PLATFORM_BUCKET: 'lab-bucket',
        PLATFORM_BUCKET_DIR: '/mnt/disks/lab-bucket',
        PLATFORM_OUTPUT_DIR: `/mnt/disks/lab-bucket/runs/${run.id}/`,
        PLATFORM_OUTPUT_URI: `gs://lab-bucket/runs/${run.id}/`,
        PLATFORM_PARAMS_FILE: `/mnt/disks/lab-bucket/runs/${run.id}/params.json`,
        PLATFORM_WORK_DIR: `/mnt/disks/lab-bucket/work/${run.id}/`,
      })
      expect(spec.environment?.variables).not.toHaveProperty('PLATFORM_RESUME')

      // The first runnable makes the output folder and writes the run's params there.
      const prepare = spec.runnables![0]!
      expect(prepare.script?.text).toContain('mkdir -p "$PLATFORM_OUTPUT_DIR"')
      const encoded = /printf '%s' '([A-Za-z0-9+/=]+)' \| base64 -d > "\$PLATFORM_PARAMS_FILE"/.exec(prepare.script!.text!)
      expect(JSON.parse(Buffer.from(encoded![1]!, 'base64').toString('utf8'))).toEqual(run.params)
    })
  }

  it('derives the job id from the run id, so a redelivered request names the same job', () => {
    const run = runFor(EXECUTIONS.container_entrypoint)
    expect(buildRunJob(SETTINGS, run).jobId).toBe(buildRunJob(SETTINGS, { ...run, params: { other: 1 } }).jobId)
    expect(jobIdForRun(run.id)).toMatch(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/)
    expect(runIdOfJob({ name: `projects/p/locations/r/jobs/${jobIdForRun(run.id)}` })).toBe(run.id)
    expect(runIdOfJob({ name: 'projects/p/locations/r/jobs/other', labels: { 'run-id': run.id } })).toBe(run.id)
    expect(runIdOfJob({ name: 'projects/p/locations/r/jobs/someone-elses-job' })).toBeUndefined()
  })

  it('sanitizes labels to the Batch rules', () => {
    expect(labelValue('Hereditary Mock v2.0/β')).toBe('hereditary-mock-v2-0--')
    expect(labelValue('x'.repeat(80))).toHaveLength(63)
    expect(labelKey('9lives')).toBe('x-9lives')
    const run = runFor(EXECUTIONS.container_entrypoint, { pipeline_slug: 'My_Pipeline.ONE', pipeline_version: '2.0.0-rc.1+build.7' })
    const labels = buildRunJob(SETTINGS, run).job.labels!
    expect(labels.pipeline).toBe('my_pipeline-one')
    expect(labels['pipeline-version']).toBe('2-0-0-rc-1-build-7')
    for (const [k, v] of Object.entries(labels)) {
      expect(k).toMatch(/^[a-z][a-z0-9_-]{0,62}$/)
      expect(v).toMatch(/^[a-z0-9_-]{0,63}$/)
    }
  })

  it('sets the maximum run duration only when the pipeline declares one', () => {
    expect(buildRunJob(SETTINGS, runFor(EXECUTIONS.direct_nextflow)).job.taskGroups![0]!.taskSpec!.maxRunDuration).toEqual({ seconds: 86400 })
    expect(buildRunJob(SETTINGS, runFor(EXECUTIONS.container_entrypoint)).job.taskGroups![0]!.taskSpec!.maxRunDuration).toBeUndefined()
  })
})

describe('a container_entrypoint job', () => {
  it("runs the pipeline's container with its entrypoint and commands, params passed as PARAM_* variables", () => {
    const run = runFor(EXECUTIONS.container_entrypoint, { params: { sample_id: 'S1', 'fastq-tumor': ['gs://b/1', 'gs://b/2'], depth: 30 } })
    const main = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!.runnables![1]!
    expect(main.container).toEqual({
      imageUri: 'ghcr.io/lab/nextflow-minimal:1.0.0',
      entrypoint: '/bin/sh',
      commands: ['-c', 'run-minimal --sample "$PARAM_SAMPLE_ID" --out "$PLATFORM_OUTPUT_DIR"'],
    })
    expect(main.environment?.variables).toEqual({ PARAM_SAMPLE_ID: 'S1', PARAM_FASTQ_TUMOR: '["gs://b/1","gs://b/2"]', PARAM_DEPTH: '30' })
  })

  it('cannot be built without an entrypoint or commands', () => {
    const run = runFor({ ...EXECUTIONS.container_entrypoint, entrypoint: undefined, commands: [] })
    expect(() => buildRunJob(SETTINGS, run)).toThrow(JobBuildError)
  })

  it('turns param names into environment variable names', () => {
    expect(paramEnvironment({ 'a.b-c': 'x', flag: true, n: null })).toEqual({ PARAM_A_B_C: 'x', PARAM_FLAG: 'true', PARAM_N: 'null' })
  })
})

describe('a direct_nextflow job', () => {
  it('runs nextflow in the engine container with the profile, the params file, a trace and a work folder in the bucket', () => {
    const run = runFor(EXECUTIONS.direct_nextflow)
    const main = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!.runnables![1]!
    expect(main.container?.imageUri).toBe('nextflow/nextflow:24.10.0')
    expect(main.container?.entrypoint).toBe('/bin/bash')
    expect(main.container?.commands?.[0]).toBe('-c')
    const script = main.container!.commands![1]!
    const command = script.split('\n').find((l) => l.startsWith('nextflow '))!
    expect(command).toBe(
      [
        'nextflow -log "${PLATFORM_OUTPUT_DIR}nextflow.log" run',
        "'nf-core/demo' -r '1.0.1' -profile 'test,docker'",
        '-params-file "$PLATFORM_PARAMS_FILE"',
        '--outdir "${PLATFORM_OUTPUT_DIR}results"',
        '-work-dir "$PLATFORM_WORK_DIR"',
        '-with-trace "${PLATFORM_OUTPUT_DIR}trace.txt"',
        '-with-report "${PLATFORM_OUTPUT_DIR}report.html"',
        '-ansi-log false',
      ].join(' '),
    )
    expect(script).toContain('command -v nextflow')
    // The session id is the run's own, pinned, its task cache in the bucket beside the work folder.
    expect(script).toContain(
      `export NXF_UUID='${run.id}' NXF_CLOUDCACHE_PATH='gs://lab-bucket/work/${run.id}/.nextflow-cache' NXF_IGNORE_RESUME_HISTORY=true`,
    )
    expect(script).not.toContain('-resume')
  })

  it("resumes in the first run's session and work folder when the run is a resumed relaunch", () => {
    const session = '11111111-2222-4333-8444-555555555555'
    const run = runFor(EXECUTIONS.direct_nextflow, { work_session: session, relaunched_from: { id: session, name: 'first', resume: true } })
    const spec = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!
    expect(spec.environment?.variables).toMatchObject({
      PLATFORM_WORK_DIR: `/mnt/disks/lab-bucket/work/${session}/`,
      PLATFORM_RESUME: session,
      PLATFORM_OUTPUT_DIR: `/mnt/disks/lab-bucket/runs/${run.id}/`,
    })
    const script = spec.runnables![1]!.container!.commands![1]!
    expect(script).toContain('-work-dir "$PLATFORM_WORK_DIR" -resume "$PLATFORM_RESUME"')
    expect(script).toContain(`export NXF_UUID='${session}' NXF_CLOUDCACHE_PATH='gs://lab-bucket/work/${session}/.nextflow-cache'`)
  })

  it('starts a session of its own, without -resume, for a relaunch that does not resume', () => {
    const run = runFor(EXECUTIONS.direct_nextflow, { work_session: 'second-id', relaunched_from: { id: 'first-id', name: 'first', resume: false } })
    const spec = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!
    expect(spec.environment?.variables?.PLATFORM_WORK_DIR).toBe('/mnt/disks/lab-bucket/work/second-id/')
    expect(spec.environment?.variables).not.toHaveProperty('PLATFORM_RESUME')
    expect(spec.runnables![1]!.container!.commands![1]).not.toContain('-resume')
  })

  it('runs an inline workflow from the file the first runnable writes', () => {
    const run = runFor({ ...EXECUTIONS.direct_nextflow, workflow: { source: 'workflow { println "hi" }' } }, { profile: undefined })
    const runnables = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!.runnables!
    expect(runnables[0]!.script?.text).toContain('"${PLATFORM_OUTPUT_DIR}workflow/main.nf"')
    expect(runnables[1]!.container!.commands![1]).toContain('run "${PLATFORM_OUTPUT_DIR}workflow/main.nf" -params-file')
    expect(runnables[1]!.container!.commands![1]).not.toContain('-profile')
  })

  it('cannot be built without a workflow', () => {
    expect(() => buildRunJob(SETTINGS, runFor({ ...EXECUTIONS.direct_nextflow, workflow: undefined }))).toThrow(/no workflow url or source/)
  })
})

describe('a direct_wdl job', () => {
  it('fetches, validates and runs the WDL with Cromwell, keeping the metadata JSON with the outputs', () => {
    const run = runFor(EXECUTIONS.direct_wdl)
    const runnables = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!.runnables!
    const main = runnables[1]!
    expect(main.container?.imageUri).toBe('broadinstitute/cromwell:87')
    expect(main.container?.entrypoint).toBe('/bin/bash')
    const script = main.container!.commands![1]!
    const order = [
      "curl -fsSL 'https://example.org/wdl/hereditary.wdl' -o workflow.wdl",
      'womtool validate workflow.wdl -i inputs.json',
      '$CROMWELL run workflow.wdl --inputs inputs.json --options options.json --metadata-output "${PLATFORM_OUTPUT_DIR}metadata.json"',
    ].map((s) => script.indexOf(s))
    expect(order.every((i) => i >= 0)).toBe(true)
    expect([...order].sort((a, b) => a - b)).toEqual(order)
    expect(script).toContain('/app/cromwell.jar')
    // Every run writes its calls to its session's call cache; only a resume reads them.
    expect(script).toContain('"write_to_cache":true,"read_from_cache":false')
    expect(script).toContain('export JAVA_TOOL_OPTIONS="-Dconfig.file=$PWD/cromwell.conf')
    expect(script).toContain(`trap 'cp -R "$CROMWELL_DB_DIR/." "\${PLATFORM_WORK_DIR}cromwell-db/"' EXIT`)
    expect(script.indexOf('trap ')).toBeLessThan(script.indexOf('$CROMWELL run'))
    const conf = /printf '%s' '([A-Za-z0-9+/=]+)' \| base64 -d > cromwell.conf/.exec(script)
    expect(Buffer.from(conf![1]!, 'base64').toString('utf8')).toBe(CROMWELL_CONF)
    expect(CROMWELL_CONF).toContain('call-caching { enabled = true')
    expect(CROMWELL_CONF).toContain('backend.providers.Local.config.root = ${PLATFORM_WORK_DIR}"cromwell-executions"')
    // The inputs are keyed by the workflow's name once the WDL is known.
    expect(runnables[0]!.script?.text).toContain('inputs.template.json')
  })

  it("reads the first run's call cache when the run is a resumed relaunch", () => {
    const run = runFor(EXECUTIONS.direct_wdl, { work_session: 'first-id', relaunched_from: { id: 'first-id', name: 'first', resume: true } })
    const spec = buildRunJob(SETTINGS, run).job.taskGroups![0]!.taskSpec!
    expect(spec.environment?.variables?.PLATFORM_WORK_DIR).toBe('/mnt/disks/lab-bucket/work/first-id/')
    expect(spec.runnables![1]!.container!.commands![1]).toContain('"write_to_cache":true,"read_from_cache":true')
  })

  it('reads a WDL in the project bucket through the mount, and refuses one in another bucket', () => {
    const own = runFor({ ...EXECUTIONS.direct_wdl, workflow: { url: 'gs://lab-bucket/wdl/main.wdl' } })
    expect(buildRunJob(SETTINGS, own).job.taskGroups![0]!.taskSpec!.runnables![1]!.container!.commands![1]).toContain(
      "cp '/mnt/disks/lab-bucket/wdl/main.wdl' workflow.wdl",
    )
    const other = runFor({ ...EXECUTIONS.direct_wdl, workflow: { url: 'gs://someone-else/main.wdl' } })
    expect(() => buildRunJob(SETTINGS, other)).toThrow(/project bucket gs:\/\/lab-bucket\//)
  })

  it('qualifies plain input names with the workflow name and leaves qualified ones alone', () => {
    expect(wdlInputsTemplate({ case_id: 'C1', 'hereditary.child_fastq': ['a', 'b'] })).toEqual({
      '@WORKFLOW@.case_id': 'C1',
      'hereditary.child_fastq': ['a', 'b'],
    })
  })
})
