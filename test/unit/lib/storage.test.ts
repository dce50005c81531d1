import { mkdtemp, rm } from 'node:fs/promises'
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
})
