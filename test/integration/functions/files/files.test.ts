import { afterAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../../../../lib/audit.js'
import type { ProjectRole } from '../../../../lib/auth/roles.js'
import type { ObjectStorage } from '../../../../lib/storage.js'
import { localFiles } from '../../../support/files.js'
import { apiFor, makeWorld } from '../../../support/world.js'

describe('files', async () => {
  const world = await makeWorld()
  let failDeletes = false
  const f = await localFiles(world, {
    objects: (s): ObjectStorage =>
      Object.assign(Object.create(s) as ObjectStorage, {
        delete: async (bucket: string, path: string) => {
          if (failDeletes) throw new Error('storage unavailable')
          return s.delete(bucket, path)
        },
      }),
  })
  afterAll(() => f.close())
  const bucket = world.project.bucket_name
  const api = apiFor(f.app, world)
  const put = (path: string, text: string, type = 'text/plain') => f.storage.write(bucket, path, text, type)
  const names = (body: Array<{ name: string }>) => body.map((e) => e.name)
  const auditOf = async (action: string) => {
    const q = await world.deps.db.col('audit_events').where('project_id', '==', world.project.id).where('action', '==', action).get()
    return q.docs.map((d) => d.data())
  }

  describe('listing', () => {
    it('lists one level at a time, objects and folder/ prefixes in name order, like gsutil ls', async () => {
      await put('list/a_R1.fastq.gz', 'r1', 'application/gzip')
      await put('list/a_R2.fastq.gz', 'r2')
      await put('list/sub/deep/x.txt', 'x')
      await put('list/readme.md', '# hi')
      const res = await api('GET', '/files?path=list/')
      expect(res.status).toBe(200)
      expect(res.body).toEqual([
        {
          kind: 'object',
          name: 'a_R1.fastq.gz',
          path: 'list/a_R1.fastq.gz',
          uri: `gs://${bucket}/list/a_R1.fastq.gz`,
          size: 2,
          updated: expect.any(String),
          content_type: 'application/gzip',
        },
        expect.objectContaining({ name: 'a_R2.fastq.gz', content_type: 'text/plain' }),
        expect.objectContaining({ name: 'readme.md', content_type: 'text/plain' }),
        { kind: 'folder', name: 'sub/', path: 'list/sub/', uri: `gs://${bucket}/list/sub/`, size: 0 },
      ])
      expect(names((await api('GET', '/files?path=list')).body)).toEqual(['a_R1.fastq.gz', 'a_R2.fastq.gz', 'readme.md', 'sub/'])
      expect(names((await api('GET', `/files?path=gs://${bucket}/list/sub`)).body)).toEqual(['deep/'])
      expect(names((await api('GET', '/files')).body)).toContain('list/')
      expect((await api('GET', '/files?path=nothing-here/')).body).toEqual([])
    })

    it('lists a path that names an object as that object alone', async () => {
      const res = await api('GET', '/files?path=list/readme.md')
      expect(res.body).toEqual([expect.objectContaining({ kind: 'object', path: 'list/readme.md', size: 4 })])
    })

    it('pages with page_size and page_token, and a Link to the next page', async () => {
      const first = await api('GET', '/files?path=list/&page_size=3')
      expect(names(first.body)).toEqual(['a_R1.fastq.gz', 'a_R2.fastq.gz', 'readme.md'])
      const token = first.headers.get('x-next-page-token')!
      expect(first.headers.get('link')).toContain('rel="next"')
      const second = await api('GET', `/files?path=list/&page_size=3&page_token=${token}`)
      expect(names(second.body)).toEqual(['sub/'])
      expect(second.headers.get('x-next-page-token')).toBeNull()
    })

    it('answers 400 for a path outside the bucket and for a project_id other than X-Project-ID', async () => {
      for (const path of ['../x/', '/abs/', 'gs://another-bucket/', 'a//b']) {
        const res = await api('GET', `/files?path=${encodeURIComponent(path)}`)
        expect(res.status, path).toBe(400)
        expect(res.body.detail).toMatch(/^path: /)
      }
      const other = await api('GET', '/files?project_id=00000000-0000-4000-8000-000000000000')
      expect([other.status, other.body.detail]).toEqual([400, 'project_id: must equal the X-Project-ID header'])
      expect((await api('GET', `/files?project_id=${world.project.id}&path=list/`)).status).toBe(200)
    })

    it('answers 400 naming the credentials for a project without a service account', async () => {
      const { project } = await world.otherProject()
      await world.deps.store.setCredentials(SYSTEM_ACTOR, project, null, [])
      const res = await api('GET', '/files', { project: project.id })
      expect(res.status).toBe(400)
      expect(res.body.detail).toMatch(/no cloud credentials/)
    })
  })

  describe('signed addresses', () => {
    it('uploads and downloads through real HTTP with no Authorization header', async () => {
      const up = await api('POST', '/files/upload-url', { body: { path: 'http/S1_R1.fastq.gz', content_type: 'application/gzip' } })
      expect(up.status).toBe(200)
      expect(up.body).toMatchObject({
        expires_in_seconds: 900,
        method: 'PUT',
        headers: { 'Content-Type': 'application/gzip', 'x-goog-if-generation-match': '0' },
      })
      const url = new URL(up.body.url)
      expect(url.origin).toBe(f.storageUrl)
      expect(url.pathname).toBe(`/${bucket}/http/S1_R1.fastq.gz`)
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        'X-Goog-Algorithm': 'GOOG4-RSA-SHA256',
        'X-Goog-Expires': '900',
        'X-Goog-SignedHeaders': 'content-type;host;x-goog-if-generation-match',
      })
      const bytes = Buffer.from('@r1\nACGT\n+\nIIII\n')
      const stored = await fetch(up.body.url, { method: 'PUT', headers: up.body.headers, body: bytes })
      expect(stored.status).toBe(200)

      const down = await api('GET', '/files/download-url?path=http/S1_R1.fastq.gz')
      expect(down.status).toBe(200)
      expect(down.body).toMatchObject({ expires_in_seconds: 900, method: 'GET', headers: {} })
      const got = await fetch(down.body.url)
      expect(got.status).toBe(200)
      expect(got.headers.get('content-type')).toBe('application/gzip')
      expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes)
      expect((await api('GET', '/files?path=http/')).body[0]).toMatchObject({ size: bytes.length, content_type: 'application/gzip' })
    })

    it('has the storage side refuse another Content-Type, a GET on an upload address, an expired or altered address', async () => {
      const up = await api('POST', '/files/upload-url', { body: { path: 'http/refused.txt', content_type: 'text/plain' } })
      const wrongType = await fetch(up.body.url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: 'x' })
      expect(wrongType.status).toBe(403)
      expect(await wrongType.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
      expect((await fetch(up.body.url)).status).toBe(403)
      const altered = up.body.url.replace('refused.txt', 'refusee.txt')
      expect((await fetch(altered, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(403)
      f.serverClock(901_000)
      try {
        const late = await fetch(up.body.url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'x' })
        expect(late.status).toBe(400)
        expect(await late.text()).toContain('<Code>ExpiredToken</Code>')
      } finally {
        f.serverClock(0)
      }
      expect(await f.storage.stat(bucket, 'http/refused.txt')).toBeUndefined()
      expect(await f.storage.stat(bucket, 'http/refusee.txt')).toBeUndefined()
    })

    it('answers 404 for a download of a missing file, and 409 for an upload over an existing one unless overwrite', async () => {
      expect((await api('GET', '/files/download-url?path=http/none.gz')).status).toBe(404)
      await put('http/exists.txt', 'old')
      const again = await api('POST', '/files/upload-url', { body: { path: 'http/exists.txt', content_type: 'text/plain' } })
      expect(again.status).toBe(409)
      expect(again.body.detail).toMatch(/overwrite/)
      const over = await api('POST', '/files/upload-url', { body: { path: 'http/exists.txt', content_type: 'text/plain', overwrite: true } })
      expect([over.status, over.body.headers]).toEqual([200, { 'Content-Type': 'text/plain' }])
      expect((await fetch(over.body.url, { method: 'PUT', headers: over.body.headers, body: 'new' })).status).toBe(200)
      expect((await f.storage.read(bucket, 'http/exists.txt'))?.toString()).toBe('new')
    })

    it('starts a resumable upload from a signed POST: the session URI takes chunks without a signature, the file is stored at the end', async () => {
      const up = await api('POST', '/files/upload-url', {
        body: { path: 'http/resumable.bin', content_type: 'application/octet-stream', resumable: true },
      })
      expect(up.status).toBe(200)
      expect(up.body).toMatchObject({
        method: 'POST',
        headers: { 'Content-Type': 'application/octet-stream', 'x-goog-if-generation-match': '0', 'x-goog-resumable': 'start' },
      })
      expect(new URL(up.body.url).searchParams.get('X-Goog-SignedHeaders')).toBe('content-type;host;x-goog-if-generation-match;x-goog-resumable')
      // Without x-goog-resumable the address is not valid: it was signed with it.
      const bare = await fetch(up.body.url, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'x-goog-if-generation-match': '0' },
      })
      expect(bare.status).toBe(403)
      const start = await fetch(up.body.url, { method: 'POST', headers: up.body.headers })
      expect(start.status).toBe(201)
      const session = start.headers.get('location')!
      const bytes = Buffer.alloc(256 * 1024 + 5, 7)
      const first = await fetch(session, {
        method: 'PUT',
        headers: { 'content-range': `bytes 0-${256 * 1024 - 1}/*` },
        body: bytes.subarray(0, 256 * 1024),
      })
      expect([first.status, first.headers.get('range')]).toEqual([308, `bytes=0-${256 * 1024 - 1}`])
      const last = await fetch(session, {
        method: 'PUT',
        headers: { 'content-range': `bytes ${256 * 1024}-${bytes.length - 1}/${bytes.length}` },
        body: bytes.subarray(256 * 1024),
      })
      expect(last.status).toBe(200)
      expect((await f.storage.read(bucket, 'http/resumable.bin'))?.equals(bytes)).toBe(true)
      expect((await f.storage.stat(bucket, 'http/resumable.bin'))?.content_type).toBe('application/octet-stream')
      // The same refusals as a single PUT: the file exists now.
      const again = await api('POST', '/files/upload-url', { body: { path: 'http/resumable.bin', content_type: 'text/plain', resumable: true } })
      expect(again.status).toBe(409)
    })

    it('binds "no overwrite" into the upload address: used twice, the second PUT is 412 and the first file stays', async () => {
      const up = await api('POST', '/files/upload-url', { body: { path: 'http/twice.txt', content_type: 'text/plain' } })
      expect((await fetch(up.body.url, { method: 'PUT', headers: up.body.headers, body: 'first' })).status).toBe(200)
      const second = await fetch(up.body.url, { method: 'PUT', headers: up.body.headers, body: 'second' })
      expect(second.status).toBe(412)
      expect(await second.text()).toContain('<Code>PreconditionFailed</Code>')
      // Without the header the address is not valid at all.
      const bare = await fetch(up.body.url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'third' })
      expect(bare.status).toBe(403)
      expect((await f.storage.read(bucket, 'http/twice.txt'))?.toString()).toBe('first')
    })

    it('keeps a file that appeared after its upload address was issued, even with overwrite asked for', async () => {
      const up = await api('POST', '/files/upload-url', { body: { path: 'http/late.txt', content_type: 'text/plain', overwrite: true } })
      expect(up.body.headers).toEqual({ 'Content-Type': 'text/plain', 'x-goog-if-generation-match': '0' })
      await put('http/late.txt', 'written meanwhile')
      expect((await fetch(up.body.url, { method: 'PUT', headers: up.body.headers, body: 'x' })).status).toBe(412)
      expect((await f.storage.read(bucket, 'http/late.txt'))?.toString()).toBe('written meanwhile')
    })

    it('answers 400 naming the limit for a path segment over 255 bytes, on download-url and upload-url alike', async () => {
      const long = `fastq/${'n'.repeat(256)}.fastq.gz`
      const down = await api('GET', `/files/download-url?path=${encodeURIComponent(long)}`)
      expect([down.status, down.body.detail]).toEqual([
        400,
        expect.stringMatching(/^path: has a segment of 265 bytes: each segment between '\/' may be at most 255 bytes/),
      ])
      const up = await api('POST', '/files/upload-url', { body: { path: long, content_type: 'application/gzip' } })
      expect([up.status, up.body.detail]).toEqual([400, down.body.detail])
    })

    it('refuses a malformed content type or path with a 400 naming the field', async () => {
      const badType = await api('POST', '/files/upload-url', { body: { path: 'x.txt', content_type: 'not a type' } })
      expect([badType.status, badType.body.detail]).toEqual([400, expect.stringMatching(/^content_type: /)])
      const badPath = await api('POST', '/files/upload-url', { body: { path: '../x.txt', content_type: 'text/plain' } })
      expect([badPath.status, badPath.body.detail]).toEqual([400, "path: must not contain '..'"])
    })

    it('records who was given which address, until when', async () => {
      const [issued] = (await auditOf('file.upload_url_issued')).filter((e) => e.entity.id === `gs://${bucket}/http/S1_R1.fastq.gz`)
      expect(issued).toMatchObject({
        actor: { id: world.owner.user.id },
        entity: { type: 'file', parent: world.project.id },
        change: { to: 'application/gzip', reason: expect.stringMatching(/^valid until /) },
      })
      expect((await auditOf('file.download_url_issued')).some((e) => e.entity.id === `gs://${bucket}/http/S1_R1.fastq.gz`)).toBe(true)
    })
  })

  describe('copy, move and delete', () => {
    it('copies, keeping the content type, and answers 409 when the destination exists unless overwrite', async () => {
      await put('ops/a.vcf', 'v1', 'text/x-vcf')
      const copied = await api('POST', '/files/copy', { body: { source: 'ops/a.vcf', destination: 'ops/copy/a.vcf' } })
      expect(copied.status).toBe(200)
      expect(copied.body).toMatchObject({ path: 'ops/copy/a.vcf', size: 2, content_type: 'text/x-vcf' })
      const again = await api('POST', '/files/copy', { body: { source: 'ops/a.vcf', destination: 'ops/copy/a.vcf' } })
      expect([again.status, again.body.detail]).toEqual([409, expect.stringMatching(/already exists.*overwrite/)])
      await put('ops/a.vcf', 'v2-longer', 'text/x-vcf')
      expect((await api('POST', '/files/copy', { body: { source: 'ops/a.vcf', destination: 'ops/copy/a.vcf', overwrite: true } })).body.size).toBe(9)
      expect((await api('POST', '/files/copy', { body: { source: 'ops/none', destination: 'ops/x' } })).status).toBe(404)
      expect((await api('POST', '/files/copy', { body: { source: 'ops/a.vcf', destination: 'ops/a.vcf' } })).status).toBe(400)
      expect((await api('POST', '/files/copy', { body: { source: 'ops/a.vcf', destination: 'ops' } })).status).toBe(409)
      // Two copies landed: the first created the file, the second replaced it (and says so).
      const copies = (await auditOf('file.copied')).filter((e) => e.entity.id === `gs://${bucket}/ops/copy/a.vcf`)
      const link = { from: `gs://${bucket}/ops/a.vcf`, to: `gs://${bucket}/ops/copy/a.vcf` }
      expect(copies.map((e) => e.change)).toHaveLength(2)
      expect(copies.map((e) => e.change)).toEqual(expect.arrayContaining([link, { ...link, reason: 'replaced the object that was there' }]))
    })

    it('moves (renames) a file, and refuses to move over an existing one', async () => {
      await put('ops/move-me.txt', 'm')
      await put('ops/taken.txt', 't')
      expect((await api('POST', '/files/move', { body: { source: 'ops/move-me.txt', destination: 'ops/taken.txt' } })).status).toBe(409)
      const moved = await api('POST', '/files/move', { body: { source: 'ops/move-me.txt', destination: `gs://${bucket}/ops/moved/me.txt` } })
      expect([moved.status, moved.body.path]).toEqual([200, 'ops/moved/me.txt'])
      expect(await f.storage.stat(bucket, 'ops/move-me.txt')).toBeUndefined()
      expect((await f.storage.read(bucket, 'ops/moved/me.txt'))?.toString()).toBe('m')
      expect((await auditOf('file.moved')).map((e) => e.change)).toContainEqual({
        from: `gs://${bucket}/ops/move-me.txt`,
        to: `gs://${bucket}/ops/moved/me.txt`,
      })
    })

    it('leaves the source in place when a move fails between the copy and the deletion', async () => {
      await put('ops/fragile.txt', 'f')
      failDeletes = true
      try {
        const res = await api('POST', '/files/move', { body: { source: 'ops/fragile.txt', destination: 'ops/fragile-moved.txt' } })
        expect(res.status).toBe(500)
      } finally {
        failDeletes = false
      }
      expect((await f.storage.read(bucket, 'ops/fragile.txt'))?.toString()).toBe('f')
      expect((await auditOf('file.copied')).some((e) => e.change.reason === 'move: deleting the source failed')).toBe(true)
    })

    it('deletes a file (404 when absent, 400 for a folder), and removes folders left empty', async () => {
      await put('ops/del/only.txt', 'x')
      expect((await api('DELETE', '/files?path=ops/del/')).status).toBe(400)
      expect((await api('DELETE', '/files?path=ops/del/only.txt')).status).toBe(204)
      expect((await api('DELETE', '/files?path=ops/del/only.txt')).status).toBe(404)
      expect(names((await api('GET', '/files?path=ops/')).body)).not.toContain('del/')
      expect((await auditOf('file.deleted')).map((e) => e.entity.id)).toContain(`gs://${bucket}/ops/del/only.txt`)
    })
  })

  describe('roles', async () => {
    await put('roles/r.txt', 'r')
    const ops: Record<string, () => readonly [string, string, unknown]> = {
      list: () => ['GET', '/files?path=roles/', undefined] as const,
      download: () => ['GET', '/files/download-url?path=roles/r.txt', undefined] as const,
      upload: () => ['POST', '/files/upload-url', { path: `roles/up-${Math.random()}.txt`, content_type: 'text/plain' }] as const,
      copy: () => ['POST', '/files/copy', { source: 'roles/r.txt', destination: `roles/c-${Math.random()}.txt` }] as const,
      move: () => ['POST', '/files/move', { source: 'roles/msrc.txt', destination: `roles/m-${Math.random()}.txt` }] as const,
      delete: () => ['DELETE', `/files?path=roles/r.txt`, undefined] as const,
    }
    type Op = 'list' | 'download' | 'upload' | 'copy' | 'move' | 'delete'
    const allowed: Array<[ProjectRole[], Op[]]> = [
      [['viewer'], ['list', 'download']],
      [['auditor'], []],
      [['lab'], ['list', 'download', 'upload', 'copy']],
      [['analyst'], ['list', 'download', 'upload', 'copy']],
      [['pipeline'], ['list', 'download', 'upload', 'copy']],
      [['reviewer'], ['list', 'download', 'upload', 'copy']],
      [['admin'], ['list', 'download', 'upload', 'copy', 'move', 'delete']],
    ]
    it.each(allowed)('lets %j do exactly %j', async (roles, may) => {
      const who = await world.caller(roles)
      const outcome: Record<string, number> = {}
      for (const op of Object.keys(ops) as Op[]) {
        if (op === 'delete' && may.includes('delete')) await put('roles/r.txt', 'r')
        if (op === 'move') await put('roles/msrc.txt', 'm')
        const [method, path, body] = ops[op]!()
        outcome[op] = (await api(method, path, { token: who.token, body })).status
      }
      const expected = Object.fromEntries((Object.keys(ops) as Op[]).map((op) => [op, may.includes(op) ? (op === 'delete' ? 204 : 200) : 403]))
      expect(outcome).toEqual(expected)
      if (!may.includes('delete')) await put('roles/r.txt', 'r')
    })

    it('refuses a lab user moving a file away or writing over one (403, access.denied on the file), and the files stay', async () => {
      const lab = await world.caller(['lab'])
      await put('roles/keep.fastq.gz', 'reads')
      await put('roles/other.fastq.gz', 'other reads')
      const attempts = [
        ['/files/move', { source: 'roles/keep.fastq.gz', destination: 'roles/elsewhere.fastq.gz' }, 'roles/keep.fastq.gz'],
        ['/files/copy', { source: 'roles/other.fastq.gz', destination: 'roles/keep.fastq.gz', overwrite: true }, 'roles/keep.fastq.gz'],
        ['/files/move', { source: 'roles/other.fastq.gz', destination: 'roles/keep.fastq.gz', overwrite: true }, 'roles/other.fastq.gz'],
        ['/files/upload-url', { path: 'roles/keep.fastq.gz', content_type: 'application/gzip', overwrite: true }, 'roles/keep.fastq.gz'],
      ] as const
      for (const [path, body] of attempts) {
        const res = await api('POST', path, { token: lab.token, body })
        expect([res.status, res.body.detail], `${path} ${JSON.stringify(body)}`).toEqual([403, 'permission file.delete is required'])
      }
      const denied = (await auditOf('access.denied')).filter((e) => e.actor.id === lab.user.id)
      expect(denied.map((e) => e.entity.id).sort()).toEqual(attempts.map(([, , on]) => `gs://${bucket}/${on}`).sort())
      for (const e of denied)
        expect(e).toMatchObject({ outcome: 'denied', entity: { type: 'file' }, change: { reason: 'missing permission file.delete' } })
      expect((await f.storage.read(bucket, 'roles/keep.fastq.gz'))?.toString()).toBe('reads')
      expect((await f.storage.read(bucket, 'roles/other.fastq.gz'))?.toString()).toBe('other reads')
      expect(await f.storage.stat(bucket, 'roles/elsewhere.fastq.gz')).toBeUndefined()
      // What destroys nothing stays theirs: a copy to a new name, an upload address for a new file.
      const copy = { source: 'roles/keep.fastq.gz', destination: 'roles/copy.fastq.gz', overwrite: true }
      expect((await api('POST', '/files/copy', { token: lab.token, body: copy })).status).toBe(200)
      const fresh = { path: 'roles/fresh.fastq.gz', content_type: 'application/gzip', overwrite: true }
      expect((await api('POST', '/files/upload-url', { token: lab.token, body: fresh })).body.headers).toMatchObject({
        'x-goog-if-generation-match': '0',
      })
    })

    it("refuses another tenant's user (no role in the project) with 403", async () => {
      const other = await world.caller([], (await world.otherProject()).project)
      expect((await api('GET', '/files', { token: other.token })).status).toBe(403)
    })
  })
})
