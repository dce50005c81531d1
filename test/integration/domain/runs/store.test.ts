import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import { PLATFORM_SCOPE } from '../../../../domain/pipelines/model.js'
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../../../domain/runs/status.js'
import { RunStore } from '../../../../domain/runs/store.js'
import { makeComputeWorld } from '../../functions/compute/support.js'

/** The RunStore methods the orchestrator relies on, against the Firestore emulator. */
describe('RunStore: the orchestrator side', async () => {
  const w = await makeComputeWorld()
  const store: RunStore = w.deps.runs
  const pipeline = (await w.deps.pipelines.versions(w.project.id, 'hello-local'))[0]!
  expect(pipeline.scope).toBe(PLATFORM_SCOPE)

  const newRun = async () =>
    (
      await store.submit(SYSTEM_ACTOR, {
        project: {
          id: w.project.id,
          org_id: w.project.org_id,
          bucket_name: w.project.bucket_name,
          service_account_email: 'runner@example.iam.gserviceaccount.com',
        },
        pipeline,
        params: {},
        tags: [],
        created_by: w.owner.user.id,
      })
    ).run
  const actions = async (runId: string) =>
    (await w.deps.db.col('audit_events').where('entity.id', '==', runId).get()).docs.map((d) => d.get('action') as string).sort()

  it('records the job of a run once; a second recordJob changes nothing', async () => {
    const run = await newRun()
    const first = await store.recordJob(run.id, { name: 'projects/p/locations/r/jobs/run-a', uid: 'uid-1' })
    expect(first?.job).toMatchObject({ name: 'projects/p/locations/r/jobs/run-a', uid: 'uid-1' })
    const second = await store.recordJob(run.id, { name: 'projects/p/locations/r/jobs/run-b' })
    expect(second?.job?.name).toBe('projects/p/locations/r/jobs/run-a')
    expect((await store.getById(run.id))?.has_job).toBe(true)
    expect(await actions(run.id)).toEqual(['run.job_created', 'run.submitted'])
    expect(await store.recordJob('00000000-0000-4000-8000-000000000000', { name: 'x' })).toBeUndefined()
  })

  it('marks a job made for a run cancelled meanwhile for deletion, until markJobDeleted', async () => {
    const run = await newRun()
    await store.cancel(SYSTEM_ACTOR, w.project.id, run.id, 'tester')
    await store.recordJob(run.id, { name: `projects/p/locations/r/jobs/run-${run.id}` })
    expect((await store.listCancelledWithLiveJob(1000)).map((r) => r.id)).toContain(run.id)
    await store.markJobDeleted(run.id)
    expect((await store.listCancelledWithLiveJob(1000)).map((r) => r.id)).not.toContain(run.id)
    expect((await store.getById(run.id))?.cancel?.job_deleted_at).toBeDefined()
  })

  it('applies running, then succeeded with started, finished and the default output location', async () => {
    const run = await newRun()
    const started = new Date('2026-01-01T10:00:00Z')
    const finished = new Date('2026-01-01T10:05:00Z')
    expect((await store.applyJobState(run.id, { status: 'running', at: started, source: 'batch' })).changed).toBe(true)
    const done = await store.applyJobState(run.id, { status: 'succeeded', at: finished, source: 'batch' })
    expect(done.changed).toBe(true)
    const stored = await store.getById(run.id)
    expect(stored).toMatchObject({ status: 'succeeded', output: `gs://${w.project.bucket_name}/runs/${run.id}/` })
    expect(stored?.started?.toDate()).toEqual(started)
    expect(stored?.finished?.toDate()).toEqual(finished)
    // A duplicate of the final event is a no-op.
    expect((await store.applyJobState(run.id, { status: 'succeeded', at: new Date(), source: 'batch' })).changed).toBe(false)
    expect(await actions(run.id)).toEqual(['run.running', 'run.submitted', 'run.succeeded'])
    const event = (await w.deps.db.col('audit_events').where('entity.id', '==', run.id).where('action', '==', 'run.succeeded').get()).docs[0]
    expect(event?.get('actor')).toMatchObject({ type: 'system', id: 'batch' })
  })

  it("records a failed run's failure beside its message: the pipeline's exit code, or the system's fault", async () => {
    const [executor, system] = [await newRun(), await newRun()]
    const message = 'the Batch job failed: Task state is updated from RUNNING to FAILED on the local executor with exit code 3 in runnable 1 (x).'
    await store.applyJobState(executor.id, { status: 'failed', at: new Date(), error_message: message, source: 'batch' })
    await store.applyJobState(system.id, { status: 'failed', at: new Date(), error_message: 'Batch rejected the job: quota', source: 'orchestrator' })
    expect((await store.getById(executor.id))?.failure).toEqual({ kind: 'executor', exit_code: 3 })
    expect((await store.getById(system.id))?.failure).toEqual({ kind: 'system' })
  })

  it('counts the runs of a project by status, cancellation in progress and kind of failure, and never another project’s', async () => {
    const before = await store.count(w.project.id, { status: 'failed', 'failure.kind': 'system' })
    const run = await newRun()
    await store.applyJobState(run.id, { status: 'failed', at: new Date(), error_message: 'Batch rejected the job: quota', source: 'orchestrator' })
    expect(await store.count(w.project.id, { status: 'failed', 'failure.kind': 'system' })).toBe(before + 1)
    const cancelled = await newRun()
    await store.recordJob(cancelled.id, { name: `projects/p/locations/r/jobs/run-${cancelled.id}` })
    const pendingBefore = await store.count(w.project.id, { status: 'cancelled', job_cleanup_pending: true })
    await store.cancel(SYSTEM_ACTOR, w.project.id, cancelled.id, 'tester')
    expect(await store.count(w.project.id, { status: 'cancelled', job_cleanup_pending: true })).toBe(pendingBefore + 1)
    expect(await store.count(randomUUID(), { status: 'failed' })).toBe(0)
  })

  it('ends in the first terminal status reported, whatever order and repetition the events come in', async () => {
    const events = fc.array(fc.constantFrom<RunStatus>(...RUN_STATUSES), { minLength: 1, maxLength: 6 })
    await fc.assert(
      fc.asyncProperty(events, async (sequence) => {
        const run = await newRun()
        for (const status of sequence)
          await store.applyJobState(run.id, { status, at: new Date(), error_message: status === 'failed' ? 'boom' : undefined, source: 'prop' })
        const firstTerminal = sequence.find((s) => TERMINAL.has(s))
        const expected = firstTerminal ?? (sequence.includes('running') ? 'running' : 'queued')
        const stored = await store.getById(run.id)
        expect(stored?.status).toBe(expected)
        if (expected === 'failed') expect(stored?.error_message).toBe('boom')
        if (expected !== 'succeeded') expect(stored?.output).toBeUndefined()
      }),
      { numRuns: 15 },
    )
  })

  it('keeps a run queued with its reason on a dispatch problem, and counts the attempts', async () => {
    const run = await newRun()
    await store.markDispatchProblem(run.id, 'Batch quota exhausted in europe-west4; retrying')
    await store.markDispatchProblem(run.id, 'Batch quota exhausted in europe-west4; retrying')
    const stored = await store.getById(run.id)
    expect(stored).toMatchObject({
      status: 'queued',
      status_reason: 'Batch quota exhausted in europe-west4; retrying',
      dispatch: { attempts: 2, last_error: expect.any(String) },
    })
    await store.applyJobState(run.id, { status: 'running', at: new Date(), source: 'batch' })
    expect((await store.getById(run.id))?.status_reason).toBeUndefined()
    // Once the run has moved on, a late dispatch problem does not touch it.
    await store.markDispatchProblem(run.id, 'late')
    expect((await store.getById(run.id))?.status_reason).toBeUndefined()
  })

  it('lists unpublished runs until they are marked published', async () => {
    const run = await newRun()
    const later = new Date(Date.now() + 60_000)
    expect((await store.listUnpublished(later, 1000)).map((r) => r.id)).toContain(run.id)
    expect((await store.listUnpublished(new Date(Date.now() - 60_000), 1000)).map((r) => r.id)).not.toContain(run.id)
    await store.markPublished(run.id)
    expect((await store.listUnpublished(later, 1000)).map((r) => r.id)).not.toContain(run.id)
    expect((await store.getById(run.id))?.dispatch).toMatchObject({ published: true, attempts: 1 })
  })

  it('lists queued or running runs with a job, not updated since a given time, and not finished ones', async () => {
    const withJob = await newRun()
    await store.recordJob(withJob.id, { name: 'projects/p/locations/r/jobs/run-x' })
    const withoutJob = await newRun()
    const finished = await newRun()
    await store.recordJob(finished.id, { name: 'projects/p/locations/r/jobs/run-y' })
    await store.applyJobState(finished.id, { status: 'failed', at: new Date(), source: 'batch' })
    const ids = (await store.listInFlight(new Date(Date.now() + 60_000), 1000)).map((r) => r.id)
    expect(ids).toContain(withJob.id)
    expect(ids).not.toContain(withoutJob.id)
    expect(ids).not.toContain(finished.id)
    expect((await store.listInFlight(new Date(Date.now() - 60_000), 1000)).map((r) => r.id)).not.toContain(withJob.id)
  })
})
