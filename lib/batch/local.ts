import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { PubSub } from '@google-cloud/pubsub'
import type { Clock } from '../clock.js'
import type { Logger } from '../log.js'
import {
  BatchError,
  jobName,
  type BatchBackend,
  type BatchJob,
  type BatchJobEvent,
  type BatchJobView,
  type BatchRunnable,
  type BatchState,
  type BatchTaskState,
  type BatchVolume,
  type CreateJobRequest,
} from './port.js'
import { JobLogWriter } from './local-logs.js'
import { firstTaskOf } from './logs.js'
import { notificationAttributes } from './notifications.js'

/** What survives in <work>/<job id>/job.json: enough for getJob after a restart. */
interface JobFile {
  name: string
  uid: string
  state: BatchState
  labels: Record<string, string>
  events: Array<{ at: string; description: string; newState?: string; stderr?: string }>
  /** Process group of the runnable being executed, to find it (or its absence) after a restart. */
  pid?: number
  /** When that process started (processStart), so that a pid the system gave to another process since is told apart. */
  pid_started?: string
  /** The process whose executor runs the job; when it is gone, so is the job's execution. */
  owner: number
  owner_started?: string
  deleted?: boolean
  job: BatchJob
}

/** A runnable's process: its group id, its exit, and the last lines it wrote to stderr once it has exited. */
interface Started {
  pid: number
  done: Promise<number | null>
  stderrTail: Promise<string[]>
}

interface LiveJob {
  file: JobFile
  dir: string
  child?: Started
  cancelled: boolean
  /** Deletion was asked by another process's executor: this one just stops. */
  deletedElsewhere?: boolean
  settled: Promise<void>
  /** State-file writes, one after another. */
  writing?: Promise<void>
  /** The job's log (logs.jsonl), open while it executes. */
  logs?: JobLogWriter
}

export interface LocalExecutorOptions {
  /** <work root>/<job id>/ holds the job's state file, logs and scratch space. */
  workRoot: string
  /** The local folder standing for gs://<bucket> (lib/storage.ts localPathFor). */
  bucketDir: (bucket: string) => string
  region: string
  /** Variables the host gives every job (PATH, HOME…): the rest of the orchestrator's environment stays out. */
  hostEnv: Record<string, string>
  /** Seconds between SIGTERM and SIGKILL when a job is deleted. */
  killGraceSeconds?: number
}

const TERMINAL_STATES: ReadonlySet<BatchState> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED'])

/**
 * Jobs executing in this process, by folder: every executor instance of the process (the
 * orchestrator's, the compute service's) sees the same jobs, as every client of Cloud Batch does.
 */
const LIVE = new Map<string, LiveJob>()
const STDERR_TAIL_LINES = 20

/**
 * The Batch backend of the local suite. It takes the job description Cloud Batch would get and
 * runs its runnables on this host as child processes, each in its own process group: a
 * container runnable as its entrypoint and commands (the image itself cannot run here), a script
 * with /bin/sh. The bucket mounted at /mnt/disks/<bucket> is the bucket's local folder: the mount
 * path is rewritten in the environment, commands and scripts, as no root is needed for that.
 * Job- and task-state notifications go to the job's Pub/Sub topic with exactly the attributes Cloud
 * Batch sets (lib/batch/notifications.ts), so the local suite reads them as the cloud does.
 */
export class LocalBatchExecutor implements BatchBackend {
  constructor(
    private readonly opts: LocalExecutorOptions,
    private readonly deps: { pubsub: PubSub; log: Logger; clock: Clock },
  ) {}

  async createJob(req: CreateJobRequest): Promise<{ name: string; uid?: string; alreadyExisted: boolean }> {
    if (!/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/.test(req.jobId)) {
      throw new BatchError(
        'invalid',
        `invalid job id ${req.jobId}: lowercase letters, digits and hyphens, starting with a letter, at most 63 characters`,
      )
    }
    const name = jobName(req.parent, req.jobId)
    const dir = join(this.opts.workRoot, req.jobId)
    const live = LIVE.get(dir)
    if (live) return { name, uid: live.file.uid, alreadyExisted: true }
    const problem = unsupported(req.job)
    if (problem) throw new BatchError('invalid', problem)

    await mkdir(this.opts.workRoot, { recursive: true })
    // mkdir without `recursive` is the atomic claim on the job id, across processes too.
    if (!(await claim(dir))) {
      const existing = await this.readFile(dir)
      if (existing && !existing.deleted) return { name, uid: existing.uid, alreadyExisted: true }
      await rename(dir, `${dir}.deleted-${Date.now()}`)
      if (!(await claim(dir))) return this.createJob(req)
    }
    const file: JobFile = {
      name,
      uid: `${req.jobId.slice(0, 40)}-${randomBytes(4).toString('hex')}-${randomBytes(2).toString('hex')}`,
      state: 'STATE_UNSPECIFIED',
      labels: { ...(req.job.labels ?? {}) },
      events: [],
      owner: process.pid,
      owner_started: OWN_START,
      job: { ...req.job, name, labels: { ...(req.job.labels ?? {}) } },
    }
    const job: LiveJob = { file, dir, cancelled: false, settled: Promise.resolve() }
    LIVE.set(dir, job)
    // Cloud Batch answers a create before it notifies anyone: the caller (the orchestrator, handling a
    // pushed message) does not wait for the publish.
    await this.transition(job, 'QUEUED', `Job state is set from STATE_UNSPECIFIED to QUEUED for job ${name}.`, undefined, true)
    this.launch(job)
    return { name, uid: file.uid, alreadyExisted: false }
  }

  private launch(job: LiveJob) {
    job.settled = this.execute(job)
      .catch((err: unknown) => {
        this.deps.log.error('local executor: job crashed', { job: job.file.name, error: err })
      })
      .finally(() => {
        if (job.deletedElsewhere || job.file.deleted || TERMINAL_STATES.has(job.file.state)) LIVE.delete(job.dir)
      })
  }

  async getJob(name: string): Promise<BatchJobView | undefined> {
    const dir = this.dirOf(name)
    if (!dir) return undefined
    const live = LIVE.get(dir)
    if (live) return view(live.file)
    const file = await this.readFile(dir)
    if (!file || file.deleted) return undefined
    if (orphaned(file)) await this.failOrphan(dir, file)
    return view(file)
  }

  /**
   * Takes over the jobs of the work root whose executor process is gone (the local suite crashed,
   * or was stopped while they ran). A job that had not started running (QUEUED or SCHEDULED: its
   * first process is only spawned once RUNNING is on disk) is started by this executor. A job that
   * was running fails, what is left of its processes is killed, and the FAILED notification goes
   * out, so that its run ends through the usual event path: it is never started again, as its
   * process may have done part of its work and a job must not run twice. The local suite calls
   * this once at start, before it takes new work.
   */
  async recover(opts: { concurrency?: number } = {}): Promise<{ resumed: string[]; failed: string[] }> {
    const report = { resumed: [] as string[], failed: [] as string[] }
    let entries: string[]
    try {
      entries = await readdir(this.opts.workRoot)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return report
      throw err
    }
    let next = 0
    const worker = async () => {
      for (let i = next++; i < entries.length; i = next++) {
        const dir = join(this.opts.workRoot, entries[i]!)
        if (!/^[a-z][a-z0-9-]*$/.test(entries[i]!) || LIVE.has(dir)) continue
        const file = await readJobFile(dir)
        if (!file || !orphaned(file)) continue
        try {
          // Exclusive per earlier owner: two executors recovering the same work root cannot both take a job.
          if (!(await claimFile(join(dir, `takeover-${file.owner}-${file.owner_started ?? ''}`)))) continue
          if (file.state === 'QUEUED' || file.state === 'SCHEDULED') {
            await this.resume(dir, file)
            report.resumed.push(file.name)
          } else {
            await this.failOrphan(dir, file)
            report.failed.push(file.name)
          }
        } catch (err) {
          this.deps.log.warn('local executor: could not take over a job left by a stopped executor', { job: file.name, error: err })
        }
      }
    }
    await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker))
    if (report.failed.length + report.resumed.length) {
      this.deps.log.warn('local executor: took over the jobs a stopped executor left unfinished', {
        resumed: report.resumed.length,
        failed: report.failed.length,
      })
    }
    return report
  }

  private async resume(dir: string, file: JobFile) {
    file.owner = process.pid
    file.owner_started = OWN_START
    file.events.push({
      at: this.deps.clock.now().toISOString(),
      description: `Job ${file.name} is taken over by a new executor: the previous one stopped before the job started.`,
    })
    const job: LiveJob = { file, dir, cancelled: false, settled: Promise.resolve() }
    LIVE.set(dir, job)
    await this.persist(job)
    this.launch(job)
  }

  /** A job whose executor is gone (restarted): nothing will ever finish it, so it fails with the reason. */
  private async failOrphan(dir: string, file: JobFile) {
    killLeftGroup(file)
    const orphan: LiveJob = { file, dir, cancelled: false, settled: Promise.resolve() }
    const was = file.state
    file.pid = undefined
    file.pid_started = undefined
    await this.transition(
      orphan,
      'FAILED',
      `Job state is set from ${was} to FAILED for job ${file.name}: executor restarted while the job was ${was.toLowerCase()}. ` +
        `The local suite stopped (or crashed) with the job unfinished, and a job is never run twice: submit the run again.`,
    )
  }

  async deleteJob(name: string): Promise<void> {
    const dir = this.dirOf(name)
    if (!dir) return
    const live = LIVE.get(dir)
    const file = live?.file ?? (await this.readFile(dir))
    if (!file || file.deleted) return
    const job: LiveJob = live ?? { file, dir, cancelled: false, settled: Promise.resolve() }
    job.cancelled = true
    if (!TERMINAL_STATES.has(file.state)) {
      await this.transition(
        job,
        'DELETION_IN_PROGRESS',
        `Job state is set from ${file.state} to DELETION_IN_PROGRESS for job ${name}: deletion requested.`,
      )
    }
    if (job.child) {
      killGroup(job.child.pid, 'SIGTERM')
      const grace = setTimeout(() => job.child && killGroup(job.child.pid, 'SIGKILL'), (this.opts.killGraceSeconds ?? 5) * 1000)
      await job.child.done
      clearTimeout(grace)
    } else if (file.pid) {
      // Run by another process's executor: it stops on seeing DELETION_IN_PROGRESS in the state file.
      if (killLeftGroup(file)) await waitUntilGone(file.pid)
    }
    await job.settled
    file.deleted = true
    file.pid = undefined
    file.pid_started = undefined
    await this.persist(job)
    LIVE.delete(dir)
  }

  /** Resolves when the job has finished (or been deleted); for tests and for a clean shutdown. */
  async settled(name: string): Promise<void> {
    const dir = this.dirOf(name)
    if (dir) await LIVE.get(dir)?.settled
  }

  /** Kills every job still running; the local suite calls it on exit so no child outlives it. */
  async shutdown(): Promise<void> {
    await Promise.all(
      [...LIVE.values()]
        .filter((job) => job.dir.startsWith(this.opts.workRoot))
        .map(async (job) => {
          job.cancelled = true
          if (job.child) {
            killGroup(job.child.pid, 'SIGKILL')
            await job.child.done
          }
          await job.settled
        }),
    )
  }

  private dirOf(name: string): string | undefined {
    const jobId = name.split('/').pop()
    return jobId && /^[a-z][a-z0-9-]*$/.test(jobId) ? join(this.opts.workRoot, jobId) : undefined
  }

  private async execute(job: LiveJob): Promise<void> {
    const { file } = job
    const spec = file.job.taskGroups?.[0]?.taskSpec ?? {}
    if (file.state === 'QUEUED') {
      await this.transition(job, 'SCHEDULED', `Job state is set from QUEUED to SCHEDULED for job ${file.name}.`, 'ASSIGNED')
    }
    if (job.cancelled) return
    const mounts = await this.mounts(spec.volumes ?? [])
    const env: Record<string, string> = {
      ...this.opts.hostEnv,
      ...mapValues(spec.environment?.variables ?? {}, mounts),
      BATCH_TASK_INDEX: '0',
      BATCH_TASK_COUNT: '1',
      BATCH_TASK_RETRY_ATTEMPT: '0',
      BATCH_JOB_UID: file.uid,
      TMPDIR: join(job.dir, 'tmp'),
    }
    await mkdir(env.TMPDIR!, { recursive: true })
    job.logs = new JobLogWriter(job.dir, this.deps.clock)
    try {
      await this.executeRunnables(job, spec, env, mounts)
    } finally {
      await job.logs.close()
      job.logs = undefined
    }
  }

  private async executeRunnables(
    job: LiveJob,
    spec: NonNullable<NonNullable<BatchJob['taskGroups']>[number]['taskSpec']>,
    env: Record<string, string>,
    mounts: Array<[string, string]>,
  ): Promise<void> {
    const { file } = job
    await this.transition(job, 'RUNNING', `Job state is set from SCHEDULED to RUNNING for job ${file.name}.`, 'RUNNING')

    let failure: { exitCode: number | null; what: string; stderr?: string[] } | undefined
    const maxSeconds = Number(spec.maxRunDuration?.seconds ?? 0)
    let timedOut = false
    const deadline =
      maxSeconds > 0
        ? setTimeout(() => {
            timedOut = true
            if (job.child) killGroup(job.child.pid, 'SIGKILL')
          }, maxSeconds * 1000)
        : undefined
    const runnables = spec.runnables ?? []
    const background: Started[] = []
    for (const [index, runnable] of runnables.entries()) {
      if (await this.deletionRequested(job)) break
      if (failure && !runnable.alwaysRun) continue
      if (runnable.barrier) continue
      const started = await this.start(job, index, runnable, { ...env, ...mapValues(runnable.environment?.variables ?? {}, mounts) }, mounts)
      if ('error' in started) {
        failure ??= { exitCode: started.exitCode, what: started.error }
        continue
      }
      if (job.cancelled) {
        // Deleted while this runnable was being started: deleteJob found no process to kill.
        killGroup(started.pid, 'SIGKILL')
        await started.done
        break
      }
      if (runnable.background) {
        background.push(started)
        continue
      }
      job.child = started
      file.pid = started.pid
      file.pid_started = processStart(started.pid)
      await this.persist(job)
      const timeoutSeconds = Number(runnable.timeout?.seconds ?? 0)
      const timer = timeoutSeconds > 0 ? setTimeout(() => killGroup(started.pid, 'SIGKILL'), timeoutSeconds * 1000) : undefined
      const code = await started.done
      if (timer) clearTimeout(timer)
      job.child = undefined
      file.pid = undefined
      file.pid_started = undefined
      if (await this.deletionRequested(job)) break
      if (timedOut) {
        // Cloud Batch's exit code for a task past its maxRunDuration.
        failure ??= {
          exitCode: 50005,
          what: `runnable ${index} (${describe(runnable)}): the task exceeded its maximum run duration of ${maxSeconds} s`,
        }
        break
      }
      if (code !== 0 && !runnable.ignoreExitStatus) {
        failure ??= { exitCode: code, what: `runnable ${index} (${describe(runnable)})`, stderr: await started.stderrTail }
      }
    }
    if (deadline) clearTimeout(deadline)
    for (const b of background) killGroup(b.pid, 'SIGKILL')
    await Promise.all(background.map((b) => b.done))
    if (job.cancelled) return

    if (!failure) {
      await this.transition(job, 'SUCCEEDED', `Job state is set from RUNNING to SUCCEEDED for job ${file.name}.`, 'SUCCEEDED')
      return
    }
    const exit = failure.exitCode === null ? 'an error' : `exit code ${failure.exitCode}`
    const hint =
      failure.exitCode === 127
        ? " A command was not found: the local executor runs a container runnable's entrypoint and commands on this host, so the programs its image provides (nextflow, cromwell…) must be installed here."
        : ''
    await this.transition(
      job,
      'FAILED',
      `Task state is updated from RUNNING to FAILED on the local executor with ${exit} in ${failure.what}.${hint}`,
      'FAILED',
      false,
      // What Cloud Batch puts in the failure event's taskExecution.stderrSnippet: the failing runnable's last stderr lines.
      failure.stderr?.join('\n'),
    )
  }

  /** True once this or another process has asked to delete the job. */
  private async deletionRequested(job: LiveJob): Promise<boolean> {
    if (!job.cancelled) {
      const onDisk = await this.readFile(job.dir)
      if (onDisk && (onDisk.deleted || onDisk.state === 'DELETION_IN_PROGRESS')) {
        job.cancelled = true
        job.deletedElsewhere = true
      }
    }
    return job.cancelled
  }

  /** Maps each bucket mount to the bucket's local folder, longest mount path first. */
  private async mounts(volumes: BatchVolume[]) {
    const pairs: Array<[string, string]> = []
    for (const v of volumes) {
      const remote = v.gcs?.remotePath
      if (!remote || !v.mountPath) continue
      const [bucket, ...rest] = remote.replace(/^gs:\/\//, '').split('/')
      const local = join(this.opts.bucketDir(bucket!), ...rest.filter(Boolean))
      await mkdir(local, { recursive: true })
      pairs.push([v.mountPath.replace(/\/+$/, ''), local])
    }
    return pairs.sort((a, b) => b[0].length - a[0].length)
  }

  private async start(
    job: LiveJob,
    index: number,
    runnable: BatchRunnable,
    env: Record<string, string>,
    mounts: Array<[string, string]>,
  ): Promise<Started | { error: string; exitCode: number | null }> {
    let argv: string[]
    if (runnable.script) {
      const text = rewrite(runnable.script.text ?? '', mounts)
      const path = join(job.dir, `runnable-${index}.sh`)
      await writeFile(path, text)
      if (text.startsWith('#!')) {
        await chmod(path, 0o755)
        argv = [path]
      } else {
        argv = ['/bin/sh', path]
      }
    } else if (runnable.container) {
      const c = runnable.container
      argv = [...(c.entrypoint ? [c.entrypoint] : []), ...(c.commands ?? [])].map((a) => rewrite(a, mounts))
      if (!argv.length) {
        return {
          error: `runnable ${index}: container ${c.imageUri ?? ''} has neither entrypoint nor commands; the local executor cannot use the image's own entrypoint`,
          exitCode: null,
        }
      }
    } else {
      return { error: `runnable ${index}: only container, script and barrier runnables are supported`, exitCode: null }
    }
    let child
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: job.dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      // The kernel refused to start it at all (E2BIG: one variable over 128 KiB, or the whole
      // environment and arguments over ARG_MAX): the task fails with the reason, as on Batch.
      const code = (err as NodeJS.ErrnoException).code
      const why =
        code === 'E2BIG'
          ? 'its environment or arguments are too large for the operating system (E2BIG): a parameter is too big to pass as a PARAM_* variable; pass a file instead (it is in PLATFORM_PARAMS_FILE too)'
          : (err as Error).message
      return { error: `runnable ${index} (${describe(runnable)}) could not be started: ${why}`, exitCode: null }
    }
    const stdout = createWriteStream(join(job.dir, 'stdout.log'), { flags: 'a' })
    const stderr = createWriteStream(join(job.dir, 'stderr.log'), { flags: 'a' })
    child.stdout.pipe(stdout)
    child.stderr.pipe(stderr)
    const task = firstTaskOf(job.file.uid)
    const logs = job.logs!
    const captured = Promise.all([logs.capture(child.stdout, task, 'stdout'), logs.capture(child.stderr, task, 'stderr', STDERR_TAIL_LINES)])
    let spawnError: string | undefined
    const done = new Promise<number | null>((resolve) => {
      child.on('error', (err) => {
        spawnError = `${argv[0]}: ${err.message}`
        stderr.write(`${spawnError}\n`)
        logs.write(task, 'stderr', spawnError)
        resolve(127)
      })
      child.on('close', (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : null)))
    }).then(async (code) => {
      await Promise.all([closeStream(stdout), closeStream(stderr)])
      return code
    })
    if (child.pid === undefined) {
      return { error: `runnable ${index} (${describe(runnable)}): ${argv[0]} could not be started`, exitCode: await done }
    }
    // A process that could not be executed closes its pipes without a word: the reason is its stderr.
    const stderrTail = done.then(async () => {
      const [, lines] = await captured
      return spawnError ? [...lines, spawnError].slice(-STDERR_TAIL_LINES) : lines
    })
    return { pid: child.pid, done, stderrTail }
  }

  /** Records a new state, then publishes its notifications (without waiting for them when `background`). */
  private async transition(job: LiveJob, state: BatchState, description: string, taskState?: BatchTaskState, background = false, stderr?: string) {
    // Once deletion has begun, the execution racing it must not move the job anywhere else.
    if (job.cancelled && state !== 'DELETION_IN_PROGRESS') return
    const previous = job.file.state
    job.file.state = state
    job.file.events.push({ at: this.deps.clock.now().toISOString(), description, newState: state, ...(stderr ? { stderr } : {}) })
    await this.persist(job)
    const notified = this.notify(job.file, previous, state, taskState)
    if (!background) await notified
  }

  private persist(job: LiveJob): Promise<void> {
    const write = async () => {
      const tmp = join(job.dir, 'job.json.tmp')
      await writeFile(tmp, JSON.stringify(job.file, null, 2))
      await rename(tmp, join(job.dir, 'job.json'))
    }
    job.writing = (job.writing ?? Promise.resolve()).then(write, write)
    return job.writing
  }

  private async readFile(dir: string): Promise<JobFile | undefined> {
    if (!existsSync(dir)) return undefined
    const path = join(dir, 'job.json')
    for (let attempt = 0; attempt < 20; attempt++) {
      if (existsSync(path)) return JSON.parse(await readFile(path, 'utf8')) as JobFile
      // A concurrent creator has claimed the folder but not yet written its state.
      await new Promise((r) => setTimeout(r, 25))
    }
    return undefined
  }

  /** Publishes what Cloud Batch would, to the topics and for the states the job's notifications ask for. */
  private async notify(file: JobFile, previous: BatchState, state: BatchState, taskState?: BatchTaskState) {
    for (const n of file.job.notifications ?? []) {
      if (!n.pubsubTopic) continue
      const type = String(n.message?.type ?? '')
      let attributes: Record<string, string> | undefined
      let data: string | undefined
      if (type === 'JOB_STATE_CHANGED' && (!n.message?.newJobState || String(n.message.newJobState) === state)) {
        attributes = notificationAttributes({ type, jobName: file.name, jobUid: file.uid, state, region: this.opts.region })
        data = `Job state was updated from ${previous} to ${state}.`
      } else if (type === 'TASK_STATE_CHANGED' && taskState && (!n.message?.newTaskState || String(n.message.newTaskState) === taskState)) {
        // The job's only task: task group 0, task 0, as Batch names the first task of a one-task job.
        attributes = notificationAttributes({
          type,
          taskName: `${file.name}/taskGroups/group0/tasks/0`,
          taskUid: `${file.uid}-group0-0`,
          state: taskState,
          region: this.opts.region,
        })
        data = `Task state was updated to ${taskState}.`
      }
      if (!attributes || !data) continue
      try {
        await this.deps.pubsub.topic(n.pubsubTopic).publishMessage({ data: Buffer.from(data), attributes })
      } catch (err) {
        // The reconciler settles runs whose notifications were lost, as with Cloud Batch.
        this.deps.log.warn('local executor: could not publish a job notification', { job: file.name, topic: n.pubsubTopic, error: err })
      }
    }
  }
}

/** Not finished, not being deleted (that is left to its deleter, which may be another process), and its executor process is gone. */
function orphaned(file: JobFile): boolean {
  if (file.deleted || TERMINAL_STATES.has(file.state) || file.state === 'DELETION_IN_PROGRESS') return false
  return !alive(file.owner, true) || sameProcess(file.owner, file.owner_started) === false
}

/**
 * When a process started (field 22 of /proc/<pid>/stat, in clock ticks since boot), or undefined
 * where there is no /proc or no such process. A pid and this identify a process: pids are reused,
 * and with the default pid_max of 32768 the executor's own jobs cycle through them in minutes.
 */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}
const OWN_START = processStart(process.pid)

/** False when `pid` is now another process than the one that started at `started`; undefined when that cannot be told. */
function sameProcess(pid: number, started: string | undefined): boolean | undefined {
  if (started === undefined) return undefined
  const now = processStart(pid)
  return now === undefined ? undefined : now === started
}

/**
 * Kills what is left of the process group of a job run by another (or an earlier) executor, unless
 * its leader's pid now belongs to another process. A group whose leader has exited keeps its id
 * reserved while any member lives, so such a group is still the job's.
 */
function killLeftGroup(file: JobFile): boolean {
  if (!file.pid || sameProcess(file.pid, file.pid_started) === false) return false
  killGroup(file.pid, 'SIGKILL')
  return true
}

/** job.json as it is on disk now; undefined when absent or half-written (the folder was claimed but never written). */
async function readJobFile(dir: string): Promise<JobFile | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'job.json'), 'utf8')) as JobFile
  } catch {
    return undefined
  }
}

function view(file: JobFile): BatchJobView {
  return {
    name: file.name,
    uid: file.uid,
    state: file.state,
    labels: file.labels,
    events: file.events.map((e): BatchJobEvent => ({
      at: new Date(e.at),
      description: e.description,
      newState: e.newState,
      ...(e.stderr ? { stderr: e.stderr } : {}),
    })),
  }
}

function unsupported(job: BatchJob): string | undefined {
  const groups = job.taskGroups ?? []
  if (groups.length !== 1) return 'the local executor runs jobs with exactly one task group'
  const g = groups[0]!
  if (Number(g.taskCount ?? 1) !== 1) return 'the local executor runs task groups of one task'
  if (!g.taskSpec?.runnables?.length) return 'the job has no runnables'
  return undefined
}

async function claimFile(path: string): Promise<boolean> {
  try {
    await writeFile(path, String(process.pid), { flag: 'wx' })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

async function claim(dir: string): Promise<boolean> {
  try {
    await mkdir(dir)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

function rewrite(text: string, mounts: Array<[string, string]>): string {
  let out = text
  for (const [mountPath, local] of mounts) out = out.split(mountPath).join(local)
  return out
}

function mapValues(vars: Record<string, string>, mounts: Array<[string, string]>): Record<string, string> {
  return Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, rewrite(v, mounts)]))
}

function describe(r: BatchRunnable): string {
  if (r.displayName) return r.displayName
  if (r.container) return `container ${r.container.imageUri ?? ''}`
  return r.script ? 'script' : 'runnable'
}

/**
 * Whether a process exists. With `notSelf`, this process counts as gone: a job of this process
 * that is not in LIVE was left by an earlier process that had the same pid.
 */
function alive(pid: number | undefined, notSelf = false): boolean {
  if (!pid || (notSelf && pid === process.pid)) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function waitUntilGone(pid: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
}

function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }
const signalNumber = (s: NodeJS.Signals) => SIGNALS[s] ?? 0

function closeStream(s: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => s.end(resolve))
}
