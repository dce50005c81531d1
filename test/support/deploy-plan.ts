import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './suite.js'

/**
 * What `infra/deploy.sh --dry-run` says it would deploy, read from what it prints: the functions'
 * environment (the "# Functions environment" block), each `gcloud functions deploy` (name, entry
 * point, trigger, secrets), the topics, the push subscriptions and the scheduler jobs. The deployed-
 * shape tier (test/e2e/deployed-shape.test.ts) starts exactly this; it depends on nothing else of the
 * script, so the script may change freely as long as its plan keeps these lines.
 */

export interface PlannedFunction {
  /** The Cloud Functions name (also the path segment on the shared cloudfunctions.net host). */
  name: string
  entryPoint: string
  /** Every `--flag=value` of the command, and `--flag` alone as ''. */
  flags: Map<string, string>
  /** ENV_VAR → Secret Manager secret name, from --set-secrets. */
  secrets: Map<string, string>
}

export interface PlannedPush {
  subscription: string
  topic: string
  /** The push endpoint as printed: `<url of NAME>` stands for the function NAME's address. */
  endpoint: string
  ackDeadlineSeconds?: number
}

export interface PlannedSchedule {
  job: string
  uri: string
  method: string
  body: string
  headers: Record<string, string>
}

export interface DeployPlan {
  env: Record<string, string>
  functions: PlannedFunction[]
  topics: string[]
  pushes: PlannedPush[]
  schedules: PlannedSchedule[]
  /** The whole printed plan, for a failure message. */
  text: string
}

/** Splits one printed command into its words, undoing the script's quoting ('…' with '\'' for a quote, as its `quote` writes). */
export function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (ch === ' ') {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unterminated quote in: ${line}`)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (ch === '\\') {
      word = (word ?? '') + (line[++i] ?? '')
    } else word = (word ?? '') + ch
  }
  if (word !== undefined) words.push(word)
  return words
}

function flagsOf(words: string[]): Map<string, string> {
  const flags = new Map<string, string>()
  for (const w of words) {
    if (!w.startsWith('--')) continue
    const eq = w.indexOf('=')
    flags.set(eq < 0 ? w : w.slice(0, eq), eq < 0 ? '' : w.slice(eq + 1))
  }
  return flags
}

/** The plan's lines read into a DeployPlan. */
export function parseDeployPlan(text: string): DeployPlan {
  const lines = text.split('\n')
  const env: Record<string, string> = {}
  const start = lines.findIndex((l) => l.startsWith('# Functions environment'))
  if (start < 0) throw new Error(`the dry run printed no "# Functions environment" block:\n${text}`)
  for (const line of lines.slice(start + 1)) {
    const m = /^# {3}([A-Z][A-Z0-9_]*): (".*")$/.exec(line)
    if (!m) break
    env[m[1]!] = JSON.parse(m[2]!) as string
  }

  const functions: PlannedFunction[] = []
  const topics: string[] = []
  const pushes: PlannedPush[] = []
  const schedules: PlannedSchedule[] = []
  for (const line of lines) {
    if (line.startsWith('#') || !line.startsWith('gcloud ')) continue
    const words = shellWords(line)
    const is = (...command: string[]) => command.every((w, i) => words[i + 1] === w)
    const flags = flagsOf(words)
    if (is('functions', 'deploy')) {
      const entryPoint = flags.get('--entry-point')
      if (!entryPoint) throw new Error(`a function deploy without --entry-point: ${line}`)
      const secrets = new Map(
        (flags.get('--set-secrets') ?? '')
          .split(',')
          .filter(Boolean)
          .map((ref) => {
            const [key = '', value = ''] = ref.split('=')
            return [key, value.split(':')[0]!] as const
          }),
      )
      functions.push({ name: words[3]!, entryPoint, flags, secrets })
    } else if (is('pubsub', 'topics', 'create')) topics.push(words[4]!)
    else if (is('pubsub', 'subscriptions', 'create') && flags.has('--push-endpoint')) {
      const ack = flags.get('--ack-deadline')
      pushes.push({
        subscription: words[4]!,
        topic: flags.get('--topic')!,
        endpoint: flags.get('--push-endpoint')!,
        ackDeadlineSeconds: ack ? Number(ack) : undefined,
      })
    } else if (is('scheduler', 'jobs', 'create', 'http')) {
      const headers = Object.fromEntries(
        (flags.get('--headers') ?? '')
          .split(',')
          .filter(Boolean)
          .map((h) => h.split('=') as [string, string]),
      )
      schedules.push({
        job: words[5]!,
        uri: flags.get('--uri')!,
        method: flags.get('--http-method') ?? 'POST',
        body: flags.get('--message-body') ?? '',
        headers,
      })
    }
  }
  return { env, functions, topics, pushes, schedules, text }
}

/**
 * Runs `infra/deploy.sh --dry-run` with `vars` (PROJECT_ID, FUNCTIONS_ENV_FILE, FUNCTION_SECRETS…)
 * as an operator would, and reads its plan. Nothing of the test's own environment reaches the
 * script but PATH and HOME.
 */
export function readDeployPlan(vars: Record<string, string>, scratch: string): Promise<DeployPlan> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [join(repoRoot, 'infra/deploy.sh'), '--dry-run'],
      { cwd: repoRoot, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: scratch, ...vars }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`infra/deploy.sh --dry-run failed: ${error.message}\n${stderr}`))
        else {
          try {
            resolve(parseDeployPlan(stdout))
          } catch (err) {
            reject(err as Error)
          }
        }
      },
    )
  })
}
