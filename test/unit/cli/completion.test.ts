import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import type { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { buildProgram, main } from '../../../cli/main.js'
import { SettingsStore } from '../../../cli/settings.js'

const home = mkdtempSync(join(tmpdir(), 'cli-completion-'))
afterAll(() => rmSync(home, { recursive: true, force: true }))

/** `platform …` in this process, with nothing to talk to: help and completion need no service. */
async function platform(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const sink = (add: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        add(chunk.toString())
        done()
      },
    })
  const io = { stdin: new PassThrough().end(), stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)) }
  const code = await main(['node', 'platform', ...args], io, { PLATFORM_CONFIG_DIR: home })
  return { code, stdout, stderr }
}

/** Every command of the program, as the words that name it (`['runs', 'submit']`). */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [[...prefix, sub.name()], ...commandPaths(sub, [...prefix, sub.name()])])
}
const program = buildProgram({
  env: { configDir: home, noColor: false },
  io: process,
  settings: new SettingsStore(home),
  userAgent: 'test',
  exitCode: 0,
})

describe('platform completion', () => {
  const bashScript = join(home, 'platform.bash')

  /** What bash offers for the words typed so far (the last one being completed), with the script sourced. */
  function complete(...words: string[]): string[] {
    const line = ['platform', ...words]
    const script = `source ${JSON.stringify(bashScript)}; COMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}; _platform_completions; printf '%s\\n' "\${COMPREPLY[@]}"`
    return execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean)
  }

  it('prints a bash script that bash accepts and that completes commands, options and choices', async () => {
    const res = await platform('completion', 'bash')
    expect(res.code).toBe(0)
    writeFileSync(bashScript, res.stdout)
    execFileSync('bash', ['-n', bashScript])
    expect(complete('')).toEqual(expect.arrayContaining(['login', 'runs', 'pipelines', 'config', 'completion', '--profile', '--json']))
    expect(complete('runs', 'su')).toEqual(['submit'])
    expect(complete('runs', 'submit', '--w')).toEqual(['--watch'])
    expect(complete('runs', 'list', '--')).toEqual(expect.arrayContaining(['--page-token', '--all', '--limit', '--status', '--profile']))
    expect(complete('runs', 'list', '--status', '')).toEqual(['queued', 'running', 'succeeded', 'failed', 'cancelled'])
    // The same flag on two commands completes each command's own values.
    expect(complete('orders', 'list', '--status', 'in')).toEqual(['in_progress', 'in_review'])
    expect(complete('pipelines', 'list', '--type', '')).toEqual(['direct_nextflow', 'direct_wdl', 'container_entrypoint'])
    expect(complete('samples', 'create', 'S-1', '--type', 'd')).toEqual(['dna'])
    expect(complete('--profile', 'staging', 'orders', 'add-sample', '--role', 'p')).toEqual(['proband'])
    // The same flag in another command completes that command's values; the root's apply everywhere.
    expect(complete('reports', 'list', '--status', 'in')).toEqual(['in_review'])
    expect(complete('--profile', 'staging', 'runs', 'list', '--status', 'q')).toEqual(['queued'])
    expect(complete('reports', 'list', '--format', '')).toEqual([])
    expect(complete('api', '--service', 'v')).toEqual(['variant_cache'])
    expect(complete('config', 'set', '')).toEqual(expect.arrayContaining(['admin_url', 'compute_url', 'project']))
    // An option's value is not taken for a command: `staging` below is the profile, not a subcommand.
    expect(complete('--profile', 'staging', 'runs', 'wa')).toEqual(['watch'])
    expect(complete('completion', '')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']))
  })

  it('prints a zsh script that registers itself for platform and describes every command', async () => {
    const res = await platform('completion', 'zsh')
    expect(res.code).toBe(0)
    expect(res.stdout.startsWith('#compdef platform\n')).toBe(true)
    expect(res.stdout).toContain('compdef _platform platform')
    for (const path of commandPaths(program)) expect(res.stdout).toContain(`'${path.join(' ')}') candidates=(`)
    expect(res.stdout).toContain("'submit:Submit a run of a pipeline")
    expect(res.stdout).toContain("'runs list|--status') compadd -- 'queued' 'running' 'succeeded' 'failed' 'cancelled'; return ;;")
    expect(res.stdout).toContain("'orders list|--status') compadd -- 'draft' 'signed'")
    expect(res.stdout).toContain("*'|--format') :; return ;;")
    expect(res.stdout).toContain("'reports list|--status') compadd -- 'draft' 'in_review'")
  })

  it('prints a fish script with a completion for every command at its place in the tree', async () => {
    const res = await platform('completion', 'fish')
    expect(res.code).toBe(0)
    for (const path of commandPaths(program)) {
      const parent = path.slice(0, -1).join(' ')
      expect(res.stdout).toContain(`complete -c platform -n '__platform_at \\'${parent}\\'' -a ${path.at(-1)} -d `)
    }
    expect(res.stdout).toContain("-l status -x -a 'queued running succeeded failed cancelled'")
    expect(res.stdout).toContain('-l params-file -r -F')
  })

  it('refuses a shell it does not know, exit code 3', async () => {
    const res = await platform('completion', 'powershell')
    expect(res.code).toBe(3)
    expect(res.stderr).toContain('Allowed choices are bash, zsh, fish')
  })
})

describe('help', () => {
  it.each(commandPaths(program).map((path) => [path.join(' ')]))('of platform %s shows an example of the command', async (path) => {
    const res = await platform(...path.split(' '), '--help')
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(new RegExp(`\\nExamples:\\n  \\$ (source <\\()?platform ${path}`))
  })
})
