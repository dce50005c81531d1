/**
 * Builds the environment of the deployed functions for infra/deploy.sh, as the YAML that
 * `gcloud functions deploy --env-vars-file` reads, and checks it with the platform's own config
 * schema (lib/config.ts) so that a bad setting stops the deploy instead of every function's boot.
 *
 *   tsx scripts/deploy-env.ts [--file <KEY=VALUE file>] [--set KEY=VALUE]... [--default KEY=VALUE]... [--secret KEY]...
 *
 * --set: decided by the deploy (project, topics, backends); the file may not set them.
 * --default: used unless the file sets the key.
 * --secret: provided at run time from Secret Manager: refused in the file, never written, and left
 *   out of the check (its value is not at hand here; lib/config.ts checks it as each instance starts).
 */
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig } from '../lib/config.js'

/** Settings that only make sense on a developer machine; a deployed function must never see them. */
const LOCAL_ONLY = [
  'FIRESTORE_EMULATOR_HOST',
  'PUBSUB_EMULATOR_HOST',
  'LOCAL_STORAGE_ROOT',
  'LOCAL_WORK_ROOT',
  'LOCAL_SIGNING_KEY_FILE',
  'LOCAL_SIGNING_ACCOUNT',
  'OIDC_ALLOW_HTTP',
]
const KEY_RE = /^[A-Z][A-Z0-9_]*$/

function fail(message: string): never {
  process.stderr.write(`deploy-env: ${message}\n`)
  process.exit(1)
}

function pair(arg: string | undefined, flag: string): [string, string] {
  const i = arg?.indexOf('=') ?? -1
  if (!arg || i <= 0) fail(`${flag} needs KEY=VALUE`)
  return [arg.slice(0, i), arg.slice(i + 1)]
}

/** KEY=VALUE lines; blank lines and # comments skipped; a value may be wrapped in single or double quotes. */
function parseEnvFile(text: string, name: string): Map<string, string> {
  const out = new Map<string, string>()
  text.split(/\r?\n/).forEach((raw, n) => {
    const line = raw.trim()
    if (!line || line.startsWith('#')) return
    const m = /^(?:export\s+)?([^=\s]+)\s*=\s*(.*)$/.exec(line)
    if (!m || !KEY_RE.test(m[1]!)) fail(`${name}:${n + 1}: expected KEY=VALUE, got ${JSON.stringify(raw)}`)
    let value = m[2]!
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]!)) value = value.slice(1, -1)
    if (out.has(m[1]!)) fail(`${name}:${n + 1}: ${m[1]} is set twice`)
    out.set(m[1]!, value)
  })
  return out
}

const set = new Map<string, string>()
const defaults = new Map<string, string>()
const secrets = new Set<string>()
let file: Map<string, string> = new Map()
let fileName = ''

const args = process.argv.slice(2)
for (let i = 0; i < args.length; i++) {
  const flag = args[i]
  if (flag === '--file') {
    fileName = args[++i] ?? fail('--file needs a path')
    let text: string
    try {
      text = readFileSync(fileName, 'utf8')
    } catch {
      fail(`cannot read the functions env file ${fileName}`)
    }
    file = parseEnvFile(text, fileName)
  } else if (flag === '--set') set.set(...pair(args[++i], flag))
  else if (flag === '--default') defaults.set(...pair(args[++i], flag))
  else if (flag === '--secret') secrets.add(args[++i] ?? fail('--secret needs a key'))
  else fail(`unknown argument ${flag}`)
}

for (const key of file.keys()) {
  if (LOCAL_ONLY.includes(key)) fail(`${fileName}: ${key} is for the local suite only; remove it from the deployed environment`)
  if (set.has(key)) fail(`${fileName}: ${key} is set by infra/deploy.sh (from its own variables); remove it from the file`)
  if (secrets.has(key))
    fail(`${fileName}: ${key} comes from Secret Manager (FUNCTION_SECRETS, or AUDIT_KEY_SECRET for the audit keys); remove it from the file`)
}

const env = new Map([...defaults, ...file, ...set])
try {
  loadConfig(Object.fromEntries(env))
} catch (error) {
  if (error instanceof ConfigError) fail(`the functions' environment is not valid: ${error.message.replace(/^invalid configuration: /, '')}`)
  throw error
}

// JSON strings are valid YAML scalars, and keep every value a string as Cloud Functions requires.
for (const key of [...env.keys()].sort()) process.stdout.write(`${key}: ${JSON.stringify(env.get(key))}\n`)
