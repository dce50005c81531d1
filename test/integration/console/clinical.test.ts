import { readFile } from 'node:fs/promises'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../support/browser.js'
import { checkPage, signedInPage, startConsoleWorld } from '../../support/console.js'
import { rand } from '../../support/world.js'

/**
 * The clinical console in headless Chromium against real servers (the admin service with the local
 * OIDC provider, the clinical-data service beside it): a lab member registers a trio (three
 * subjects of one family, a sample each), creates an order, adds the samples with their roles,
 * signs it, and downloads its samplesheet; each page checked with axe-core and screenshotted.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

describe('the clinical console in a browser', async () => {
  const world = await startConsoleWorld({ services: ['clinical'] })
  afterAll(() => world.stop())
  const lab = await world.member(world.user, ['lab'])
  const clinical = world.urls.clinical!
  const p = `${clinical}/console/p/${world.world.project.id}`
  const bucket = world.world.project.bucket_name

  /** Fills the subject form and saves it, landing on the new subject's page. */
  async function newSubject(page: Page, s: { external_id: string; sex: string; affected: string; family: string; mother?: string; father?: string }) {
    await page.goto(`${p}/subjects/new`)
    await page.fill('#f-external_id', s.external_id)
    await page.selectOption('#f-sex', s.sex)
    await page.selectOption('#f-affected_status', s.affected)
    await page.fill('#f-family_id', s.family)
    if (s.mother) await page.selectOption('#f-mother_id', { label: `${s.mother}, family ${s.family}` })
    if (s.father) await page.selectOption('#f-father_id', { label: `${s.father}, family ${s.family}` })
    await page.click('#save-subject')
    await page.waitForURL(new RegExp(`^${p}/subjects/[0-9a-f-]{36}$`))
    await expect(page.locator('#notice').innerText()).resolves.toContain(`Subject ${s.external_id} created.`)
  }

  /** From a subject's page: "Add a sample" with one FASTQ pair, landing on the sample's page. */
  async function addSample(page: Page, external: string) {
    await page.click('#add-sample')
    await page.fill('#f-external_id', external)
    await page.fill('#f-fastq', `gs://${bucket}/fastq/${external}_R1.fastq.gz\ngs://${bucket}/fastq/${external}_R2.fastq.gz`)
    await page.click('#save-sample')
    await page.waitForURL(new RegExp(`^${p}/samples/[0-9a-f-]{36}$`))
    await expect(page.locator('#notice').innerText()).resolves.toContain(`Sample ${external} created.`)
  }

  it(
    'registers a trio, creates an order, adds the samples with their roles, signs it and downloads its samplesheet',
    { timeout: 120_000 },
    async () => {
      const { context, page } = await signedInPage(browser, lab, `${p}/subjects`)
      try {
        const id = rand()
        const family = `FAM-${id}`
        const names = { mother: `P-${id}-M`, father: `P-${id}-F`, proband: `P-${id}-P` }
        await checkPage(page, 'clinical-subjects')

        await page.goto(`${p}/subjects/new`)
        await checkPage(page, 'clinical-subject-new')
        await newSubject(page, { external_id: names.mother, sex: 'female', affected: 'unaffected', family })
        await addSample(page, `S-${id}-M`)
        await newSubject(page, { external_id: names.father, sex: 'male', affected: 'unaffected', family })
        await addSample(page, `S-${id}-F`)
        await newSubject(page, { external_id: names.proband, sex: 'male', affected: 'affected', family, mother: names.mother, father: names.father })
        await checkPage(page, 'clinical-subject')
        await page.click('#add-sample')
        await checkPage(page, 'clinical-sample-new')
        await page.goBack()
        await addSample(page, `S-${id}-P`)
        await checkPage(page, 'clinical-sample')

        // The family: drawn (two squares, one circle; the proband filled) and tabulated.
        await page.goto(`${p}/families/${family}`)
        expect(await page.locator('svg.pedigree rect').count()).toBe(2)
        expect(await page.locator('svg.pedigree circle').count()).toBe(1)
        expect(await page.locator('table.pedigree-table tbody tr').count()).toBe(3)
        await checkPage(page, 'clinical-family')

        // The order: created as a draft, then filled with the three samples and their roles.
        await page.goto(`${p}/orders/new`)
        await checkPage(page, 'clinical-order-new')
        await page.fill('#f-test_code', 'WGS-trio')
        await page.selectOption('#f-priority', 'urgent')
        await page.fill('#f-indication', 'Global developmental delay and seizures')
        await page.fill('#f-requester_name', 'Dr. Ada Lovelace')
        await page.click('#save-order')
        await page.waitForURL(new RegExp(`^${p}/orders/[0-9a-f-]{36}$`))
        const accession = await page.locator('#accession').innerText()
        for (const [role, who] of [
          ['proband', 'P'],
          ['mother', 'M'],
          ['father', 'F'],
        ] as const) {
          await page.selectOption('#f-sample_id', { label: `S-${id}-${who}` })
          await page.selectOption('#f-role', role)
          await page.click('#add-sample')
          await expect(page.locator('#notice').innerText()).resolves.toContain(`Sample S-${id}-${who} added`)
        }
        expect(await page.locator('#order-samples tbody tr').count()).toBe(3)
        await checkPage(page, 'clinical-order-draft')

        // Signing: the button the order-status table offers; then the samples and fields are frozen.
        await page.click('#move-signed')
        await expect(page.locator('#notice').innerText()).resolves.toContain(`Order ${accession} is now signed.`)
        expect(await page.locator('#frozen').isVisible()).toBe(true)
        await expect(page.locator('#labflow-stage').innerText()).resolves.toContain('Accessioning')
        await checkPage(page, 'clinical-order-signed')

        const [download] = await Promise.all([page.waitForEvent('download'), page.click('#samplesheet')])
        expect(download.suggestedFilename()).toBe(`${accession}.csv`)
        const csv = await readFile((await download.path())!, 'utf8')
        const rows = csv.trim().split('\n')
        expect(rows[0]).toBe('sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id')
        expect(
          rows
            .slice(1)
            .map((r) => r.split(',')[0])
            .sort(),
        ).toEqual([`S-${id}-F`, `S-${id}-M`, `S-${id}-P`])
        expect(csv).toContain(
          `S-${id}-P,1,gs://${bucket}/fastq/S-${id}-P_R1.fastq.gz,gs://${bucket}/fastq/S-${id}-P_R2.fastq.gz,1,2,S-${id}-F,S-${id}-M,${accession}`,
        )

        // The orders list, filtered to signed orders, shows it.
        await page.goto(`${p}/orders?status=signed`)
        await expect(page.locator('#orders').innerText()).resolves.toContain(accession)
        await checkPage(page, 'clinical-orders')

        // The proband's pedigree fields are frozen now: shown as values, not as fields.
        await page.goto(`${p}/subjects`)
        await page.fill('#f-q', names.proband)
        await page.click('button:has-text("Search")')
        await page.click(`a:has-text("${names.proband}")`)
        await page.click('#edit-subject')
        expect(await page.locator('#f-sex').count()).toBe(0)
        expect(await page.locator('#f-display_name').count()).toBe(1)
        await expect(page.locator('#frozen-why').innerText()).resolves.toContain(`Signed order ${accession}`)
        await expect(page.locator('.field.frozen').first().innerText()).resolves.toContain(names.proband)
        await checkPage(page, 'clinical-subject-edit-frozen')
      } finally {
        await context.close()
      }
    },
  )
})
