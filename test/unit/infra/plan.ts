import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * An infra/ script run with --dry-run as an operator would run it, gcloud and curl replaced on PATH
 * by tripwires that record any call: a dry run must not touch the cloud.
 */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url))

export interface Outcome {
  code: number
  stdout: string
  stderr: string
  /** The printed commands (comments left out). */
  commands: string[]
}

export interface Planner {
  /** Runs `infra/<script> --dry-run <args>` with only `env` (and PATH, HOME, TMPDIR) in its environment. */
  dryRun(script: string, env: Record<string, string>, args?: string[]): Promise<Outcome>
  /** A file in the scratch folder, for a script to read (a functions env file). */
  file(name: string, text: string): string
  /** What the tripwires recorded: every call of gcloud or curl. */
  calls(): string
  remove(): void
}

export function planner(): Planner {
  const scratch = mkdtempSync(join(tmpdir(), 'infra-test-'))
  const log = join(scratch, 'tripwire.log')
  mkdirSync(join(scratch, 'bin'))
  for (const tool of ['gcloud', 'curl']) {
    const path = join(scratch, 'bin', tool)
    writeFileSync(path, `#!/bin/sh\necho "${tool} $*" >> '${log}'\nexit 97\n`)
    chmodSync(path, 0o755)
  }
  return {
    dryRun: (script, env, args = []) =>
      new Promise((resolve) => {
        execFile(
          'bash',
          [join(REPO, 'infra', script), '--dry-run', ...args],
          {
            cwd: REPO,
            env: { PATH: `${join(scratch, 'bin')}:${process.env.PATH}`, HOME: process.env.HOME ?? scratch, TMPDIR: scratch, ...env },
            timeout: 60_000,
          },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
            resolve({ code, stdout, stderr, commands: stdout.split('\n').filter((l) => l && !l.startsWith('#')) })
          },
        )
      }),
    file: (name, text) => {
      const path = join(scratch, name)
      writeFileSync(path, text)
      return path
    },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8') : ''),
    remove: () => rmSync(scratch, { recursive: true, force: true }),
  }
}
