import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, signIn } from '../support/browser.js'
import { DEFAULT_BASE_PORT } from '../../emulators/ports.js'
import { freeBasePort, repoRoot, spawnLocalSuite, type SpawnedSuite } from '../support/suite.js'

/**
 * docs/walkthrough.md as a newcomer runs it: its shell blocks, exactly as written, in one bash from
 * the repository's folder, against a suite on a base port and a data folder that are not the
 * defaults. The page's one browser step (the reviewer signs) is done here with Chromium, between
 * the blocks; the end state is a report signed by the reviewer.
 */

const PAGE = join(repoRoot, 'docs/walkthrough.md')
const PAUSE = '::walkthrough-pause::'

/** The page's ```sh blocks after its first (which starts the suite), in order. */
function walkthroughBlocks(): string[] {
  const blocks = [...readFileSync(PAGE, 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
  expect(blocks[0]).toMatch(/^npm start/)
  return blocks.slice(1)
}

describe('docs/walkthrough.md, run as written', () => {
  let suite: SpawnedSuite
  let dataDir: string
  let browser: Browser

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'walkthrough-suite-'))
    const basePort = await freeBasePort()
    expect(basePort).not.toBe(DEFAULT_BASE_PORT)
    ;[suite, browser] = await Promise.all([spawnLocalSuite({ dataDir, basePort, clean: true, timeoutMs: 150_000 }), launchChromium()])
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    if (suite) {
      const stopped = await suite.stop('SIGINT')
      if (stopped.code !== 0) suite.kill()
    }
    await rm(dataDir, { recursive: true, force: true })
  }, 90_000)

  it('goes from the seeded order to a report the reviewer signed, with no port or folder named', { timeout: 150_000 }, async () => {
    const blocks = walkthroughBlocks()
    expect(blocks).toHaveLength(2)
    // The page names neither the suite's ports nor its data folder: the CLI finds them.
    for (const block of blocks) expect(block).not.toMatch(/127\.0\.0\.1|:81\d\d|\.local|suite\.json/)

    // One shell for both blocks (the variables of the first are used in the second), paused between them.
    const script = ['set -eo pipefail', blocks[0], `echo ${PAUSE}; read -r _`, blocks[1], 'echo "::report::$REPORT"'].join('\n')
    const bash = spawn('bash', ['-c', script], {
      cwd: repoRoot,
      env: { ...process.env, PLATFORM_CONFIG_DIR: suite.configDir, PLATFORM_PROFILE: '', PLATFORM_TOKEN: '', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    bash.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const paused = new Promise<void>((resolve) =>
      bash.stdout.on('data', (d: Buffer) => {
        stdout += d.toString()
        if (stdout.includes(PAUSE)) resolve()
      }),
    )
    const exited = new Promise<number | null>((resolve) => bash.once('exit', resolve))
    await Promise.race([paused, exited])
    expect(stdout, stderr).toContain(PAUSE)

    // What the first block printed: the order signed, the cache ready, the report in review, the sign-off address.
    const before = stdout.slice(0, stdout.indexOf(PAUSE)).trim().split('\n')
    expect(before).toEqual(expect.arrayContaining(['signed', 'ready', 'in_review']))
    const signoff = before.at(-1)!
    expect(signoff).toMatch(new RegExp(`^${suite.suite.services.reports}/[0-9a-f-]{36}/signoff/$`))

    // Step 10, in the browser: the reviewer signs, with a fresh authentication at the provider.
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(signoff)
    await signIn(page, suite.suite.reviewer, signoff)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await signIn(page, suite.suite.reviewer, `${signoff}signed`)
    expect(await page.locator('#status').innerText()).toContain('Signed')
    await context.close()

    bash.stdin.end('\n')
    expect(await exited, stderr).toBe(0)
    const reportId = /::report::(\S+)/.exec(stdout)?.[1]
    const after = stdout.slice(stdout.indexOf(PAUSE))
    expect(after).toContain(suite.suite.reviewer.email)
    expect(after).toContain('report.signed')

    const res = await fetch(`${suite.suite.services.reports}/api/v1/reports/${reportId}`, {
      headers: { authorization: `Bearer ${suite.suite.token}`, 'x-project-id': suite.suite.project_id },
    })
    expect(await res.json()).toMatchObject({ status: 'signed', signatures: [{ signer: { email: suite.suite.reviewer.email }, meaning: 'approved' }] })
  })
})
