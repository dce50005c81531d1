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
import { LocalIngestionRunner } from '../../../domain/variants/runner.js'
import {
  DEFAULT_DISPATCH_AFTER_MS,
  DEFAULT_STALE_AFTER_MS,
  dispatchWindow,
  INGESTION_STALE_MS,
  reconcile,
  type ReconcileReport,
} from '../../../orchestrator/reconcile.js'
import { onRunRequested } from '../../../orchestrator/run-requested.js'
import { makeTrioOrder } from '../../support/reports.js'
import { rec, vcf } from '../../support/vcf.js'
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
/** `n` results of `make`, a few at a time. */
async function many<T>(n: number, make: () => Promise<T>): Promise<T[]> {
  const out: T[] = []
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (out.length < n) {
        out.push(undefined as T)
        out[out.length - 1] = await make()
      }
    }),
  )
  return out
}
/** A run whose job was recorded but does not exist: a pass settles it as failed, with no process to run. */
async function withVanishedJob() {
  const run = await stage.submit(shellPipeline('true'))
  await stage.deps.runs.markPublished(run.id)
  await stage.deps.runs.recordJob(run.id, { name: jobName(jobParent(stage.config.gcpProject, stage.config.batch.region), jobIdForRun(run.id)) })
  return run
}
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

  it('publishes again a run whose message was published but never became a job, once it has had no news for the dispatch window', async () => {
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

  it('publishes again a published run without a job after the dispatch window of 90 s, not the 10 minutes of the stale window', async () => {
    const run = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.markPublished(run.id)
    offsetMs = DEFAULT_DISPATCH_AFTER_MS - 5_000
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)
    offsetMs = DEFAULT_DISPATCH_AFTER_MS + 1_000
    expect(DEFAULT_DISPATCH_AFTER_MS).toBeLessThan(DEFAULT_STALE_AFTER_MS)
    expect((await reconcile(stage.deps)).republished).toContain(run.id)
    await requested.waitFor((all) => all.some((m) => JSON.parse(m.data).run_id === run.id))
  })

  it('waits twice as long before each further publication of a run, so that a long backlog does not fill with duplicates', async () => {
    const run = await stage.submit(shellPipeline('true'))
    // Published twice already (by POST /runs, then by a pass): the next window is twice the first.
    await stage.deps.runs.markPublished(run.id)
    await stage.deps.runs.markPublished(run.id)
    offsetMs = DEFAULT_DISPATCH_AFTER_MS + 1_000
    expect((await reconcile(stage.deps)).republished).not.toContain(run.id)
    offsetMs = 2 * DEFAULT_DISPATCH_AFTER_MS + 1_000
    expect((await reconcile(stage.deps)).republished).toContain(run.id)
    expect([1, 2, 3, 4, 9].map((n) => dispatchWindow(n) / 1000)).toEqual([90, 180, 360, 600, 600])
  })

  it('treats every run untouched since abandonedBefore as abandoned, whatever the windows say', async () => {
    const published = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.markPublished(published.id)
    const unpublished = await stage.submit(shellPipeline('true'))
    const finished = await dispatch(await stage.submit(shellPipeline('true')))
    await stage.executor.settled(finished.job!.name)
    // A run of the new process, touched after the instant, is left to its own events.
    const restart = new Date(Date.now() + 1)
    await new Promise((r) => setTimeout(r, 5))
    const fresh = await stage.submit(shellPipeline('true'))
    await stage.deps.runs.markPublished(fresh.id)

    expect((await reconcile(stage.deps)).republished).not.toContain(published.id)
    const report = await reconcile(stage.deps, { abandonedBefore: restart })
    expect(report.republished).toEqual(expect.arrayContaining([published.id, unpublished.id]))
    expect(report.republished).not.toContain(fresh.id)
    expect(report.settled).toContainEqual({ run_id: finished.id, status: 'succeeded' })
  })

  it('works through every stale run in one pass, a batch at a time', { timeout: 60_000 }, async () => {
    const toSettle = await many(11, withVanishedJob)
    const toPublish = await many(7, () => stage.submit(shellPipeline('true')))
    stale()
    const report = await reconcile(stage.deps, { batchSize: 3 })
    expect(report.settled.filter((s) => toSettle.some((r) => r.id === s.run_id))).toHaveLength(11)
    expect(report.republished).toEqual(expect.arrayContaining(toPublish.map((r) => r.id)))
    expect(report.remaining).toEqual({ republish: 0, settle: 0, delete_job: 0 })
    expect(report.errors).toEqual([])
    for (const run of toSettle.slice(0, 5)) expect((await runOf(run.id)).status).toBe('failed')
  })

  it('stops taking batches once its time budget is spent, says how many runs remain, and the next pass goes on', { timeout: 60_000 }, async () => {
    const runs = await many(10, () => stage.submit(shellPipeline('true')))
    stale()
    const first = await reconcile(stage.deps, { batchSize: 4, budgetMs: 0 })
    // Every sweep takes one batch whatever the budget, so none is starved by the others.
    expect(first.republished).toHaveLength(4)
    expect(first.remaining.republish).toBe(6)
    const second = await reconcile(stage.deps, { batchSize: 4 })
    expect([...first.republished, ...second.republished]).toEqual(expect.arrayContaining(runs.map((r) => r.id)))
    expect(second.remaining.republish).toBe(0)
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
    const run = await withVanishedJob()
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

  it('leaves alone an ingestion that failed for good (a 1.2 MB ALT), and requests again one whose runner died', async () => {
    const { world, deps } = stage
    await stage.pubsub.topic(stage.config.topics.ingestionRequested).get({ autoCreate: true })
    /** An ingestion of a new trio order of the stage's project from this VCF text. */
    const requested = async (records: (names: string[]) => string[]) => {
      const order = await makeTrioOrder(stage.kernel, world.project)
      const names = (await deps.ingestion.orders.samplesOf(order)).map((v) => v.sample.external_id)
      const path = `vcf/${order.id}.vcf`
      await deps.storage.write(world.project.bucket_name, path, vcf({ samples: names, records: records(names) }))
      const { ingestion } = await deps.ingestions.request(SYSTEM_ACTOR, {
        project: { id: world.project.id, org_id: world.project.org_id },
        order,
        source_uri: `gs://${world.project.bucket_name}/${path}`,
        trigger: 'request',
        requested_by: world.owner.user.id,
      })
      return ingestion
    }
    const call = (alt: string) => rec('chr1', 2000, '.', 'A', alt, 50, 'PASS', '.', 'GT', '0/1', '0/0', '0/0')
    const failed = await requested(() => [call(`A${'T'.repeat(1_200_000)}`)])
    const runner = new LocalIngestionRunner(deps.ingestion)
    await runner.start(failed)
    await runner.settled(failed.id)
    const after = (await deps.ingestions.get(failed.id))!
    expect(after).toMatchObject({ status: 'failed', pending: false, error: { step: 'validate', line: expect.any(Number) } })
    // Its runner never came (a queue restarted): still queued, and pending.
    const abandoned = await requested(() => [call('G')])

    offsetMs = INGESTION_STALE_MS + 60_000
    const report = await reconcile(stage.deps)
    expect(report.ingestions_resumed).toContain(abandoned.id)
    expect(report.ingestions_resumed).not.toContain(failed.id)
    expect(await deps.ingestions.get(failed.id)).toEqual(after)
  })

  it('answers its HTTP trigger with the report', async () => {
    registerOrchestrator(stage.deps)
    const base = await stage.serve('reconcile')
    const res = await fetch(`${base}/`, { method: 'POST' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as ReconcileReport
    expect(Object.keys(body).sort()).toEqual([
      'deliveries_published',
      'errors',
      'ingestions_resumed',
      'jobs_deleted',
      'remaining',
      'republished',
      'runs_ingested',
      'settled',
    ])
    expect(body.errors).toEqual([])
    expect(body.remaining).toEqual({ republish: 0, settle: 0, delete_job: 0 })

    const restarted = await fetch(`${base}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ abandoned_before: new Date().toISOString() }),
    })
    expect(restarted.status).toBe(200)
    const bad = await fetch(`${base}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ abandoned_before: 'yesterday' }),
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/^abandoned_before: /)
  })
})
