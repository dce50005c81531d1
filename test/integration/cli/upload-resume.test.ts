import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { FileEntry } from '../../../cli/client.js'
import { crc32c } from '../../../cli/crc32c.js'
import { RESUMABLE_THRESHOLD } from '../../../cli/resumable.js'
import type { Uploaded } from '../../../cli/upload.js'
import { SettingsStore } from '../../../cli/settings.js'
import { configHome, parseJson, runCli, runMain, startCli, startPlatform } from '../../support/cli.js'

const MiB = 1024 * 1024
/** Chunks of 16 MiB (PLATFORM_UPLOAD_CHUNK_MIB), so that a 40 MiB file is three of them; the MD5 compared whatever the machine's cores. */
const CHUNK_BYTES = 16 * MiB
const env = { PLATFORM_UPLOAD_CHUNK_MIB: '16', PLATFORM_UPLOAD_MD5: 'on' }
const crcOf = (data: Buffer) => {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(crc32c(data))
  return out.toString('base64')
}

/**
 * Resumable uploads end to end: `platform files upload` (the binary, a child process) against the
 * file service and the local storage server over real HTTP, stopped at chosen points of its
 * session (SIGKILL, SIGTERM, Ctrl-C), then the same command run again. The storage is held at a
 * byte position by wrapping what the storage server appends to the session, so that each stop
 * lands exactly where the test says.
 */
describe('platform files upload, resumable', async () => {
  const platform = await startPlatform()
  const { world, files } = platform
  const storage = files.storage
  const bucket = world.project.bucket_name
  const work = await mkdtemp(join(tmpdir(), 'cli-resume-'))
  const home = await configHome(platform, world.project.id)
  new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: world.owner.token, saved_at: new Date().toISOString() })
  const original = {
    append: storage.appendToSession.bind(storage),
    complete: storage.completeSession.bind(storage),
    start: storage.startSession.bind(storage),
  }
  afterEach(() => {
    storage.appendToSession = original.append
    storage.completeSession = original.complete
    storage.startSession = original.start
  })
  afterAll(async () => {
    await platform.stop()
    await rm(work, { recursive: true, force: true })
  })

  // 40 MiB: chunks of 16, 16 and 8 MiB.
  const data = randomBytes(40 * MiB)
  const file = join(work, 'reads.cram')
  await writeFile(file, data)
  const savedSessions = () => (existsSync(join(home, 'uploads')) ? readdirSync(join(home, 'uploads')) : [])

  /**
   * Holds the storage server when a session's bytes reach `position` (before the chunk that starts
   * there is read, or inside the chunk that spans it): `reached` resolves, and the chunk then
   * breaks off as a cut connection does, once `release` is called. Once: later chunks pass.
   */
  function holdAt(position: number) {
    let reached!: () => void
    let release!: () => void
    const held = { reached: new Promise<void>((r) => (reached = r)), release: () => release(), sent: 0 }
    const releasing = new Promise<void>((r) => (release = r))
    let fired = false
    // Once: the run that resumes afterwards passes.
    storage.appendToSession = (id, offset, source, opts) => {
      if (fired) return original.append(id, offset, source, opts)
      async function* upTo() {
        let at = offset
        if (at === position) {
          fired = true
          reached()
          await releasing
          throw new Error('cut by the test')
        }
        for await (const chunk of source) {
          if (at < position && at + chunk.length >= position) {
            yield chunk.subarray(0, position - at)
            fired = true
            reached()
            await releasing
            throw new Error('cut by the test')
          }
          at += chunk.length
          yield chunk
        }
      }
      return original.append(id, offset, upTo(), opts)
    }
    return held
  }

  /** Counts the bytes the storage server receives for sessions from now on. */
  function countReceived() {
    const counted = { bytes: 0 }
    storage.appendToSession = (id, offset, source, opts) => {
      async function* counting() {
        for await (const chunk of source) {
          counted.bytes += chunk.length
          yield chunk
        }
      }
      return original.append(id, offset, counting(), opts)
    }
    return counted
  }

  const upload = (remote: string) => startCli(['files', 'upload', file, remote, '--json'], { configDir: home, timeoutMs: 60_000, env })
  const again = (remote: string) => runCli(['files', 'upload', file, remote, '--json'], { configDir: home, timeoutMs: 60_000, env })

  async function expectStored(remote: string) {
    expect((await readFile(storage.fileOf(bucket, remote))).equals(data)).toBe(true)
    expect(savedSessions()).toEqual([])
  }

  it.each([
    ['inside the first chunk', 3 * MiB + 12_345, 3 * MiB],
    ['at the boundary between the first and the second chunk', CHUNK_BYTES, CHUNK_BYTES],
    ['inside the second chunk', CHUNK_BYTES + 5 * MiB + 100_000, CHUNK_BYTES + 5 * MiB],
    ['at the boundary before the last chunk', 2 * CHUNK_BYTES, 2 * CHUNK_BYTES],
    ['inside the last chunk', 2 * CHUNK_BYTES + 3, 2 * CHUNK_BYTES],
  ])(
    'resumes after a SIGKILL %s, sending only what the session lacks',
    async (_where, position, kept) => {
      const remote = `resume/killed-${position}.cram`
      const held = holdAt(position)
      const first = upload(remote)
      await held.reached
      first.child.kill('SIGKILL')
      expect((await first.exited).signal).toBe('SIGKILL')
      held.release()
      expect(savedSessions()).toHaveLength(1)
      expect(existsSync(storage.fileOf(bucket, remote))).toBe(false)

      const received = countReceived()
      const res = await again(remote)
      expect(res.code, res.stderr).toBe(0)
      const up = parseJson<Uploaded & FileEntry>(res)
      expect(up).toMatchObject({ path: remote, size: data.length, resumable: true, resumed_from: kept, verified: 'crc32c+md5', crc32c: crcOf(data) })
      expect(received.bytes).toBe(data.length - kept)
      expect(res.stderr).toBe('')
      await expectStored(remote)
    },
    60_000,
  )

  it('finds the upload complete when it was killed after the last byte was stored but before the answer', async () => {
    const remote = 'resume/complete.cram'
    let reached!: () => void
    const stored = new Promise<void>((r) => (reached = r))
    let release!: () => void
    const releasing = new Promise<void>((r) => (release = r))
    storage.completeSession = async (id) => {
      const object = await original.complete(id)
      reached()
      await releasing
      return object
    }
    const first = upload(remote)
    await stored
    first.child.kill('SIGKILL')
    await first.exited
    release()
    storage.completeSession = original.complete

    const received = countReceived()
    const res = await again(remote)
    expect(res.code, res.stderr).toBe(0)
    expect(parseJson<Uploaded>(res)).toMatchObject({ resumed_from: data.length, verified: 'crc32c+md5', crc32c: crcOf(data) })
    expect(received.bytes).toBe(0)
    await expectStored(remote)
  }, 60_000)

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops on %s with exit 130, saying what is stored, and resumes from there',
    async (signal) => {
      const remote = `resume/${signal}.cram`
      const held = holdAt(CHUNK_BYTES + MiB)
      const first = upload(remote)
      await held.reached
      first.child.kill(signal)
      const stopped = await first.exited
      held.release()
      expect(stopped.code).toBe(130)
      expect(stopped.stderr).toContain(
        `upload of ${file} interrupted: 16.0 MiB of 40.0 MiB are stored in its resumable session; run the same command again to send the rest`,
      )
      const res = await again(remote)
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Uploaded>(res).resumed_from).toBe(CHUNK_BYTES + MiB)
      await expectStored(remote)
    },
    60_000,
  )

  it('starts afresh, saying so, when the saved session expired', async () => {
    const remote = 'resume/expired.cram'
    const held = holdAt(CHUNK_BYTES)
    const first = upload(remote)
    await held.reached
    first.child.kill('SIGKILL')
    await first.exited
    held.release()
    // The session was started over a week ago, as far as the storage is concerned.
    const sessions = join(storage.root, '.sessions')
    for (const name of readdirSync(sessions).filter((n) => n.endsWith('.json'))) {
      const meta = JSON.parse(await readFile(join(sessions, name), 'utf8')) as { expires_at: string; path: string }
      if (meta.path === remote)
        await writeFile(join(sessions, name), JSON.stringify({ ...meta, expires_at: new Date(Date.now() - 1000).toISOString() }))
    }
    const res = await again(remote)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).toMatch(/^The resumable upload session of \S+reads\.cram started \S+ expired \(404 NoSuchUpload\): starting afresh\.\n$/)
    expect(parseJson<Uploaded>(res).resumed_from).toBe(0)
    await expectStored(remote)
  }, 60_000)

  it('starts a new session for a file changed since the interrupted upload', async () => {
    const remote = 'resume/changed.cram'
    const changed = join(work, 'changed.cram')
    await writeFile(changed, data)
    const held = holdAt(CHUNK_BYTES)
    const first = startCli(['files', 'upload', changed, remote, '--json'], { configDir: home, timeoutMs: 60_000, env })
    await held.reached
    first.child.kill('SIGKILL')
    await first.exited
    held.release()
    const [savedName] = savedSessions()
    const cancelled = new URL(
      (JSON.parse(await readFile(join(home, 'uploads', savedName!), 'utf8')) as { session_uri: string }).session_uri,
    ).searchParams.get('upload_id')
    const other = Buffer.from(data)
    other[0] = other[0]! ^ 1
    await writeFile(changed, other)
    // The bytes of the first session are not the file's: this upload must not reuse them.
    const res = await runMain(['files', 'upload', changed, remote, '--json'], { configDir: home, env })
    expect(res.code, res.stderr).toBe(0)
    expect(parseJson<Uploaded>(res)).toMatchObject({ resumed_from: 0, crc32c: crcOf(other) })
    expect((await readFile(storage.fileOf(bucket, remote))).equals(other)).toBe(true)
    // The session of the earlier version is cancelled in the storage and forgotten here.
    expect(savedSessions()).toEqual([])
    expect(await storage.uploadSession(cancelled!)).toMatchObject({ state: 'cancelled' })
  }, 60_000)

  it('exits 10 when the storage answers another checksum at the end of a session, and forgets the session', async () => {
    storage.completeSession = async (id) => ({ ...(await original.complete(id)), digests: { md5: 'AAAAAAAAAAAAAAAAAAAAAA==', crc32c: 'AAAAAA==' } })
    const res = await runMain(['files', 'upload', file, 'resume/mismatch.cram'], { configDir: home, env })
    expect(res.code).toBe(10)
    expect(res.stderr).toContain(
      `checksum mismatch after uploading ${file} to resume/mismatch.cram: crc32c ${crcOf(data)} here, AAAAAA== in the storage`,
    )
    expect(savedSessions()).toEqual([])
  }, 60_000)

  it('exits 10 when the CRC32C matches but the MD5 does not: the MD5 hashed beside the transfer is compared too', async () => {
    storage.completeSession = async (id) => {
      const done = await original.complete(id)
      return { ...done, digests: { ...done.digests, md5: 'AAAAAAAAAAAAAAAAAAAAAA==' } }
    }
    const res = await runMain(['files', 'upload', file, 'resume/md5-mismatch.cram'], { configDir: home, env })
    expect(res.code).toBe(10)
    const md5 = createHash('md5').update(data).digest('base64')
    expect(res.stderr).toContain(
      `checksum mismatch after uploading ${file} to resume/md5-mismatch.cram: md5 ${md5} here, AAAAAAAAAAAAAAAAAAAAAA== in the storage`,
    )
  }, 60_000)

  it('compares the CRC32C alone with PLATFORM_UPLOAD_MD5=off, and refuses a setting it does not know (exit 3)', async () => {
    storage.completeSession = async (id) => {
      const done = await original.complete(id)
      return { ...done, digests: { ...done.digests, md5: 'AAAAAAAAAAAAAAAAAAAAAA==' } }
    }
    const off = await runMain(['files', 'upload', file, 'resume/md5-off.cram', '--json'], {
      configDir: home,
      env: { ...env, PLATFORM_UPLOAD_MD5: 'off' },
    })
    expect(off.code, off.stderr).toBe(0)
    expect(parseJson<Uploaded>(off)).toMatchObject({ verified: 'crc32c', crc32c: crcOf(data) })
    const odd = await runMain(['files', 'upload', file, 'resume/md5-odd.cram'], { configDir: home, env: { ...env, PLATFORM_UPLOAD_MD5: 'maybe' } })
    expect(odd.code).toBe(3)
    expect(odd.stderr).toContain('PLATFORM_UPLOAD_MD5 must be auto, on or off, not "maybe"')
  }, 60_000)

  it('keeps a file of at most 8 MiB to one PUT, and sends a larger one through a session', async () => {
    let sessions = 0
    storage.startSession = (...args) => {
      sessions++
      return original.start(...args)
    }
    const small = join(work, 'small.bin')
    await writeFile(small, data.subarray(0, RESUMABLE_THRESHOLD))
    const one = await runMain(['files', 'upload', small, 'resume/small.bin', '--json'], { configDir: home, env })
    expect(parseJson<Uploaded>(one)).toMatchObject({ size: RESUMABLE_THRESHOLD, resumable: false, resumed_from: 0, verified: 'crc32c+md5' })
    expect(sessions).toBe(0)
    await writeFile(small, data.subarray(0, RESUMABLE_THRESHOLD + 1))
    const over = await runMain(['files', 'upload', small, 'resume/larger.bin', '--json'], { configDir: home, env })
    expect(parseJson<Uploaded>(over)).toMatchObject({ size: RESUMABLE_THRESHOLD + 1, resumable: true, verified: 'crc32c+md5' })
    expect(sessions).toBe(1)
    expect(
      createHash('md5')
        .update(await readFile(storage.fileOf(bucket, 'resume/larger.bin')))
        .digest('base64'),
    ).toBe(parseJson<Uploaded>(over).md5)
  }, 60_000)
})
