import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AbortedError } from '../../../cli/client.js'
import { crc32c } from '../../../cli/crc32c.js'
import { fromWire, hashThread, toWire, transferThread } from '../../../cli/transfer-thread.js'
import { StorageHttpError, StorageUnreachableError } from '../../../cli/transfer.js'

describe('errors crossing into the CLI thread', () => {
  it.each([
    [
      'the storage’s refusal',
      new StorageHttpError('GET', 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold.'),
    ],
    ['a broken connection', new StorageUnreachableError('http://127.0.0.1:1', 'ECONNRESET read ECONNRESET')],
    ['an interruption', new AbortedError()],
  ])('keep their class and fields: %s', (_, error) => {
    const back = fromWire(structuredClone(toWire(error)))
    expect(back).toBeInstanceOf(error.constructor)
    expect(back).toEqual(error)
    expect(back.message).toBe(error.message)
  })

  it('keep a system error’s code and call (a full disk is told as one), and any other error’s message', () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write', errno: -28 })
    expect(fromWire(structuredClone(toWire(full)))).toMatchObject({ message: full.message, code: 'ENOSPC', syscall: 'write', errno: -28 })
    expect(fromWire(structuredClone(toWire(new TypeError('odd'))))).toMatchObject({ message: 'odd' })
  })
})

/** A storage answering ranged reads of `data` as the test says. */
describe('a range fetched in the transfer thread', () => {
  const data = randomBytes(6 * 1024 * 1024 + 11)
  let answer = (req: IncomingMessage, res: ServerResponse) => {
    const [, first, last] = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')!.map(Number)
    res.writeHead(206, { 'content-length': last! - first! + 1, 'content-range': `bytes ${first}-${last}/${data.length}` })
    res.end(data.subarray(first, last! + 1))
  }
  const server = createServer((req, res) => answer(req, res))
  let url = ''
  let dir = ''
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket/object?X-Goog-Signature=abc`
    dir = await mkdtemp(join(tmpdir(), 'cli-transfer-thread-'))
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await rm(dir, { recursive: true, force: true })
  })

  it('is written at its offset in the open file, its CRC32C answered and its progress told a MiB at a time', async () => {
    const file = await open(join(dir, 'parts.bin'), 'w+')
    try {
      await file.truncate(data.length)
      const seen: number[] = []
      const second = { start: 3 * 1024 * 1024, end: data.length - 1 }
      const first = { start: 0, end: second.start - 1 }
      const [a, b] = await Promise.all([
        transferThread().fetchRange({ url }, file.fd, first),
        transferThread().fetchRange({ url }, file.fd, second, { onBytes: (n) => seen.push(n) }),
      ])
      expect(a).toEqual({ crc32c: crc32c(data.subarray(0, second.start)), bytes: second.start })
      expect(b).toEqual({ crc32c: crc32c(data.subarray(second.start)), bytes: data.length - second.start })
      expect((await readFile(join(dir, 'parts.bin'))).equals(data)).toBe(true)
      expect(seen.length).toBeGreaterThanOrEqual(2)
      expect(seen.every((n, i) => n >= (i + 1) * 1024 * 1024)).toBe(true)
    } finally {
      await file.close()
    }
  })

  it('fails as the storage refused, as the connection broke, or as it was stopped', async () => {
    const file = await open(join(dir, 'failing.bin'), 'w+')
    try {
      answer = (_req, res) => {
        res.writeHead(412, { 'content-type': 'application/xml' })
        res.end('<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold.</Message></Error>')
      }
      await expect(transferThread().fetchRange({ url }, file.fd, { start: 0, end: 99 })).rejects.toMatchObject({
        name: 'StorageHttpError',
        status: 412,
        code: 'PreconditionFailed',
      })

      // Half the range, then the connection ends.
      answer = (_req, res) => {
        res.writeHead(206, { 'content-length': 100 })
        res.write(data.subarray(0, 50), () => res.socket!.destroy())
      }
      await expect(transferThread().fetchRange({ url }, file.fd, { start: 0, end: 99 })).rejects.toBeInstanceOf(StorageUnreachableError)

      // Headers, then nothing until the caller stops it.
      answer = (_req, res) => {
        res.writeHead(206, { 'content-length': 100 })
        res.write(data.subarray(0, 10))
      }
      const stop = new AbortController()
      const stopped = transferThread().fetchRange({ url }, file.fd, { start: 0, end: 99 }, { signal: stop.signal })
      setTimeout(() => stop.abort(), 200)
      await expect(stopped).rejects.toBeInstanceOf(AbortedError)
    } finally {
      await file.close()
    }
  })
})

describe('the transfer and hash threads', () => {
  it('never hold the process open when idle: a command that failed before its first range still exits', async () => {
    const module = fileURLToPath(new URL('../../../cli/transfer-thread.ts', import.meta.url))
    const script = `import { transferThread, hashThread } from ${JSON.stringify(module)}; transferThread(); hashThread(); console.log('started')`
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000 })
    expect(stdout.trim()).toBe('started')
  })

  it('hashes a file with MD5 in the hash thread, below the CLI’s priority where Linux allows a thread its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-hash-thread-'))
    // The thread's own nice value (/proc/<pid>/task/<tid>/stat, field 19).
    const nice = (tid: string | number) => {
      const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
    }
    const before = process.platform === 'linux' ? nice(process.pid) : 0
    try {
      const data = randomBytes(5 * 1024 * 1024 + 3)
      const file = join(dir, 'reads.bin')
      await writeFile(file, data)
      expect(await hashThread().md5Of(file)).toBe(createHash('md5').update(data).digest('base64'))
      if (process.platform === 'linux') {
        expect(readdirSync(`/proc/${process.pid}/task`).map(nice)).toContain(19)
        // The test's own thread keeps its priority.
        expect(nice(process.pid)).toBe(before)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
