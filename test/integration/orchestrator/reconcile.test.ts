import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { CloudEvent } from '@google-cloud/functions-framework'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { jobIdForRun } from '../../../domain/runs/batch-job.js'
import { jobName, jobParent } from '../../../lib/batch/port.js'
import type { Clock } from '../../../lib/clock.js'
import type { RunRecord } from '../../../domain/runs/store.js'
import { localPathFor } from '../../../lib/storage.js'
import { registerOrchestrator } from '../../../orchestrator/functions.js'
import { DEFAULT_STALE_AFTER_MS, reconcile, type ReconcileReport } from '../../../orchestrator/reconcile.js'
import { onRunRequested } from '../../../orchestrator/run-requested.js'
import { makeStage, shellPipeline, type Stage } from './stage.js'
import { listen, until } from './support.js'

/** The orchestrator's clock, moved forward to make runs look old; the runs are recorded at real time. */
let offsetMs = 0
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) }

let stage: Stage
let requested: Awaited<ReturnType<typeof listen>>

beforeAll(async () => {
  stage = await makeStage({ clock })
  requested = await listen(stage.pubsub, stage.config.topics.runRequested)
})
afterAll(async () => {
  await requested?.close()
  await stage?.close()
})
beforeEach(() => {
  offsetMs = 0
})

/** The run's job is made, but no notification ever reaches the orchestrator: the job-status topic has no subscription here. */
async function dispatch(run: RunRecord) {
  const event: CloudEvent<unknown> = {
    id: run.id,
    source: '//pubsub.googleapis.com/',
    type: 'google.cloud.pubsub.topic.v1.messagePublished',
    specversion: '1.0',
    data: { message: { data: Buffer.from(JSON.stringify({ run_id: run.id, project_id: run.project_id })).toString('base64') } },
  }
  await stage.deps.runs.markPublished(run.id)
  await onRunRequested(stage.deps, event)
  const withJob = (await stage.deps.runs.getById(run.id))!
  expect(withJob.job).toBeDefined()
  return withJob
}

const runOf = async (id: string) => (await stage.deps.runs.getById(id))!
const stale = () => {
  offsetMs = DEFAULT_STALE_AFTER_MS + 60_000
}

describe('the reconciler', () => {
  it('publishes again a run recorded but never published, once it is a minute old', async () => {
    const run = await stage.submit(shellPipeline('true'))
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)

    offsetMs = 61_000
    const report = await reconcile(stage.deps)
    expect(report.republished).toContain(run.id)
    await requested.waitFor((all) => all.some((m) => JSON.parse(m.data).run_id === run.id))
    const message = requested.received.find((m) => JSON.parse(m.data).run_id === run.id)!
    expect(JSON.parse(message.data)).toEqual({ run_id: run.id, project_id: run.project_id })
    expect(message.attributes.kind).toBe('run.requested')
    const after = await runOf(run.id)
    expect(after.dispatch.published).toBe(true)
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)
  })

  it('publishes again a run whose message was published but never became a job, once it has had no news for the stale window', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.markPublished(run.id)
    offsetMs = 61_000
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)

    stale()
    expect((await reconcile(stage.deps)).republished).toContain(run.id)
    await requested.waitFor((all) => all.some((m) => JSON.parse(m.data).run_id === run.id))
    expect((await runOf(run.id)).dispatch.attempts).toBe(2)
    // Republishing refreshed the record: the next pass leaves it to the message just sent.
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)
  })

  it('settles a run whose job succeeded but whose notifications never came', async () => {
    const run = await dispatch(await stage.submit(shellPipeline('echo done > "${PLATFORM_OUTPUT_DIR}done.txt"')))
    await stage.executor.settled(run.job!.name)
    expect((await runOf(run.id)).status).toBe('queued')
    expect((await reconcile(stage.deps)).settled.map((s) => s.run_id)).not.toContain(run.id)

    stale()
    const report = await reconcile(stage.deps)
    expect(report.settled).toContainEqual({ run_id: run.id, status: 'succeeded' })
    const after = await runOf(run.id)
    expect(after.status).toBe('succeeded')
    expect(after.output).toBe(`gs://${run.bucket_name}/runs/${run.id}/`)
    // The job's own events say when it started, so the run still has a duration.
    expect(after.started).toBeDefined()
    expect(after.finished!.toMillis()).toBeGreaterThanOrEqual(after.started!.toMillis())
    expect(await readFile(join(localPathFor(stage.config, after.output!), 'done.txt'), 'utf8')).toBe('done\n')
  })

  it('settles a failed job with its error message', async () => {
    const run = await dispatch(await stage.submit(shellPipeline('echo "sample sheet has no rows" >&2; exit 2')))
    await stage.executor.settled(run.job!.name)
    stale()
    expect((await reconcile(stage.deps)).settled).toContainEqual({ run_id: run.id, status: 'failed' })
    const after = await runOf(run.id)
    expect(after.status).toBe('failed')
    expect(after.error_message).toContain('exit code 2')
    expect(after.error_message).toContain('sample sheet has no rows')
  })

  it('fails a run whose job disappeared outside the platform', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.markPublished(run.id)
    await stage.deps.runs.recordJob(run.id, { name: jobName(jobParent(stage.config.gcpProject, stage.config.batch.region), jobIdForRun(run.id)) })
    stale()
    const report = await reconcile(stage.deps)
    expect(report.settled).toContainEqual({ run_id: run.id, status: 'failed' })
    expect((await runOf(run.id)).error_message).toMatch(/no longer exists/)
  })

  it('moves a run whose job is running to running, and leaves it running', async () => {
    const run = await dispatch(await stage.submit(shellPipeline('exec sleep 300')))
    await until('the job to run', async () => ((await stage.executor.getJob(run.job!.name))?.state === 'RUNNING' ? true : undefined))
    stale()
    const report = await reconcile(stage.deps)
    expect(report.settled).toContainEqual({ run_id: run.id, status: 'running' })
    expect((await runOf(run.id)).status).toBe('running')
    offsetMs = 0
    expect((await reconcile(stage.deps)).settled.map((s) => s.run_id)).not.toContain(run.id)
    await stage.executor.deleteJob(run.job!.name)
  })

  it('sends a run found unchanged to the back of the sweep, so long jobs never starve the others', async () => {
    const run = await dispatch(await stage.submit(shellPipeline('exec sleep 300')))
    await until('the job to run', async () => ((await stage.executor.getJob(run.job!.name))?.state === 'RUNNING' ? true : undefined))
    stale()
    await reconcile(stage.deps)
    expect((await runOf(run.id)).status).toBe('running')
    // Another window without news: the next pass finds the job unchanged and stamps the run.
    offsetMs += DEFAULT_STALE_AFTER_MS + 60_000
    const report = await reconcile(stage.deps)
    expect(report.settled.map((s) => s.run_id)).not.toContain(run.id)
    const inFlight = await stage.deps.runs.listInFlight(new Date(Date.now() + offsetMs - DEFAULT_STALE_AFTER_MS), 500)
    expect(inFlight.map((r) => r.id)).not.toContain(run.id)
    await stage.executor.deleteJob(run.job!.name)
  })

  it('finishes deleting the job of a cancelled run when the compute service could not', async () => {
    const run = await dispatch(await stage.submit(shellPipeline('echo $$ > "${PLATFORM_OUTPUT_DIR}pid"; exec sleep 300')))
    const pidFile = join(localPathFor(stage.config, `gs://${run.bucket_name}/runs/${run.id}/`), 'pid')
    const pid = Number(await until('the job to start', () => readFile(pidFile, 'utf8').catch(() => undefined)))
    // Cancelled in Firestore, but the job deletion that follows never happened.
    await stage.deps.runs.cancel(SYSTEM_ACTOR, run.project_id, run.id, 'test')
    expect((await runOf(run.id)).job_cleanup_pending).toBe(true)

    const report: ReconcileReport = await reconcile(stage.deps)
    expect(report.jobs_deleted).toContain(run.id)
    expect(await stage.executor.getJob(run.job!.name)).toBeUndefined()
    expect(() => process.kill(pid, 0)).toThrow()
    const after = await runOf(run.id)
    expect(after.status).toBe('cancelled')
    expect(after.cancel?.job_deleted_at).toBeDefined()
    expect((await reconcile(stage.deps)).jobs_deleted).not.toContain(run.id)
  })

  it('answers its HTTP trigger with the report', async () => {
    registerOrchestrator(stage.deps)
    const base = await stage.serve('reconcile')
    const res = await fetch(`${base}/`, { method: 'POST' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as ReconcileReport
    expect(Object.keys(body).sort()).toEqual(['errors', 'ingestions_resumed', 'jobs_deleted', 'republished', 'runs_ingested', 'settled'])
    expect(body.errors).toEqual([])
  })
})
