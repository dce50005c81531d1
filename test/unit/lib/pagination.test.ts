import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from '../../../lib/http.js'
import { pageResponse } from '../../../lib/pagination.js'

/**
 * The next page's address as a client follows it. Behind the shared cloudfunctions.net host the
 * service sees `/api/v1/runs` for `https://HOST/compute/api/v1/runs`: a link built from the path
 * alone would send the client to the host's root, which no function serves.
 */
function service(publicBase: string | undefined) {
  const app = new Hono<AppEnv>()
  app.use('*', async (c, next) => {
    c.set('publicBase', publicBase)
    await next()
  })
  app.get('/api/v1/runs', (c) => pageResponse(c, { items: [{ id: 'r1' }], nextPageToken: 'next-token' }))
  app.get('/api/v1/last', (c) => pageResponse(c, { items: [{ id: 'r9' }] }))
  return app
}

describe('the Link header of a page', () => {
  it("starts with the service's public base address, keeping the request's query and the new page token", async () => {
    const res = await service('https://europe-west4-acme.cloudfunctions.net/compute').request(
      'http://internal.run.app/api/v1/runs?status=running&page_size=1&page_token=old',
    )
    expect(res.headers.get('x-next-page-token')).toBe('next-token')
    expect(res.headers.get('link')).toBe(
      '<https://europe-west4-acme.cloudfunctions.net/compute/api/v1/runs?status=running&page_size=1&page_token=next-token>; rel="next"',
    )
    expect(await res.json()).toEqual([{ id: 'r1' }])
  })

  it('is relative to the origin when the service has no configured address (the local suite: one service per port)', async () => {
    const res = await service(undefined).request('http://127.0.0.1:8102/api/v1/runs?page_size=1')
    expect(res.headers.get('link')).toBe('</api/v1/runs?page_size=1&page_token=next-token>; rel="next"')
  })

  it('is absent on the last page', async () => {
    const res = await service('https://platform.lab.example/compute').request('http://x/api/v1/last')
    expect(res.headers.get('link')).toBeNull()
    expect(res.headers.get('x-next-page-token')).toBeNull()
  })
})
