import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Firestore } from '@google-cloud/firestore'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { layout } from '../../emulators/data-dir.js'
import { emulatorGroup, readEmulatorsFile, type EmulatorRecord } from '../../emulators/leftovers.js'
import { freeBasePort, processTable, spawnLocalSuite, type SpawnedSuite } from '../support/suite.js'

/**
 * `kill -9` of the suite's own process with runs in flight, then `npm start` again on the same
 * data folder: what the suite had accepted is all there, every run ends, none runs twice, and the
 * emulators the crashed suite left running are taken over and stopped.
 */
describe.sequential('the local suite after its process is killed with SIGKILL', () => {
  let dataDir: string
  let basePort: number
  let first: SpawnedSuite | undefined
  let second: SpawnedSuite | undefined

  beforeAll(async () => {
    // This process reads the suite's Firestore emulator: no metadata server to look for.
    process.env.METADATA_SERVER_DETECTION ??= 'none'
    dataDir = mkdtempSync(join(tmpdir(), 'crash-recovery-'))
    basePort = await freeBasePort()
  })

  afterAll(() => {
    first?.kill()
    second?.kill()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function compute(suite: SpawnedSuite, path: string, init: { method?: string; body?: unknown } = {}) {
    const res = await fetch(`${suite.suite.services.compute}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  /** Running, not a zombie waiting for the init process to reap it. */
  const alive = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
    } catch {
      return false
    }
  }

  it(
    'keeps every accepted run, ends each in flight, runs none twice, and stops the emulators the crashed suite left',
    { timeout: 150_000 },
    async () => {
      first = await spawnLocalSuite({ dataDir, basePort, clean: true })
      const hello = await compute(first, '/pipelines/slug/hello-local')
      expect(hello.status).toBe(200)
      const sleeper = await compute(first, '/pipelines', {
        method: 'POST',
        body: {
          slug: 'sleep-crash',
          name: 'Sleeps until killed',
          type: 'container_entrypoint',
          container: 'docker.io/library/busybox:1.36',
          version: '1.0.0',
          entrypoint: '/bin/sh',
          commands: ['-c', 'echo $$ > "${PLATFORM_OUTPUT_DIR}pid"; exec sleep 300'],
        },
      })
      expect(sleeper.status).toBe(201)

      // Jobs running at the crash.
      const long: string[] = []
      for (let i = 0; i < 3; i++) {
        const run = await compute(first, '/runs', { method: 'POST', body: { pipeline_id: sleeper.body.id, params: {} } })
        expect(run.status).toBe(201)
        long.push(run.body.id as string)
      }
      for (const id of long) {
        await expect.poll(async () => (await compute(first!, `/runs/${id}`)).body.status, { timeout: 30_000, interval: 250 }).toBe('running')
      }
      const outputOf = (id: string) => join(dataDir, 'buckets', first!.suite.bucket_name, 'runs', id)
      // A job is running once its process is; the process writes its pid a moment later.
      const pidWritten = (id: string) => existsSync(join(outputOf(id), 'pid')) && /^\d+\s*$/.test(readFileSync(join(outputOf(id), 'pid'), 'utf8'))
      await expect.poll(() => long.filter((id) => !pidWritten(id)), { timeout: 10_000, interval: 100 }).toEqual([])
      const sleepers = long.map((id) => Number(readFileSync(join(outputOf(id), 'pid'), 'utf8')))

      // Runs at every stage of their way when the suite dies: just accepted, published, with a job, done.
      const quick: string[] = []
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 3; i++) {
            const run = await compute(first!, '/runs', { method: 'POST', body: { pipeline_id: hello.body.id, params: {} } })
            expect(run.status).toBe(201)
            quick.push(run.body.id as string)
          }
        }),
      )
      const accepted = [...long, ...quick]
      const leftover = readEmulatorsFile(layout(dataDir))!
      expect(leftover.emulators.map((e) => e.kind).sort()).toEqual(['firestore', 'pubsub'])

      const crash = await first.stop('SIGKILL')
      expect(crash.signal ?? crash.code).toBeTruthy()
      // The emulators outlive the suite's process, with what it had committed.
      for (const record of leftover.emulators) expect(emulatorGroup(record)).not.toEqual([])
      expect(sleepers.filter(alive)).toEqual(sleepers)

      second = await spawnLocalSuite({ dataDir, basePort })
      expect(second.output()).toContain('did not stop cleanly')
      const gone = (record: EmulatorRecord) => emulatorGroup(record).length === 0
      expect(leftover.emulators.filter((e) => !gone(e))).toEqual([])
      // The jobs' processes outlived the suite too, until the new start killed them.
      await expect.poll(() => sleepers.filter(alive), { timeout: 5_000 }).toEqual([])

      // One list request per poll: the suite has only these runs.
      const statuses = async () => {
        const list = await compute(second!, '/runs?page_size=1000')
        const byId = new Map((list.body as any[]).map((r) => [r.id as string, r]))
        return accepted.map((id) => byId.get(id) ?? { id, status: 'missing' })
      }
      await expect
        .poll(
          async () => (await statuses()).filter((r) => !['succeeded', 'failed', 'cancelled'].includes(r.status)).map((r) => `${r.id} ${r.status}`),
          {
            timeout: 60_000,
            interval: 1_000,
          },
        )
        .toEqual([])
      const runs = await statuses()
      expect(runs.map((r) => r.id)).toEqual(accepted)
      for (const run of runs.filter((r) => long.includes(r.id))) {
        expect(run.status).toBe('failed')
        expect(run.error_message).toContain('executor restarted while the job was running')
      }
      // A hello-local run that was running at the crash fails the same way; all others succeed.
      for (const run of runs.filter((r) => r.status === 'failed')) expect(run.error_message).toContain('executor restarted')
      expect(runs.filter((r) => r.status === 'succeeded').length).toBeGreaterThan(0)

      // Once each: one job per run, made once, started at most once.
      const firestore = new Firestore({
        projectId: second.suite.gcp_project,
        host: second.suite.firestore_emulator_host,
        ssl: false,
        customHeaders: { Authorization: 'Bearer owner' },
      })
      try {
        const created = await firestore.collection('audit_events').where('action', '==', 'run.job_created').get()
        const perRun = new Map<string, number>()
        for (const doc of created.docs) perRun.set(doc.get('entity.id') as string, (perRun.get(doc.get('entity.id') as string) ?? 0) + 1)
        expect(accepted.filter((id) => perRun.get(id) !== 1)).toEqual([])
      } finally {
        await firestore.terminate()
      }
      const work = join(dataDir, 'work')
      const folders = readdirSync(work)
      for (const id of accepted) {
        // A folder the crash left claimed but without its job.json (a job never made) is set aside by the new create.
        const setAside = folders.filter((f) => f.startsWith(`run-${id}.deleted-`))
        expect(folders.filter((f) => f.startsWith(`run-${id}`) && !setAside.includes(f))).toEqual([`run-${id}`])
        for (const f of setAside) expect(existsSync(join(work, f, 'job.json'))).toBe(false)
        const job = JSON.parse(readFileSync(join(work, `run-${id}`, 'job.json'), 'utf8')) as { events: Array<{ newState?: string }> }
        expect(job.events.filter((e) => e.newState === 'RUNNING').length).toBeLessThanOrEqual(1)
        const stdout = join(work, `run-${id}`, 'stdout.log')
        const wrote = existsSync(stdout)
          ? readFileSync(stdout, 'utf8')
              .split('\n')
              .filter((l) => l.startsWith('hello-local: wrote'))
          : []
        expect(wrote.length).toBeLessThanOrEqual(1)
      }
      expect(await second.stop('SIGINT')).toEqual({ code: 0, signal: null })
      expect(existsSync(layout(dataDir).emulatorsFile)).toBe(false)
      expect(processTable().filter((p) => p.args.includes(`--port=${basePort + 80}`) || p.args.includes(`--port=${basePort + 85}`))).toEqual([])
    },
  )
})
