import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { availableParallelism, constants as os, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { md5Wanted } from '../cli/upload.js'
import { freeBasePort, repoRoot, spawnLocalSuite, type SpawnedSuite } from '../test/support/suite.js'

/**
 * The CLI's transfer benchmark (npm run bench:cli-upload). Starts the local suite, writes a file of
 * BENCH_FILE_MIB (default 1024) beside its buckets, uploads it once as the object every download
 * reads, then BENCH_ROUNDS times (default 8):
 *
 *   curl PUT      `curl -T` of the file to a fresh signed upload address (one PUT)
 *   curl session  `curl` starting a resumable session from a fresh signed POST address, then `curl -T`
 *                 of the whole file to the session URI in one request
 *   upload        `platform files upload` (the binary) as it is by default: a resumable session, the
 *                 file in one request, its CRC32C computed as it goes and compared with the storage's
 *                 at the end (with the MD5 too where the machine has more than two cores:
 *                 PLATFORM_UPLOAD_MD5=auto)
 *   with MD5      the same with PLATFORM_UPLOAD_MD5=on: the MD5 computed in a hash thread beside the
 *                 send, and compared too
 *   curl GET      `curl -o` of the object from a fresh signed download address
 *   download      `platform files download` of the object: in parts, CRC32C computed, compared, renamed into place
 *
 * Every transfer starts from the same state: dirty pages written out (`sync`), and the 1 GiB the
 * previous one wrote removed (its object, or its downloaded file). This machine is a virtual one
 * that hands the memory a removed file freed back to its host: writing 1 GiB into new pages took
 * 0.4 s, 2.1 s and 2.5 s for three files in a row (dd), so a transfer that writes right after
 * others pays for theirs. The order of the uploads turns each round (each comes first, second,
 * third and fourth equally often over four rounds), as does that of the two downloads, so that no tool
 * always takes the same place.
 *
 * For the CLI it reports the transfer (its own `seconds`: from the first request to the storage,
 * the signed address in hand, as curl's) and the whole command (Node and tsx starting, the signed
 * address asked for, the file looked up); the ratios compare the transfer with curl's (target:
 * at least 0.8×). Then, once, the upload is killed (SIGKILL) when the session
 * holds half the file, and run again: the bytes sent again are what the killed process had written
 * to its socket (/proc/<pid>/io wchar, read while it is stopped just before the kill) beyond what
 * the resumed run found stored (target: under one chunk, RESEND_TARGET_MIB).
 *
 * BENCH_BASE_PORT picks the suite's ports (default: a free range). Prints a table of medians and
 * one line of JSON (also bench/results/cli-upload.json), removes what it wrote, stops the suite
 * (its emulators too) and exits, also on an error, Ctrl-C or SIGTERM.
 */
const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 1024)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const TARGET_VS_CURL = 0.8
/**
 * The CLI sends a session's bytes in one request (cli/resumable.ts WHOLE_FILE), so "one chunk" of the
 * issue's target is taken as 16 MiB, the chunk of Google's Go client library, the smallest any of
 * Google's clients sends by default.
 */
const RESEND_TARGET_MIB = 16
const run = promisify(execFile)

/**
 * Writes the page cache's dirty pages out before each timed transfer: every transfer writes 1 GiB
 * (the storage server's object, or the downloaded file), and Linux makes a writer wait for the
 * disk once a few GiB are dirty, which would weigh on whichever transfer of a round comes last.
 */
const settle = () => run('sync')

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
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length / 2
  return sorted.length === 0 ? NaN : Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!
}
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await f()
  return (performance.now() - t0) / 1000
}

interface PlatformRun {
  json: { seconds: number; verified: string; resumed_from?: number }
  wall: number
}

/** `platform …` as a user runs it; its parsed --json output and how long the whole command took. */
async function platform(args: string[], env: NodeJS.ProcessEnv): Promise<PlatformRun> {
  const t0 = performance.now()
  const child = (started.cli = spawn(process.execPath, [join(repoRoot, 'cli/bin.js'), ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] }))
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  started.cli = undefined
  if (code !== 0) throw new Error(`platform ${args.join(' ')} exited with ${code}: ${stderr}`)
  return { json: JSON.parse(stdout) as PlatformRun['json'], wall: (performance.now() - t0) / 1000 }
}

/** A call to the file service as the seeded user. */
async function filesApi(
  suite: SpawnedSuite,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ url: string; headers: Record<string, string> }> {
  const res = await fetch(`${suite.suite.services.files}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as { url: string; headers: Record<string, string> }
}

const curlHeaders = (headers: Record<string, string>) => Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])

/** curl, failing on an HTTP error; its stdout. */
async function curl(args: string[]): Promise<string> {
  const { stdout } = await run('curl', ['-sS', '--fail-with-body', ...args], { maxBuffer: 16 * 1024 * 1024 })
  return stdout
}

/** curl PUT of the file to a fresh signed upload address; seconds for the PUT alone. */
async function curlPut(suite: SpawnedSuite, file: string, path: string): Promise<number> {
  const signed = await filesApi(suite, 'POST', '/files/upload-url', { path, content_type: 'application/octet-stream', overwrite: true })
  return timed(() => curl(['-X', 'PUT', '-T', file, ...curlHeaders(signed.headers), signed.url]))
}

/** curl starting a resumable session from a fresh signed POST address, then PUT of the whole file to the session URI; seconds for both. */
async function curlSession(suite: SpawnedSuite, file: string, path: string): Promise<number> {
  const signed = await filesApi(suite, 'POST', '/files/upload-url', {
    path,
    content_type: 'application/octet-stream',
    overwrite: true,
    resumable: true,
  })
  return timed(async () => {
    const headers = await curl(['-X', 'POST', '-D', '-', '-o', '/dev/null', ...curlHeaders(signed.headers), '-H', 'Content-Length: 0', signed.url])
    const location = /^location:\s*(\S+)/im.exec(headers)?.[1]
    if (!location) throw new Error(`the storage started no session: ${headers}`)
    await curl(['-X', 'PUT', '-T', file, location])
  })
}

/** curl GET of the object from a fresh signed download address into `dest`. */
async function curlGet(suite: SpawnedSuite, path: string, dest: string): Promise<number> {
  const signed = await filesApi(suite, 'GET', `/files/download-url?path=${encodeURIComponent(path)}`)
  return timed(() => curl(['-o', dest, signed.url]))
}

/** The bytes a process has written (files, pipes, sockets), from /proc/<pid>/io. */
async function writtenBy(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8')
  return Number(/^wchar:\s*(\d+)/m.exec(io)?.[1] ?? NaN)
}

/** The bytes held by the suite's resumable sessions (their data files in the buckets folder). */
async function sessionBytes(dataDir: string): Promise<number> {
  const dir = join(dataDir, 'buckets', '.sessions')
  const names = await readdir(dir).catch(() => [] as string[])
  let bytes = 0
  for (const name of names.filter((n) => n.endsWith('.data'))) bytes += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size
  return bytes
}

/**
 * The upload killed when the session holds half the file, then run again: what the killed process
 * wrote, what the resumed run found stored, and the bytes sent twice.
 */
async function killedAtHalf(dataDir: string, source: string, size: number, path: string, env: NodeJS.ProcessEnv) {
  const args = [join(repoRoot, 'cli/bin.js'), 'files', 'upload', source, path, '--json', '--overwrite']
  const child = (started.cli = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }))
  const exited = new Promise((resolve) => child.once('close', resolve))
  const base = await sessionBytes(dataDir)
  while ((await sessionBytes(dataDir)) - base < size / 2) {
    if (child.exitCode !== null) throw new Error('the upload ended before it was half done')
    await new Promise((r) => setTimeout(r, 5))
  }
  // Stopped first, so that what it wrote is read at the moment it dies.
  child.kill('SIGSTOP')
  const written = await writtenBy(child.pid!)
  child.kill('SIGKILL')
  await exited
  started.cli = undefined
  const resumed = await platform(['files', 'upload', source, path, '--overwrite'], env)
  const resumedFrom = resumed.json.resumed_from ?? 0
  return {
    killed_at_bytes: written,
    resumed_from: resumedFrom,
    resent_bytes: Math.max(0, written - resumedFrom),
    resumed_seconds: resumed.json.seconds,
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

  const rows: Record<
    'curlPut' | 'curlSession' | 'upload' | 'uploadWall' | 'uploadMd5' | 'uploadMd5Wall' | 'curlGet' | 'download' | 'downloadWall',
    number[]
  > = {
    curlPut: [],
    curlSession: [],
    upload: [],
    uploadWall: [],
    uploadMd5: [],
    uploadMd5Wall: [],
    curlGet: [],
    download: [],
    downloadWall: [],
  }
  const load: number[] = []
  const downloaded = join(work, 'downloaded.bin')
  const removeObject = (path: string) =>
    fetch(`${suite.suite.services.files}/api/v1/files?path=${encodeURIComponent(path)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id },
    }).then(async (res) => {
      if (res.status !== 204 && res.status !== 200) throw new Error(`DELETE ${path} answered ${res.status}: ${await res.text()}`)
    })

  // The object every download reads, uploaded once.
  const readFrom = 'bench/download-source.bin'
  await platform(['files', 'upload', source, readFrom, '--overwrite'], env)

  // What the CLI verifies by default here: the MD5 beside the CRC32C with more than two cores (PLATFORM_UPLOAD_MD5=auto).
  const defaultVerified = md5Wanted(undefined, { resumable: true, cores: availableParallelism() }) === true ? 'crc32c+md5' : 'crc32c'
  const uploads: Record<'curlPut' | 'curlSession' | 'upload' | 'uploadMd5', (path: string) => Promise<void>> = {
    curlPut: async (path) => void rows.curlPut.push(await curlPut(suite, source, path)),
    curlSession: async (path) => void rows.curlSession.push(await curlSession(suite, source, path)),
    upload: async (path) => {
      const up = await platform(['files', 'upload', source, path], env)
      if (up.json.verified !== defaultVerified) throw new Error(`the upload was verified with ${up.json.verified}, not ${defaultVerified}`)
      rows.upload.push(up.json.seconds)
      rows.uploadWall.push(up.wall)
    },
    uploadMd5: async (path) => {
      const up = await platform(['files', 'upload', source, path], { ...env, PLATFORM_UPLOAD_MD5: 'on' })
      if (up.json.verified !== 'crc32c+md5') throw new Error(`the upload with PLATFORM_UPLOAD_MD5=on was verified with ${up.json.verified}`)
      rows.uploadMd5.push(up.json.seconds)
      rows.uploadMd5Wall.push(up.wall)
    },
  }
  const downloads: Record<'curlGet' | 'download', () => Promise<void>> = {
    curlGet: async () => {
      rows.curlGet.push(await curlGet(suite, readFrom, downloaded))
      if ((await stat(downloaded)).size !== size) throw new Error('the curl download has another size')
    },
    download: async () => {
      const down = await platform(['files', 'download', readFrom, downloaded, '--overwrite'], env)
      if (down.json.verified !== 'crc32c') throw new Error(`the download was verified with ${down.json.verified}`)
      if ((await stat(downloaded)).size !== size) throw new Error('the download has another size')
      rows.download.push(down.json.seconds)
      rows.downloadWall.push(down.wall)
    },
  }
  const turned = <T>(xs: T[], by: number) => xs.map((_, i) => xs[(i + by) % xs.length]!)
  for (let round = 1; round <= ROUNDS && !signalled; round++) {
    load.push(loadavg()[0]!)
    const order = turned(['curlPut', 'curlSession', 'upload', 'uploadMd5'] as const, round - 1)
    for (const name of order) {
      await settle()
      const path = `bench/${name}-${round}.bin`
      await uploads[name](path)
      await removeObject(path)
    }
    for (const name of turned(['curlGet', 'download'] as const, round - 1)) {
      await settle()
      await downloads[name]()
      await rm(downloaded)
    }
    process.stdout.write(
      `round ${round} (uploads ${order.join(', ')}): curl PUT ${fmt(rows.curlPut.at(-1)!, 2)} s, curl session ${fmt(rows.curlSession.at(-1)!, 2)} s, ` +
        `upload ${fmt(rows.upload.at(-1)!, 2)} s (command ${fmt(rows.uploadWall.at(-1)!, 2)} s), ` +
        `with MD5 ${fmt(rows.uploadMd5.at(-1)!, 2)} s (command ${fmt(rows.uploadMd5Wall.at(-1)!, 2)} s), ` +
        `curl GET ${fmt(rows.curlGet.at(-1)!, 2)} s, download ${fmt(rows.download.at(-1)!, 2)} s (command ${fmt(rows.downloadWall.at(-1)!, 2)} s)\n`,
    )
  }
  await removeObject(readFrom)
  if (signalled) return
  process.stdout.write('killing an upload at half the file, then resuming it…\n')
  const resume = await killedAtHalf(dataDir, source, size, 'bench/killed.bin', env)
  await platform(['files', 'rm', 'bench/killed.bin', '--yes'], env)

  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)])) as Record<keyof typeof rows, number>
  const rate = (seconds: number) => mib(size) / seconds
  const table: Array<[string, number, number]> = [
    ['curl PUT to a signed address (one request)', m.curlPut, m.curlPut],
    ['curl: resumable session, the file in one PUT', m.curlSession, m.curlPut],
    [`platform files upload: the transfer (${defaultVerified})`, m.upload, m.curlPut],
    [`platform files upload: the whole command (${defaultVerified})`, m.uploadWall, m.curlPut],
    ['PLATFORM_UPLOAD_MD5=on: the transfer (crc32c+md5)', m.uploadMd5, m.curlPut],
    ['PLATFORM_UPLOAD_MD5=on: the whole command', m.uploadMd5Wall, m.curlPut],
    ['curl GET from a signed address', m.curlGet, m.curlGet],
    ['platform files download: the transfer, CRC32C', m.download, m.curlGet],
    ['platform files download: the whole command', m.downloadWall, m.curlGet],
  ]
  process.stdout.write(
    `\n${fmt(mib(size), 0)} MiB file, median of ${ROUNDS} rounds (load average ${load.map((l) => fmt(l)).join(', ')} at each round's start)\n`,
  )
  process.stdout.write(`${'what'.padEnd(60)}  seconds  MiB/s    against curl\n`)
  for (const [label, seconds, curlSeconds] of table)
    process.stdout.write(
      `${label.padEnd(60)}  ${fmt(seconds, 2).padStart(7)}  ${fmt(rate(seconds)).padStart(7)}  ${fmt(curlSeconds / seconds, 2).padStart(6)} ×\n`,
    )
  process.stdout.write(
    `\nkilled at half: the killed process had written ${fmt(mib(resume.killed_at_bytes))} MiB, the resumed run found ${fmt(mib(resume.resumed_from))} MiB stored: ` +
      `${fmt(mib(resume.resent_bytes), 2)} MiB sent again (target: under one ${RESEND_TARGET_MIB} MiB chunk)\n`,
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
    upload_vs_curl_put: m.curlPut / m.upload,
    upload_verified: defaultVerified,
    upload_with_md5_vs_curl_put: m.curlPut / m.uploadMd5,
    upload_vs_curl_session: m.curlSession / m.upload,
    download_vs_curl_get: m.curlGet / m.download,
    resume: { ...resume, target_bytes: RESEND_TARGET_MIB * 1024 * 1024 },
    target_vs_curl: TARGET_VS_CURL,
    target_met: {
      upload: m.curlPut / m.upload >= TARGET_VS_CURL,
      upload_with_md5: m.curlPut / m.uploadMd5 >= TARGET_VS_CURL,
      download: m.curlGet / m.download >= TARGET_VS_CURL,
      resent_under_one_chunk: resume.resent_bytes < RESEND_TARGET_MIB * 1024 * 1024,
    },
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
