// `npm test`: the lint (types, eslint, prettier, the OpenAPI documents) and every test tier at once.
// The tests spend most of their time waiting on the emulators and the suites they start, so the
// lint runs beside them on the idle core; its output is held back and printed whole at the end.
import { spawn } from 'node:child_process'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const started = Date.now()

const lint = spawn(npm, ['run', '--silent', 'lint'], { stdio: ['ignore', 'pipe', 'pipe'] })
let lintOutput = ''
lint.stdout.on('data', (d) => (lintOutput += d))
lint.stderr.on('data', (d) => (lintOutput += d))
const lintDone = new Promise((resolve) => lint.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))))

const tests = spawn('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit' })
const testsDone = new Promise((resolve) => tests.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))))

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    lint.kill(signal)
    tests.kill(signal)
  })
}

const [lintCode, testCode] = await Promise.all([lintDone, testsDone])
process.stdout.write(`\n--- npm run lint ${lintCode === 0 ? 'passed' : `FAILED (exit ${lintCode})`} ---\n`)
if (lintCode !== 0) process.stdout.write(lintOutput)
process.stdout.write(`--- npm test: lint ${lintCode === 0 ? 'ok' : 'failed'}, tests ${testCode === 0 ? 'ok' : 'failed'}, ${Math.round((Date.now() - started) / 1000)} s ---\n`)
process.exit(lintCode !== 0 || testCode !== 0 ? 1 : 0)
