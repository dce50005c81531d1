import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import type { Hono } from 'hono'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { serviceNamed } from '../../functions/services.js'
import { grant, seedToken, seedUser } from '../../domain/tenancy/seed.js'
import type { ProjectRecord } from '../../lib/auth/access.js'
import type { ProjectRole } from '../../lib/auth/roles.js'
import { publicUrlSetting } from '../../lib/config.js'
import { createKernel, type KernelDeps } from '../../lib/kernel.js'
import { SCREENSHOTS } from './browser.js'
import { listen, startLoginStack, type CliClientShape } from './oidc.js'

/**
 * The console's browser tests: a world served over real HTTP (the admin service with the local
 * OIDC provider, and the other services each on its own port, all configured with each other's
 * public addresses as a deployment is), people to sign in as, and `checkPage`: axe-core and the
 * two screenshots of every page a test visits.
 */

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface AxeResult {
  violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown[] }> }>
}

/**
 * Checks the page the browser is on: no serious or critical axe-core violation (WCAG 2.x A/AA
 * rules), no horizontal scrolling of the page at 390 px wide (a wide table scrolls in its own box),
 * and screenshots at 1280 and 390 px wide into SCREENSHOTS (console-<name>-1280.png, -390.png).
 * axe runs through the DevTools protocol, which the page's CSP (script-src 'self') does not govern:
 * the page keeps its real policy while it is checked.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  if (!scripted.has(page)) return checkCopy(page, name)
  const original = page.viewportSize() ?? { width: 1280, height: 900 }
  try {
    await page.setViewportSize({ width: 1280, height: 900 })
    const result = (await page.evaluate(`${AXE_SOURCE};axe.run(document, { resultTypes: ['violations'] })`)) as AxeResult
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    expect(
      serious.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`),
      `accessibility of ${name} (${page.url()})`,
    ).toEqual([])
    await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-1280.png`), fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    // A wide table scrolls in its own box (.table-wrap); nothing else may reach past the right edge. A failure names what does.
    const sideways = (await page.evaluate(`(() => {
      const width = document.documentElement.clientWidth
      const overflow = document.documentElement.scrollWidth - width
      const past = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 1)
      const outside = past.filter((e) => !e.closest('.table-wrap *'))
      const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + String(e.className).trim().split(/\\s+/).join('.') : '')
      return { overflow, culprits: (outside.length ? outside : past).slice(0, 8).map(name) }
    })()`)) as { overflow: number; culprits: string[] }
    expect(
      sideways.overflow,
      `${name} scrolls sideways at 390 px wide (${page.url()}); past the edge: ${sideways.culprits.join(', ')}`,
    ).toBeLessThanOrEqual(1)
    await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-390.png`), fullPage: true })
  } finally {
    await page.setViewportSize(original)
  }
}

/** Pages of contexts with JavaScript on: axe runs in them. */
const scripted = new WeakSet<Page>()

/**
 * A page of a context with JavaScript off cannot run axe: its HTML, as the browser has it, is
 * checked in a page of its own with JavaScript on, at the same address (so its stylesheet and
 * script load from the service as they did).
 */
async function checkCopy(page: Page, name: string) {
  const browser = page.context().browser()
  if (!browser) throw new Error('checkPage: the page has no browser')
  const [content, url] = [await page.content(), page.url()]
  const context = await browser.newContext({ viewport: page.viewportSize() ?? { width: 1280, height: 900 } })
  try {
    const copy = await context.newPage()
    await copy.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: content }))
    await copy.goto(url)
    scripted.add(copy)
    await checkPage(copy, name)
  } finally {
    await context.close()
  }
}

export interface Person {
  email: string
  password: string
  name: string
}

/**
 * The world of a console test: the login stack (admin service + provider, test/support/oidc.ts) and
 * the named services (their registry definitions, or `apps` for a service given adapters of the
 * test's own), each on a real port, all knowing each other's public addresses (so the console's
 * navigation and forms cross services as they do deployed). `others` are more people at the provider.
 */
export async function startConsoleWorld(
  opts: {
    services?: string[]
    apps?: Record<string, (kernel: KernelDeps) => Hono<any>>
    others?: string[]
    cliClient?: CliClientShape
    env?: Record<string, string>
  } = {},
) {
  const names = [...new Set([...(opts.services ?? []), ...Object.keys(opts.apps ?? {})])].filter((n) => n !== 'admin')
  const servers = await Promise.all(names.map(async (name) => [name, await listen()] as const))
  const env = Object.fromEntries(servers.map(([name, s]) => [publicUrlSetting(name), s.url]))
  const stack = await startLoginStack({ ...env, ...opts.env }, { otherUsers: opts.others, cliClient: opts.cliClient })
  const { world } = stack
  for (const [name, server] of servers) {
    const kernel = createKernel(world.deps.config, name, { firestore: world.deps.db.firestore })
    const make = opts.apps?.[name]
    const service = serviceNamed(name)
    if (!make && !service) throw new Error(`no service named ${name}`)
    server.serve(make ? make(kernel) : service!.create(kernel))
  }
  const urls: Record<string, string> = { admin: stack.adminUrl, ...Object.fromEntries(servers.map(([name, s]) => [name, s.url])) }

  /** A person of the provider with a platform account holding `roles` in the project (the world's by default), and a token for the API. */
  async function member(who: Person, roles: ProjectRole[], project: ProjectRecord = world.project) {
    const user = await seedUser(world.deps, { email: who.email, name: who.name })
    if (roles.length) await grant(world.deps, project, user, roles)
    return { ...who, user, token: await seedToken(world.deps, user, 'test') }
  }

  return {
    ...stack,
    urls,
    member,
    async stop() {
      await Promise.all([stack.stop(), ...servers.map(([, s]) => s.stop())])
    },
  }
}

export type ConsoleWorld = Awaited<ReturnType<typeof startConsoleWorld>>

/**
 * Signs `who` in at the provider's form the page was sent to (following the provider's
 * self-submitting forms by hand when JavaScript is off), and waits to land on `then`.
 */
export async function signInAtProvider(page: Page, who: { email: string; password: string }, then: string | RegExp) {
  const arrived = (url: string) => (typeof then === 'string' ? url === then : then.test(url))
  await page.waitForSelector('#email')
  if (!(await page.locator('#email').getAttribute('readonly'))) await page.fill('#email', who.email)
  await page.fill('#password', who.password)
  await page.click('button[type=submit]')
  for (let step = 0; step < 10 && !arrived(page.url()); step++) {
    await page.waitForLoadState()
    const next = page.locator('button:has-text("Continue")')
    if (!arrived(page.url()) && (await next.count())) await next.first().click()
    else await page.waitForURL(then, { timeout: 2_000 }).catch(() => undefined)
  }
  if (typeof then === 'string') expect(page.url()).toBe(then)
  else expect(page.url()).toMatch(then)
}

/**
 * A browser context signed in as `who`: opens `url` (a console page), follows the platform's login
 * to the provider, signs in, and lands back on `url`. Only 127.0.0.1 answers; JavaScript is on
 * unless told otherwise (every page must work without it too).
 */
export async function signedInPage(browser: Browser, who: { email: string; password: string }, url: string, opts: { javaScript?: boolean } = {}) {
  const context: BrowserContext = await browser.newContext({ javaScriptEnabled: opts.javaScript ?? true, viewport: { width: 1280, height: 900 } })
  await context.route('**/*', (route) => {
    const target = new URL(route.request().url())
    return target.hostname === '127.0.0.1' || target.protocol === 'data:' ? route.continue() : route.abort('blockedbyclient')
  })
  const page = await context.newPage()
  if (opts.javaScript ?? true) scripted.add(page)
  await page.goto(url)
  if (page.url() !== url) await signInAtProvider(page, who, url)
  return { context, page }
}
