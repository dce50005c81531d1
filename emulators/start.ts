import { relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { AlreadyRunningError, layout, type SuiteFile } from './data-dir.js'
import { DEFAULT_BASE_PORT, MAX_BASE_PORT } from './ports.js'
import { MissingToolError } from './processes.js'
import type { Level } from '../lib/log.js'

/**
 * `npm start`: the whole platform on this machine. Ctrl-C (or SIGTERM) stops everything it
 * started and keeps the data for the next start; --clean starts from nothing.
 */

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const satisfies readonly Level[]

const USAGE = `usage: npm start -- [--clean] [--data-dir <dir>] [--base-port <n>] [--log-level <level>] [--quiet]

  --clean              start with empty data (removes the previous run's records, files and token)
  --data-dir <dir>     where the suite keeps its data and writes suite.json (default: .local/ in the repository)
  --base-port <n>      first port of the suite (default ${DEFAULT_BASE_PORT}): OIDC provider on n, services on n+1..n+19,
                       orchestrator functions on n+20.., storage server on n+40, Firestore emulator on n+80,
                       Pub/Sub emulator on n+85
  --log-level <level>  the services' lines shown: ${LEVELS.join(', ')} (default: LOG_LEVEL, else info);
                       on a terminal, debug also shows the routine lines (requests that succeeded, idle
                       reconcile passes). Lines of info and above are kept in <data-dir>/logs/platform.log
                       whatever is shown (docs/logs.md)
  --quiet              no progress lines, and only warnings from the services unless --log-level says
                       otherwise; the summary is still printed`

const repoRoot = resolve(import.meta.dirname, '..')

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

function parseFlags() {
  let values
  try {
    ;({ values } = parseArgs({
      options: {
        clean: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
        'base-port': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`, 2)
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  const rawBase = values['base-port'] ?? String(DEFAULT_BASE_PORT)
  const basePort = Number(rawBase)
  if (!/^\d+$/.test(rawBase) || basePort < 1024 || basePort > MAX_BASE_PORT) {
    fail(`--base-port must be a whole number from 1024 to ${MAX_BASE_PORT}, got ${JSON.stringify(rawBase)}`, 2)
  }
  const rawLevel = values['log-level'] ?? (values.quiet ? 'warn' : (process.env.LOG_LEVEL ?? 'info'))
  const level = LEVELS.find((l) => l === rawLevel)
  if (!level) fail(`--log-level (or LOG_LEVEL) must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(rawLevel)}`, 2)
  const terminal = process.stdout.isTTY === true
  return {
    clean: values.clean,
    quiet: values.quiet,
    // no-color.org: NO_COLOR set and not empty turns colour off.
    log: { level, terminal, color: terminal && !process.env.NO_COLOR },
    basePort,
    dataDir: resolve(values['data-dir'] ?? resolve(repoRoot, '.local')),
  }
}

function summary(suite: SuiteFile, passwordCreated: boolean, cliProfiles: string[]): string {
  // The label column fits the longest label (a function's name is as long as it needs), and two spaces more.
  const labels = [...Object.keys(suite.services), ...Object.keys(suite.functions).map((name) => `fn ${name}`), 'Firestore emulator']
  const width = Math.max(...labels.map((l) => l.length)) + 2
  const pad = (s: string) => s.padEnd(width)
  const lines = [
    '',
    `The local suite is running (pid ${suite.pid}).`,
    '',
    ...Object.entries(suite.services).map(([name, url]) => `  ${pad(name)}${url}   (docs ${url}/docs)`),
    ...Object.entries(suite.functions).map(([name, url]) => `  ${pad(`fn ${name}`)}${url}`),
    `  ${pad('storage server')}${suite.storage_url}   (Cloud Storage's XML API for the local buckets: signed addresses only)`,
    `  ${pad('OIDC issuer')}${suite.oidc_issuer}`,
    `  ${pad('Firestore emulator')}${suite.firestore_emulator_host}`,
    `  ${pad('Pub/Sub emulator')}${suite.pubsub_emulator_host}`,
    '',
    `  ${pad('console')}${suite.services.admin}/console   (in a browser; sign in as the user below)`,
    '',
    `  ${pad('project')}Demo  ${suite.project_id}  (bucket ${suite.bucket_name})`,
    `  ${pad('organization')}Demo Lab  ${suite.org_id}`,
    `  ${pad('user')}${suite.user.email}`,
    `  ${pad('password')}${passwordCreated ? suite.user.password : '(unchanged; see suite.json)'}`,
    `  ${pad('reviewer')}${suite.reviewer.email}  (signs reports; password ${passwordCreated ? suite.reviewer.password : 'in suite.json'})`,
    `  ${pad('token')}${suite.token}`,
    '',
    ...cliProfiles.map((line, i) => `  ${pad(i ? '' : 'CLI')}${line}`),
    '',
    `  ${pad('suite file')}${relative(process.cwd(), layout(suite.data_dir).suiteFile) || layout(suite.data_dir).suiteFile}`,
    `  ${pad('data')}${suite.data_dir}`,
    '',
    // $(...) and not the token itself: the same two lines work on any port and data folder (docs/second-terminal.md).
    'Try:  TOKEN=$(npx platform token); ADMIN=$(npx platform config get admin_url)',
    '      curl -H "Authorization: Bearer $TOKEN" "$ADMIN/api/v1/projects"',
    'Press Ctrl-C to stop; the data is kept for the next start (npm start -- --clean to start over).',
    '',
  ]
  return lines.join('\n')
}

async function main() {
  const flags = parseFlags()
  // Nothing here runs on Google Cloud: without this, every client library probes the metadata
  // server on first use and prints a MetadataLookupWarning.
  process.env.METADATA_SERVER_DETECTION ??= 'none'
  const say = flags.quiet ? undefined : (line: string) => process.stderr.write(`[local suite] ${line}\n`)
  // Loaded after the flags are parsed, so that --help and flag errors answer at once.
  const { PortInUseError, startSuite } = await import('./suite.js')
  let running: Awaited<ReturnType<typeof startSuite>> | undefined
  let signalled: NodeJS.Signals | undefined

  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return
    signalled = signal
    process.stderr.write(`\n[local suite] ${signal}: stopping\n`)
    // A signal during startup is handled when startSuite settles: it stops what it started.
    if (!running) return
    running.stop().then(
      () => process.exit(0),
      (err) => fail(`stopping failed: ${err instanceof Error ? err.message : String(err)}`),
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  try {
    running = await startSuite({ ...flags, say, cliEnv: process.env })
  } catch (err) {
    if (err instanceof MissingToolError) fail(`cannot start the local suite: ${err.message}`)
    if (err instanceof AlreadyRunningError || err instanceof PortInUseError) fail(`cannot start the local suite: ${err.message}`)
    throw err
  }
  if (signalled) {
    await running.stop()
    process.exit(0)
  }
  process.stdout.write(summary(running.suite, running.passwordCreated, running.cliProfiles) + '\n')
}

main().catch((err) => fail(`the local suite failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`))
