import { resolve } from 'node:path'
import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

/** The import boundaries of DESIGN.md are the linter's (eslint.config.js): each forbidden edge is an error of `npm run lint`. */
const repo = resolve(import.meta.dirname, '../..')
const eslint = new ESLint({ cwd: repo })

async function problems(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: resolve(repo, file) })
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'platform/cli-boundary').map((m) => m.message)
}

describe('the linter enforces the import boundaries', () => {
  it.each([
    ['the kernel importing the domain', 'lib/example.ts', "import { RunStore } from '../domain/runs/store.js'"],
    ['the kernel importing a service', 'lib/auth/example.ts', "import { compute } from '../../functions/compute/service.js'"],
    ['the domain importing a service', 'domain/runs/example.ts', "import { admin } from '../../functions/admin/service.js'"],
    ['the domain importing HTTP', 'domain/runs/example.ts', "import { Hono } from 'hono'"],
    ['a service importing another service', 'functions/compute/routes/example.ts', "import { adminDeps } from '../../admin/deps.js'"],
    ['the orchestrator importing a service', 'orchestrator/example.ts', "import { runs } from '../functions/compute/routes/runs.js'"],
    ['the CLI importing server code', 'cli/commands/example.ts', "import { RUN_STATUSES } from '../../domain/runs/status.js'"],
    ['the CLI importing the kernel', 'cli/example.ts', "import { UUID_RE } from '../lib/ids.js'"],
  ])('refuses %s', async (_, file, source) => {
    expect(await problems(file, `${source}\nexport const used = [${source.match(/\{ (\w+) \}/)?.[1]}]\n`)).toHaveLength(1)
  })

  it.each([
    [
      'a service importing the kernel and the domain',
      'functions/compute/routes/example.ts',
      "import { requires } from '../../../lib/http.js'\nimport { TERMINAL } from '../../../domain/runs/status.js'",
    ],
    ['the domain importing the kernel', 'domain/runs/example.ts', "import { conflict } from '../../lib/errors.js'"],
    ['the orchestrator importing the domain', 'orchestrator/example.ts', "import { TERMINAL } from '../domain/runs/status.js'"],
    ['the CLI importing itself', 'cli/commands/runs/example.ts', "import { EXIT } from '../../errors.js'"],
  ])('allows %s', async (_, file, source) => {
    expect(await problems(file, `${source}\n`)).toEqual([])
  })
})
