import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REFERENCE_DIR, referencePages } from '../../../cli/reference.js'
import { referenceProgram } from '../../../cli/reference.js'

const dir = resolve(import.meta.dirname, '../../..', REFERENCE_DIR)
const REGENERATE = 'the CLI reference is out of date: run npm run docs:cli and commit docs/cli/reference'

/** Every command of the program, as the words that name it. */
function commandPaths(command = referenceProgram(), prefix: string[] = []): string[] {
  return command.commands.flatMap((sub) => [[...prefix, sub.name()].join(' '), ...commandPaths(sub, [...prefix, sub.name()])])
}

describe('the CLI reference', () => {
  const pages = referencePages()

  it.each([...pages.keys()])('has %s as the CLI makes it', (name) => {
    const path = join(dir, name)
    expect(existsSync(path), `${REGENERATE} (${name} is missing)`).toBe(true)
    expect(readFileSync(path, 'utf8'), REGENERATE).toBe(pages.get(name))
  })

  it('has no page of a command the CLI no longer has', () => {
    expect(
      readdirSync(dir).filter((name) => !pages.has(name)),
      REGENERATE,
    ).toEqual([])
  })

  it('names every command and subcommand, and every option of each, with the exit codes on the index', () => {
    const all = [...pages.values()].join('\n')
    for (const path of commandPaths()) expect(all).toContain(`platform ${path}\n`)
    expect(pages.get('index.md')).toContain('| 130 | interrupted (Ctrl-C; a transfer also by SIGTERM) |')
    expect(pages.get('files.md')).toContain('`--overwrite`')
    expect(pages.get('files.md')).not.toContain('`--force`')
  })
})
