import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

/**
 * The Node.js runtime the functions are deployed on, named in one place: package.json
 * `config.functionsRuntime`, which infra/deploy.sh passes to every `gcloud functions deploy
 * --runtime` (test/unit/infra/deploy.test.ts checks the plan).
 */
const repo = resolve(import.meta.dirname, '../../..')
const pkg = JSON.parse(readFileSync(resolve(repo, 'package.json'), 'utf8')) as { engines: { node: string }; config: { functionsRuntime: string } }
const runtime = pkg.config.functionsRuntime

/**
 * Google's generally available Node.js runtimes of Cloud Run functions and when each stops being
 * supported (https://cloud.google.com/run/docs/runtimes/function-runtimes, "Runtime support
 * schedule"): after its deprecation date a runtime gets no more patches; after its decommission
 * date no function can be created or updated on it. Preview runtimes are not listed.
 */
const GOOGLE_NODE_RUNTIMES: Record<string, { deprecation: string; decommission: string }> = {
  nodejs24: { deprecation: '2028-04-30', decommission: '2028-10-31' },
  nodejs22: { deprecation: '2027-04-30', decommission: '2027-10-31' },
  nodejs20: { deprecation: '2026-04-30', decommission: '2026-10-30' },
}

describe("the functions' runtime", () => {
  it('is a generally available Node.js runtime of Cloud Run functions, not yet deprecated', () => {
    const schedule = GOOGLE_NODE_RUNTIMES[runtime]
    expect(schedule, `${runtime} is not a GA Node.js runtime of Cloud Run functions`).toBeDefined()
    expect(
      Date.now() < Date.parse(schedule!.deprecation),
      `${runtime} is deprecated since ${schedule!.deprecation} (decommissioned ${schedule!.decommission}): move package.json config.functionsRuntime to a newer runtime`,
    ).toBe(true)
  })

  it('satisfies package.json "engines", as the Node.js the tests run on does', () => {
    const major = Number(/^nodejs(\d+)$/.exec(runtime)?.[1])
    expect(semver.satisfies(`${major}.0.0`, pkg.engines.node), `${runtime} outside engines.node ${pkg.engines.node}`).toBe(true)
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true)
  })

  /**
   * What Node.js 20 still has and the deployed runtime has removed or made to warn (the Node.js
   * deprecations list, DEP0005 … DEP0176): none of it in the project's code and tests (the source
   * the functions are built from first of all), since the tests run on Node.js 20 and would not
   * notice. This file names them, so it is left out.
   */
  it.each([
    ['import assertions (removed in Node.js 22: `with`, not `assert`)', /\bassert\s*\{\s*type\s*:/],
    ['util.is* type checks (removed in Node.js 23)', /\butil\.is[A-Z]\w*\(/],
    ['the Buffer constructor (DEP0005)', /\bnew Buffer\(/],
    ['crypto.createCipher and createDecipher (removed in Node.js 22)', /\bcreate(De)?cipher\(/],
    ['process.binding (DEP0111)', /\bprocess\.binding\(/],
    ['SlowBuffer (DEP0030)', /\bSlowBuffer\b/],
    ['tls.createSecurePair (removed in Node.js 24)', /\bcreateSecurePair\(/],
    ['fs.F_OK and its kin (DEP0176)', /\bfs\.[FRWX]_OK\b/],
    ['url.parse (DEP0169, warns from Node.js 24)', /\burl\.parse\(|\bimport\s*\{[^}]*\bparse\b[^}]*\}\s*from\s*'(node:)?url'/],
  ])('uses no %s', (_what, pattern) => {
    const files = execFileSync('git', ['ls-files', '*.ts', '*.js', '*.mjs', '*.cjs'], { cwd: repo, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && f !== 'test/unit/infra/runtime.test.ts')
    expect(files.filter((f) => /^(lib|domain|functions|orchestrator)\//.test(f)).length).toBeGreaterThan(50)
    expect(files.filter((f) => pattern.test(readFileSync(resolve(repo, f), 'utf8')))).toEqual([])
  })
})
