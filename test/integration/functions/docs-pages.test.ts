import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { type Browser, type BrowserContext, type Page } from 'playwright-core'
import { launchChromium, SCREENSHOTS } from '../../support/browser.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICES } from '../../../functions/services.js'
import { testKernel } from '../../support/env.js'
import { fetchDoc, label, operationsOf } from './openapi-doc.js'

const PAGE_TIMEOUT = 60_000

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/**
 * A browser context in which only 127.0.0.1 is reachable. Every other request is aborted and
 * remembered, as are blocked content-security-policy loads and uncaught page errors: a docs page
 * that tries to reach the internet, or breaks, fails its test.
 */
async function offlineContext() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const outside: string[] = []
  const pageErrors: string[] = []
  const cspViolations: string[] = []
  const isLocal = (url: string) => {
    const u = new URL(url)
    return u.protocol === 'data:' || u.protocol === 'blob:' || u.hostname === '127.0.0.1'
  }
  await context.route('**/*', (route) => {
    const url = route.request().url()
    if (isLocal(url)) return route.continue()
    outside.push(url)
    return route.abort('blockedbyclient')
  })
  context.on('request', (req) => {
    if (!isLocal(req.url()) && !outside.includes(req.url())) outside.push(req.url())
  })
  await context.exposeBinding('__reportCsp', (_source, v: string) => void cspViolations.push(v))
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { __reportCsp(v: string): void }).__reportCsp(`${e.violatedDirective} ${e.blockedURI}`),
    )
  })
  const page = await context.newPage()
  page.on('pageerror', (e) => pageErrors.push(e.message))
  page.on('websocket', (ws) => {
    if (!isLocal(ws.url().replace(/^ws/, 'http'))) outside.push(ws.url())
  })
  return { context, page, outside, pageErrors, cspViolations }
}

/** Waits until the page shows as many operations as expected (or the timeout), then returns what it shows. */
async function listedOperations(page: Page, collect: () => Promise<string[]>, expected: number) {
  let listed: string[] = []
  await expect.poll(async () => (listed = await collect()).length, { timeout: PAGE_TIMEOUT, interval: 250 }).toBeGreaterThanOrEqual(expected)
  return [...listed].sort()
}

/**
 * Redoc's section ids: `operation/<operationId>` for operations with an id, else JSON-pointer
 * paths such as `tag/<tag>/paths/~1api~1v1~1orgs/get`.
 */
function fromRedocSection(id: string, byOperationId: Map<string, string>): string | undefined {
  const op = /(?:^|\/)operation\/([^/]+)$/.exec(id)
  if (op) return byOperationId.get(op[1]!)
  const m = /(?:^|\/)paths\/([^/]+)\/(get|put|post|delete|options|head|patch|trace)$/.exec(id)
  if (!m) return undefined
  const path = m[1]!.replace(/~1/g, '/').replace(/~0/g, '~')
  return label({ method: m[2]!, path })
}

describe.each(SERVICES.map((s) => [s.name, s] as const))('the %s service docs pages, offline in headless Chromium', (name, service) => {
  let server: ServerType
  let base: string
  let expected: string[]
  let byOperationId: Map<string, string>
  let context: BrowserContext | undefined

  beforeAll(async () => {
    const app = service.create(testKernel(name))
    const documented = operationsOf(await fetchDoc(app))
    byOperationId = new Map(documented.flatMap((o) => (o.op.operationId ? [[o.op.operationId, label(o)] as const] : [])))
    expected = documented.map(label).sort()
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await context?.close()
    await new Promise((resolve) => server?.close(resolve))
  })

  it('lists every documented operation on /docs (Swagger UI) without reaching the internet', { timeout: 2 * PAGE_TIMEOUT }, async () => {
    const session = await offlineContext()
    context = session.context
    const { page } = session
    const res = await page.goto(`${base}/docs`)
    expect(res?.status()).toBe(200)

    const listed = await listedOperations(
      page,
      () =>
        page.locator('.opblock').evaluateAll((blocks) =>
          blocks.map((b) => {
            const method = b.querySelector('.opblock-summary-method')?.textContent ?? '?'
            const path = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '?'
            return `${method.toUpperCase()} ${path}`
          }),
        ),
      expected.length,
    )
    await page.screenshot({ path: `${SCREENSHOTS}${name}-docs.png`, fullPage: true })

    expect(listed).toEqual(expected)
    expect(await page.title()).toContain('API docs')
    expect({ outside: session.outside, csp: session.cspViolations, errors: session.pageErrors }).toEqual({ outside: [], csp: [], errors: [] })
    await context.close()
    context = undefined
  })

  it('lists every documented operation on /redoc without reaching the internet', { timeout: 2 * PAGE_TIMEOUT }, async () => {
    const session = await offlineContext()
    context = session.context
    const { page } = session
    const res = await page.goto(`${base}/redoc`)
    expect(res?.status()).toBe(200)

    const listed = await listedOperations(
      page,
      async () =>
        // An operation with an id has it on its section and on its side-menu entry: each is counted once.
        [
          ...new Set(
            (await page.locator('[data-section-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-section-id') ?? '')))
              .map((id) => fromRedocSection(id, byOperationId))
              .filter((x): x is string => x !== undefined),
          ),
        ],
      expected.length,
    )
    // The side menu shows one entry per operation too, for the reader who navigates by it.
    const menuEntries = await page.locator('[role="menuitem"] .operation-type').count()
    await page.screenshot({ path: `${SCREENSHOTS}${name}-redoc.png` })

    expect(listed).toEqual(expected)
    expect(menuEntries).toBe(expected.length)
    expect({ outside: session.outside, csp: session.cspViolations, errors: session.pageErrors }).toEqual({ outside: [], csp: [], errors: [] })
    await context.close()
    context = undefined
  })
})
