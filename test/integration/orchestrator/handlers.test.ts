import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeDeps } from '../../../functions/compute/deps.js'
import { createComputeApp } from '../../../functions/compute/service.js'
import { PLATFORM_PIPELINES, seedPipelines } from '../../../domain/pipelines/catalogue.js'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { buildRunJob } from '../../../domain/runs/batch-job.js'
import { jobIdForRun } from '../../../domain/runs/batch-job.js'
import { jobName, jobParent, type BatchBackend } from '../../../lib/batch/port.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../domain/pipelines/model.js'
import { PipelineStore } from '../../../domain/pipelines/store.js'
import { localPathFor } from '../../../lib/storage.js'
import { TERMINAL, type RunStatus } from '../../../domain/runs/status.js'
import { type RunRecord } from '../../../domain/runs/store.js'
import { registerOrchestrator } from '../../../orchestrator/functions.js'
import { jobSettings, onRunRequested } from '../../../orchestrator/run-requested.js'
import { RUN_REQUESTED } from '../../../domain/runs/messages.js'
import { call } from '../../support/world.js'
import { makeStage, shellPipeline, type Stage } from './stage.js'
import { until } from './support.js'

let stage: Stage
let runRequested: string
let jobStateChanged: string

beforeAll(async () => {
  stage = await makeStage()
  registerOrchestrator(stage.deps)
  runRequested = await stage.serve('runRequested')
  jobStateChanged = await stage.serve('jobStateChanged')
})

afterAll(async () => {
  await stage?.close()
})

const requestRun = (run: Pick<RunRecord, 'id' | 'project_id'>) =>
  stage.push(runRequested, stage.config.topics.runRequested, { json: { run_id: run.id, project_id: run.project_id } })

const jobNameOf = (runId: string) => jobName(jobParent(stage.config.gcpProject, stage.config.batch.region), jobIdForRun(runId))

/** A job-state notification with exactly the attributes Cloud Batch sets (the local executor sends the same). */
const jobEvent = (runId: string, state: string) =>
  stage.push(jobStateChanged, stage.config.topics.jobStatus, {
    text: `Job state was updated to ${state}.`,
    attributes: {
      Type: 'JOB_STATE_CHANGED',
      JobName: jobNameOf(runId),
      JobUID: `${jobIdForRun(runId)}-uid`,
      NewJobState: state,
      Region: stage.config.batch.region,
    },
  })

/** A task-state notification with exactly the attributes Cloud Batch sets: the task's name and UID, and no JobName. */
const taskEvent = (job: string, state: string, uid = `${job.split('/').pop()}-uid-group0-0`) =>
  stage.push(jobStateChanged, stage.config.topics.jobStatus, {
    text: `Task state was updated to ${state}.`,
    attributes: {
      Type: 'TASK_STATE_CHANGED',
      TaskName: `${job}/taskGroups/group0/tasks/0`,
      TaskUID: uid,
      NewTaskState: state,
      Region: stage.config.batch.region,
    },
  })

const runOf = async (id: string) => (await stage.deps.runs.getById(id))!
const settledRun = (id: string) =>
  until(
    `run ${id} to end`,
    async () => {
      const run = await runOf(id)
      return TERMINAL.has(run.status) ? run : undefined
    },
    20_000,
  )

describe('run requested', () => {
  it('creates the Batch job once for a redelivered message, and runs it once', async () => {
    const run = await stage.submit(shellPipeline('echo ran >> "${PLATFORM_OUTPUT_DIR}runs.txt"'))
    const statuses = await Promise.all([requestRun(run), requestRun(run), requestRun(run)])
    expect(statuses.every((s) => s >= 200 && s < 300)).toBe(true)
    expect(await requestRun(run)).toBeLessThan(300)

    const recorded = await runOf(run.id)
    expect(recorded.job?.name).toBe(jobNameOf(run.id))
    await stage.executor.settled(recorded.job!.name)
    expect(await readFile(localPathFor(stage.config, `gs://${run.bucket_name}/runs/${run.id}/runs.txt`), 'utf8')).toBe('ran\n')
    const jobDirs = (await readdir(stage.config.batch.localWorkRoot!)).filter((d) => d.startsWith(jobIdForRun(run.id)))
    expect(jobDirs).toEqual([jobIdForRun(run.id)])
    const created = await stage.world.deps.db.col('audit_events').where('entity.id', '==', run.id).where('action', '==', 'run.job_created').get()
    expect(created.size).toBe(1)
  })

  it('acknowledges a malformed message and a message for an unknown run without doing anything', async () => {
    expect(await stage.push(runRequested, stage.config.topics.runRequested, { text: 'not json at all' })).toBeLessThan(300)
    expect(await stage.push(runRequested, stage.config.topics.runRequested, { json: { run_id: 'nope' } })).toBeLessThan(300)
    const unknown = { id: '00000000-0000-4000-8000-000000000000', project_id: stage.world.project.id }
    expect(await requestRun(unknown)).toBeLessThan(300)
    expect(await stage.executor.getJob(jobNameOf(unknown.id))).toBeUndefined()
  })

  it('creates no job for a run cancelled before its message came', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test')
    expect(await requestRun(run)).toBeLessThan(300)
    expect(await stage.executor.getJob(jobNameOf(run.id))).toBeUndefined()
    expect((await runOf(run.id)).status).toBe('cancelled')
  })
})

describe('run requested for a job made earlier', () => {
  it('takes the end of a job that existed before the run recorded it (a crash in between), without running it again', async () => {
    const run = await stage.submit(shellPipeline('echo ran >> "${PLATFORM_OUTPUT_DIR}runs.txt"'))
    // The job was made and ended, but the process that made it died before recording it, and its notifications went with the queue.
    const made = await stage.executor.createJob(buildRunJob(jobSettings(stage.deps), run))
    await stage.executor.settled(made.name)
    expect((await runOf(run.id)).status).toBe('queued')

    expect(await requestRun(run)).toBeLessThan(300)
    const after = await runOf(run.id)
    expect(after).toMatchObject({ status: 'succeeded', job: { name: made.name }, output: `gs://${run.bucket_name}/runs/${run.id}/` })
    expect(after.started).toBeDefined()
    expect(await readFile(localPathFor(stage.config, `gs://${run.bucket_name}/runs/${run.id}/runs.txt`), 'utf8')).toBe('ran\n')
  })
})

describe('job state changed', () => {
  it('moves a run to running, then succeeded with its output location', async () => {
    const run = await stage.submit(shellPipeline('true'))
    expect(await jobEvent(run.id, 'SCHEDULED')).toBeLessThan(300)
    expect((await runOf(run.id)).status).toBe('queued')
    await jobEvent(run.id, 'RUNNING')
    const running = await runOf(run.id)
    expect(running.status).toBe('running')
    expect(running.started).toBeDefined()
    await jobEvent(run.id, 'SUCCEEDED')
    const done = await runOf(run.id)
    expect(done.status).toBe('succeeded')
    expect(done.output).toBe(`gs://${run.bucket_name}/runs/${run.id}/`)
    expect(done.finished!.toMillis()).toBeGreaterThanOrEqual(done.started!.toMillis())
  })

  it('records the job a notification names on a run that has not recorded it yet, with one run.job_created event', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await jobEvent(run.id, 'RUNNING')
    const running = await runOf(run.id)
    expect(running).toMatchObject({ status: 'running', has_job: true, job: { name: jobNameOf(run.id), uid: `${jobIdForRun(run.id)}-uid` } })
    // The orchestrator's own record, coming after, changes nothing.
    await stage.deps.runs.recordJob(run.id, { name: jobNameOf(run.id) })
    await jobEvent(run.id, 'SUCCEEDED')
    const created = await stage.world.deps.db.col('audit_events').where('entity.id', '==', run.id).get()
    expect(created.docs.filter((d) => d.get('action') === 'run.job_created')).toHaveLength(1)
  })

  it("keeps the run's start time when the end of its job is reported before its start", async () => {
    const run = await stage.submit(shellPipeline('true'))
    await requestRun(run)
    const withJob = await until('the job to be recorded', async () => (await runOf(run.id)).job)
    await stage.executor.settled(withJob.name)
    // Only the end arrives (the RUNNING notification is late or lost).
    await jobEvent(run.id, 'SUCCEEDED')
    const done = await runOf(run.id)
    expect(done.status).toBe('succeeded')
    expect(done.started).toBeDefined()
    expect(done.started!.toMillis()).toBeLessThanOrEqual(done.finished!.toMillis())
    // The late RUNNING changes nothing.
    await jobEvent(run.id, 'RUNNING')
    expect((await runOf(run.id)).started!.toMillis()).toBe(done.started!.toMillis())
  })

  it('fails a run on a failed-task notification as Batch sends it (no JobName), with the error message from the job', async () => {
    const run = await stage.submit(shellPipeline('echo "BAM index missing for sample S9" >&2; exit 4'))
    // The job runs, but only the task notification is delivered here.
    const created = await stage.executor.createJob(buildRunJob(jobSettings(stage.deps), run))
    await stage.executor.settled(created.name)
    expect(await taskEvent(created.name, 'FAILED', `${created.uid}-group0-0`)).toBeLessThan(300)
    const after = await runOf(run.id)
    expect(after.status).toBe('failed')
    expect(after.error_message).toContain('exit code 4')
    // It ends with the failing task's last stderr lines.
    expect(after.error_message).toMatch(/\nLast lines of stderr:\nBAM index missing for sample S9$/)
    expect(after.job).toMatchObject({ name: created.name, uid: created.uid })
  })

  it('moves a run to running on a running-task notification, without reading the job', async () => {
    const run = await stage.submit(shellPipeline('true'))
    // No job exists: a task runs only while its job does, so the notification alone says the run runs.
    expect(await taskEvent(jobNameOf(run.id), 'RUNNING')).toBeLessThan(300)
    expect(await runOf(run.id)).toMatchObject({ status: 'running', job: { name: jobNameOf(run.id) } })
    // Its end says nothing without the job, which does not exist: the run stays where it is.
    expect(await taskEvent(jobNameOf(run.id), 'SUCCEEDED')).toBeLessThan(300)
    expect((await runOf(run.id)).status).toBe('running')
  })

  it('keeps a cancelled run cancelled when a late RUNNING or SUCCEEDED event arrives', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test')
    await jobEvent(run.id, 'RUNNING')
    await jobEvent(run.id, 'SUCCEEDED')
    const after = await runOf(run.id)
    expect(after.status).toBe('cancelled')
    expect(after.output).toBeUndefined()
  })

  it("ignores notifications of jobs that are not the platform's, and malformed ones", async () => {
    const foreign = await stage.push(jobStateChanged, stage.config.topics.jobStatus, {
      text: 'Job state was updated to RUNNING.',
      attributes: {
        Type: 'JOB_STATE_CHANGED',
        JobName: `${jobParent(stage.config.gcpProject, 'europe-west4')}/jobs/nightly-backup`,
        NewJobState: 'RUNNING',
      },
    })
    expect(foreign).toBeLessThan(300)
    expect(await stage.push(jobStateChanged, stage.config.topics.jobStatus, { text: 'no attributes' })).toBeLessThan(300)
  })

  /**
   * Any job history (QUEUED, SCHEDULED, RUNNING, then SUCCEEDED or FAILED, or stopping early),
   * its events delivered in any order, each any number of times, perhaps with a cancel somewhere,
   * and its start told by the job's or by its task's notification: the run ends where the furthest
   * event puts it, never moves backwards, and a terminal status is final.
   */
  it('never moves a run backwards, whatever the order and repetition of its events', async () => {
    const RANK: Record<RunStatus, number> = { queued: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2 }
    const STATUS: Record<string, RunStatus> = { QUEUED: 'queued', SCHEDULED: 'queued', RUNNING: 'running', SUCCEEDED: 'succeeded', FAILED: 'failed' }
    const history = fc
      .record({ reached: fc.integer({ min: 1, max: 4 }), outcome: fc.constantFrom('SUCCEEDED', 'FAILED') })
      .map(({ reached, outcome }) => ['QUEUED', 'SCHEDULED', 'RUNNING', outcome].slice(0, reached))
    const scenario = history.chain((states) =>
      fc.record({
        states: fc.constant(states),
        deliveries: fc
          .array(fc.integer({ min: 1, max: 3 }), { minLength: states.length, maxLength: states.length })
          .map((counts) => states.flatMap((s, i) => Array<string>(counts[i]!).fill(s)))
          .chain((events) => fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length })),
        cancelAt: fc.option(fc.nat(), { nil: undefined }),
        runningByTask: fc.boolean(),
      }),
    )

    await fc.assert(
      fc.asyncProperty(scenario, async ({ states, deliveries, cancelAt, runningByTask }) => {
        const run = await stage.submit(shellPipeline('true'))
        const cancelIndex = cancelAt === undefined ? undefined : cancelAt % (deliveries.length + 1)
        let previous: RunStatus = 'queued'
        let cancelledBeforeTerminal = false
        let terminalSeen = false
        for (const [i, state] of deliveries.entries()) {
          if (i === cancelIndex) {
            if (!terminalSeen) cancelledBeforeTerminal = true
            await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test').catch(() => undefined)
          }
          const viaTask = runningByTask && state === 'RUNNING'
          expect(await (viaTask ? taskEvent(jobNameOf(run.id), state) : jobEvent(run.id, state))).toBeLessThan(300)
          if (state === 'SUCCEEDED' || state === 'FAILED') terminalSeen = true
          const now = (await runOf(run.id)).status
          expect(RANK[now]).toBeGreaterThanOrEqual(RANK[previous])
          if (TERMINAL.has(previous)) expect(now).toBe(previous)
          previous = now
        }
        if (cancelIndex === deliveries.length && !terminalSeen) {
          cancelledBeforeTerminal = true
          await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test')
        }
        const furthest = states.map((s) => STATUS[s]!).reduce((a, b) => (RANK[b] > RANK[a] ? b : a))
        const final = await runOf(run.id)
        expect(final.status).toBe(cancelledBeforeTerminal ? 'cancelled' : furthest)
        if (final.status === 'failed') expect(final.error_message).toMatch(/the Batch job failed/)
        if (final.status === 'succeeded') expect(final.output).toBe(`gs://${run.bucket_name}/runs/${run.id}/`)
      }),
      { numRuns: 30 },
    )
  }, 120_000)
})

describe('a dispatch that Batch refuses', () => {
  const refusing = (error: Error): BatchBackend => ({
    createJob: () => Promise.reject(error),
    getJob: () => Promise.resolve(undefined),
    deleteJob: () => Promise.resolve(),
  })
  const event = (run: RunRecord) => ({
    id: 'e1',
    source: '//pubsub.googleapis.com/',
    type: 'google.cloud.pubsub.topic.v1.messagePublished',
    specversion: '1.0' as const,
    data: { message: { data: Buffer.from(JSON.stringify({ run_id: run.id, project_id: run.project_id })).toString('base64') } },
  })

  it.each([
    ['quota', 8, /waiting for Batch quota in europe-west4/],
    ['permissions', 7, /lack of permissions: check that the project's service account runner@test-project\.iam\.gserviceaccount\.com/],
    ['connectivity', 14, /cannot reach Cloud Batch \(connectivity\)/],
  ])('keeps the run queued with a reason naming %s, and asks Pub/Sub to redeliver', async (_, code, reason) => {
    const failing = { ...stage.deps, batch: refusing(Object.assign(new Error('refused by Batch'), { code })) }
    const run = await stage.submit(shellPipeline('true'))
    await expect(onRunRequested(failing, event(run))).rejects.toThrow(/refused by Batch/)
    const after = await runOf(run.id)
    expect(after.status).toBe('queued')
    expect(after.status_reason).toMatch(reason)
    expect(after.dispatch.last_error).toBe(after.status_reason)
  })

  it('fails the run with the reason when Batch rejects the job itself', async () => {
    const failing = { ...stage.deps, batch: refusing(Object.assign(new Error('taskSpec.runnables: invalid'), { code: 3 })) }
    const run = await stage.submit(shellPipeline('true'))
    await onRunRequested(failing, event(run))
    const after = await runOf(run.id)
    expect(after.status).toBe('failed')
    expect(after.error_message).toMatch(/Batch rejected the job: .*taskSpec\.runnables: invalid/)
  })

  it('deletes the job it just made when the run was cancelled meanwhile', async () => {
    const run = await stage.submit(shellPipeline('exec sleep 300'))
    // The user cancels while the job is being created: DELETE /runs finds no job to delete.
    const racing: BatchBackend = {
      createJob: async (req) => {
        await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test')
        return stage.executor.createJob(req)
      },
      getJob: (name) => stage.executor.getJob(name),
      deleteJob: (name) => stage.executor.deleteJob(name),
    }
    await onRunRequested({ ...stage.deps, batch: racing }, event(run))
    const after = await runOf(run.id)
    expect(after.status).toBe('cancelled')
    expect(after.job?.name).toBe(jobNameOf(run.id))
    expect(after.cancel?.job_deleted_at).toBeDefined()
    expect(after.job_cleanup_pending).toBe(false)
    expect(await stage.executor.getJob(jobNameOf(run.id))).toBeUndefined()
  })

  it('fails the run of a pipeline that cannot become a job', async () => {
    const run = await stage.submit({
      type: 'direct_nextflow',
      container: 'nextflow/nextflow:24.10.0',
      resources: { cpu_milli: 1000, memory_mib: 1024 },
    })
    expect(await requestRun(run)).toBeLessThan(300)
    const after = await runOf(run.id)
    expect(after.status).toBe('failed')
    expect(after.error_message).toMatch(/has no workflow url or source/)
  })
})

describe('end to end on the local suite backends', () => {
  /** The push subscriptions the local suite and infra/ create: each topic to its function. */
  beforeAll(async () => {
    for (const [topic, base] of [
      [stage.config.topics.runRequested, runRequested],
      [stage.config.topics.jobStatus, jobStateChanged],
    ] as const) {
      await stage.pubsub
        .topic(topic)
        .createSubscription(`${topic}-push`, { pushConfig: { pushEndpoint: `${base}/projects/${stage.config.gcpProject}/topics/${topic}` } })
    }
    await seedPipelines(new PipelineStore(stage.kernel.db, stage.kernel.audit, stage.kernel.clock), PLATFORM_PIPELINES)
  })

  const compute = () => createComputeApp(computeDeps(stage.world.deps, { queue: stage.queue, batch: stage.executor }))

  it('submits a run through the API and sees it succeed with its output file listed', async () => {
    const app = compute()
    const submitted = await call(app, 'POST', '/api/v1/runs', {
      token: stage.world.owner.token,
      project: stage.world.project.id,
      body: { pipeline_id: pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0'), params: { greeting: 'bonjour' } },
    })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201)
    const run = await settledRun(submitted.body.id)
    expect(run.status, run.error_message).toBe('succeeded')
    expect(run.started).toBeDefined()
    expect(run.output).toBe(`gs://${run.bucket_name}/runs/${run.id}/`)

    const outputs = await call(app, 'GET', `/api/v1/runs/${run.id}/outputs`, { token: stage.world.owner.token, project: stage.world.project.id })
    expect(outputs.status).toBe(200)
    expect(outputs.body.map((o: { name: string }) => o.name)).toContain('hello.txt')
    const hello = await readFile(join(localPathFor(stage.config, run.output!), 'hello.txt'), 'utf8')
    expect(hello).toBe(`bonjour from run ${run.id}\n`)
  })

  it('submits a run that fails and sees the error message', async () => {
    const submitted = await call(compute(), 'POST', '/api/v1/runs', {
      token: stage.world.owner.token,
      project: stage.world.project.id,
      body: { pipeline_id: pipelineId(PLATFORM_SCOPE, 'fail-local', '1.0.0'), params: {} },
    })
    expect(submitted.status).toBe(201)
    const run = await settledRun(submitted.body.id)
    expect(run.status).toBe('failed')
    expect(run.error_message).toContain('exit code 3')
    expect(run.error_message).toContain('fail-local: this pipeline always fails')
    expect(run.output).toBeUndefined()
  })

  it('fails a run whose job cannot even start (a 200 KB parameter: E2BIG) with the reason as its error message', async () => {
    const run = await stage.submit(shellPipeline('true'), { big: 'x'.repeat(200_000) })
    await stage.queue.publish(RUN_REQUESTED, { run_id: run.id, project_id: run.project_id })
    const settled = await settledRun(run.id)
    expect(settled.status).toBe('failed')
    expect(settled.error_message).toMatch(/could not be started: .*E2BIG/)
  })

  it('cancels a running run through the API: the job and its processes are gone', async () => {
    const run = await stage.submit(shellPipeline('echo $$ > "${PLATFORM_OUTPUT_DIR}pid"; exec sleep 300'))
    await stage.queue.publish(RUN_REQUESTED, { run_id: run.id, project_id: run.project_id })
    await until('the run to be running', async () => ((await runOf(run.id)).status === 'running' ? true : undefined), 20_000)
    const pid = Number(
      await until('the pid file', () =>
        readFile(join(localPathFor(stage.config, `gs://${run.bucket_name}/runs/${run.id}/`), 'pid'), 'utf8').catch(() => undefined),
      ),
    )

    const cancelled = await call(compute(), 'DELETE', `/api/v1/runs/${run.id}`, { token: stage.world.owner.token, project: stage.world.project.id })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe('cancelled')
    await until(
      'the job process to be gone',
      () => {
        try {
          process.kill(pid, 0)
          return undefined
        } catch {
          return true
        }
      },
      10_000,
    )
    expect(await stage.executor.getJob(jobNameOf(run.id))).toBeUndefined()
    expect((await runOf(run.id)).status).toBe('cancelled')
  })
})
