import type { DocumentSnapshot } from '@google-cloud/firestore'
import { beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../../lib/ids.js'
import { paginate, SCAN_BUDGET, type PageRequest } from '../../../lib/pagination.js'
import { testKernel } from '../../support/env.js'

/**
 * paginate() with a condition checked in memory (a filter no index of its own serves), on the
 * emulator: pages are exact, and a page reads at most SCAN_BUDGET documents beyond itself.
 */
describe('paginate with a condition checked on the documents read', () => {
  const kernel = testKernel('pagination-test')
  const col = kernel.db.firestore.collection(`pagination_${newId()}`)
  const COUNT = SCAN_BUDGET + 300
  const RARE = SCAN_BUDGET + 250

  beforeAll(async () => {
    for (let from = 0; from < COUNT; from += 500) {
      const batch = kernel.db.firestore.batch()
      for (let i = from; i < Math.min(from + 500, COUNT); i++) batch.set(col.doc(String(i).padStart(5, '0')), { k: i, even: i % 2 === 0 })
      await batch.commit()
    }
  }, 60_000)

  async function all(req: Omit<PageRequest, 'query'>, pageSize: number) {
    const pages: number[][] = []
    let token: string | undefined
    do {
      const page = await paginate(col, { ...req, query: { page_size: pageSize, page_token: token } }, (d: DocumentSnapshot) => d.get('k') as number)
      pages.push(page.items)
      token = page.nextPageToken
    } while (token)
    return pages
  }

  it('pages to exactly the matching documents, in order, each page full but the last when matches are dense', async () => {
    const pages = await all({ orderBy: [['k', 'asc']], filters: { even: true }, post: (d) => d.get('even') === true }, 97)
    expect(pages.flat()).toEqual(Array.from({ length: COUNT / 2 }, (_, i) => i * 2))
    expect(pages.slice(0, -1).every((p) => p.length === 97)).toBe(true)
  })

  it('answers a short (here empty) page with a token when its scan budget runs out, and finds the match on the next', async () => {
    const pages = await all({ orderBy: [['k', 'asc']], filters: { k: RARE }, post: (d) => d.get('k') === RARE }, 10)
    expect(pages).toEqual([[], [RARE]])
  })

  it('pages every document without a condition, a full page at a time', async () => {
    const pages = await all({ orderBy: [['k', 'desc']], filters: {} }, 1000)
    expect(pages.map((p) => p.length)).toEqual([1000, 1000, COUNT - 2000])
    expect(pages.flat()).toEqual(Array.from({ length: COUNT }, (_, i) => COUNT - 1 - i))
  })
})
