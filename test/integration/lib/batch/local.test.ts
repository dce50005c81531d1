import { spawn, spawnSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PubSub } from '@google-cloud/pubsub'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBatchBackend, createLogReader, hostEnvironment } from '../../../../lib/batch/index.js'
import { buildRunJob, type JobSettings } from '../../../../domain/runs/batch-job.js'
import { LocalBatchExecutor } from '../../../../lib/batch/local.js'
import { NOTIFICATION_ATTRIBUTES, readNotification } from '../../../../lib/batch/notifications.js'
import { systemClock } from '../../../../lib/clock.js'
import type { Config } from '../../../../lib/config.js'
import { createLogger } from '../../../../lib/log.js'
import type { PipelineExecution } from '../../../../domain/pipelines/model.js'
import { localPathFor } from '../../../../lib/storage.js'
import { runFor } from '../../../unit/lib/batch/fixtures.js'
import { listen, localConfig, pubsubFor, until } from '../../orchestrator/support.js'

const log = createLogger('silent')
let config: Config
let pubsub: PubSub
let executor: LocalBatchExecutor
let settings: JobSettings
let events: Awaited<ReturnType<typeof listen>>

const shell = (script: string): PipelineExecution => ({
  type: 'container_entrypoint',
  container: 'alpine:3.20',
  entrypoint: '/bin/sh',
  commands: ['-c', script],
  resources: { cpu_milli: 1000, memory_mib: 512 },
})

const isGone = (pid: number) => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

beforeAll(async () => {
  config = await localConfig()
  pubsub = pubsubFor(config)
  executor = createBatchBackend(config, { log, clock: systemClock, pubsub }) as LocalBatchExecutor
  settings = { gcpProject: config.gcpProject, region: config.batch.region, jobStatusTopic: config.topics.jobStatus }
  events = await listen(pubsub, config.topics.jobStatus)
})

afterAll(async () => {
  await executor?.shutdown()
  await events?.close()
  await pubsub?.close()
})

/** The notifications of one job, its task's included: those carry no JobName, their job is the prefix of the task's name. */
const forJob = (name: string) =>
  events.received.filter((m) => {
    const read = readNotification(m.attributes)
    return read.ok && read.notification.jobName === name
  })

describe('the local Batch executor', () => {
  it('runs a job to success, writes its outputs under the local bucket and publishes the Batch notifications', async () => {
    const run = runFor(shell('echo "hello $PARAM_SAMPLE_ID" > "${PLATFORM_OUTPUT_DIR}result.txt"; echo "wrote result"'))
    const created = await executor.createJob(buildRunJob(settings, run))
    expect(created.alreadyExisted).toBe(false)
    await executor.settled(created.name)

    const outputDir = localPathFor(config, `gs://${run.bucket_name}/runs/${run.id}/`)
    expect(await readFile(join(outputDir, 'result.txt'), 'utf8')).toBe('hello S1\n')
    expect(JSON.parse(await readFile(join(outputDir, 'params.json'), 'utf8'))).toEqual(run.params)
    expect(await readFile(join(config.batch.localWorkRoot!, `run-${run.id}`, 'stdout.log'), 'utf8')).toContain('wrote result')

    const job = await executor.getJob(created.name)
    expect(job).toMatchObject({ name: created.name, uid: created.uid, state: 'SUCCEEDED', labels: { 'run-id': run.id } })
    expect(job!.events.map((e) => e.newState)).toEqual(['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED'])

    // Pub/Sub does not keep order: RUNNING may arrive after SUCCEEDED, so wait for both.
    const stateChanges = () => forJob(created.name).filter((m) => m.attributes.Type === 'JOB_STATE_CHANGED')
    await events.waitFor(() => stateChanges().length >= 2)
    const states = stateChanges()
    // The job asks for the states that move a run only.
    expect(states.map((m) => m.attributes.NewJobState).sort()).toEqual(['RUNNING', 'SUCCEEDED'])
    for (const m of states) {
      expect(Object.keys(m.attributes).sort()).toEqual([...NOTIFICATION_ATTRIBUTES.JOB_STATE_CHANGED].sort())
      expect(m.attributes).toEqual({
        Type: 'JOB_STATE_CHANGED',
        JobName: created.name,
        JobUID: created.uid,
        NewJobState: m.attributes.NewJobState,
        Region: config.batch.region,
      })
      expect(m.data).toMatch(/^Job state was updated from [A-Z_]+ to [A-Z_]+\.$/)
    }
    // The job asks for task notifications only on failure.
    expect(forJob(created.name).filter((m) => m.attributes.Type === 'TASK_STATE_CHANGED')).toEqual([])
  })

  it("fails a job that exits non-zero, with the exit code and the failing runnable's last stderr lines in its events and a task notification", async () => {
    const run = runFor(shell('echo "aligning"; echo "reference genome not found: /ref/hg38.fa" >&2; exit 3'))
    const created = await executor.createJob(buildRunJob(settings, run))
    await executor.settled(created.name)

    const job = await executor.getJob(created.name)
    expect(job!.state).toBe('FAILED')
    const failure = job!.events.at(-1)!
    expect(failure.newState).toBe('FAILED')
    expect(failure.description).toContain('exit code 3')
    expect(failure.stderr).toBe('reference genome not found: /ref/hg38.fa')

    await events.waitFor(
      () =>
        forJob(created.name).some((m) => m.attributes.NewTaskState === 'FAILED') &&
        forJob(created.name).some((m) => m.attributes.NewJobState === 'FAILED'),
    )
    const task = forJob(created.name).find((m) => m.attributes.Type === 'TASK_STATE_CHANGED')!
    // Exactly what Cloud Batch sends for a task: its name and UID, and nothing naming the job.
    expect(Object.keys(task.attributes).sort()).toEqual([...NOTIFICATION_ATTRIBUTES.TASK_STATE_CHANGED].sort())
    expect(task.attributes).toEqual({
      Type: 'TASK_STATE_CHANGED',
      TaskName: `${created.name}/taskGroups/group0/tasks/0`,
      TaskUID: `${created.uid}-group0-0`,
      NewTaskState: 'FAILED',
      Region: config.batch.region,
    })
  })

  it('captures each line a task writes, with its time, task and stream, in the order it arrived, for the log reader', async () => {
    // Two pipes race: lines of different streams are in order when written apart in time.
    const run = runFor(
      shell('echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; sleep 0.1; echo four >&2; sleep 0.1; printf "no newline at the end"'),
    )
    const created = await executor.createJob(buildRunJob(settings, run))
    await executor.settled(created.name)
    const reader = createLogReader(config)
    const job = { name: created.name, uid: created.uid, created: new Date(0) }
    const { lines, atEnd } = await reader.read({ job, limit: 100 })
    expect(lines.map((l) => [l.stream, l.text])).toEqual([
      ['stdout', 'one'],
      ['stderr', 'two'],
      ['stdout', 'three'],
      ['stderr', 'four'],
      ['stdout', 'no newline at the end'],
    ])
    expect(new Set(lines.map((l) => l.task))).toEqual(new Set([`${created.uid}-group0-0`]))
    expect(lines.every((l, i) => i === 0 || l.time >= lines[i - 1]!.time)).toBe(true)
    expect(atEnd).toBe(true)
    expect((await reader.tail(job, 1, 'stderr')).map((l) => l.text)).toEqual(['four'])
  })

  it('creates a job once for a repeated request, and runs it once', async () => {
    const run = runFor(shell('echo once >> "${PLATFORM_OUTPUT_DIR}count.txt"'))
    const request = buildRunJob(settings, run)
    const [a, b] = await Promise.all([executor.createJob(request), executor.createJob(request)])
    const c = await executor.createJob(request)
    expect([a, b].filter((r) => !r.alreadyExisted)).toHaveLength(1)
    expect(c).toEqual({ name: a.name, uid: a.uid, alreadyExisted: true })
    expect(b.uid).toBe(a.uid)
    await executor.settled(a.name)
    expect(await readFile(localPathFor(config, `gs://${run.bucket_name}/runs/${run.id}/count.txt`), 'utf8')).toBe('once\n')
  })

  it('kills the whole process group when a job is deleted, leaving no child behind', async () => {
    const run = runFor(
      shell(
        'sleep 300 & echo $! >> "${PLATFORM_OUTPUT_DIR}pids"; sleep 300 & echo $! >> "${PLATFORM_OUTPUT_DIR}pids"; echo $$ >> "${PLATFORM_OUTPUT_DIR}pids"; wait',
      ),
    )
    const created = await executor.createJob(buildRunJob(settings, run))
    const pidsFile = localPathFor(config, `gs://${run.bucket_name}/runs/${run.id}/pids`)
    const pids = await until('the job to start its children', async () => {
      const list = existsSync(pidsFile) ? (await readFile(pidsFile, 'utf8')).trim().split('\n').map(Number) : []
      return list.length === 3 ? list : undefined
    })
    expect(pids.every((p) => !isGone(p))).toBe(true)

    await executor.deleteJob(created.name)

    await until('every process of the job to be gone', () => pids.every(isGone) || undefined, 5_000)
    expect(await executor.getJob(created.name)).toBeUndefined()
    // The deletion is no failure: no FAILED notification goes out (the job asks for none on deletion either).
    await events.waitFor(() => forJob(created.name).some((m) => m.attributes.NewJobState === 'RUNNING'))
    expect(forJob(created.name).map((m) => m.attributes.NewJobState)).not.toContain('FAILED')
    // Deleting again, or a job that never existed, is done already.
    await executor.deleteJob(created.name)
    await executor.deleteJob(`${buildRunJob(settings, runFor(shell('true'))).parent}/jobs/run-never-made`)
  })

  it('reports a job whose executor died as FAILED with "executor restarted"', async () => {
    // A job left RUNNING by an executor process that no longer exists.
    const dead = spawnSync('/bin/sh', ['-c', 'echo $$']).stdout.toString().trim()
    const run = runFor(shell('true'))
    const request = buildRunJob(settings, run)
    const name = `${request.parent}/jobs/${request.jobId}`
    const dir = join(config.batch.localWorkRoot!, request.jobId)
    await mkdir(dir, { recursive: true })
    await writeFile(
      join(dir, 'job.json'),
      JSON.stringify({
        name,
        uid: `${request.jobId}-old`,
        state: 'RUNNING',
        labels: request.job.labels,
        events: [],
        owner: Number(dead),
        job: { ...request.job, name },
      }),
    )

    const job = await executor.getJob(name)
    expect(job!.state).toBe('FAILED')
    expect(job!.events.at(-1)!.description).toContain('executor restarted')
    await events.waitFor(() => forJob(name).some((m) => m.attributes.NewJobState === 'FAILED'))
    expect((await executor.createJob(request)).alreadyExisted).toBe(true)
  })

  describe('taking over the jobs of an executor that died', () => {
    const startOf = (pid: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    }
    /** A process in its own group, as a job's runnable is, left behind by its executor. */
    const leftover = () => {
      const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' })
      child.unref()
      return child.pid!
    }
    /** job.json as an executor that is gone left it. */
    async function leftBehind(script: string, state: string, over: Record<string, unknown> = {}) {
      const run = runFor(shell(script))
      const request = buildRunJob(settings, run)
      const name = `${request.parent}/jobs/${request.jobId}`
      const dir = join(config.batch.localWorkRoot!, request.jobId)
      await mkdir(dir, { recursive: true })
      const dead = Number(spawnSync('/bin/sh', ['-c', 'echo $$']).stdout.toString().trim())
      const file = {
        name,
        uid: `${request.jobId}-old`,
        state,
        labels: request.job.labels,
        events: [],
        owner: dead,
        job: { ...request.job, name },
        ...over,
      }
      await writeFile(join(dir, 'job.json'), JSON.stringify(file))
      return { run, request, name, dir }
    }
    const readJob = async (dir: string) =>
      JSON.parse(await readFile(join(dir, 'job.json'), 'utf8')) as { state: string; owner: number; events: Array<{ newState?: string }> }

    it('fails a job that was running, kills what is left of it, and starts a job that had not started, each once', async () => {
      const pid = leftover()
      const running = await leftBehind('echo ran >> "${PLATFORM_OUTPUT_DIR}count.txt"', 'RUNNING', { pid, pid_started: startOf(pid) })
      const scheduled = await leftBehind('echo ran >> "${PLATFORM_OUTPUT_DIR}count.txt"', 'SCHEDULED')
      const queued = await leftBehind('echo ran >> "${PLATFORM_OUTPUT_DIR}count.txt"', 'QUEUED')

      const report = await executor.recover()
      expect(report.failed).toContain(running.name)
      expect(report.resumed).toEqual(expect.arrayContaining([scheduled.name, queued.name]))
      expect(report.failed).not.toContain(scheduled.name)
      await until('the leftover process to be killed', () => isGone(pid))

      const failed = await executor.getJob(running.name)
      expect(failed!.state).toBe('FAILED')
      expect(failed!.events.at(-1)!.description).toContain('executor restarted while the job was running')
      await events.waitFor(() => forJob(running.name).some((m) => m.attributes.NewJobState === 'FAILED'))

      for (const job of [scheduled, queued]) {
        await executor.settled(job.name)
        expect((await executor.getJob(job.name))!.state).toBe('SUCCEEDED')
        expect((await readJob(job.dir)).owner).toBe(process.pid)
        await events.waitFor(() => forJob(job.name).some((m) => m.attributes.NewJobState === 'SUCCEEDED'))
        expect(await readFile(localPathFor(config, `gs://${job.run.bucket_name}/runs/${job.run.id}/count.txt`), 'utf8')).toBe('ran\n')
      }
      // The job that had been running is never started again.
      expect(existsSync(localPathFor(config, `gs://${running.run.bucket_name}/runs/${running.run.id}/count.txt`))).toBe(false)

      // A second recovery, or a repeated request for the same job, changes nothing.
      const again = await executor.recover()
      expect([...again.failed, ...again.resumed]).not.toEqual(expect.arrayContaining([running.name]))
      expect([...again.failed, ...again.resumed]).not.toContain(scheduled.name)
      for (const job of [running, scheduled, queued]) expect((await executor.createJob(job.request)).alreadyExisted).toBe(true)
      expect((await readJob(scheduled.dir)).events.filter((e) => e.newState === 'RUNNING')).toHaveLength(1)
    })

    it('tells a pid given to another process since from the one it recorded', async () => {
      // The owner's pid now belongs to a live process that started at another time: the owner is gone.
      const reused = leftover()
      const ownerReused = await leftBehind('true', 'RUNNING', { owner: reused, owner_started: '1' })
      // The job's process group id now belongs to another live process: it must not be killed.
      const stranger = leftover()
      const pidReused = await leftBehind('true', 'RUNNING', { pid: stranger, pid_started: '1' })

      const report = await executor.recover()
      expect(report.failed).toEqual(expect.arrayContaining([ownerReused.name, pidReused.name]))
      expect(isGone(stranger)).toBe(false)
      expect(isGone(reused)).toBe(false)
      for (const pid of [reused, stranger]) process.kill(-pid, 'SIGKILL')
    })
  })

  it('fails a job that runs past its maximum run duration, killing it', async () => {
    const run = runFor({
      ...shell('echo $$ > "${PLATFORM_OUTPUT_DIR}pid"; exec sleep 60'),
      resources: { cpu_milli: 250, memory_mib: 128, max_run_duration_seconds: 1 },
    })
    const created = await executor.createJob(buildRunJob(settings, run))
    await executor.settled(created.name)
    const job = await executor.getJob(created.name)
    expect(job!.state).toBe('FAILED')
    expect(job!.events.at(-1)!.description).toContain('exit code 50005')
    expect(job!.events.at(-1)!.description).toContain('exceeded its maximum run duration of 1 s')
    const pid = Number(await readFile(localPathFor(config, `gs://${run.bucket_name}/runs/${run.id}/pid`), 'utf8'))
    expect(isGone(pid)).toBe(true)
  })

  it('fails an engine job clearly when the engine is not installed on the host', async () => {
    const run = runFor({
      type: 'direct_nextflow',
      container: 'nextflow/nextflow:24.10.0',
      workflow: { url: 'nf-core/demo' },
      resources: { cpu_milli: 1000, memory_mib: 512 },
    })
    const noEngine = new LocalBatchExecutor(
      {
        workRoot: config.batch.localWorkRoot!,
        bucketDir: (b) => localPathFor(config, `gs://${b}/`),
        region: config.batch.region,
        hostEnv: { PATH: '/usr/bin:/bin' },
      },
      { pubsub, log, clock: systemClock },
    )
    const created = await noEngine.createJob(buildRunJob(settings, run))
    await noEngine.settled(created.name)
    const failure = (await noEngine.getJob(created.name))!.events.at(-1)!
    expect(failure.description).toContain('exit code 127')
    expect(failure.stderr).toContain('nextflow: command not found; a direct_nextflow job needs the engine of nextflow/nextflow:24.10.0')
    expect(failure.description).toContain('must be installed here')
  })

  it('runs a direct_wdl job through its real script: the WDL fetched, inputs keyed by workflow, metadata captured', async () => {
    // A stand-in for the Cromwell binary, recording how the job's script called it.
    const bin = await mkdtemp(join(tmpdir(), 'fake-cromwell-'))
    await writeFile(
      join(bin, 'cromwell'),
      [
        '#!/bin/sh',
        'set -eu',
        '[ "$1" = run ] && [ "$2" = workflow.wdl ] || { echo "unexpected arguments: $*" >&2; exit 2; }',
        'meta=""; while [ $# -gt 0 ]; do [ "$1" = --metadata-output ] && meta="$2"; shift; done',
        'printf \'{"status":"Succeeded","inputs":%s}\' "$(cat inputs.json)" > "$meta"',
      ].join('\n'),
    )
    await chmod(join(bin, 'cromwell'), 0o755)
    const wdl = new LocalBatchExecutor(
      {
        workRoot: config.batch.localWorkRoot!,
        bucketDir: (b) => localPathFor(config, `gs://${b}/`),
        region: config.batch.region,
        hostEnv: { ...hostEnvironment(), PATH: `${bin}:${hostEnvironment().PATH}` },
      },
      { pubsub, log, clock: systemClock },
    )
    const run = runFor(
      {
        type: 'direct_wdl',
        container: 'broadinstitute/cromwell:87',
        workflow: { source: 'version 1.0\n\nworkflow hereditary_mock {\n  input { String case_id }\n}\n' },
        resources: { cpu_milli: 1000, memory_mib: 512 },
      },
      { params: { case_id: 'CASE-7', child_fastq: ['gs://lab-bucket/R1.fq.gz', 'gs://lab-bucket/R2.fq.gz'] } },
    )
    const created = await wdl.createJob(buildRunJob(settings, run))
    await wdl.settled(created.name)
    const job = await wdl.getJob(created.name)
    expect(job!.state, job!.events.at(-1)!.description).toBe('SUCCEEDED')
    const out = localPathFor(config, `gs://${run.bucket_name}/runs/${run.id}/`)
    expect(JSON.parse(await readFile(join(out, 'metadata.json'), 'utf8'))).toEqual({
      status: 'Succeeded',
      inputs: { 'hereditary_mock.case_id': 'CASE-7', 'hereditary_mock.child_fastq': ['gs://lab-bucket/R1.fq.gz', 'gs://lab-bucket/R2.fq.gz'] },
    })
    expect(await readFile(join(out, 'workflow.wdl'), 'utf8')).toContain('workflow hereditary_mock')
  })
})
