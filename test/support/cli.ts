import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { main } from '../../cli/main.js'
import { createAdminApp } from '../../functions/admin/service.js'
import { createComputeApp } from '../../functions/compute/service.js'
import { clinicalDeps } from '../../functions/clinical/deps.js'
import { createClinicalApp } from '../../functions/clinical/service.js'
import { createKernel } from '../../lib/kernel.js'
import { auditDeps } from '../../functions/audit/deps.js'
import { createAuditApp } from '../../functions/audit/service.js'
import { SettingsStore } from '../../cli/settings.js'
import { listen, startLoginStack } from './oidc.js'
import { makeWorld } from './world.js'
import { localCompute } from './compute.js'
import { localFiles } from './files.js'

export const repoRoot = resolve(import.meta.dirname, '../..')
const BIN = join(repoRoot, 'cli/bin.js')

/**
 * The admin, compute, clinical-data, file and audit services of one test tenant, served on real local ports as
 * the CLI meets them: the platform catalogue seeded, the local Batch executor and storage in a
 * temp folder, the local storage server serving the file service's signed addresses to that same
 * storage. With `login`, the admin service is the one of the login stack (local OIDC provider, a
 * user with an e-mail and a password).
 */
export async function startPlatform(opts: { login?: boolean } = {}) {
  const stack = opts.login ? await startLoginStack() : undefined
  const world = stack?.world ?? (await makeWorld())
  const adminServer = stack ? undefined : await listen()
  adminServer?.serve(createAdminApp(world.deps))
  const adminUrl = stack?.adminUrl ?? adminServer!.url

  const local = await localCompute(world)
  const deps = local.deps
  const computeServer = await listen()
  computeServer.serve(createComputeApp(deps))

  const files = await localFiles(world, { storage: local.storage })
  const filesServer = await listen()
  filesServer.serve(files.app)
  const auditServer = await listen()
  auditServer.serve(createAuditApp(auditDeps(world.deps)))
  // A kernel of its own, so that its audit events say service 'clinical', on the world's Firestore.
  const clinicalServer = await listen()
  clinicalServer.serve(createClinicalApp(clinicalDeps(createKernel(world.deps.config, 'clinical', { firestore: world.deps.db.firestore }))))

  return {
    world,
    login: stack,
    compute: deps,
    /** The project's bucket folders and the storage server. */
    files,
    adminUrl,
    computeUrl: computeServer.url,
    filesUrl: filesServer.url,
    auditUrl: auditServer.url,
    clinicalUrl: clinicalServer.url,
    async stop() {
      await Promise.all([adminServer?.stop(), stack?.stop(), computeServer.stop(), filesServer.stop(), auditServer.stop(), clinicalServer.stop()])
      await files.close()
      await local.close()
      await removeConfigHomes()
    },
  }
}

export type Platform = Awaited<ReturnType<typeof startPlatform>>

const homes: string[] = []

/** Removes the config directories made by configHome. */
export async function removeConfigHomes() {
  await Promise.all(homes.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** A fresh config directory whose local profile points at the platform (as `platform config set` would write it). */
export async function configHome(
  platform?: Pick<Platform, 'adminUrl' | 'computeUrl'> & Partial<Pick<Platform, 'filesUrl' | 'auditUrl' | 'clinicalUrl'>>,
  project?: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-home-'))
  homes.push(dir)
  const settings = new SettingsStore(dir)
  if (platform) {
    settings.set('local', 'admin_url', platform.adminUrl)
    settings.set('local', 'compute_url', platform.computeUrl)
    if (platform.filesUrl) settings.set('local', 'files_url', platform.filesUrl)
    if (platform.auditUrl) settings.set('local', 'audit_url', platform.auditUrl)
    if (platform.clinicalUrl) settings.set('local', 'clinical_url', platform.clinicalUrl)
  }
  if (project) settings.set('local', 'project', project)
  return dir
}

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  configDir: string
  env?: Record<string, string | undefined>
  /** Written to stdin, which is then closed; without it stdin is an empty pipe (not a terminal). */
  input?: string
  timeoutMs?: number
  /** The binary's working folder (default: the repository). */
  cwd?: string
}

/** The environment of a user with only the given PLATFORM_* variables set. */
function cliEnvironment(opts: CliOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PLATFORM_')) env[k] = v
  env.PLATFORM_CONFIG_DIR = opts.configDir
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

export interface RunningCli {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** Resolves once stdout or stderr contains `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>
  exited: Promise<CliResult>
}

/** Output collected as it comes, and a wait for some text to appear in it. */
function collector() {
  let text = ''
  const waiters: Array<() => void> = []
  return {
    text: () => text,
    add(chunk: string) {
      text += chunk
      waiters.forEach((w) => w())
    },
    waitFor(what: string | RegExp, timeoutMs: number, describe: () => string) {
      const seen = () => (typeof what === 'string' ? text.includes(what) : what.test(text))
      return new Promise<void>((resolveWait, reject) => {
        if (seen()) return resolveWait()
        const timeout = setTimeout(() => reject(new Error(`waited for ${String(what)}; got:\n${describe()}`)), timeoutMs)
        waiters.push(() => {
          if (seen()) {
            clearTimeout(timeout)
            resolveWait()
          }
        })
      })
    },
  }
}

export interface InProcessOptions extends CliOptions {
  /** Which of the streams claim to be a terminal (isTTY). */
  tty?: { stdin?: boolean; stdout?: boolean }
}

export interface InProcessCli {
  stdout(): string
  stderr(): string
  /** Resolves once stdout or stderr contains `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>
  /** What the user types, on a stdin that claims to be a terminal. */
  type(text: string): void
  exited: Promise<CliResult>
}

/**
 * The CLI's `main` called in this process, as `platform …` with only the given PLATFORM_* variables
 * set: its streams are collected, and claim to be a terminal as `tty` says. Everything but the
 * process itself (signals, the real exit code, a real terminal) is what the binary does.
 */
export function startMain(args: string[], opts: InProcessOptions): InProcessCli {
  const out = collector()
  const err = collector()
  const all = collector()
  const stream = (into: ReturnType<typeof collector>, isTTY: boolean) =>
    Object.assign(
      new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          into.add(chunk.toString())
          all.add(chunk.toString())
          done()
        },
      }),
      { isTTY },
    )
  const stdin = Object.assign(new PassThrough(), { isTTY: Boolean(opts.tty?.stdin) })
  if (opts.input !== undefined) stdin.end(opts.input)
  else if (!opts.tty?.stdin) stdin.end()
  const env = { PLATFORM_CONFIG_DIR: opts.configDir, ...opts.env }
  const io = { stdin, stdout: stream(out, Boolean(opts.tty?.stdout)), stderr: stream(err, false) }
  const exited = main(['node', 'platform', ...args], io, env).then((code) => ({ code, signal: null, stdout: out.text(), stderr: err.text() }))
  return {
    stdout: out.text,
    stderr: err.text,
    type: (text) => stdin.write(text),
    exited,
    waitFor: (text, timeoutMs = 15_000) => all.waitFor(text, timeoutMs, () => `stdout:\n${out.text()}\nstderr:\n${err.text()}`),
  }
}

export function runMain(args: string[], opts: InProcessOptions): Promise<CliResult> {
  return startMain(args, opts).exited
}

/** `node cli/bin.js …` as a real child process. */
export function startCli(args: string[], opts: CliOptions): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? repoRoot, env: cliEnvironment(opts), stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const waiters: Array<() => void> = []
  const onData = () => waiters.forEach((w) => w())
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString()
    onData()
  })
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString()
    onData()
  })
  if (opts.input !== undefined) child.stdin!.end(opts.input)
  else child.stdin!.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
  const exited = new Promise<CliResult>((resolveExit) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolveExit({ code, signal, stdout, stderr })
    }),
  )
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(text, timeoutMs = 15_000) {
      const seen = () => (typeof text === 'string' ? (stdout + stderr).includes(text) : text.test(stdout + stderr))
      return new Promise<void>((resolveWait, reject) => {
        if (seen()) return resolveWait()
        const timeout = setTimeout(() => reject(new Error(`waited for ${String(text)}; got:\n${stdout}\n${stderr}`)), timeoutMs)
        waiters.push(() => {
          if (seen()) {
            clearTimeout(timeout)
            resolveWait()
          }
        })
      })
    },
  }
}

export function runCli(args: string[], opts: CliOptions): Promise<CliResult> {
  return startCli(args, opts).exited
}

/**
 * The CLI on a terminal: `script` (util-linux) gives it a pseudo-terminal as stdin and stdout, as a
 * user's shell would. What the test writes to `script`'s stdin is what the user types.
 */
export function startCliOnTerminal(
  args: string[],
  opts: CliOptions & { /** The terminal's width (stty cols), when the test needs one. */ columns?: number },
): RunningCli & { type(text: string): void } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const command = (opts.columns ? `stty cols ${opts.columns} && ` : '') + [process.execPath, BIN, ...args].map(quote).join(' ')
  const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd: repoRoot, env: cliEnvironment(opts), stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  const waiters: Array<() => void> = []
  const collect = (d: Buffer) => {
    output += d.toString()
    waiters.forEach((w) => w())
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
  const exited = new Promise<CliResult>((resolveExit) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolveExit({ code, signal, stdout: output, stderr: '' })
    }),
  )
  return {
    child,
    stdout: () => output,
    stderr: () => '',
    exited,
    type: (text) => child.stdin!.write(text),
    waitFor(text, timeoutMs = 15_000) {
      const seen = () => (typeof text === 'string' ? output.includes(text) : text.test(output))
      return new Promise<void>((resolveWait, reject) => {
        if (seen()) return resolveWait()
        const timeout = setTimeout(() => reject(new Error(`waited for ${String(text)}; got:\n${output}`)), timeoutMs)
        waiters.push(() => {
          if (seen()) {
            clearTimeout(timeout)
            resolveWait()
          }
        })
      })
    },
  }
}

/** Parses --json output, failing the test with the CLI's own output when it is not JSON. */
export function parseJson<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  }
}
