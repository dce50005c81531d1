import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readSync, realpathSync, statSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { delimiter, dirname, join } from 'node:path'

/**
 * Starting and stopping the Google Cloud emulators, shared by the local suite and the test setup.
 * Each emulator is spawned in its own process group (the gcloud wrappers are shell scripts that
 * start a JVM), so stopping kills the JVM too. With a log file, an emulator writes its output
 * there rather than to a pipe, and so depends on nothing of the process that started it: the local
 * suite's emulators outlive a crash of the suite, and the next start takes their data (leftovers.ts).
 */

export class MissingToolError extends Error {
  override name = 'MissingToolError'
}

let sdkRootCache: string | undefined
export function sdkRoot(): string {
  if (sdkRootCache) return sdkRootCache
  let root: string
  try {
    // gcloud is <sdk root>/bin/gcloud (PATH often holds a link to it): found so, it costs no run of
    // gcloud itself, a Python program that takes a second or two of CPU to say where it lives.
    root =
      sdkRootBeside(findOnPath('gcloud')) ??
      execFileSync('gcloud', ['info', '--format=value(installation.sdk_root)'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    throw new MissingToolError(
      'the Google Cloud CLI (gcloud) is not installed or not on PATH; install it with the components cloud-firestore-emulator and pubsub-emulator',
    )
  }
  sdkRootCache = root
  return root
}

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, command)
    if (dir && existsSync(candidate)) return candidate
  }
  return undefined
}

/** The SDK root of a gcloud executable at <root>/bin/gcloud, when that is what it is. */
function sdkRootBeside(gcloud: string | undefined): string | undefined {
  if (!gcloud) return undefined
  const root = dirname(dirname(realpathSync(gcloud)))
  return existsSync(join(root, 'platform')) && existsSync(join(root, 'lib', 'gcloud.py')) ? root : undefined
}

export function emulatorCommand(kind: 'firestore' | 'pubsub'): string {
  const root = sdkRoot()
  const path =
    kind === 'firestore'
      ? join(root, 'platform/cloud-firestore-emulator/cloud_firestore_emulator')
      : join(root, 'platform/pubsub-emulator/bin/cloud-pubsub-emulator')
  if (!existsSync(path)) {
    const component = kind === 'firestore' ? 'cloud-firestore-emulator' : 'pubsub-emulator'
    throw new MissingToolError(`the ${kind} emulator is not installed (expected ${path}); install it with: gcloud components install ${component}`)
  }
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' })
  } catch {
    throw new MissingToolError('Java is not installed or not on PATH; the emulators need Java 17 or later')
  }
  return path
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1)
  return port!
}

/**
 * `count` distinct free ports. Each is held until all are found: a port closed at once may be the
 * kernel's answer to the next request too, and two processes given one port answer for each other.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<{ port: number; srv: ReturnType<typeof createServer> }>((resolve, reject) => {
          const srv = createServer()
          srv.unref()
          srv.on('error', reject)
          srv.listen(0, '127.0.0.1', () => {
            const addr = srv.address()
            resolve({ port: typeof addr === 'object' && addr ? addr.port : 0, srv })
          })
        }),
    ),
  )
  await Promise.all(held.map(({ srv }) => new Promise<void>((resolve) => srv.close(() => resolve()))))
  return held.map(({ port }) => port)
}

export interface RunningProcess {
  name: string
  host: string
  child: ChildProcess
  stop(): Promise<void>
  /** The last 20 kB of what it printed (since this start, for a log file). */
  output(): string
}

const OUTPUT_TAIL = 20_000

/** The end of what was appended to `path` since it was `from` bytes long. */
function tailOf(path: string, from: number): string {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const size = statSync(path).size
    const start = Math.max(from, size - OUTPUT_TAIL)
    const buffer = Buffer.alloc(Math.max(0, size - start))
    readSync(fd, buffer, 0, buffer.length, start)
    return buffer.toString('utf8')
  } catch {
    return ''
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Resolves once a TCP connection to `tcp://host:port` is accepted; rejects otherwise. */
function tcpAccepts(url: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.destroy()
      resolve()
    })
    socket.once('error', reject)
  })
}

/** Ready once `url` answers below 500, or, for a `tcp://host:port` address, once a connection is accepted (Cloud Run's default startup probe). */
async function waitFor(url: string, child: ChildProcess, name: string, timeoutMs: number, out: () => string) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} while starting:\n${out()}`)
    try {
      if (url.startsWith('tcp:')) {
        await tcpAccepts(new URL(url))
        return
      }
      // Each attempt bounded: one that hangs (a process accepting connections before it answers) must not use up the deadline.
      const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, Math.min(5_000, deadline - Date.now()))) })
      await res.body?.cancel()
      if (res.status < 500) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${name} did not become ready at ${url} within ${timeoutMs} ms:\n${out()}`)
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Resolves true once no process of the group is left, false if some remain after `timeoutMs`. */
export async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 100))
  }
  return true
}

/** Spawns a long-running helper in its own process group, waits for `readyUrl`, and returns a handle that stops the whole group. */
export async function startProcess(opts: {
  name: string
  command: string
  args: string[]
  host: string
  /** An address that answers below 500 once it is ready, or `tcp://host:port`: ready once it accepts a connection. */
  readyUrl: string
  env?: NodeJS.ProcessEnv
  /** False: the process sees `env` only, nothing of this process's environment (as a deployed function sees only what its platform sets). */
  inheritEnv?: boolean
  cwd?: string
  timeoutMs?: number
  /** Where its stdout and stderr go (appended); without one, they are read through pipes and kept in memory. */
  logFile?: string
  /** Called as soon as it is spawned, with its pid (which is its process group id), before it is ready. */
  onSpawn?: (pid: number) => void
}): Promise<RunningProcess> {
  let out: () => string
  let child: ChildProcess
  const env = opts.inheritEnv === false ? opts.env : { ...process.env, ...opts.env }
  if (opts.logFile) {
    // A pipe would tie it to this process: once this process is gone, its next write fails with EPIPE.
    const fd = openSync(opts.logFile, 'a')
    const from = statSync(opts.logFile).size
    try {
      child = spawn(opts.command, opts.args, { detached: true, stdio: ['ignore', fd, fd], env, cwd: opts.cwd })
    } finally {
      closeSync(fd)
    }
    const logFile = opts.logFile
    out = () => tailOf(logFile, from)
  } else {
    child = spawn(opts.command, opts.args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env, cwd: opts.cwd })
    let buffer = ''
    const collect = (chunk: Buffer) => {
      buffer = (buffer + chunk.toString()).slice(-OUTPUT_TAIL)
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    out = () => buffer
  }
  if (child.pid !== undefined) opts.onSpawn?.(child.pid)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      return
    }
    // The wrapper script exits before its JVM has finished shutting down: wait for the whole group.
    if (!(await groupGone(child.pid!, 10_000))) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
      await groupGone(child.pid!, 5_000)
    }
    await exited
  }
  try {
    await waitFor(opts.readyUrl, child, opts.name, opts.timeoutMs ?? 60_000, out)
  } catch (err) {
    await stop()
    throw err
  }
  return { name: opts.name, host: opts.host, child, stop, output: out }
}

interface EmulatorOptions {
  port?: number
  logFile?: string
  onSpawn?: (pid: number) => void
}

export async function startFirestoreEmulator(opts: EmulatorOptions & { importData?: string; exportOnExit?: string } = {}) {
  const port = opts.port ?? (await freePort())
  const host = `127.0.0.1:${port}`
  const args = ['start', '--host=127.0.0.1', `--port=${port}`]
  if (opts.importData) args.push(`--import-data=${opts.importData}`)
  if (opts.exportOnExit) args.push(`--export-on-exit=${opts.exportOnExit}`)
  return startProcess({
    name: 'firestore emulator',
    command: emulatorCommand('firestore'),
    args,
    host,
    readyUrl: `http://${host}/`,
    logFile: opts.logFile,
    onSpawn: opts.onSpawn,
  })
}

export async function startPubsubEmulator(opts: EmulatorOptions & { dataDir?: string } = {}) {
  const port = opts.port ?? (await freePort())
  const host = `127.0.0.1:${port}`
  const args = ['--host=127.0.0.1', `--port=${port}`]
  if (opts.dataDir) args.push(`--data-dir=${opts.dataDir}`)
  return startProcess({
    name: 'pubsub emulator',
    command: emulatorCommand('pubsub'),
    args,
    host,
    readyUrl: `http://${host}/`,
    logFile: opts.logFile,
    onSpawn: opts.onSpawn,
  })
}
