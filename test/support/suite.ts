import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { layout, type SuiteFile } from '../../emulators/data-dir.js'
import { emulatorGroup, readEmulatorsFile } from '../../emulators/leftovers.js'

/**
 * The local suite as a user runs it (`npm start`: emulators/start.ts under tsx) as a real child process, in its
 * own process group as a terminal would put it. For end-to-end tests (the suite itself, the CLI).
 */

export const repoRoot = resolve(import.meta.dirname, '../..')

export interface SpawnedSuite {
  child: ChildProcess
  suite: SuiteFile
  basePort: number
  dataDir: string
  /** The CLI configuration folder the suite set its profiles in (PLATFORM_CONFIG_DIR): never the user's own. */
  configDir: string
  output(): string
  /** Every live process descended from the spawned suite (the emulators' JVMs, the jobs it runs). */
  descendants(): ProcessInfo[]
  /** Sends `signal` to the suite process, as Ctrl-C or `kill` would, and waits for the command to exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Last resort for a test's cleanup: SIGKILL to the command and every descendant, and to the emulators it recorded in the data folder. */
  kill(): void
}

/**
 * SIGKILL to the emulators a suite recorded in `dataDir`/emulators.json that are still running:
 * they outlive a suite killed with SIGKILL, as they are meant to.
 */
export function killRecordedEmulators(dataDir: string, opts: { onlyOrphans?: boolean } = {}) {
  const file = readEmulatorsFile(layout(dataDir))
  // With onlyOrphans, the emulators of a suite that is still running are left to it.
  if (!file || (opts.onlyOrphans && pidAlive(file.suite_pid))) return
  for (const record of file.emulators) {
    if (!emulatorGroup(record).length) continue
    try {
      process.kill(-record.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

export interface ProcessInfo {
  pid: number
  ppid: number
  pgid: number
  args: string
}

export function processTable(): ProcessInfo[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,args='], { encoding: 'utf8' })
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), args: m[4]! }))
}

export function descendantsOf(rootPid: number, table = processTable()): ProcessInfo[] {
  const found: ProcessInfo[] = []
  const frontier = [rootPid]
  while (frontier.length) {
    const parent = frontier.pop()!
    for (const p of table) {
      if (p.ppid === parent) {
        found.push(p)
        frontier.push(p.pid)
      }
    }
  }
  return found
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const srv = createServer()
    srv.once('error', () => resolvePort(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolvePort(true)))
  })
}

/**
 * Base ports handed out, one file per base holding the pid of the process that took it: a suite
 * binds its ports seconds after the check that they are free (its JVMs start slowly), so two test
 * files (or two worktrees) checking at the same moment could otherwise both take the same range.
 */
const RESERVED_BASES = join(tmpdir(), 'platform-suite-base-ports')

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Claims `base` for this process; a claim whose process is gone is stale. */
function reserveBase(base: number): boolean {
  mkdirSync(RESERVED_BASES, { recursive: true })
  const file = join(RESERVED_BASES, String(base))
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return true
    } catch {
      const holder = Number(readFileSync(file, 'utf8'))
      if (holder === process.pid || (Number.isInteger(holder) && holder > 0 && pidAlive(holder))) return false
      rmSync(file, { force: true })
    }
  }
  return false
}

/**
 * A base port whose whole range (base .. base+89) is free and claimed by no live process, below the
 * kernel's ephemeral range so that servers other tests bind to port 0 cannot land in it.
 */
export async function freeBasePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + 100 * Math.floor(Math.random() * 200)
    let free = true
    for (let port = base; port < base + 90 && free; port++) free = await portFree(port)
    if (free && reserveBase(base)) return base
  }
  throw new Error('no free range of 90 ports found for the local suite')
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * `npm start` as the tests run it: Node itself with tsx as its loader, one process (npx and tsx's
 * CLI would add two, and a second of CPU, in front of it). Node by its path, so PATH can be emptied
 * to hide gcloud and java without hiding node.
 */
const startCommand = (args: string[]): [string, string[]] => [process.execPath, ['--import', 'tsx', 'emulators/start.ts', ...args]]

/** Runs `emulators/start.ts` to completion, for the cases where it refuses to start. */
export async function runStart(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  const child = spawn(...startCommand(args), {
    cwd: repoRoot,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, opts.timeoutMs ?? 60_000)
  const [code, signal] = (await new Promise((r) => child.once('exit', (...a) => r(a)))) as [number | null, NodeJS.Signals | null]
  clearTimeout(timer)
  // A start that did not end by itself got as far as its emulators, which outlive the kill.
  const dataDir = args[args.indexOf('--data-dir') + 1]
  if (timedOut && args.includes('--data-dir') && dataDir) killRecordedEmulators(dataDir, { onlyOrphans: true })
  return { code, signal, stdout, stderr }
}

export async function spawnLocalSuite(opts: {
  dataDir: string
  basePort: number
  clean?: boolean
  timeoutMs?: number
  configDir?: string
}): Promise<SpawnedSuite> {
  const args = ['--data-dir', opts.dataDir, '--base-port', String(opts.basePort)]
  if (opts.clean) args.push('--clean')
  const spawnedAt = Date.now()
  // npm start sets the CLI's local profiles: a test's suite sets them in a folder of its own.
  const configDir = opts.configDir ?? join(opts.dataDir, 'cli-config')
  const child = spawn(...startCommand(args), {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PLATFORM_CONFIG_DIR: configDir },
  })
  // The last 50,000 characters of what it wrote, kept as chunks: under load the services write an
  // access line per request, and copying the whole tail at every chunk would cost the reader (a
  // benchmark's load generator) more than its own requests.
  const OUTPUT_KEPT = 50_000
  const chunks: string[] = []
  let kept = 0
  const collect = (d: Buffer) => {
    const chunk = d.toString()
    chunks.push(chunk)
    kept += chunk.length
    while (chunks.length > 1 && kept - chunks[0]!.length >= OUTPUT_KEPT) kept -= chunks.shift()!.length
  }
  const output = () => chunks.join('').slice(-OUTPUT_KEPT)
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))

  const kill = () => {
    for (const p of descendantsOf(child.pid!).reverse()) {
      try {
        process.kill(p.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
    killRecordedEmulators(opts.dataDir)
  }

  const suiteFile = join(opts.dataDir, 'suite.json')
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000)
  let suite: SuiteFile | undefined
  while (!suite) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the local suite exited while starting:\n${output()}`)
    if (Date.now() > deadline) {
      kill()
      throw new Error(`the local suite did not write ${suiteFile} in time:\n${output()}`)
    }
    if (existsSync(suiteFile)) {
      const candidate = JSON.parse(readFileSync(suiteFile, 'utf8')) as SuiteFile
      // A crashed run's file lasts until this start removes it; only this start's counts.
      if (Date.parse(candidate.started_at) >= spawnedAt) suite = candidate
    }
    if (!suite) await new Promise((r) => setTimeout(r, 200))
  }
  const found = suite

  return {
    child,
    suite: found,
    basePort: opts.basePort,
    dataDir: opts.dataDir,
    configDir,
    output,
    descendants: () => descendantsOf(child.pid!),
    kill,
    async stop(signal = 'SIGINT', timeoutMs = 60_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited
      process.kill(found.pid, signal)
      const timer = setTimeout(kill, timeoutMs)
      const result = await exited
      clearTimeout(timer)
      return result
    },
  }
}
