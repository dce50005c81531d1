import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import { Timestamp } from '@google-cloud/firestore'
import { startFirestoreEmulator, type RunningProcess } from '../emulators/processes.js'
import { adminDeps } from '../functions/admin/deps.js'
import { auditDeps } from '../functions/audit/deps.js'
import { createAuditApp } from '../functions/audit/service.js'
import { auditChainKey, keyEvent, signHead, type AuditEvent } from '../lib/audit.js'
import { newAuditKeyEntry } from '../lib/audit-keys.js'
import { loadConfig } from '../lib/config.js'
import { newId } from '../lib/ids.js'
import { createKernel } from '../lib/kernel.js'
import { PrivateKeySigner } from '../lib/storage/signers.js'
import { signUrl } from '../lib/storage/v4.js'
import { seedOrgAndProject, seedToken, seedUser } from '../domain/tenancy/seed.js'

/**
 * The file and audit benchmark (npm run bench, after the runs benchmark). Prints a table and JSON:
 *  (a) a file of BENCH_FILE_MIB (default 1024) uploaded and downloaded through V4 signed addresses
 *      to the local storage server (its own process), beside `cp` of the same file, and the server's
 *      peak resident memory during the transfers (it streams: the peak stays far below the file size);
 *  (b) the first page of GET /events (unfiltered, and with action=run.*) in a project with 100
 *      events and in one with 100,000, p50 over BENCH_QUERIES (default 15) requests, beside the
 *      bare Firestore query of the same shape; and the small project once more before the big one's
 *      events exist, because the emulator (unlike Cloud Firestore, which reads an index) scans the
 *      whole collection for every query.
 * Everything runs on 127.0.0.1; it stops every process it started and exits by itself.
 */
const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 1024)
const QUERIES = Number(process.env.BENCH_QUERIES ?? 15)
const BIG = Number(process.env.BENCH_AUDIT_EVENTS ?? 100_000)
const SMALL = 100
const ACCOUNT = 'storage-signer@bench.iam.gserviceaccount.com'
const run = promisify(execFile)

const mib = (bytes: number) => bytes / 1024 / 1024
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-')
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

/** VmHWM (peak resident set) and VmRSS of a process, in MiB, from /proc. */
function memoryOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { peak: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 }
}

/** The pid of the node process running the server script (tsx starts node as a child of its own). */
async function serverPid(child: ChildProcess): Promise<number> {
  const { stdout } = await run('ps', ['-eo', 'pid=,ppid=,args='])
  const rows = stdout
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
  const below = (pid: number): number[] => rows.filter((r) => Number(r[2]) === pid).flatMap((r) => [Number(r[1]), ...below(Number(r[1]))])
  const all = [child.pid!, ...below(child.pid!)]
  return all.filter((pid) => rows.find((r) => Number(r[1]) === pid)?.[3]?.includes('storage-server-child')).at(-1) ?? child.pid!
}

async function timed<T>(f: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const t0 = performance.now()
  const value = await f()
  return { seconds: (performance.now() - t0) / 1000, value }
}

function transfer(url: string, opts: { method: 'PUT' | 'GET'; file: string; headers?: Record<string, string>; size?: number }): Promise<number> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: opts.method,
        path: u.pathname + u.search,
        headers: { ...opts.headers, ...(opts.size ? { 'content-length': opts.size } : {}) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          reject(new Error(`${opts.method} answered ${res.statusCode}`))
          return
        }
        if (opts.method === 'GET') pipeline(res, createWriteStream(opts.file)).then(() => resolve(200), reject)
        else res.resume().on('end', () => resolve(200))
      },
    )
    req.on('error', reject)
    if (opts.method === 'PUT') pipeline(createReadStream(opts.file), req).catch(reject)
    else req.end()
  })
}

async function storageBench(dir: string) {
  const root = join(dir, 'buckets')
  await mkdir(root, { recursive: true })
  const source = join(dir, 'reads.bin')
  process.stdout.write(`writing a ${FILE_MIB} MiB file…\n`)
  const block = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < block.length; i += 32) createHash('sha256').update(String(i)).digest().copy(block, i)
  const fh = await open(source, 'w')
  for (let i = 0; i < FILE_MIB; i++) await fh.write(block)
  await fh.close()
  const size = (await stat(source)).size

  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const keyFile = join(dir, 'public.pem')
  await writeFile(keyFile, publicKey.export({ type: 'spki', format: 'pem' }))
  const signer = new PrivateKeySigner(ACCOUNT, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/storage-server-child.ts', root, ACCOUNT, keyFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()))
      child.once('exit', (code) => reject(new Error(`the storage server exited with ${code}`)))
    })
    const pid = await serverPid(child)
    const before = memoryOf(pid)
    const sign = (method: 'GET' | 'PUT', headers?: Record<string, string>) =>
      signUrl({ method, bucket: 'bench-bucket', object: 'fastq/reads.bin', expiresSeconds: 900, now: new Date(), origin, headers }, signer)

    const cp = await timed(() => run('cp', [source, join(dir, 'copy.bin')]))
    const up = await timed(async () =>
      transfer(await sign('PUT', { 'content-type': 'application/octet-stream' }), {
        method: 'PUT',
        file: source,
        size,
        headers: { 'content-type': 'application/octet-stream' },
      }),
    )
    if ((await stat(join(root, 'bench-bucket', 'fastq', 'reads.bin'))).size !== size) throw new Error('the upload stored another size')
    const down = await timed(async () => transfer(await sign('GET'), { method: 'GET', file: join(dir, 'downloaded.bin') }))
    if ((await stat(join(dir, 'downloaded.bin'))).size !== size) throw new Error('the download had another size')
    const after = memoryOf(pid)
    return {
      file_mib: mib(size),
      cp_mib_s: mib(size) / cp.seconds,
      upload_mib_s: mib(size) / up.seconds,
      download_mib_s: mib(size) / down.seconds,
      upload_vs_cp: cp.seconds / up.seconds,
      download_vs_cp: cp.seconds / down.seconds,
      server_rss_before_mib: before.rss,
      server_peak_rss_mib: after.peak,
    }
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)))
  }
}

async function auditBench(firestore: RunningProcess) {
  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: `bench-${newId().slice(0, 8)}`,
    FIRESTORE_EMULATOR_HOST: firestore.host,
    AUDIT_HMAC_KEYS: newAuditKeyEntry('bench'),
    LOG_LEVEL: 'warn',
  })
  const kernel = createKernel(config, 'bench')
  try {
    const deps = adminDeps(kernel)
    const owner = await seedUser(deps, { email: 'bench@example.org', platformAdmin: true })
    const { org, project: small } = await seedOrgAndProject(deps, {
      owner,
      orgName: 'Bench Lab',
      orgSlug: 'bench-lab',
      projectName: 'Small',
      projectSlug: 'small',
      bucketName: 'bench-small',
    })
    const { project: big } = await seedOrgAndProject(deps, {
      owner,
      orgName: 'Bench Lab',
      orgSlug: 'bench-lab',
      projectName: 'Big',
      projectSlug: 'big',
      bucketName: 'bench-big',
    })
    const token = await seedToken(deps, owner, 'bench')
    const ACTIONS = ['run.submitted', 'run.job_created', 'run.running', 'run.succeeded', 'file.copied', 'file.download_url_issued', 'member.added']

    /** Events as the audit writer makes them (chained per entity shard), written in batches of 500. */
    async function fill(projectId: string, count: number) {
      const newest = new Map<string, AuditEvent>()
      const start = Date.now() - count * 1000
      let batch = kernel.db.firestore.batch()
      for (let i = 0; i < count; i++) {
        const entity = { type: 'run', id: `run-${i % 5000}` }
        const chain = auditChainKey({ project_id: projectId, entity })
        const head = newest.get(chain)
        const action = ACTIONS[i % ACTIONS.length]!
        const event = keyEvent(kernel.audit.keys, {
          id: newId(),
          occurred_at: Timestamp.fromMillis(start + i * 1000),
          service: 'bench',
          outcome: 'success',
          org_id: org.id,
          project_id: projectId,
          action,
          entity,
          change: { to: 'x' },
          actor: { type: 'user', id: owner.id, email: owner.email },
          request: { id: newId(), method: 'POST', path: '/api/v1/runs' },
          chain,
          seq: (head?.seq ?? 0) + 1,
          prev_hash: head?.hash ?? '',
        })
        newest.set(chain, event)
        batch.set(kernel.db.col('audit_events').doc(event.id), event)
        if ((i + 1) % 500 === 0 || i === count - 1) {
          await batch.commit()
          batch = kernel.db.firestore.batch()
        }
      }
      for (const [chain, e] of newest)
        await kernel.db
          .col('audit_heads')
          .doc(chain)
          .set(signHead(kernel.audit.keys, chain, e.seq, e.hash, e.occurred_at))
    }
    process.stdout.write(`writing ${SMALL} audit events…\n`)
    await fill(small.id, SMALL)

    const app = createAuditApp(auditDeps(kernel))
    const api = async (projectId: string, query: string) => {
      const t0 = performance.now()
      const res = await app.request(`/api/v1/events?${query}`, { headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId } })
      const items = (await res.json()) as unknown[]
      if (res.status !== 200 || items.length === 0) throw new Error(`GET /events?${query} answered ${res.status} with ${items.length} events`)
      return performance.now() - t0
    }
    const bare = async (projectId: string, filtered: boolean) => {
      let q = kernel.db.col('audit_events').where('project_id', '==', projectId)
      if (filtered) q = q.where('action_group', '==', 'run')
      const t0 = performance.now()
      await q.orderBy('occurred_at', 'desc').limit(51).get()
      return performance.now() - t0
    }
    const rows: Array<{ query: string; events: number; collection: number; platform_p50_ms: number; bare_p50_ms: number }> = []
    const QUERY_SHAPES = [
      ['unfiltered', 'page_size=50', false],
      ['action=run.*', 'page_size=50&action=run.*', true],
    ] as const
    const measure = async (events: number, projectId: string) => {
      const collection = (await kernel.db.col('audit_events').count().get()).data().count
      for (const [label, query, filtered] of QUERY_SHAPES) {
        await api(projectId, query)
        const platform: number[] = []
        const plain: number[] = []
        for (let i = 0; i < QUERIES; i++) {
          platform.push(await api(projectId, query))
          plain.push(await bare(projectId, filtered))
        }
        rows.push({ query: label, events, collection, platform_p50_ms: p50(platform), bare_p50_ms: p50(plain) })
      }
    }
    await measure(SMALL, small.id)
    process.stdout.write(`writing ${BIG} audit events…\n`)
    const filled = await timed(() => fill(big.id, BIG))
    process.stdout.write(`(${BIG} events in ${fmt(filled.seconds)} s)\n`)
    await measure(SMALL, small.id)
    await measure(BIG, big.id)
    return rows
  } finally {
    await kernel.db.firestore.terminate()
  }
}

async function main() {
  process.env.METADATA_SERVER_DETECTION ??= 'none'
  const dir = await mkdtemp(join(tmpdir(), 'platform-bench-files-'))
  let firestore: RunningProcess | undefined
  try {
    const storage = await storageBench(dir)
    process.stdout.write('\n(a) a file through signed addresses and the local storage server, beside cp\n')
    process.stdout.write('file MiB  cp MiB/s  upload MiB/s  download MiB/s  upload/cp  download/cp  server RSS before  server peak RSS\n')
    process.stdout.write(
      `${fmt(storage.file_mib, 0).padStart(8)}  ${fmt(storage.cp_mib_s).padStart(8)}  ${fmt(storage.upload_mib_s).padStart(12)}  ${fmt(storage.download_mib_s).padStart(14)}  ${fmt(storage.upload_vs_cp, 2).padStart(9)}  ${fmt(storage.download_vs_cp, 2).padStart(11)}  ${`${fmt(storage.server_rss_before_mib, 0)} MiB`.padStart(17)}  ${`${fmt(storage.server_peak_rss_mib, 0)} MiB`.padStart(15)}\n`,
    )
    await rm(dir, { recursive: true, force: true })

    process.stdout.write('\nstarting the Firestore emulator…\n')
    firestore = await startFirestoreEmulator()
    const audit = await auditBench(firestore)
    process.stdout.write(`\n(b) GET /events, first page of 50, p50 over ${QUERIES} requests (the platform's, and the bare Firestore query)\n`)
    process.stdout.write('query          project events  events in the collection  platform p50 ms  bare query p50 ms\n')
    for (const r of audit) {
      process.stdout.write(
        `${r.query.padEnd(13)}  ${String(r.events).padStart(14)}  ${String(r.collection).padStart(24)}  ${fmt(r.platform_p50_ms).padStart(15)}  ${fmt(r.bare_p50_ms).padStart(17)}\n`,
      )
    }
    process.stdout.write(`\n${JSON.stringify({ storage, audit }, null, 2)}\n`)
  } finally {
    await firestore?.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`the files and audit benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
