import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { expect } from 'vitest'

/** Debian's Chromium, which `npm test` installs first (scripts/ensure-chromium.sh). */
export const CHROMIUM = '/usr/bin/chromium'
/** Where the browser tests leave their screenshots and printouts for a human to look at (made on launch). */
export const SCREENSHOTS = fileURLToPath(new URL('../../.local/screenshots/', import.meta.url))

/** Headless Chromium as every browser test runs it: no sandbox, no GPU, nothing fetched in the background; `args` adds switches of a test's own. */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run 'bash scripts/ensure-chromium.sh' (npm test does it first)`)
  mkdirSync(SCREENSHOTS, { recursive: true })
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  })
}

/** Follows the platform's login to the local provider's form when it comes, signs in, and waits to land on `then`. */
export async function signIn(page: Page, who: { email: string; password: string }, then: string) {
  if (page.url() !== then) {
    await page.waitForSelector('#email')
    // A re-authentication names its person (login_hint): the provider shows the e-mail read-only.
    if ((await page.locator('#email').getAttribute('readonly')) === null) await page.fill('#email', who.email)
    await page.fill('#password', who.password)
    await page.click('button[type=submit]')
    await page.waitForURL(then)
  }
  expect(page.url()).toBe(then)
}
