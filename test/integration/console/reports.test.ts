import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PubSub } from '@google-cloud/pubsub'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KernelDeps } from '../../../lib/kernel.js'
import { PubSubQueue } from '../../../lib/queue.js'
import { LocalObjectStorage } from '../../../lib/storage.js'
import { clinicalStores } from '../../../domain/clinical/stores.js'
import { runIngestion } from '../../../domain/variants/ingest.js'
import { trioVcf } from '../../../domain/variants/synthetic.js'
import { variantCacheDeps } from '../../../functions/variant-cache/deps.js'
import { createVariantCacheApp } from '../../../functions/variant-cache/service.js'
import { launchChromium } from '../../support/browser.js'
import { checkPage, signedInPage, signInAtProvider, startConsoleWorld } from '../../support/console.js'
import { makeTrioOrder } from '../../support/reports.js'
import { call } from '../../support/world.js'

/**
 * The variants, reports and audit pages of the console in headless Chromium, against real servers
 * (the admin service and the OIDC provider, the variant-cache, report and audit services on their
 * own ports) and a real variant cache (a synthetic annotated trio VCF ingested for a trio order):
 * an analyst filters the order's variants to the de novo call, drafts a report with it classified,
 * sends it to review; a second person reviews it (a review comment, resolved), signs it in the
 * browser after signing in again, and an auditor reads the report's history with its chain checked.
 * Every page is checked with axe-core and screenshotted at 1280 and 390 px.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

describe('the console of variants, reports and audit history in a browser', async () => {
  const root = await mkdtemp(join(tmpdir(), 'console-reports-'))
  const storage = new LocalObjectStorage(join(root, 'buckets'))
  let vcKernel: KernelDeps | undefined
  const world = await startConsoleWorld({
    services: ['reports', 'audit'],
    apps: {
      variant_cache: (kernel) => {
        vcKernel = kernel
        return createVariantCacheApp(variantCacheDeps(kernel, { queue: new PubSubQueue(kernel.config), storage }))
      },
    },
    others: ['Rita Reviewer', 'Audrey Auditor'],
  })
  const kernel = vcKernel!
  const pubsub = new PubSub({ projectId: kernel.config.gcpProject, apiEndpoint: kernel.config.pubsubEmulatorHost, emulatorMode: true })
  await pubsub.topic(kernel.config.topics.ingestionRequested).get({ autoCreate: true })
  afterAll(async () => {
    await world.stop()
    await pubsub.close()
    await rm(root, { recursive: true, force: true })
  })
  const { project } = world.world
  const ann = await world.member(world.user, ['analyst'])
  const rita = await world.member(world.others[0]!, ['reviewer'])
  const audrey = await world.member(world.others[1]!, ['auditor'])

  // A trio order with a ready variant cache: a synthetic trio VCF of its samples, ingested in this process.
  const order = await makeTrioOrder(kernel, project)
  const names: Record<string, string> = {}
  for (const s of order.samples) {
    const sample = await clinicalStores(kernel).samples.get(project.id, s.sample_id)
    names[s.role] = sample!.external_id
  }
  const path = `vcf/${order.accession}.vcf`
  await storage.write(
    project.bucket_name,
    path,
    trioVcf({ samples: { proband: names.proband!, mother: names.mother!, father: names.father! }, records: 150, seed: 3 }),
  )
  const vcApp = createVariantCacheApp(variantCacheDeps(kernel, { queue: new PubSubQueue(kernel.config), storage }))
  const queued = await call(vcApp, 'POST', `/api/v1/orders/${order.id}/ingestions`, {
    token: world.world.owner.token,
    project: project.id,
    body: { source_uri: `gs://${project.bucket_name}/${path}` },
  })
  expect(queued.status, JSON.stringify(queued.body)).toBe(202)
  const ingested = await runIngestion(
    {
      db: kernel.db,
      audit: kernel.audit,
      clock: kernel.clock,
      log: kernel.log,
      storage,
      queue: new PubSubQueue(kernel.config),
      orders: clinicalStores(kernel).orders,
    },
    queued.body.id,
  )
  expect(ingested).toBe('ready')

  const variantsUrl = `${world.urls.variant_cache}/console/p/${project.id}/orders/${order.id}/variants`
  const cellTexts = (page: Page, column: number) => page.locator(`#variants tbody tr td:nth-child(${column})`).allInnerTexts()

  it(
    'goes from the de novo call to a report signed by a second person, and shows its history with the chain checked',
    { timeout: 150_000 },
    async () => {
      // 1. Ann filters the order's variants to the de novo call: a carrier proband, both parents homozygous reference.
      const annBrowser = await signedInPage(browser, ann, variantsUrl)
      const a = annBrowser.page
      await expect(a.locator('h1').innerText()).resolves.toBe(`Variants of order ${order.accession}`)
      await checkPage(a, 'variants')
      await a.click('#de-novo')
      await a.waitForURL(/zyg_proband=alt/)
      const genes = await cellTexts(a, 2)
      expect(genes).toContain('SCN2A')
      // Columns after the five of the variant: proband, mother, father.
      for (const cell of await cellTexts(a, 7)) expect(cell).toContain('hom ref')
      for (const cell of await cellTexts(a, 8)) expect(cell).toContain('hom ref')
      await checkPage(a, 'variants-de-novo')
      // The filters refuse what the API refuses, next to the field.
      await a.fill('#f-region', 'chr2:banana')
      await a.click('#apply-filters')
      await expect(a.locator('#f-region-error').innerText()).resolves.toContain('region')

      // 2. The de novo SCN2A variant, its calls and annotations; a first draft for the order.
      await a.goto(`${variantsUrl}?zyg_proband=alt&zyg_mother=hom_ref&zyg_father=hom_ref&gene=SCN2A`)
      await a.click('#variants tbody tr:first-child td:first-child a')
      await expect(a.locator('#calls').innerText()).resolves.toContain('proband')
      await expect(a.locator('#annotations').innerText()).resolves.toContain('SCN2A')
      await checkPage(a, 'variant')
      await a.click('#add-to-report')
      await a.waitForURL(new RegExp(`^${world.urls.reports}/console/p/${project.id}/orders/${order.id}/reports\\?variant=`))
      const addHere = a.url()
      await checkPage(a, 'order-reports')
      await a.fill('#f-summary', 'Trio genome for epileptic encephalopathy.')
      await a.click('#create-report')
      await a.waitForURL(new RegExp(`/console/p/${project.id}/reports/[0-9a-f-]{36}$`))
      await expect(a.locator('#notice').innerText()).resolves.toContain('Draft report')
      const reportId = a.url().split('/').at(-1)!

      // 3. Back to the variant: add it to the draft, classified with its criteria.
      await a.goto(addHere)
      await a.selectOption('#add-variant select[name=acmg_classification]', 'pathogenic')
      await a.fill('#add-variant input[name=acmg_criteria]', 'PS2 PM2_Supporting PP3')
      await a.selectOption('#add-variant select[name=inheritance]', 'de_novo')
      await a.fill('#add-variant textarea[name=interpretation]', 'De novo in the proband; absent from both parents.')
      await a.click('#add-variant button[type=submit]')
      await a.waitForURL(new RegExp(`/reports/${reportId}$`))
      const card = await a.locator('article.variant').innerText()
      expect(card).toContain('SCN2A')
      expect(card).toContain('Pathogenic')
      // The page says what the criteria combine to, before anyone signs.
      expect(card).toContain('Likely pathogenic')
      await a.fill('#f-conclusion', 'Positive: a de novo SCN2A variant explains the phenotype.')
      await a.click('#save-report')
      await expect(a.locator('#notice').innerText()).resolves.toContain('Draft saved')
      await a.click('#move-in_review')
      await expect(a.locator('#notice').innerText()).resolves.toContain('in review')
      // Ann wrote it: she is told why she cannot sign it.
      await expect(a.locator('#blockers').innerText()).resolves.toContain('a second person')
      await checkPage(a, 'report-in-review')
      await annBrowser.context.close()

      // 4. Rita reviews: a review comment blocks the sign-off until it is resolved.
      const reportUrl = `${world.urls.reports}/console/p/${project.id}/reports/${reportId}`
      const ritaBrowser = await signedInPage(browser, rita, reportUrl)
      const r = ritaBrowser.page
      await r.selectOption('#f-type', 'review')
      await r.fill('#f-comment', 'Please confirm the parental relationships.')
      await r.click('#post-comment')
      await expect(r.locator('#comments').innerText()).resolves.toContain('open')
      await expect(r.locator('#blockers').innerText()).resolves.toContain('review comment')
      await checkPage(r, 'report-review')
      await r.click('#comments button:has-text("Resolve")')
      await expect(r.locator('#notice').innerText()).resolves.toContain('resolved')

      // 5. She signs in the browser: the sign-off page warns of the classification, then the provider asks again.
      await r.click('#to-signoff')
      await r.waitForURL(`${world.urls.reports}/${reportId}/signoff/`)
      await expect(r.locator('#disagreements').innerText()).resolves.toContain('Likely pathogenic')
      await checkPage(r, 'signoff')
      await r.check('input[name=confirm]')
      await r.click('#sign')
      await r.waitForURL((u) => u.href.startsWith(world.provider.issuer))
      // The provider's page says what is signed, and asks for Rita's own password.
      const purpose = await r.locator('#purpose').innerText()
      for (const expected of [order.accession, 'revision 1', 'Doe, Jamie', 'approved']) expect(purpose).toContain(expected)
      expect(await r.inputValue('#email')).toBe(rita.email)
      expect(await r.locator('#email').getAttribute('readonly')).not.toBeNull()
      await signInAtProvider(r, rita, `${world.urls.reports}/${reportId}/signoff/signed`)
      await expect(r.locator('#status').innerText()).resolves.toContain('Signed')
      await checkPage(r, 'signed')
      await r.click('#print')
      await expect(r.locator('main').innerText()).resolves.toContain('Methods and limitations')
      await checkPage(r, 'print')
      await ritaBrowser.context.close()

      // 6. Audrey, an auditor, reads the report's history, newest first, each chain link verified.
      const historyUrl = `${world.urls.audit}/console/p/${project.id}/history?entity=${encodeURIComponent(`report:${reportId}`)}`
      const audreyBrowser = await signedInPage(browser, audrey, historyUrl)
      const h = audreyBrowser.page
      const actions = await h.locator('#history tbody tr td:nth-child(2)').allInnerTexts()
      expect(actions[0]).toBe('report.signed')
      expect(actions.at(-1)).toBe('report.created')
      expect(actions).toContain('report.comment_resolved')
      const chains = await h.locator('#history tbody tr td:nth-child(6)').allInnerTexts()
      for (const chain of chains) expect(chain).toContain('verified')
      await expect(h.locator('#chain-summary').innerText()).resolves.toContain('none failed')
      await checkPage(h, 'history')
      await audreyBrowser.context.close()
    },
  )
})
