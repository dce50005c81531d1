import { describe, expect, it } from 'vitest'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import type { BatchJobView } from '../../../../lib/batch/port.js'
import { makeComputeWorld } from './support.js'

/**
 * The two seeded pipelines that run on the host: submitted through the API, turned into the Batch
 * job the orchestrator would build, executed by the local executor as real child processes.
 */
describe('compute: the local-suite pipelines really run', async () => {
  const w = await makeComputeWorld()
  const settings = { gcpProject: w.deps.config.gcpProject, region: 'local', jobStatusTopic: w.deps.config.topics.jobStatus }

  async function runToEnd(slug: string, params: Record<string, unknown>): Promise<{ runId: string; job: BatchJobView }> {
    const res = await w.api('POST', '/runs', { body: { pipeline_id: w.platformId(slug, '1.0.0'), params } })
    expect(res.status).toBe(201)
    const run = (await w.deps.runs.getById(res.body.id))!
    const created = await w.batch.createJob(buildRunJob(settings, run))
    const deadline = Date.now() + 20_000
    for (;;) {
      const job = await w.batch.getJob(created.name)
      if (job && ['SUCCEEDED', 'FAILED'].includes(job.state)) return { runId: run.id, job }
      if (Date.now() > deadline) throw new Error(`job ${created.name} did not finish: ${job?.state}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  it('hello-local succeeds and leaves hello.txt, listed by the outputs endpoint', async () => {
    const { runId, job } = await runToEnd('hello-local', { greeting: 'bonjour' })
    expect(job.state).toBe('SUCCEEDED')
    const text = await w.storage.read(w.project.bucket_name, `runs/${runId}/hello.txt`)
    expect(text?.toString('utf8')).toBe(`bonjour from run ${runId}\n`)
    await w.deps.runs.applyJobState(runId, { status: 'succeeded', at: new Date(), source: 'test' })
    const outputs = await w.api('GET', `/runs/${runId}/outputs`)
    expect(outputs.body.map((o: { name: string }) => o.name)).toEqual(expect.arrayContaining(['hello.txt', 'params.json']))
  })

  it('fail-local fails with its message on stderr in the job events', async () => {
    const { job } = await runToEnd('fail-local', {})
    expect(job.state).toBe('FAILED')
    const failure = job.events.at(-1)!
    expect(failure.description).toMatch(/exit code 3/)
    // The failing runnable's last stderr lines, as Batch's stderrSnippet carries them.
    expect(failure.stderr).toMatch(/fail-local: this pipeline always fails/)
  })
})
