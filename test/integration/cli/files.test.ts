import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import type { FileEntry } from '../../../cli/client.js'
import { crc32c } from '../../../cli/crc32c.js'
import { CLEAR_LINE } from '../../../cli/output.js'
import { SettingsStore } from '../../../cli/settings.js'
import { configHome, parseJson, runMain, startCli, startMain, startPlatform } from '../../support/cli.js'

interface FileList {
  items: FileEntry[]
  next_page_token: string | null
}
type Transfer = FileEntry & { local: string; crc32c: string | null; md5: string | null; verified: string; seconds: number }

const crcOf = (data: Buffer) => {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(crc32c(data))
  return out.toString('base64')
}

/**
 * `platform files …` in process against the file service and the local storage server on real
 * ports (the storage shared with the compute service), as the project's owner.
 */
describe('platform files', async () => {
  const platform = await startPlatform()
  const { world, files } = platform
  const bucket = world.project.bucket_name
  const work = await mkdtemp(join(tmpdir(), 'cli-files-'))
  afterAll(async () => {
    await platform.stop()
    await rm(work, { recursive: true, force: true })
  })

  async function homeFor(token: string) {
    const home = await configHome(platform, world.project.id)
    new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: token, saved_at: new Date().toISOString() })
    return home
  }
  const home = await homeFor(world.owner.token)
  // The MD5 compared for large files too, whatever the machine's cores (auto leaves it out on two).
  const env = { PLATFORM_UPLOAD_MD5: 'on' }
  const cli = (args: string[], input?: string) => runMain(args, { configDir: home, input, env })
  const bucketFile = (path: string) => files.storage.fileOf(bucket, path)
  const local = async (name: string, data: Buffer | string) => {
    const path = join(work, name)
    await writeFile(path, data)
    return path
  }
  const partFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.part'))

  describe('upload and download', () => {
    const data = randomBytes(9 * 1024 * 1024 + 123)

    it('uploads through the signed address and checks the CRC32C the storage answers', async () => {
      const file = await local('S1_R1.fastq.gz', data)
      const res = await cli(['files', 'upload', file, 'fastq/', '--json'])
      expect(res.code, res.stderr).toBe(0)
      const up = parseJson<Transfer>(res)
      expect(up).toMatchObject({
        kind: 'object',
        path: 'fastq/S1_R1.fastq.gz',
        uri: `gs://${bucket}/fastq/S1_R1.fastq.gz`,
        size: data.length,
        content_type: 'application/gzip',
        local: file,
        crc32c: crcOf(data),
        md5: createHash('md5').update(data).digest('base64'),
        verified: 'crc32c+md5',
      })
      expect((await readFile(bucketFile('fastq/S1_R1.fastq.gz'))).equals(data)).toBe(true)
    })

    it('downloads it back through a temporary file, byte for byte, with the checksum checked', async () => {
      const dest = join(work, 'back.fastq.gz')
      const res = await cli(['files', 'download', 'fastq/S1_R1.fastq.gz', dest, '--json'])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Transfer>(res)).toMatchObject({
        path: 'fastq/S1_R1.fastq.gz',
        local: dest,
        size: data.length,
        verified: 'crc32c',
        crc32c: crcOf(data),
      })
      expect((await readFile(dest)).equals(data)).toBe(true)
      expect(partFiles(work)).toEqual([])
    })

    it('prints only its final line without a terminal, and a progress bar redrawn in place on one', async () => {
      const plain = await cli(['files', 'download', `gs://${bucket}/fastq/S1_R1.fastq.gz`, join(work, 'plain.gz')])
      expect(plain.code, plain.stderr).toBe(0)
      expect(plain.stdout).toMatch(
        new RegExp(`^Downloaded gs://${bucket}/fastq/S1_R1.fastq.gz to \\S+plain.gz: 9.0 MiB in \\d+\\.\\ds \\(.+/s\\), crc32c verified\\n$`),
      )
      expect(plain.stderr).toBe('')

      const file = await local('tty.bin', randomBytes(64 * 1024 * 1024))
      const onTerminal = await runMain(['files', 'upload', file, 'big/tty.bin'], { configDir: home, env, tty: { stdout: true } })
      expect(onTerminal.code, onTerminal.stderr).toBe(0)
      const frames = onTerminal.stdout.split(CLEAR_LINE).filter(Boolean)
      // The last frame erased; then the final line alone.
      expect(frames.at(-1)).toMatch(/^Uploaded \S+tty.bin to gs:\/\/\S+\/big\/tty.bin: 64.0 MiB in .*crc32c\+md5 verified\n$/)
      for (const frame of frames.slice(0, -1))
        expect(frame).toMatch(/^\[[#-]{24}\]\s+\d+% {2}[\d.]+ (B|KiB|MiB) \/ 64.0 MiB( {2}.+\/s)?( {2}ETA \S+)?$/)
    })

    it('refuses to replace a file of the bucket without --overwrite (exit 7), and replaces it with', async () => {
      const file = await local('again.txt', 'second version\n')
      const refused = await cli(['files', 'upload', file, 'fastq/S1_R1.fastq.gz'])
      expect(refused.code).toBe(7)
      expect(refused.stderr).toContain('fastq/S1_R1.fastq.gz already exists')
      const replaced = await cli(['files', 'upload', file, 'notes/again.txt', '--content-type', 'text/markdown', '--json'])
      expect(parseJson<Transfer>(replaced)).toMatchObject({ content_type: 'text/markdown', size: 15 })
      const over = await cli(['files', 'upload', file, 'notes/again.txt', '--overwrite'])
      expect(over.code, over.stderr).toBe(0)
    })

    it('sends the headers its upload address was signed with: a file that appeared after the address was issued is kept (412, exit 7)', async () => {
      await files.storage.write(bucket, 'notes/appeared.txt', 'there first\n')
      // The file service looks once and sees nothing (the file arrives just after): its address may only create the file.
      const stat = files.storage.stat.bind(files.storage)
      let looked = false
      files.storage.stat = async (...args: Parameters<typeof stat>) => {
        if (looked || args[1] !== 'notes/appeared.txt') return stat(...args)
        looked = true
        return undefined
      }
      try {
        const res = await cli(['files', 'upload', await local('late.txt', 'mine\n'), 'notes/appeared.txt'])
        expect(res.code).toBe(7)
        expect(res.stderr).toContain('the storage refused the PUT of the signed address: 412 PreconditionFailed')
      } finally {
        files.storage.stat = stat
      }
      expect(await readFile(bucketFile('notes/appeared.txt'), 'utf8')).toBe('there first\n')
    })

    it('refuses to replace a local file without --overwrite (exit 3), writes into a folder, replaces with --overwrite', async () => {
      const dest = await local('exists.txt', 'mine')
      const refused = await cli(['files', 'download', 'notes/again.txt', dest])
      expect(refused.code).toBe(3)
      expect(refused.stderr).toContain(`${dest} exists: pass --overwrite to replace it`)
      expect(await readFile(dest, 'utf8')).toBe('mine')
      expect((await cli(['files', 'download', 'notes/again.txt', dest, '--overwrite'])).code).toBe(0)
      expect(await readFile(dest, 'utf8')).toBe('second version\n')
      // --force, the flag's former name, still replaces, and says once that it is deprecated.
      await writeFile(dest, 'mine again')
      const forced = await cli(['files', 'download', 'notes/again.txt', dest, '--force'])
      expect(forced.code).toBe(0)
      expect(forced.stderr.match(/warning: --force is deprecated: use --overwrite/g)).toHaveLength(1)
      expect(await readFile(dest, 'utf8')).toBe('second version\n')

      const folder = join(work, 'into')
      await mkdir(folder)
      expect((await cli(['files', 'download', 'notes/again.txt', folder])).code).toBe(0)
      expect(await readFile(join(folder, 'again.txt'), 'utf8')).toBe('second version\n')
    })

    it('answers a missing file with exit 6, a folder or a missing local file with exit 3', async () => {
      const missing = await cli(['files', 'download', 'fastq/none.gz', join(work, 'none.gz')])
      expect(missing.code).toBe(6)
      expect(missing.stderr).toContain("no file fastq/none.gz in the project's bucket")
      expect((await cli(['files', 'download', 'fastq/', join(work, 'x')])).code).toBe(3)
      const noLocal = await cli(['files', 'upload', join(work, 'nothing-here'), 'x/'])
      expect(noLocal.code).toBe(3)
      expect(noLocal.stderr).toContain('cannot read')
    })

    it('detects a file damaged in the bucket: exit 10, and nothing written locally', async () => {
      const original = Buffer.from('@r1\nACGTACGT\n+\nIIIIIIII\n'.repeat(1000))
      const file = await local('damaged.fastq', original)
      expect((await cli(['files', 'upload', file, 'fastq/damaged.fastq'])).code).toBe(0)
      // A byte flipped on disk with the file's size and time kept: the storage still holds the checksums of what was uploaded.
      const stored = bucketFile('fastq/damaged.fastq')
      const { mtimeMs } = await stat(stored)
      const damaged = Buffer.from(original)
      damaged[1000] = damaged[1000]! ^ 0x20
      await writeFile(stored, damaged)
      await utimes(stored, new Date(), new Date(Math.round(mtimeMs)))

      const dest = join(work, 'damaged-copy.fastq')
      const res = await cli(['files', 'download', 'fastq/damaged.fastq', dest])
      expect(res.code).toBe(10)
      expect(res.stderr).toMatch(
        new RegExp(
          `^platform: checksum mismatch downloading gs://${bucket}/fastq/damaged.fastq: crc32c \\S+ here, ${crcOf(original).replace(/[+/]/g, '\\$&')} in the storage; \\S+ was not written`,
        ),
      )
      expect(existsSync(dest)).toBe(false)
      expect(partFiles(work)).toEqual([])
    })

    it('reports a storage that answers another checksum than the bytes sent: exit 10, the remote file left as it is', async () => {
      const storage = files.storage
      const upload = storage.upload.bind(storage)
      storage.upload = async (...args: Parameters<typeof upload>) => ({
        ...(await upload(...args)),
        digests: { md5: 'AAAAAAAAAAAAAAAAAAAAAA==', crc32c: 'AAAAAA==' },
      })
      try {
        const file = await local('sent.txt', 'the bytes sent\n')
        const res = await cli(['files', 'upload', file, 'notes/sent.txt'])
        expect(res.code).toBe(10)
        expect(res.stderr).toContain(
          `checksum mismatch after uploading ${file} to notes/sent.txt: crc32c ${crcOf(Buffer.from('the bytes sent\n'))} here, AAAAAA== in the storage`,
        )
        expect(res.stderr).toContain('The uploaded file was left as it is')
        expect(existsSync(bucketFile('notes/sent.txt'))).toBe(true)
      } finally {
        storage.upload = upload
      }
    })

    it('stops a download on Ctrl-C with exit 130, removing its partial file (the binary, sent SIGINT)', async () => {
      await files.storage.write(bucket, 'slow/big.bin', randomBytes(4 * 1024 * 1024))
      // The storage sends 64 KiB every 50 ms: the download is still going when it is interrupted.
      const openRead = files.storage.openRead.bind(files.storage)
      files.storage.openRead = async (...args: Parameters<typeof openRead>) => {
        const opened = await openRead(...args)
        if (!opened) return opened
        const slow = Readable.from(
          (async function* () {
            for await (const chunk of opened.stream) {
              for (let at = 0; at < (chunk as Buffer).length; at += 65536) {
                await new Promise((r) => setTimeout(r, 50))
                yield (chunk as Buffer).subarray(at, at + 65536)
              }
            }
          })(),
        )
        return { ...opened, stream: slow as unknown as typeof opened.stream }
      }
      try {
        const folder = join(work, 'interrupted')
        await mkdir(folder)
        const download = startCli(['files', 'download', 'slow/big.bin', folder], { configDir: home })
        await expect.poll(() => partFiles(folder).length, { timeout: 15_000, interval: 50 }).toBe(1)
        download.child.kill('SIGINT')
        const done = await download.exited
        expect(done.code).toBe(130)
        expect(done.stderr).toContain(`download of gs://${bucket}/slow/big.bin interrupted: ${join(folder, 'big.bin')} was not written`)
        expect(readdirSync(folder)).toEqual([])
      } finally {
        files.storage.openRead = openRead
      }
    })
  })

  describe('ls', () => {
    it('lists one level as a table: folders with a trailing /, sizes readable, the content type', async () => {
      await files.storage.write(bucket, 'ls/a.txt', 'a'.repeat(1536), 'text/plain')
      await files.storage.write(bucket, 'ls/sub/deep.txt', 'x')
      const res = await cli(['files', 'ls', 'ls/'])
      expect(res.code, res.stderr).toBe(0)
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^NAME\s+SIZE\s+UPDATED\s+TYPE$/)
      expect(lines[1]).toMatch(/^a\.txt\s+1\.5 KiB\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+text\/plain$/)
      expect(lines[2]).toMatch(/^sub\/\s+-\s+-\s+folder$/)
      expect(res.stderr).toBe('')
      expect((await cli(['files', 'ls'])).stdout).toMatch(/^ls\/\s+-\s+-\s+folder$/m)
      expect((await cli(['files', 'ls', 'ls/a.txt'])).stdout.trim().split('\n')).toHaveLength(2)
      expect((await cli(['files', 'ls', 'nothing/'])).stdout).toBe('No files under nothing/.\n')
    })

    it('pages like runs list: --limit, the command that lists the next ones, --all, and {items, next_page_token} with --json', async () => {
      for (let i = 0; i < 5; i++) await files.storage.write(bucket, `paged/f${i}.txt`, String(i))
      const first = await cli(['files', 'ls', 'paged/', '--limit', '2'])
      expect(
        first.stdout
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual(['f0.txt', 'f1.txt'])
      const hint = /^More entries exist: platform (files ls paged\/ --limit 2 --page-token \S+) {2}\(or --all for every entry\)$/m.exec(first.stderr)
      expect(hint, first.stderr).not.toBeNull()
      const second = await cli(hint![1]!.split(' '))
      expect(
        second.stdout
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual(['f2.txt', 'f3.txt'])

      const all = parseJson<FileList>(await cli(['files', 'ls', 'paged/', '--all', '--json']))
      expect(all.items.map((f) => f.name)).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt'])
      expect(all.next_page_token).toBeNull()
      const page = parseJson<FileList>(await cli(['files', 'ls', 'paged/', '--limit', '3', '--json']))
      expect(page.items).toHaveLength(3)
      expect(page.next_page_token).toEqual(expect.any(String))
      expect((await cli(['files', 'ls', 'paged/', '--all', '--limit', '3'])).code).toBe(3)
    })
  })

  describe('cp, mv and rm', () => {
    it('copies into a folder keeping the name, refuses an existing destination without --overwrite, moves', async () => {
      await files.storage.write(bucket, 'cp/src.txt', 'source\n', 'text/plain')
      const copied = await cli(['files', 'cp', 'cp/src.txt', 'cp/archive/'])
      expect(copied.code, copied.stderr).toBe(0)
      expect(copied.stdout).toBe(`Copied cp/src.txt to gs://${bucket}/cp/archive/src.txt.\n`)
      const again = await cli(['files', 'cp', 'cp/src.txt', 'cp/archive/src.txt'])
      expect(again.code).toBe(7)
      expect((await cli(['files', 'cp', 'cp/src.txt', 'cp/archive/src.txt', '--overwrite'])).code).toBe(0)

      const moved = parseJson<FileEntry>(await cli(['files', 'mv', `gs://${bucket}/cp/src.txt`, 'cp/moved.txt', '--json']))
      expect(moved).toMatchObject({ path: 'cp/moved.txt', size: 7, content_type: 'text/plain' })
      expect(existsSync(bucketFile('cp/src.txt'))).toBe(false)
      expect(await readFile(bucketFile('cp/moved.txt'), 'utf8')).toBe('source\n')
    })

    it('refuses to delete without --yes when stdin is not a terminal (exit 3), and deletes with it', async () => {
      await files.storage.write(bucket, 'rm/a.txt', 'a')
      const refused = await cli(['files', 'rm', 'rm/a.txt'])
      expect(refused.code).toBe(3)
      expect(refused.stderr).toContain(`refusing to delete gs://${bucket}/rm/a.txt without confirmation: stdin is not a terminal; pass --yes`)
      expect(existsSync(bucketFile('rm/a.txt'))).toBe(true)
      const deleted = await cli(['files', 'rm', 'rm/a.txt', '--yes', '--json'])
      expect(parseJson(deleted)).toMatchObject({ path: 'rm/a.txt', deleted: true })
      expect(existsSync(bucketFile('rm/a.txt'))).toBe(false)
      expect((await cli(['files', 'rm', 'rm/a.txt', '--yes'])).code).toBe(6)
    })

    it('asks "Delete <file>? [y/N]" on a terminal and deletes only on yes; a declined confirmation exits 3', async () => {
      await files.storage.write(bucket, 'rm/b.txt', 'b')
      const no = startMain(['files', 'rm', 'rm/b.txt'], { configDir: home, tty: { stdin: true, stdout: true } })
      await no.waitFor(`Delete gs://${bucket}/rm/b.txt? [y/N] `)
      no.type('n\n')
      const kept = await no.exited
      expect(kept.code).toBe(3)
      expect(kept.stderr).toContain(`platform: gs://${bucket}/rm/b.txt was not deleted`)
      expect(existsSync(bucketFile('rm/b.txt'))).toBe(true)

      const yes = startMain(['files', 'rm', 'rm/b.txt'], { configDir: home, tty: { stdin: true, stdout: true } })
      await yes.waitFor('[y/N] ')
      yes.type('yes\n')
      const done = await yes.exited
      expect(done.code).toBe(0)
      expect(done.stdout).toBe(`Deleted gs://${bucket}/rm/b.txt.\n`)
      expect(existsSync(bucketFile('rm/b.txt'))).toBe(false)
    })

    it('leaves moving and replacing to project admins: a lab member gets exit 5, and the files stay', async () => {
      await files.storage.write(bucket, 'mv/lab.txt', 'lab')
      await files.storage.write(bucket, 'mv/other.txt', 'other')
      const lab = await world.caller(['lab'])
      const home = await homeFor(lab.token)
      for (const args of [
        ['files', 'mv', 'mv/lab.txt', 'mv/moved.txt'],
        ['files', 'cp', 'mv/other.txt', 'mv/lab.txt', '--overwrite'],
        ['files', 'upload', await local('over.txt', 'over'), 'mv/lab.txt', '--overwrite'],
      ]) {
        const res = await runMain(args, { configDir: home })
        expect([res.code, res.stderr], args.join(' ')).toEqual([5, 'platform: permission denied: permission file.delete is required\n'])
      }
      expect(await readFile(bucketFile('mv/lab.txt'), 'utf8')).toBe('lab')
      expect(existsSync(bucketFile('mv/moved.txt'))).toBe(false)
    })

    it('leaves deleting to project admins: a lab member gets exit 5', async () => {
      await files.storage.write(bucket, 'rm/c.txt', 'c')
      const lab = await world.caller(['lab'])
      const res = await runMain(['files', 'rm', 'rm/c.txt', '--yes'], { configDir: await homeFor(lab.token) })
      expect(res.code).toBe(5)
      expect(res.stderr).toMatch(/^platform: permission denied: /)
      expect(existsSync(bucketFile('rm/c.txt'))).toBe(true)
    })
  })
})
