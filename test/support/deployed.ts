import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { startProcess, type RunningProcess } from '../../emulators/processes.js'
import type { PlannedFunction } from './deploy-plan.js'
import { repoRoot } from './suite.js'

/**
 * The platform's source as Cloud Build receives and installs it, and its functions run as Cloud
 * Run runs them: for the deployed-shape tier (test/e2e/deployed-shape.test.ts).
 */

function run(command: string, args: string[], cwd: string): Promise<number> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: process.env, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`))
      else resolve(Date.now() - started)
    })
  })
}

/**
 * `infra/stage-source.sh <source>` (which builds dist/ first), then what Cloud Build does with the
 * folder: `npm ci --omit=dev`, from the npm registry through the machine's npm cache. Returns how
 * long each took.
 */
export async function stageAndInstall(source: string): Promise<{ stageMs: number; installMs: number }> {
  const stageMs = await run('bash', [join(repoRoot, 'infra/stage-source.sh'), source], repoRoot)
  const installMs = await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], source)
  return { stageMs, installMs }
}

/**
 * What Cloud Run gives a function's instance besides the deploy's environment (Google's
 * "environment variables set automatically"): its port, its name and revision, the entry point and
 * signature type from the deploy (an HTTP trigger is signature type http; the framework still uses
 * the signature the code registers for the entry point), and NODE_ENV=production, which Google's
 * Node.js buildpacks set. PATH and HOME as any container has them.
 */
export function cloudRunEnv(fn: PlannedFunction, port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    PORT: String(port),
    K_SERVICE: fn.name,
    K_REVISION: `${fn.name}-00001-tst`,
    K_CONFIGURATION: fn.name,
    FUNCTION_TARGET: fn.entryPoint,
    FUNCTION_SIGNATURE_TYPE: signatureType(fn),
    NODE_ENV: 'production',
  }
}

/** The functions-framework signature type of a deployed function: an HTTP trigger is `http`, an event trigger `cloudevent`. */
export const signatureType = (fn: PlannedFunction) => (fn.flags.has('--trigger-http') ? 'http' : 'cloudevent')

/**
 * One function as its own process, as its Cloud Run instance runs it: the staged folder's own
 * functions-framework, with `env` only (nothing of the test's environment), its output in `logFile`.
 * Ready once it accepts a connection on its port, as Cloud Run's default startup probe has it (the
 * framework listens once the function is loaded; a CloudEvent function answers no GET).
 */
export function startFunction(opts: {
  source: string
  fn: PlannedFunction
  port: number
  env: Record<string, string>
  logFile: string
}): Promise<RunningProcess> {
  return startProcess({
    name: `the ${opts.fn.name} function`,
    command: join(opts.source, 'node_modules/.bin/functions-framework'),
    args: [`--target=${opts.fn.entryPoint}`, `--signature-type=${signatureType(opts.fn)}`, `--source=${opts.source}`],
    host: `127.0.0.1:${opts.port}`,
    readyUrl: `tcp://127.0.0.1:${opts.port}`,
    env: { ...opts.env, ...cloudRunEnv(opts.fn, opts.port) },
    inheritEnv: false,
    cwd: opts.source,
    logFile: opts.logFile,
    timeoutMs: 90_000,
  })
}
