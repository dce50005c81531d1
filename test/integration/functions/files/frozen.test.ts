import { afterAll, describe, expect, it } from 'vitest'
import { createKernel } from '../../../../lib/kernel.js'
import type { ObjectStorage } from '../../../../lib/storage.js'
import { makeClinicalWorld } from '../../../support/clinical.js'
import { localFiles } from '../../../support/files.js'
import { apiFor, rand } from '../../../support/world.js'

/**
 * The files a signed order's samples name stay as they were signed: no caller, a project admin
 * included, moves, replaces or deletes them (409 naming the sample and the order), through the
 * file service on the same Firestore as the clinical-data service that signs the order.
 */
describe('the files of a frozen sample', async () => {
  const w = await makeClinicalWorld()
  /** Runs once, in the middle of the next copy the file service makes (a slow copy of a large object). */
  let duringCopy: (() => Promise<void>) | undefined
  const f = await localFiles(
    { deps: createKernel(w.deps.config, 'files', { firestore: w.deps.db.firestore }) },
    {
      objects: (s): ObjectStorage =>
        Object.assign(Object.create(s) as ObjectStorage, {
          copy: async (...args: Parameters<ObjectStorage['copy']>) => {
            const hook = duringCopy
            duringCopy = undefined
            await hook?.()
            return s.copy(...args)
          },
        }),
    },
  )
  afterAll(() => f.close())
  const files = apiFor(f.app, w)
  const bucket = w.project.bucket_name
  const read = async (path: string) => (await f.storage.read(bucket, path))?.toString()

  /** A sample naming two FASTQ files and a BAM, all stored, in a single-sample order (signed unless told). */
  async function sampleInOrder(sign = true) {
    const external = `S-${rand()}`
    const paths = { r1: `frozen/${external}_R1.fastq.gz`, r2: `frozen/${external}_R2.fastq.gz`, bam: `frozen/${external}.bam` }
    for (const path of Object.values(paths)) await f.storage.write(bucket, path, `data of ${path}`)
    const subject = await w.subject()
    const sample = await w.sample(subject.id, {
      external_id: external,
      fastq: [`gs://${bucket}/${paths.r1}`, `gs://${bucket}/${paths.r2}`],
      bam: `gs://${bucket}/${paths.bam}`,
    })
    const order = await w.api('POST', '/orders', { body: { test_code: 'WGS-single', samples: [{ sample_id: sample.id, role: 'proband' }] } })
    expect(order.status, JSON.stringify(order.body)).toBe(201)
    if (sign) expect((await w.move(order.body.id, 'signed')).status).toBe(200)
    return { paths, sample, order: order.body as { id: string; accession: string } }
  }

  it('refuses a project admin moving, replacing or deleting them: 409 naming the sample and the order', async () => {
    const { paths, sample, order } = await sampleInOrder()
    await f.storage.write(bucket, 'frozen/other.fastq.gz', 'other')
    const named = (path: string) =>
      `${path} is a file of sample ${sample.external_id} (signed order ${order.accession}): the files of a signed order's samples cannot be moved, replaced or deleted`
    const attempts = [
      ['POST', '/files/move', { source: paths.r1, destination: 'frozen/moved.fastq.gz' }, paths.r1],
      ['POST', '/files/move', { source: 'frozen/other.fastq.gz', destination: paths.r2, overwrite: true }, paths.r2],
      ['POST', '/files/copy', { source: 'frozen/other.fastq.gz', destination: paths.r1, overwrite: true }, paths.r1],
      ['POST', '/files/upload-url', { path: paths.bam, content_type: 'application/octet-stream', overwrite: true }, paths.bam],
      ['DELETE', `/files?path=${encodeURIComponent(paths.r2)}`, undefined, paths.r2],
      ['DELETE', `/files?path=${encodeURIComponent(`gs://${bucket}/${paths.bam}`)}`, undefined, paths.bam],
    ] as const
    for (const [method, path, body, file] of attempts) {
      const res = await files(method, path, { body })
      expect([res.status, res.body.detail], `${method} ${path} ${JSON.stringify(body)}`).toEqual([409, named(file)])
    }
    for (const path of Object.values(paths)) expect(await read(path)).toBe(`data of ${path}`)
    expect(await read('frozen/other.fastq.gz')).toBe('other')
    expect(await f.storage.stat(bucket, 'frozen/moved.fastq.gz')).toBeUndefined()
  })

  it('lets them be read and copied elsewhere', async () => {
    const { paths } = await sampleInOrder()
    expect((await files('GET', `/files/download-url?path=${encodeURIComponent(paths.r1)}`)).status).toBe(200)
    const copied = await files('POST', '/files/copy', { body: { source: paths.r1, destination: `archive/${paths.r1}` } })
    expect(copied.status).toBe(200)
    expect(await read(`archive/${paths.r1}`)).toBe(`data of ${paths.r1}`)
  })

  it('lets a file of an order that is not signed be moved and deleted', async () => {
    const { paths } = await sampleInOrder(false)
    expect((await files('POST', '/files/move', { body: { source: paths.r1, destination: `${paths.r1}.moved` } })).status).toBe(200)
    expect((await files('DELETE', `/files?path=${encodeURIComponent(paths.bam)}`)).status).toBe(204)
  })

  it('keeps the source of a move whose order is signed while the copy runs: 409, the copy recorded as a copy', async () => {
    const { paths, order, sample } = await sampleInOrder(false)
    duringCopy = async () => {
      expect((await w.move(order.id, 'signed')).status).toBe(200)
    }
    const res = await files('POST', '/files/move', { body: { source: paths.r2, destination: `${paths.r2}.moved` } })
    expect(res.status).toBe(409)
    expect(res.body.detail).toContain(`sample ${sample.external_id} (signed order ${order.accession})`)
    expect(await read(paths.r2)).toBe(`data of ${paths.r2}`)
    expect(await read(`${paths.r2}.moved`)).toBe(`data of ${paths.r2}`)
    const events = await w.deps.db
      .col('audit_events')
      .where('project_id', '==', w.project.id)
      .where('entity.id', '==', `gs://${bucket}/${paths.r2}.moved`)
      .get()
    expect(events.docs.map((d) => [d.data().action, d.data().change.reason])).toEqual([
      ['file.copied', 'move: the source became a file of a signed order during the copy'],
    ])
  })
})
