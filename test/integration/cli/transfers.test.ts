import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { partialFiles } from '../../../cli/download.js'
import { EXIT } from '../../../cli/errors.js'
import { SettingsStore } from '../../../cli/settings.js'
import { PART_BYTES, type DownloadState } from '../../../cli/transfer-plan.js'
import type { TreeSummary } from '../../../cli/tree.js'
import { configHome, parseJson, runMain, startCli, startPlatform } from '../../support/cli.js'

type Range = { start: number; end: number }
type Downloaded = { size: number; verified: string; resumed: boolean; fetched: number }

/**
 * Large downloads in parts and their resume after the CLI is killed, and `-r` both ways, through
 * the file service and the local storage server on real ports; the CLI as a child process where
 * it is killed. The test holds back chosen ranges of the storage's reads (its openRead) to stop a
 * download at a known point: a part boundary, or inside a part.
 */
describe('platform files: parallel, resumable and folder transfers', async () => {
  const platform = await startPlatform()
  const { world, files } = platform
  const bucket = world.project.bucket_name
  const work = await mkdtemp(join(tmpdir(), 'cli-transfers-'))
  const home = await configHome(platform, world.project.id)
  new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: world.owner.token, saved_at: new Date().toISOString() })
  const cli = (args: string[]) => runMain(args, { configDir: home })
  afterAll(async () => {
    await platform.stop()
    await rm(work, { recursive: true, force: true })
  })

  /** Every range the storage served (the one-byte probes aside), and a hold on the ones `held` picks: they send `upTo` bytes, then nothing. */
  const openRead = files.storage.openRead.bind(files.storage)
  let served: Range[] = []
  let sentOfHeld = 0
  function holdReads(held: (r: Range) => boolean, upTo = 0) {
    sentOfHeld = 0
    files.storage.openRead = async (...args: Parameters<typeof openRead>) => {
      const [, , range] = args
      const opened = await openRead(...args)
      if (!opened || !range) return opened
      if (range.end > range.start) served.push(range)
      if (!held(range)) return opened
      const stream = Readable.from(
        (async function* () {
          let sent = 0
          for await (const chunk of opened.stream) {
            const keep = (chunk as Buffer).subarray(0, Math.max(0, upTo - sent))
            sent += keep.length
            if (keep.length) {
              sentOfHeld += keep.length
              yield keep
            }
            if (sent >= upTo) break
          }
          // Never ends: the download waits on this range until it is killed.
          await new Promise(() => {})
        })(),
      )
      return { ...opened, stream: stream as unknown as typeof opened.stream }
    }
  }
  afterEach(() => {
    files.storage.openRead = openRead
    served = []
  })

  const partsOf = (state: string) => async () => {
    try {
      return (JSON.parse(await readFile(state, 'utf8')) as DownloadState).parts.map(([i]) => i).sort()
    } catch {
      return []
    }
  }
  const ranges = () => served.map((r) => [r.start, r.end]).sort((a, b) => a[0]! - b[0]!)

  // Four parts: three whole ones and a short last one.
  const size = 3 * PART_BYTES + 4321
  const part = (i: number) => [i * PART_BYTES, Math.min(size, (i + 1) * PART_BYTES) - 1]

  it('downloads a large file in parts over several connections, checking the CRC32C combined from the parts', async () => {
    const data = randomBytes(size)
    await files.storage.write(bucket, 'big/whole.bam', data)
    holdReads(() => false)
    const dest = join(work, 'whole.bam')
    const res = await cli(['files', 'download', 'big/whole.bam', dest, '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(parseJson<Downloaded>(res)).toMatchObject({ size, verified: 'crc32c', resumed: false, fetched: size })
    expect((await readFile(dest)).equals(data)).toBe(true)
    expect(ranges()).toEqual([0, 1, 2, 3].map(part))
    expect(readdirSync(work).filter((f) => f.startsWith('.whole.bam'))).toEqual([])
  })

  it.each([
    ['at a part boundary (parts 0 and 1 complete, 2 and 3 not started)', (r: Range) => r.start >= 2 * PART_BYTES, 0, [0, 1], [2, 3]],
    ['inside a part (part 1 half sent, the others complete)', (r: Range) => r.start === PART_BYTES, PART_BYTES / 2, [0, 2, 3], [1]],
  ])('resumes a download killed %s, fetching only the parts missing', async (_, held, upTo, complete, refetched) => {
    const data = randomBytes(size)
    const name = `killed-${complete.join('')}.bam`
    await files.storage.write(bucket, `big/${name}`, data)
    const dest = join(work, name)
    const { part: partial, state } = partialFiles(dest)
    holdReads(held, upTo)
    const first = startCli(['files', 'download', `big/${name}`, dest], { configDir: home, timeoutMs: 60_000 })
    await expect.poll(partsOf(state), { timeout: 30_000, interval: 50 }).toEqual(complete)
    if (upTo) await expect.poll(() => sentOfHeld, { timeout: 30_000, interval: 20 }).toBe(upTo)
    first.child.kill('SIGKILL')
    expect((await first.exited).signal).toBe('SIGKILL')
    expect(existsSync(dest)).toBe(false)
    expect(existsSync(partial)).toBe(true)

    files.storage.openRead = openRead
    served = []
    holdReads(() => false)
    const again = await cli(['files', 'download', `big/${name}`, dest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    const missing = refetched.reduce((n, i) => n + part(i)[1]! - part(i)[0]! + 1, 0)
    expect(parseJson<Downloaded>(again)).toMatchObject({ verified: 'crc32c', resumed: true, fetched: missing })
    expect(ranges()).toEqual(refetched.map(part))
    expect((await readFile(dest)).equals(data)).toBe(true)
    expect([existsSync(partial), existsSync(state)]).toEqual([false, false])
  })

  it('fetches again a recorded part whose bytes are not what it recorded (a crash lost them, or a hand changed them)', async () => {
    const data = randomBytes(size)
    await files.storage.write(bucket, 'big/damaged.bam', data)
    const dest = join(work, 'damaged.bam')
    const { part: partial, state } = partialFiles(dest)
    holdReads((r) => r.start >= 2 * PART_BYTES)
    const first = startCli(['files', 'download', 'big/damaged.bam', dest], { configDir: home, timeoutMs: 60_000 })
    await expect.poll(partsOf(state), { timeout: 30_000, interval: 50 }).toEqual([0, 1])
    first.child.kill('SIGKILL')
    await first.exited
    // Part 1's recorded bytes zeroed, as a machine that crashed before writing them back would leave them.
    const handle = await open(partial, 'r+')
    await handle.write(Buffer.alloc(1024), 0, 1024, PART_BYTES + 100)
    await handle.close()

    files.storage.openRead = openRead
    served = []
    holdReads(() => false)
    const again = await cli(['files', 'download', 'big/damaged.bam', dest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(ranges()).toEqual([1, 2, 3].map(part))
    expect((await readFile(dest)).equals(data)).toBe(true)
  })

  it('starts afresh when the object changed since the interrupted download, and says so', async () => {
    await files.storage.write(bucket, 'big/changing.bam', randomBytes(size))
    const dest = join(work, 'changing.bam')
    const { state } = partialFiles(dest)
    holdReads((r) => r.start >= 2 * PART_BYTES)
    const first = startCli(['files', 'download', 'big/changing.bam', dest], { configDir: home, timeoutMs: 60_000 })
    await expect.poll(partsOf(state), { timeout: 30_000, interval: 50 }).toEqual([0, 1])
    first.child.kill('SIGKILL')
    await first.exited

    const replaced = randomBytes(size)
    await files.storage.write(bucket, 'big/changing.bam', replaced)
    files.storage.openRead = openRead
    served = []
    holdReads(() => false)
    const again = await cli(['files', 'download', 'big/changing.bam', dest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`gs://${bucket}/big/changing.bam changed since the partial download: downloading it again from the start`)
    expect(parseJson<Downloaded>(again)).toMatchObject({ resumed: false, fetched: size })
    expect(ranges()).toEqual([0, 1, 2, 3].map(part))
    expect((await readFile(dest)).equals(replaced)).toBe(true)
  })

  it('keeps the parts on Ctrl-C (exit 130) and says that the same command resumes', async () => {
    await files.storage.write(bucket, 'big/stopped.bam', randomBytes(size))
    const dest = join(work, 'stopped.bam')
    const { part: partial, state } = partialFiles(dest)
    holdReads((r) => r.start >= PART_BYTES)
    const download = startCli(['files', 'download', 'big/stopped.bam', dest], { configDir: home, timeoutMs: 60_000 })
    await expect.poll(partsOf(state), { timeout: 30_000, interval: 50 }).toEqual([0])
    download.child.kill('SIGINT')
    const done = await download.exited
    expect(done.code).toBe(EXIT.interrupted)
    expect(done.stderr).toContain(
      `download of gs://${bucket}/big/stopped.bam interrupted: the parts downloaded are kept beside ${dest}: the same command resumes`,
    )
    expect([existsSync(dest), existsSync(partial), existsSync(state)]).toEqual([false, true, true])
  })

  it('stops with exit 7 when the object changes during the download, removing the partial download so that the next one starts afresh', async () => {
    await files.storage.write(bucket, 'big/moving.bam', randomBytes(size))
    const dest = join(work, 'moving.bam')
    const { part: partial, state } = partialFiles(dest)
    // The object is replaced right after the first answer told its ETag: the parts are asked for with the old one.
    files.storage.openRead = async (...args: Parameters<typeof openRead>) => {
      const opened = await openRead(...args)
      const [, , range] = args
      if (range?.start === 0 && range.end === 0) await files.storage.write(bucket, 'big/moving.bam', randomBytes(size))
      return opened
    }
    const res = await cli(['files', 'download', 'big/moving.bam', dest])
    expect(res.code).toBe(EXIT.rejected)
    expect(res.stderr).toContain(`gs://${bucket}/big/moving.bam changed during the download: ${dest} was not written; run the command again`)
    expect([existsSync(dest), existsSync(partial), existsSync(state)]).toEqual([false, false, false])
  })

  describe('-r', () => {
    const tree: Record<string, string> = {
      'a.txt': 'alpha\n',
      'sub/b.txt': 'bravo bravo\n',
      'sub/deeper/c.vcf': '##fileformat=VCFv4.2\n',
      'empty.txt': '',
    }

    it('uploads a folder, then skips the identical files, and fails only the file that differs without --overwrite (exit 11)', async () => {
      const dir = join(work, 'up')
      for (const [rel, text] of Object.entries(tree)) {
        await mkdir(join(dir, rel, '..'), { recursive: true })
        await writeFile(join(dir, rel), text)
      }
      const first = await cli(['files', 'upload', '-r', dir, 'tree/up', '--json'])
      expect(first.code, first.stderr).toBe(0)
      expect(parseJson<TreeSummary>(first)).toMatchObject({ sent: 4, skipped: 0, failed: 0, bytes: Object.values(tree).join('').length })
      for (const [rel, text] of Object.entries(tree)) expect((await files.storage.read(bucket, `tree/up/${rel}`))?.toString()).toBe(text)

      const second = await cli(['files', 'upload', '-r', dir, 'tree/up/', '--json'])
      expect(second.code, second.stderr).toBe(0)
      expect(parseJson<TreeSummary>(second)).toMatchObject({ sent: 0, skipped: 4, failed: 0, bytes: 0 })

      await writeFile(join(dir, 'sub/b.txt'), 'BRAVO BRAVO\n') // same size, another CRC32C
      await writeFile(join(dir, 'new.txt'), 'new\n')
      const third = await cli(['files', 'upload', '-r', dir, 'tree/up'])
      expect(third.code).toBe(EXIT.someFailed)
      expect(third.stdout).toContain('Uploaded 1 file')
      expect(third.stdout).toContain('skipped 3 identical; 1 failed')
      expect(third.stderr).toContain('failed: tree/up/sub/b.txt: exists and differs: pass --overwrite to replace it')
      expect((await files.storage.read(bucket, 'tree/up/sub/b.txt'))?.toString()).toBe('bravo bravo\n')
      expect((await files.storage.read(bucket, 'tree/up/new.txt'))?.toString()).toBe('new\n')

      const fourth = await cli(['files', 'upload', '-r', dir, 'tree/up', '--overwrite', '--json'])
      expect(fourth.code, fourth.stderr).toBe(0)
      expect(parseJson<TreeSummary>(fourth)).toMatchObject({ sent: 1, skipped: 4, failed: 0 })
      expect((await files.storage.read(bucket, 'tree/up/sub/b.txt'))?.toString()).toBe('BRAVO BRAVO\n')
    })

    it('sends a folder’s files above 8 MiB through resumable sessions, verified, and leaves no session behind', async () => {
      const dir = join(work, 'up-large')
      const large = randomBytes(9 * 1024 * 1024 + 123)
      await mkdir(dir, { recursive: true })
      await writeFile(join(dir, 'reads.bam'), large)
      await writeFile(join(dir, 'reads.bam.bai'), 'index\n')
      const res = await cli(['files', 'upload', '-r', dir, 'tree/large', '--json'])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<TreeSummary>(res)).toMatchObject({ sent: 2, skipped: 0, failed: 0, bytes: large.length + 6 })
      expect((await files.storage.read(bucket, 'tree/large/reads.bam'))?.equals(large)).toBe(true)
      // The folder of saved sessions exists (the large file's session was saved while it went) and is empty again.
      expect(await readdir(join(home, 'uploads'))).toEqual([])
    })

    it('downloads a folder keeping its tree, then fetches only what is missing, failing a local file that differs (exit 11)', async () => {
      for (const [rel, text] of Object.entries(tree)) await files.storage.write(bucket, `tree/down/${rel}`, text)
      const dir = join(work, 'down')
      const first = await cli(['files', 'download', '-r', `gs://${bucket}/tree/down`, dir, '--json'])
      expect(first.code, first.stderr).toBe(0)
      const summary = parseJson<TreeSummary>(first)
      expect(summary).toMatchObject({ sent: 4, skipped: 0, failed: 0 })
      expect(summary.files.map((f) => [f.path, f.status])).toEqual(
        Object.keys(tree)
          .sort()
          .map((rel) => [`tree/down/${rel}`, 'sent']),
      )
      for (const [rel, text] of Object.entries(tree)) expect(await readFile(join(dir, rel), 'utf8')).toBe(text)

      await rm(join(dir, 'a.txt'))
      await writeFile(join(dir, 'sub/deeper/c.vcf'), '##fileformat=VCFv4.3\n')
      const second = await cli(['files', 'download', '-r', 'tree/down/', dir])
      expect(second.code).toBe(EXIT.someFailed)
      expect(second.stdout).toContain(`Downloaded 1 file`)
      expect(second.stdout).toContain('skipped 2 identical; 1 failed')
      expect(second.stdout).toContain('failed: tree/down/sub/deeper/c.vcf: exists and differs: pass --overwrite to replace it')
      expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('alpha\n')
      expect(await readFile(join(dir, 'sub/deeper/c.vcf'), 'utf8')).toBe('##fileformat=VCFv4.3\n')

      const third = await cli(['files', 'download', '-r', 'tree/down', dir, '--overwrite', '--json'])
      expect(third.code, third.stderr).toBe(0)
      expect(parseJson<TreeSummary>(third)).toMatchObject({ sent: 1, skipped: 3, failed: 0 })
      expect(await readFile(join(dir, 'sub/deeper/c.vcf'), 'utf8')).toBe('##fileformat=VCFv4.2\n')
    })

    it('goes on with the other files when one fails to transfer, and names it in the summary', async () => {
      for (const [rel, text] of Object.entries(tree)) await files.storage.write(bucket, `tree/broken/${rel}`, text)
      // The storage loses one file's bytes half-way: that download fails, the others arrive.
      const read = files.storage.openRead.bind(files.storage)
      files.storage.openRead = async (...args: Parameters<typeof read>) => {
        const opened = await read(...args)
        if (!opened || args[1] !== 'tree/broken/sub/b.txt') return opened
        const cut = Readable.from(
          (async function* () {
            yield Buffer.from('bra')
            throw new Error('disk gone')
          })(),
        )
        return { ...opened, stream: cut as unknown as typeof opened.stream }
      }
      const dir = join(work, 'broken')
      const res = await cli(['files', 'download', '-r', 'tree/broken', dir, '--json'])
      expect(res.code).toBe(EXIT.someFailed)
      const summary = parseJson<TreeSummary>(res)
      expect(summary).toMatchObject({ sent: 3, skipped: 0, failed: 1 })
      expect(summary.files.find((f) => f.status === 'failed')?.path).toBe('tree/broken/sub/b.txt')
      expect(res.stderr).toContain('failed: tree/broken/sub/b.txt:')
      expect(existsSync(join(dir, 'sub/b.txt'))).toBe(false)
      expect(await readFile(join(dir, 'sub/deeper/c.vcf'), 'utf8')).toBe(tree['sub/deeper/c.vcf'])
    })

    it('refuses -r without a local folder (exit 3), and a prefix with no files (exit 6)', async () => {
      expect((await cli(['files', 'download', '-r', 'tree/down'])).code).toBe(EXIT.usage)
      const none = await cli(['files', 'download', '-r', 'tree/nothing-here', join(work, 'none')])
      expect([none.code, none.stderr.trim()]).toEqual([
        EXIT.notFound,
        `platform: not found: no files under tree/nothing-here in the project's bucket`,
      ])
    })
  })
})
