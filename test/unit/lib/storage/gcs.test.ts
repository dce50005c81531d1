import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Storage } from '@google-cloud/storage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GcsObjectStorage, StorageError } from '../../../../lib/storage.js'

/**
 * The Cloud Storage adapter, offline: @google-cloud/storage pointed at a local server standing in
 * for the JSON API, which records each request and answers as Cloud Storage would.
 */
const seen: Array<{ method: string; path: string; query: URLSearchParams }> = []
type Handler = (req: IncomingMessage, url: URL) => { status: number; body?: unknown }
let handler: Handler = () => ({ status: 500 })
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x')
  seen.push({ method: req.method ?? '', path: decodeURIComponent(url.pathname), query: url.searchParams })
  req.resume()
  req.on('end', () => {
    const { status, body } = handler(req, url)
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(body === undefined ? '' : JSON.stringify(body))
  })
})
let gcs: GcsObjectStorage

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const apiEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  gcs = new GcsObjectStorage(new Storage({ apiEndpoint, projectId: 'test-project', retryOptions: { autoRetry: false } }))
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const meta = (name: string, size: number, contentType = 'application/gzip') => ({
  kind: 'storage#object',
  name,
  bucket: 'lab-bucket',
  size: String(size),
  updated: '2026-11-22T06:00:00.000Z',
  contentType,
})
const notFoundBody = { error: { code: 404, message: 'No such object' } }

describe('the Cloud Storage adapter (JSON API, offline)', () => {
  it('lists one level with delimiter "/", objects and prefixes merged in name order, a page at a time', async () => {
    seen.length = 0
    handler = () => ({
      status: 200,
      body: {
        kind: 'storage#objects',
        items: [meta('fastq/', 0), meta('fastq/b.gz', 2), meta('fastq/d.gz', 4)],
        prefixes: ['fastq/a/', 'fastq/c/'],
        nextPageToken: 'next-1',
      },
    })
    const page = await gcs.listLevel('lab-bucket', 'fastq/', { pageSize: 5, pageToken: 'tok-0' })
    expect(page.items.map((e) => `${e.kind} ${e.path}`)).toEqual(['folder fastq/a/', 'object fastq/b.gz', 'folder fastq/c/', 'object fastq/d.gz'])
    expect(page.items[1]).toMatchObject({ size: 2, content_type: 'application/gzip', updated: '2026-11-22T06:00:00.000Z' })
    expect(page.nextPageToken).toBe('next-1')
    expect(seen).toHaveLength(1)
    expect(seen[0]!.method).toBe('GET')
    expect(seen[0]!.path).toBe('/storage/v1/b/lab-bucket/o')
    expect(Object.fromEntries(seen[0]!.query)).toMatchObject({ prefix: 'fastq/', delimiter: '/', maxResults: '5', pageToken: 'tok-0' })
  })

  it('stats an object, and answers undefined for a 404', async () => {
    handler = (_req, url) =>
      url.pathname.endsWith('here.gz') ? { status: 200, body: meta('fastq/here.gz', 9) } : { status: 404, body: notFoundBody }
    expect(await gcs.stat('lab-bucket', 'fastq/here.gz')).toEqual({
      path: 'fastq/here.gz',
      size: 9,
      updated: '2026-11-22T06:00:00.000Z',
      content_type: 'application/gzip',
    })
    expect(await gcs.stat('lab-bucket', 'fastq/none.gz')).toBeUndefined()
    expect(seen.at(-1)!.path).toBe('/storage/v1/b/lab-bucket/o/fastq/none.gz')
  })

  it('copies with ifGenerationMatch=0 unless overwriting, and maps 412 and 404', async () => {
    seen.length = 0
    handler = () => ({ status: 200, body: { kind: 'storage#rewriteResponse', done: true, resource: meta('archive/x.gz', 3) } })
    expect(await gcs.copy('lab-bucket', 'fastq/x.gz', 'archive/x.gz', { overwrite: false })).toMatchObject({ path: 'archive/x.gz', size: 3 })
    expect(seen[0]!.method).toBe('POST')
    expect(seen[0]!.path).toBe('/storage/v1/b/lab-bucket/o/fastq/x.gz/rewriteTo/b/lab-bucket/o/archive/x.gz')
    expect(seen[0]!.query.get('ifGenerationMatch')).toBe('0')
    await gcs.copy('lab-bucket', 'fastq/x.gz', 'archive/x.gz', { overwrite: true })
    expect(seen[1]!.query.get('ifGenerationMatch')).toBeNull()

    handler = () => ({ status: 412, body: { error: { code: 412, message: 'At least one of the pre-conditions you specified did not hold.' } } })
    await expect(gcs.copy('lab-bucket', 'fastq/x.gz', 'archive/x.gz', { overwrite: false })).rejects.toMatchObject({ reason: 'exists' })
    handler = () => ({ status: 404, body: notFoundBody })
    const missing = await gcs.copy('lab-bucket', 'fastq/none.gz', 'archive/x.gz', { overwrite: false }).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(StorageError)
    expect((missing as StorageError).reason).toBe('not_found')
  })

  it('deletes, answering false for a 404', async () => {
    seen.length = 0
    handler = () => ({ status: 204 })
    expect(await gcs.delete('lab-bucket', 'fastq/x.gz')).toBe(true)
    expect(seen[0]).toMatchObject({ method: 'DELETE', path: '/storage/v1/b/lab-bucket/o/fastq/x.gz' })
    handler = () => ({ status: 404, body: notFoundBody })
    expect(await gcs.delete('lab-bucket', 'fastq/x.gz')).toBe(false)
  })
})
