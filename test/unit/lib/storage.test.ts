import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../lib/config.js'
import { createObjectStorage, LocalObjectStorage, localPathFor, parseGsUri } from '../../../lib/storage.js'

describe('local object storage', async () => {
  const root = await mkdtemp(join(tmpdir(), 'storage-test-'))
  afterAll(() => rm(root, { recursive: true, force: true }))
  const config = loadConfig({ STORAGE_BACKEND: 'local', LOCAL_STORAGE_ROOT: root, LOG_LEVEL: 'silent' })
  const storage = createObjectStorage(config)

  it('is chosen by STORAGE_BACKEND=local and maps gs://<bucket>/<path> to <root>/<bucket>/<path>', () => {
    expect(storage).toBeInstanceOf(LocalObjectStorage)
    expect(localPathFor(config, 'gs://demo-lab-demo/runs/abc/')).toBe(join(root, 'demo-lab-demo', 'runs', 'abc'))
    expect(localPathFor(config, 'gs://demo-lab-demo/runs/abc/out.txt')).toBe(join(root, 'demo-lab-demo', 'runs', 'abc', 'out.txt'))
  })

  it('refuses paths that escape the bucket and URIs that are not gs://', () => {
    expect(() => localPathFor(config, 'gs://demo-lab-demo/../other/secret')).toThrow(/escapes/)
    expect(() => parseGsUri('s3://bucket/x')).toThrow(/gs:\/\//)
  })

  it('lists objects by string prefix in name order, a page at a time', async () => {
    for (const name of ['runs/r1/b.txt', 'runs/r1/a.json', 'runs/r1/sub/c.log', 'runs/r10/x.txt', 'other/y.txt']) {
      await storage.write('bkt-one', name, `content of ${name}`)
    }
    const all = await storage.list('bkt-one', 'runs/r1/')
    expect(all.items.map((i) => i.path)).toEqual(['runs/r1/a.json', 'runs/r1/b.txt', 'runs/r1/sub/c.log'])
    expect(all.items[0]).toMatchObject({ size: 'content of runs/r1/a.json'.length, content_type: 'application/json' })
    expect(all.nextPageToken).toBeUndefined()
    // A prefix is a string prefix, as in Cloud Storage: runs/r1 also matches runs/r10.
    expect((await storage.list('bkt-one', 'runs/r1')).items).toHaveLength(4)

    const first = await storage.list('bkt-one', 'runs/r1/', { pageSize: 2 })
    expect(first.items.map((i) => i.path)).toEqual(['runs/r1/a.json', 'runs/r1/b.txt'])
    const second = await storage.list('bkt-one', 'runs/r1/', { pageSize: 2, pageToken: first.nextPageToken })
    expect(second.items.map((i) => i.path)).toEqual(['runs/r1/sub/c.log'])
    expect(second.nextPageToken).toBeUndefined()
  })

  it('lists nothing for a missing bucket or prefix, and reads back what it wrote', async () => {
    expect((await storage.list('no-such-bucket', 'runs/')).items).toEqual([])
    expect((await storage.read('bkt-one', 'runs/r1/b.txt'))?.toString()).toBe('content of runs/r1/b.txt')
    expect(await storage.read('bkt-one', 'runs/none.txt')).toBeUndefined()
  })

  it('lists one level: objects and the folders that hold objects, in name order, a page at a time', async () => {
    for (const name of ['lvl/b.txt', 'lvl/a/x.txt', 'lvl/c/d/e.txt', 'lvl/z.json']) await storage.write('bkt-two', name, name)
    await mkdir(join(root, 'bkt-two', 'lvl', 'empty'), { recursive: true })
    const level = await storage.listLevel('bkt-two', 'lvl/')
    expect(level.items.map((e) => `${e.kind} ${e.path}`)).toEqual(['folder lvl/a/', 'object lvl/b.txt', 'folder lvl/c/', 'object lvl/z.json'])
    const first = await storage.listLevel('bkt-two', 'lvl/', { pageSize: 3 })
    expect(first.items).toHaveLength(3)
    const rest = await storage.listLevel('bkt-two', 'lvl/', { pageSize: 3, pageToken: first.nextPageToken })
    expect(rest.items.map((e) => e.path)).toEqual(['lvl/z.json'])
    expect(rest.nextPageToken).toBeUndefined()
    expect((await storage.listLevel('bkt-two', '')).items.map((e) => e.path)).toEqual(['lvl/'])
  })

  it('keeps a declared content type while the object is unchanged, and forgets it when the file is replaced by other means', async () => {
    await storage.write('bkt-two', 'typed/reads.fq', '@r\nA\n+\nI\n', 'text/x-fastq')
    expect((await storage.stat('bkt-two', 'typed/reads.fq'))?.content_type).toBe('text/x-fastq')
    await writeFile(join(root, 'bkt-two', 'typed', 'reads.fq'), 'something else entirely')
    expect((await storage.stat('bkt-two', 'typed/reads.fq'))?.content_type).toBe('application/octet-stream')
    expect(await storage.stat('bkt-two', 'typed/x.csv.gz')).toBeUndefined()
  })

  it('copies without overwriting unless asked, refuses a folder as destination, and deletes leaving no empty folder', async () => {
    const local = storage as LocalObjectStorage
    await local.write('bkt-two', 'cp/a.txt', 'A', 'text/plain')
    await local.write('bkt-two', 'cp/b.txt', 'B', 'text/plain')
    await expect(local.copy('bkt-two', 'cp/a.txt', 'cp/b.txt', { overwrite: false })).rejects.toMatchObject({ reason: 'exists' })
    expect((await local.read('bkt-two', 'cp/b.txt'))?.toString()).toBe('B')
    await local.copy('bkt-two', 'cp/a.txt', 'cp/b.txt', { overwrite: true })
    expect((await local.read('bkt-two', 'cp/b.txt'))?.toString()).toBe('A')
    await expect(local.copy('bkt-two', 'cp/none.txt', 'cp/c.txt', { overwrite: false })).rejects.toMatchObject({ reason: 'not_found' })
    await local.write('bkt-two', 'cp/dir/inner.txt', 'I')
    await expect(local.copy('bkt-two', 'cp/a.txt', 'cp/dir', { overwrite: true })).rejects.toMatchObject({ reason: 'conflict' })
    await expect(local.copy('bkt-two', 'cp/a.txt', 'cp/a.txt/under', { overwrite: false })).rejects.toMatchObject({ reason: 'conflict' })
    expect(await local.delete('bkt-two', 'cp/dir/inner.txt')).toBe(true)
    expect(await local.delete('bkt-two', 'cp/dir/inner.txt')).toBe(false)
    expect((await local.listLevel('bkt-two', 'cp/')).items.map((e) => e.path)).toEqual(['cp/a.txt', 'cp/b.txt'])
  })
})
