import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../support/browser.js'
import { checkPage, signedInPage, startConsoleWorld } from '../../support/console.js'

/**
 * The admin console in headless Chromium against real servers (the admin service with the local
 * OIDC provider, the compute service beside it): sign-in, the account, the project chooser,
 * sign-out; each page checked with axe-core and screenshotted.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

describe('the admin console in a browser', async () => {
  const world = await startConsoleWorld({ services: ['compute'] })
  afterAll(() => world.stop())
  const ann = await world.member(world.user, ['analyst'])
  const admin = world.urls.admin!

  it('signs a person in through the platform login and shows who they are and their roles', { timeout: 60_000 }, async () => {
    const { context, page } = await signedInPage(browser, ann, `${admin}/console/account`)
    try {
      await expect(page.locator('h1').innerText()).resolves.toBe('Account')
      await expect(page.locator('#me').innerText()).resolves.toContain(ann.email)
      await expect(page.locator('#project-roles').innerText()).resolves.toContain('analyst')
      await expect(page.locator('#signed-in-user').innerText()).resolves.toContain('Ann Example')
      await checkPage(page, 'account')
      await page.click('a[href="projects"]')
      await checkPage(page, 'projects')
      await page.click(`form:has(input[value="${world.world.project.id}"]) button`)
      await expect(page.locator('#notice').innerText()).resolves.toContain('is now your default project')
      await page.click('#sign-out')
      await expect(page.locator('#signed-out').innerText()).resolves.toContain('ended')
      await checkPage(page, 'signed-out')
    } finally {
      await context.close()
    }
  })
})
