import { describe, expect, it } from 'vitest'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import type { BatchJobView } from '../../../../lib/batch/port.js'
import { makeComputeWorld } from './support.js'

/**
 * Resume, proven on the host: steps-local (four steps, each recording whether it ran or was reused)
 * submitted and relaunched through the API, each run's job built as the orchestrator builds it and
 * executed by the local executor as real child processes.
 */
describe('compute: a resumed relaunch reuses the steps its first run completed', async () => {
  const w = await makeComputeWorld()
  const settings = { gcpProject: w.deps.config.gcpProject, region: 'local', jobStatusTopic: w.deps.config.topics.jobStatus }

  /** Runs the run's job to its end and records the outcome on the run, as the orchestrator would. */
  async function execute(runId: string): Promise<BatchJobView> {
    const run = (await w.deps.runs.getById(runId))!
    const created = await w.batch.createJob(buildRunJob(settings, run))
    const deadline = Date.now() + 20_000
    for (;;) {
      const job = await w.batch.getJob(created.name)
      if (job && ['SUCCEEDED', 'FAILED'].includes(job.state)) {
        await w.deps.runs.applyJobState(runId, { status: job.state === 'SUCCEEDED' ? 'succeeded' : 'failed', at: new Date(), source: 'test' })
        return job
      }
      if (Date.now() > deadline) throw new Error(`job ${created.name} did not finish: ${job?.state}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const output = async (runId: string, name: string) => (await w.storage.read(w.project.bucket_name, `runs/${runId}/${name}`))?.toString('utf8')

  async function failedAtStep3() {
    const res = await w.api('POST', '/runs', { body: { pipeline_id: w.platformId('steps-local', '1.0.0'), params: { fail_at: 3 } } })
    expect(res.status).toBe(201)
    const job = await execute(res.body.id)
    expect(job.state).toBe('FAILED')
    expect(job.events.map((e) => [e.description, e.stderr ?? ''].join('\n')).join('\n')).toMatch(/step 3 failed/)
    expect(await output(res.body.id, 'steps.txt')).toBe('1 ran\n2 ran\n')
    return res.body.id as string
  }

  it('runs only step 3 and later when resumed after a failure in step 3, with the params changed', async () => {
    const first = await failedAtStep3()
    const resumed = await w.api('POST', `/runs/${first}/relaunch`, { body: { resume: true, params: { fail_at: null } } })
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(201)
    const job = await execute(resumed.body.id)
    expect(job.state).toBe('SUCCEEDED')
    expect(await output(resumed.body.id, 'steps.txt')).toBe('1 reused\n2 reused\n3 ran\n4 ran\n')
    // Steps 1 and 2 are the first run's work, 3 and 4 the resumed run's.
    expect(await output(resumed.body.id, 'result.txt')).toBe(
      [`step 1 by run ${first}`, `step 2 by run ${first}`, `step 3 by run ${resumed.body.id}`, `step 4 by run ${resumed.body.id}`, ''].join('\n'),
    )
    expect((await w.api('GET', `/runs/${resumed.body.id}`)).body).toMatchObject({ status: 'succeeded', work_session: first })
  })

  it('runs every step again when relaunched without resume', async () => {
    const first = await failedAtStep3()
    const again = await w.api('POST', `/runs/${first}/relaunch`, { body: { params: { fail_at: 0 } } })
    expect(again.status).toBe(201)
    expect((await execute(again.body.id)).state).toBe('SUCCEEDED')
    expect(await output(again.body.id, 'steps.txt')).toBe('1 ran\n2 ran\n3 ran\n4 ran\n')
  })
})
