// `npm test`: the lint (types, eslint, prettier, the OpenAPI documents) and every test tier at once.
// The tests spend much of their time waiting on the emulators and the suites they start, so three
// things run side by side: the unit and integration tiers (four files at a time, on the shared
// emulators); the end-to-end tier, two files at a time (each starts whole local suites of its own);
// and the lint, at a lower CPU priority, on what the tests leave idle. In one vitest run the
// end-to-end files could only start once every other file had ended (vitest runs files that may not
// run in parallel after all others), so they have a vitest run of their own. The live output is the
// unit and integration run's; the end-to-end run's is held back and printed whole at the end, and the
// lint's too when it failed. Beside them, at the same lower priority, the documentation site is built
// and its links checked (`npm run docs:check`), so a broken page or anchor fails `npm test` as a
// failing test does.
// With arguments (`npm test -- test/unit/lib`), it is the lint beside one `vitest run <arguments>`.
import { spawn } from 'node:child_process'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const started = Date.now()
const children = []

/**
 * The emulator JVMs the tests start (a dozen in a run, two shared and two per local suite of the
 * end-to-end tier) compile with C1 only and collect garbage with the serial collector: that halves
 * their CPU in a test run, whose emulators live minutes. `npm start` and the benchmarks keep the
 * JVM's defaults, which serve long sessions and big scans faster. A JAVA_TOOL_OPTIONS of the
 * user's own comes after these, so its options win.
 */
const env = {
  ...process.env,
  JAVA_TOOL_OPTIONS: ['-XX:TieredStopAtLevel=1 -XX:+UseSerialGC', process.env.JAVA_TOOL_OPTIONS].filter(Boolean).join(' '),
}

/** A child whose output is held and printed whole at its end, unless `live`. */
function job(name, command, args, { live = false } = {}) {
  const child = spawn(command, args, { env, stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let output = ''
  if (!live) {
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
  }
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      const status = code ?? (signal ? 1 : 0)
      const seconds = Math.round((Date.now() - started) / 1000)
      if (!live) process.stdout.write(`\n--- ${name}: ${status === 0 ? 'passed' : `FAILED (exit ${status})`} at ${seconds} s ---\n`)
      resolve({ name, status, output })
    }),
  )
}

const extra = process.argv.slice(2)
// The lint and the docs' build at a lower CPU priority: no one waits on them, and they take the cores the tests leave idle.
const niced = (script) => (process.platform === 'linux' ? ['nice', ['-n', '10', npm, 'run', '--silent', script]] : [npm, ['run', '--silent', script]])
const runs = [job('npm run lint', ...niced('lint'))]
if (extra.length) runs.push(job('vitest', 'npx', ['vitest', 'run', ...extra], { live: true }))
else {
  runs.push(
    job(
      'vitest: unit and integration',
      'npx',
      ['vitest', 'run', '--project', 'unit', '--project', 'unit-memory', '--project', 'integration', '--maxWorkers', '4'],
      { live: true },
    ),
  )
  runs.push(job('vitest: end to end', 'npx', ['vitest', 'run', '--project', 'e2e', '--maxWorkers', '2']))
  runs.push(job('npm run docs:check', ...niced('docs:check')))
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => children.forEach((c) => c.kill(signal)))

const results = await Promise.all(runs)
// The end-to-end run's output whole, failing or not; the lint's when it failed.
for (const r of results) if (r.name === 'vitest: end to end' || r.status !== 0) process.stdout.write(`\n--- ${r.name} ---\n${r.output}`)
const summary = results.map((r) => `${r.name} ${r.status === 0 ? 'ok' : 'failed'}`).join(', ')
process.stdout.write(`--- npm test: ${summary}, ${Math.round((Date.now() - started) / 1000)} s ---\n`)
process.exit(results.some((r) => r.status !== 0) ? 1 : 0)
