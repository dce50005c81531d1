import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { constants as os, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import { freeBasePort, repoRoot, spawnLocalSuite, type SpawnedSuite } from '../test/support/suite.js'

/**
 * The CLI's transfer benchmark (npm run bench:cli-upload). Starts the local suite, writes a file of
 * BENCH_FILE_MIB (default 1024) beside its buckets, then BENCH_ROUNDS times (default 3), one after
 * the other so that a change of load on the machine weighs on all alike:
 *
 *   cp            `cp` of the file (coreutils: copy_file_range, a copy inside the kernel)
 *   dd            `dd bs=4M` of the file: the same copy through user space (read, write)
 *   sink          the bytes PUT by the same bare client to a bare node:http server in a process of its
 *                 own that only counts them: what loopback HTTP between two Node processes can carry
 *                 on this machine at all, whatever a storage server does with the bytes
 *   sink+write    the same server writing the bytes to a file beside the copy (4 MiB writes): the
 *                 most a storage server written in Node can take in, before any checksum
 *   PUT           the bytes PUT to a signed upload address by a bare node:http client, no checksum:
 *                 the transport's ceiling (loopback HTTP, the suite's storage server writing the file)
 *   upload        `platform files upload` (the binary): the file streamed with its CRC32C computed,
 *                 the storage server computing MD5 and CRC32C as it writes, the checksums compared
 *   download      `platform files download` of that file: streamed to a temporary file with its
 *                 CRC32C computed, compared, renamed into place
 *
 * For the CLI it reports the transfer (its own `seconds`: the PUT or GET with the checksum check)
 * and the whole command (Node and tsx starting, the signed address asked for, the file looked up).
 * BENCH_BASE_PORT picks the suite's ports (default: a free range). Prints a table of medians and one line of JSON (also bench/results/cli-upload.json), removes
 * what it wrote, stops the suite (its emulators too) and exits, also on an error, Ctrl-C or SIGTERM.
 */
const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 1024)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const TARGET_UPLOAD_VS_CP = 0.5
const run = promisify(execFile)

const started: { dataDir?: string; home?: string; suite?: SpawnedSuite; cli?: ChildProcess } = {}
let stopping: Promise<void> | undefined

function stopAll(): Promise<void> {
  stopping ??= (async () => {
    started.cli?.kill('SIGKILL')
    if (started.suite) {
      const { code } = await started.suite.stop('SIGINT', 60_000)
      if (code !== 0) started.suite.kill()
    }
    for (const dir of [started.dataDir, started.home]) if (dir) await rm(dir, { recursive: true, force: true })
  })()
  return stopping
}

let signalled = false
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (signalled) return
    signalled = true
    process.stderr.write(`\n${sig}: stopping everything the benchmark started…\n`)
    void stopAll().finally(() => process.exit(128 + os.signals[sig]))
  })
}

const mib = (bytes: number) => bytes / 1024 / 1024
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await f()
  return (performance.now() - t0) / 1000
}

/** `platform …` as a user runs it; its parsed --json output and how long the whole command took. */
async function platform(args: string[], env: NodeJS.ProcessEnv): Promise<{ json: { seconds: number; verified: string }; wall: number }> {
  const t0 = performance.now()
  const child = (started.cli = spawn(process.execPath, [join(repoRoot, 'cli/bin.js'), ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] }))
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  started.cli = undefined
  if (code !== 0) throw new Error(`platform ${args.join(' ')} exited with ${code}: ${stderr}`)
  return { json: JSON.parse(stdout) as { seconds: number; verified: string }, wall: (performance.now() - t0) / 1000 }
}

/** The bytes PUT to a fresh signed upload address, nothing else: no checksum on this side. */
async function barePut(suite: SpawnedSuite, file: string, size: number, path: string): Promise<number> {
  const res = await fetch(`${suite.suite.services.files}/api/v1/files/upload-url`, {
    method: 'POST',
    headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id, 'content-type': 'application/json' },
    body: JSON.stringify({ path, content_type: 'application/octet-stream', overwrite: true }),
  })
  if (res.status !== 200) throw new Error(`POST /files/upload-url answered ${res.status}`)
  const signed = (await res.json()) as { url: string; headers: Record<string, string> }
  return timed(() => putFile(signed.url, signed.headers, file, size))
}

/** The file PUT to `url` by a bare node:http client, in 4 MiB reads, no checksum; resolves on a 200. */
function putFile(url: string, headers: Record<string, string>, file: string, size: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { ...headers, 'content-length': size } }, (answer) => {
      answer.resume()
      answer.on('end', () => (answer.statusCode === 200 ? resolve() : reject(new Error(`PUT ${url} answered ${answer.statusCode}`))))
    })
    req.on('error', reject)
    pipeline(createReadStream(file, { highWaterMark: 4 * 1024 * 1024 }), req).catch(reject)
  })
}

/**
 * A node:http server in a child process of its own that reads each request's body and answers 200:
 * it counts the bytes, or (`file`) writes them there, 4 MiB at a time. Answers its port.
 */
const SINK_SERVER = `
const { createServer } = require('node:http')
const { openSync, writevSync, closeSync } = require('node:fs')
const file = process.argv[1]
createServer((req, res) => {
  const fd = file ? openSync(file, 'w') : undefined
  let chunks = [], held = 0, size = 0
  const flush = () => { if (fd !== undefined && chunks.length) writevSync(fd, chunks); chunks = []; held = 0 }
  req.on('data', (c) => { size += c.length; if (fd === undefined) return; chunks.push(c); held += c.length; if (held >= 4 << 20) flush() })
  req.on('end', () => { flush(); if (fd !== undefined) closeSync(fd); res.end(String(size)) })
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n') })
`

async function sinkPut(file: string, size: number, writeTo?: string): Promise<number> {
  const server = spawn(process.execPath, ['-e', SINK_SERVER, writeTo ?? ''], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())))
      server.once('exit', (code) => reject(new Error(`the sink server exited (${code})`)))
    })
    return await timed(() => putFile(`http://127.0.0.1:${port}/`, {}, file, size))
  } finally {
    server.kill()
    if (writeTo) await rm(writeTo, { force: true })
  }
}

async function main() {
  process.env.METADATA_SERVER_DETECTION ??= 'none'
  const dataDir = (started.dataDir = await mkdtemp(join(tmpdir(), 'platform-bench-cli-')))
  const home = (started.home = await mkdtemp(join(tmpdir(), 'platform-bench-cli-home-')))
  process.stdout.write(`starting the local suite (data in ${dataDir})…\n`)
  const suite = (started.suite = await spawnLocalSuite({
    dataDir,
    basePort: Number(process.env.BENCH_BASE_PORT) || (await freeBasePort()),
    clean: true,
    timeoutMs: 180_000,
  }))
  if (signalled) return

  const work = join(dataDir, 'bench')
  await mkdir(work, { recursive: true })
  const source = join(work, 'reads.bin')
  process.stdout.write(`writing a ${FILE_MIB} MiB file…\n`)
  const block = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < block.length; i += 32) createHash('sha256').update(String(i)).digest().copy(block, i)
  const fh = await open(source, 'w')
  for (let i = 0; i < FILE_MIB; i++) {
    block.writeUInt32LE(i, 0)
    await fh.write(block)
  }
  await fh.close()
  const size = (await stat(source)).size

  // The CLI as configured for the suite: its addresses in the local profile, the seeded token and project.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PLATFORM_CONFIG_DIR: home,
    PLATFORM_TOKEN: suite.suite.token,
    PLATFORM_PROJECT: suite.suite.project_id,
  }
  const config: Record<string, string> = {}
  for (const [name, url] of Object.entries(suite.suite.services)) config[`${name}_url`] = url
  await writeFile(join(home, 'config.json'), JSON.stringify({ current_profile: 'local', profiles: { local: config } }))

  const rows: Record<'cp' | 'dd' | 'sink' | 'sinkWrite' | 'put' | 'upload' | 'uploadWall' | 'download' | 'downloadWall', number[]> = {
    cp: [],
    dd: [],
    sink: [],
    sinkWrite: [],
    put: [],
    upload: [],
    uploadWall: [],
    download: [],
    downloadWall: [],
  }
  const load: number[] = []
  for (let round = 1; round <= ROUNDS && !signalled; round++) {
    const copy = join(work, 'copy.bin')
    load.push(loadavg()[0]!)
    rows.cp.push(await timed(() => run('cp', [source, copy])))
    await rm(copy)
    rows.dd.push(await timed(() => run('dd', [`if=${source}`, `of=${copy}`, 'bs=4M', 'status=none'])))
    await rm(copy)
    rows.sink.push(await sinkPut(source, size))
    rows.sinkWrite.push(await sinkPut(source, size, copy))
    rows.put.push(await barePut(suite, source, size, `bench/put-${round}.bin`))
    const up = await platform(['files', 'upload', source, `bench/upload-${round}.bin`], env)
    if (up.json.verified !== 'crc32c') throw new Error(`the upload was verified with ${up.json.verified}`)
    rows.upload.push(up.json.seconds)
    rows.uploadWall.push(up.wall)
    const down = await platform(['files', 'download', `bench/upload-${round}.bin`, join(work, 'downloaded.bin'), '--overwrite'], env)
    if (down.json.verified !== 'crc32c') throw new Error(`the download was verified with ${down.json.verified}`)
    rows.download.push(down.json.seconds)
    rows.downloadWall.push(down.wall)
    if ((await stat(join(work, 'downloaded.bin'))).size !== size) throw new Error('the download has another size')
    await rm(join(work, 'downloaded.bin'))
    for (const path of [`bench/put-${round}.bin`, `bench/upload-${round}.bin`]) await platform(['files', 'rm', path, '--yes'], env)
    process.stdout.write(
      `round ${round}: cp ${fmt(rows.cp.at(-1)!, 2)} s, dd ${fmt(rows.dd.at(-1)!, 2)} s, sink ${fmt(rows.sink.at(-1)!, 2)} s, ` +
        `sink+write ${fmt(rows.sinkWrite.at(-1)!, 2)} s, PUT ${fmt(rows.put.at(-1)!, 2)} s, ` +
        `upload ${fmt(rows.upload.at(-1)!, 2)} s (command ${fmt(rows.uploadWall.at(-1)!, 2)} s), download ${fmt(rows.download.at(-1)!, 2)} s (command ${fmt(rows.downloadWall.at(-1)!, 2)} s)\n`,
    )
  }
  if (signalled) return

  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)])) as Record<keyof typeof rows, number>
  const rate = (seconds: number) => mib(size) / seconds
  const table: Array<[string, number]> = [
    ['cp (copy_file_range, in the kernel)', m.cp],
    ['dd bs=4M (through user space)', m.dd],
    ['PUT to a Node server that only counts the bytes (loopback)', m.sink],
    ['PUT to a Node server that writes them to a file', m.sinkWrite],
    ['PUT to a signed address, no checksum (transport ceiling)', m.put],
    ['platform files upload: the transfer, CRC32C checked', m.upload],
    ['platform files upload: the whole command', m.uploadWall],
    ['platform files download: the transfer, CRC32C checked', m.download],
    ['platform files download: the whole command', m.downloadWall],
  ]
  process.stdout.write(
    `\n${fmt(mib(size), 0)} MiB file, median of ${ROUNDS} rounds (load average ${load.map((l) => fmt(l)).join(', ')} at each round's start)\n`,
  )
  process.stdout.write(`${'what'.padEnd(58)}  seconds  MiB/s    against cp\n`)
  for (const [label, seconds] of table)
    process.stdout.write(
      `${label.padEnd(58)}  ${fmt(seconds, 2).padStart(7)}  ${fmt(rate(seconds)).padStart(7)}  ${fmt(m.cp / seconds, 2).padStart(6)} ×\n`,
    )

  const summary = {
    benchmark: 'cli-upload',
    at: new Date().toISOString(),
    file_mib: mib(size),
    rounds: ROUNDS,
    load_average: load,
    seconds: m,
    samples: rows,
    mib_per_s: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, rate(v)])),
    upload_vs_cp: m.cp / m.upload,
    download_vs_cp: m.cp / m.download,
    upload_vs_dd: m.dd / m.upload,
    upload_vs_bare_put: m.put / m.upload,
    loopback_ceiling_vs_cp: m.cp / m.sink,
    node_write_ceiling_vs_cp: m.cp / m.sinkWrite,
    target_upload_vs_cp: TARGET_UPLOAD_VS_CP,
    target_met: m.cp / m.upload >= TARGET_UPLOAD_VS_CP,
  }
  process.stdout.write(`\n${JSON.stringify(summary)}\n`)
  await mkdir(join(repoRoot, 'bench/results'), { recursive: true })
  await writeFile(join(repoRoot, 'bench/results/cli-upload.json'), JSON.stringify(summary, null, 2) + '\n')
}

let failed = false
try {
  await main()
} catch (error) {
  failed = true
  process.stderr.write(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
} finally {
  await stopAll()
}
process.exit(failed ? 1 : signalled ? 130 : 0)
