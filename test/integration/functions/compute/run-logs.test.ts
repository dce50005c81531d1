import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeDeps } from '../../../../functions/compute/deps.js'
import { followRunLog } from '../../../../functions/compute/logs.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { buildRunJob } from '../../../../domain/runs/batch-job.js'
import { settleFromJob } from '../../../../domain/runs/lifecycle.js'
import { fromBatchState } from '../../../../domain/runs/status.js'
import type { RunRecord } from '../../../../domain/runs/store.js'
import { jobSettings } from '../../../../orchestrator/run-requested.js'
import { apiFor } from '../../../support/world.js'
import { makeStage, shellPipeline, type Stage } from '../../orchestrator/stage.js'

let stage: Stage
let api: ReturnType<typeof apiFor>
let app: ReturnType<typeof createComputeApp>
let deps: ReturnType<typeof computeDeps>

beforeAll(async () => {
  stage = await makeStage()
  deps = computeDeps(stage.world.deps, { queue: stage.queue, batch: stage.executor })
  app = createComputeApp(deps)
  api = apiFor(app, stage.world)
})

afterAll(async () => {
  await stage?.close()
})

interface Line {
  time: string
  task: string
  stream: 'stdout' | 'stderr'
  text: string
}

/** A run whose job the local executor runs now, recorded on the run as the orchestrator records it. */
async function startRun(script: string) {
  const run = await stage.submit(shellPipeline(script))
  const created = await stage.executor.createJob(buildRunJob(jobSettings(stage.deps), run))
  await stage.deps.runs.applyJobState(run.id, { status: 'running', at: new Date(), source: 'test', job: { name: created.name, uid: created.uid } })
  return { run, job: created }
}

/** Settles the run from its job once the job has ended, as the job-state handler does. */
async function finish(run: RunRecord, jobName: string) {
  await stage.executor.settled(jobName)
  const job = (await stage.executor.getJob(jobName))!
  const current = (await stage.deps.runs.getById(run.id))!
  await settleFromJob(stage.deps, current, fromBatchState(job.state)!, new Date(), job, 'test')
  return (await stage.deps.runs.getById(run.id))!
}

/** Follows the log by long polls, as the CLI does, until a page comes without a next token. */
async function follow(runId: string, query = '') {
  const lines: Line[] = []
  let token: string | undefined
  for (let i = 0; i < 200; i++) {
    const res = await api('GET', `/runs/${runId}/logs?wait=5${query}${token ? `&page_token=${token}` : ''}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    lines.push(...(res.body as Line[]))
    token = res.headers.get('x-next-page-token') ?? undefined
    if (!token) return lines
  }
  throw new Error('the log never ended')
}

describe('GET /runs/{id}/logs', () => {
  it("gives a run's lines with time, task and stream, pages them, and ends once the run has ended and all are read", async () => {
    const { run, job } = await startRun('for i in 1 2 3 4 5; do echo "out $i"; done; echo "warning: low coverage" >&2; sleep 0.2; echo done')
    const followed = follow(run.id, '&page_size=2')
    const ended = await finish(run, job.name)
    expect(ended.status).toBe('succeeded')
    const lines = await followed
    expect(lines.map((l) => l.text)).toEqual(['out 1', 'out 2', 'out 3', 'out 4', 'out 5', 'warning: low coverage', 'done'])
    expect(lines.find((l) => l.text.startsWith('warning'))).toMatchObject({ stream: 'stderr', task: `${job.uid}-group0-0` })
    expect(lines.every((l) => !Number.isNaN(Date.parse(l.time)))).toBe(true)

    // Filtered by stream, and by time: a window after the last line holds nothing.
    expect((await follow(run.id, '&stream=stderr')).map((l) => l.text)).toEqual(['warning: low coverage'])
    const after = new Date(Date.parse(lines.at(-1)!.time) + 1).toISOString()
    expect(await follow(run.id, `&since=${encodeURIComponent(after)}`)).toEqual([])
    const until = encodeURIComponent(lines[1]!.time)
    expect((await follow(run.id, `&until=${until}`)).length).toBeLessThan(lines.length)
  })

  it('streams the lines as server-sent events while the run goes on, then an end event with its status', async () => {
    const { run, job } = await startRun('echo first; sleep 0.5; echo "no such reference: hg19" >&2; exit 2')
    const streamed = app.request(`/api/v1/runs/${run.id}/logs`, {
      headers: { authorization: `Bearer ${stage.world.owner.token}`, 'x-project-id': stage.world.project.id, accept: 'text/event-stream' },
    })
    const ended = await finish(run, job.name)
    expect(ended.status).toBe('failed')
    // The failed run's error message ends with the failing task's last stderr lines.
    expect(ended.error_message).toMatch(/exit code 2[\s\S]*\nLast lines of stderr:\nno such reference: hg19$/)

    const res = await streamed
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])))
    const texts = events.filter((e) => e.event === 'lines').flatMap((e) => (JSON.parse(e.data!) as Line[]).map((l) => l.text))
    expect(texts).toEqual(['first', 'no such reference: hg19'])
    expect(events.at(-1)).toMatchObject({ event: 'end', data: '{"status":"failed"}' })

    // Resuming from an event's id (Last-Event-ID) gives only what came after it.
    const firstId = events.find((e) => e.event === 'lines')!.id!
    const resumed = await app.request(`/api/v1/runs/${run.id}/logs`, {
      headers: {
        authorization: `Bearer ${stage.world.owner.token}`,
        'x-project-id': stage.world.project.id,
        accept: 'text/event-stream',
        'last-event-id': firstId,
      },
    })
    const rest = await resumed.text()
    expect(rest).not.toContain('"first"')
    expect(rest).toContain('event: end')
  })

  it("ends a Cloud Batch run's error message with its task's last stderr lines read from the log, the event carrying none", async () => {
    const run = await stage.submit(shellPipeline('true'))
    const job = { name: `projects/p/locations/r/jobs/run-${run.id}`, uid: `run-${run.id}-uid` }
    await stage.deps.runs.applyJobState(run.id, { status: 'running', at: new Date(), source: 'test', job })
    const asked: Array<{ count: number; stream?: string }> = []
    const cloudLike = {
      lagMs: 60_000,
      read: async () => ({ lines: [], atEnd: true }),
      tail: async (_job: unknown, count: number, stream?: 'stdout' | 'stderr') => {
        asked.push({ count, stream })
        return [{ time: new Date(), task: `${job.uid}-group0-0`, stream: 'stderr' as const, text: 'samtools: truncated BAM' }]
      },
    }
    const view = {
      ...job,
      state: 'FAILED' as const,
      labels: {},
      events: [{ description: 'Task state is updated from RUNNING to FAILED on zones/europe-west1-b with exit code 1.', newState: 'FAILED' }],
    }
    const current = (await stage.deps.runs.getById(run.id))!
    await settleFromJob({ ...stage.deps, logs: cloudLike }, current, 'failed', new Date(), view, 'test')
    const failed = (await stage.deps.runs.getById(run.id))!
    expect(failed.error_message).toBe(
      'the Batch job failed: Task state is updated from RUNNING to FAILED on zones/europe-west1-b with exit code 1.\nLast lines of stderr:\nsamtools: truncated BAM',
    )
    expect(asked).toEqual([{ count: 20, stream: 'stderr' }])
  })

  it('gives a follower of a silent run an empty page with its token at every idle interval, for a stream to show it is alive', async () => {
    const { run, job } = await startRun('echo first; sleep 1.5; echo last')
    const current = (await stage.deps.runs.getById(run.id))!
    const pages: Array<{ texts: string[]; token?: string; at: number }> = []
    const begun = performance.now()
    for await (const page of followRunLog(deps, current, {}, { idleMs: 400, deadline: begun + 20_000 })) {
      pages.push({ texts: page.lines.map((l) => l.text), token: page.nextPageToken, at: performance.now() - begun })
      if (page.lines.some((l) => l.text === 'last')) break
    }
    const idle = pages.filter((p) => p.texts.length === 0)
    expect(pages.flatMap((p) => p.texts)).toEqual(['first', 'last'])
    expect(idle.length).toBeGreaterThanOrEqual(2)
    expect(idle.every((p) => p.token)).toBe(true)
    await finish(run, job.name)
  })

  it('ends a stream whose log becomes unreadable with an error event in the error shape', async () => {
    const { run, job } = await startRun('sleep 0.3; echo late')
    let reads = 0
    const flaky = createComputeApp(
      computeDeps(stage.world.deps, {
        queue: stage.queue,
        batch: stage.executor,
        logs: {
          lagMs: 0,
          read: async () => {
            if (reads++ > 0) throw new Error('Cloud Logging unavailable')
            return { lines: [], cursor: undefined, atEnd: true }
          },
          tail: async () => [],
        },
      }),
    )
    const res = await flaky.request(`/api/v1/runs/${run.id}/logs`, {
      headers: { authorization: `Bearer ${stage.world.owner.token}`, 'x-project-id': stage.world.project.id, accept: 'text/event-stream' },
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('event: error\ndata: {"detail":"the log could not be read; reconnect to go on"}\n\n')
    await finish(run, job.name)
  })

  it('answers a run without a job yet with no lines and a token, and a long poll waits that long for one', async () => {
    const run = await stage.submit(shellPipeline('true'))
    const started = performance.now()
    const res = await api('GET', `/runs/${run.id}/logs?wait=1`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([])
    expect(res.headers.get('x-next-page-token')).toBeTruthy()
    expect(performance.now() - started).toBeGreaterThanOrEqual(900)
  })

  it.each([
    ['a token it did not make', 'page_token=bm9wZQ', 400, /query\.page_token/],
    ['an unknown stream', 'stream=stdin', 400, /stream/],
    ['a time that is not RFC 3339', 'since=yesterday', 400, /since/],
    ['a wait over a minute', 'wait=61', 400, /wait/],
  ])('refuses %s with a 400 naming the field', async (_what, query, status, detail) => {
    const { run, job } = await startRun('echo hi')
    await finish(run, job.name)
    const res = await api('GET', `/runs/${run.id}/logs?${query}`)
    expect(res.status).toBe(status)
    expect(res.body.detail).toMatch(detail)
  })

  it("refuses another run's token, and is a 404 for a run the project does not have", async () => {
    const a = await startRun('echo a')
    const b = await startRun('echo b')
    await Promise.all([finish(a.run, a.job.name), finish(b.run, b.job.name)])
    const first = await api('GET', `/runs/${a.run.id}/logs?page_size=1`)
    const token = first.headers.get('x-next-page-token')!
    const other = await api('GET', `/runs/${b.run.id}/logs?page_token=${token}`)
    expect(other.status).toBe(400)
    expect(other.body.detail).toMatch(/another run/)
    expect((await api('GET', '/runs/00000000-0000-4000-8000-000000000000/logs')).status).toBe(404)
  })
})
