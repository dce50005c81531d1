import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getTestServer } from '@google-cloud/functions-framework/testing'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { csrfToken } from '../../../lib/console/index.js'
import type { LocalBatchExecutor } from '../../../lib/batch/local.js'
import { createKernel } from '../../../lib/kernel.js'
import { LocalObjectStorage, type ProjectStorage } from '../../../lib/storage.js'
import { computeDeps, type ComputeDeps } from '../../../functions/compute/deps.js'
import { createComputeApp } from '../../../functions/compute/service.js'
import { PLATFORM_PIPELINES, seedPipelines } from '../../../domain/pipelines/catalogue.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../domain/pipelines/model.js'
import { dispatchRun } from '../../../domain/runs/lifecycle.js'
import { TERMINAL } from '../../../domain/runs/status.js'
import { orchestratorDeps, type OrchestratorDeps } from '../../../orchestrator/deps.js'
import { registerOrchestrator } from '../../../orchestrator/functions.js'
import { launchChromium } from '../../support/browser.js'
import { checkPage, signedInPage, startConsoleWorld } from '../../support/console.js'
import { localFiles } from '../../support/files.js'
import { makeTrioOrder, moveOrder } from '../../support/reports.js'
import { rand } from '../../support/world.js'
import { localEnv, pubsubFor, until } from '../orchestrator/support.js'

/**
 * The runs console in headless Chromium against real servers: the compute service with its console,
 * the admin service and the OIDC provider (the login), and the orchestrator on the same emulators
 * with the local executor, fed by Pub/Sub push subscriptions, so that a run launched from the form
 * really runs (hello-local, a child process) and succeeds. Then the same pages without a browser:
 * permissions, CSRF and Origin, tenancy.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

describe('the runs console', async () => {
  // The compute service and the orchestrator on one configuration (the world's): the local executor,
  // the bucket folders, the queue; download addresses signed with a key of the test's and checked by
  // the local storage server (started once the world's storage folder is known).
  let files: Awaited<ReturnType<typeof localFiles>> | undefined
  const signing: ProjectStorage = {
    get origin() {
      return files!.deps.storage.origin
    },
    objects: (account) => files!.deps.storage.objects(account),
    signer: (account) => files!.deps.storage.signer(account),
  }
  let compute: ComputeDeps | undefined
  let orchestrator: OrchestratorDeps | undefined
  const world = await startConsoleWorld({
    env: await localEnv(),
    others: ['Vic Viewer'],
    apps: {
      compute: (kernel) => {
        orchestrator = orchestratorDeps(createKernel(kernel.config, 'orchestrator', { firestore: kernel.db.firestore }))
        compute = computeDeps(kernel, { queue: orchestrator.queue, batch: orchestrator.batch, projectStorage: signing })
        return createComputeApp(compute)
      },
    },
  })
  const config = world.world.deps.config
  const objects = new LocalObjectStorage(config.storage.localRoot!)
  files = await localFiles(world.world, { storage: objects })
  const pubsub = pubsubFor(config)
  registerOrchestrator(orchestrator!)
  const servers: Server[] = []
  for (const [fn, topic] of [
    ['runRequested', config.topics.runRequested],
    ['jobStateChanged', config.topics.jobStatus],
  ] as const) {
    // Each event function served as the functions framework serves it, fed by a push subscription as in the cloud.
    const server = getTestServer(fn)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/projects/${config.gcpProject}/topics/${topic}`
    const [t] = await pubsub.topic(topic).get({ autoCreate: true })
    await t.createSubscription(`${topic}-push-${rand()}`, { pushConfig: { pushEndpoint: endpoint } })
  }
  afterAll(async () => {
    await world.stop()
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
    await (orchestrator!.batch as Partial<LocalBatchExecutor>).shutdown?.()
    await files?.close()
    await pubsub.close()
  })
  const deps = compute!
  await seedPipelines(deps.pipelines, PLATFORM_PIPELINES)
  const project = world.world.project
  const ann = await world.member(world.user, ['analyst'])
  const vic = await world.member(world.others[0]!, ['viewer'])
  const base = `${world.urls.compute}/console/p/${project.id}`
  const hello = pipelineId(PLATFORM_SCOPE, 'hello-local', '1.0.0')

  /** A run recorded as POST /runs records it, never published: it stays queued (no reconciler runs here). */
  async function queuedRun(opts: { order_id?: string } = {}) {
    const pipeline = (await deps.pipelines.get(project.id, hello))!
    const { run } = await deps.runs.submit(SYSTEM_ACTOR, {
      project: {
        id: project.id,
        org_id: project.org_id,
        bucket_name: project.bucket_name,
        service_account_email: project.credentials!.service_account_email,
      },
      pipeline,
      params: {},
      tags: [],
      created_by: ann.user.id,
      ...opts,
    })
    return run
  }

  /** A steps-local run whose step 3 fails, really run by the orchestrator and the local executor, once it has failed. */
  async function failedStepsRun() {
    const pipeline = (await deps.pipelines.get(project.id, pipelineId(PLATFORM_SCOPE, 'steps-local', '1.0.0')))!
    const { run } = await deps.runs.submit(SYSTEM_ACTOR, {
      project: {
        id: project.id,
        org_id: project.org_id,
        bucket_name: project.bucket_name,
        service_account_email: project.credentials!.service_account_email,
      },
      pipeline,
      params: { fail_at: 3 },
      tags: ['resume'],
      created_by: ann.user.id,
    })
    await dispatchRun(deps, run)
    return ended(run.id)
  }
  const ended = (id: string) =>
    until(
      `run ${id} to end`,
      async () => {
        const r = await deps.runs.getById(id)
        return r && TERMINAL.has(r.status) ? r : undefined
      },
      30_000,
    )

  const events = async (entityId: string, action: string) =>
    (await world.world.deps.db.col('audit_events').where('entity.id', '==', entityId).where('action', '==', action).get()).docs.map((d) => d.data())

  const text = (page: Page, selector: string) => page.locator(selector).innerText()

  it('launches hello-local from the form its inputs make, and shows the run succeed with its output to download', { timeout: 90_000 }, async () => {
    const { context, page } = await signedInPage(browser, ann, `${base}/runs`)
    try {
      await checkPage(page, 'runs')
      await page.click('#launch-a-run')
      await expect(text(page, 'h1')).resolves.toBe('Pipelines')
      await checkPage(page, 'pipelines')
      await page.click(`a[href="${base}/pipelines/${hello}"]`)
      await expect(text(page, '#inputs')).resolves.toContain('greeting')
      await checkPage(page, 'pipeline')
      await page.click('#launch')
      // The declared default fills the field; the help text describes it.
      await expect(page.inputValue('#f-param-greeting')).resolves.toBe('hello')
      await expect(text(page, '#f-param-greeting-hint')).resolves.toContain('Text to write')
      await checkPage(page, 'launch')
      await page.fill('#f-param-greeting', 'bonjour')
      await page.fill('#f-tags', 'console, smoke')
      await page.click('#submit')
      await page.waitForURL(new RegExp(`^${base}/runs/[0-9a-f-]{36}$`))
      await expect(text(page, '#notice')).resolves.toMatch(/^Run hello-local-\d{8}T\d{6}Z(-\d+)? submitted\.$/)
      const runId = page.url().split('/').at(-1)!
      const run = await until(
        'the run to end',
        async () => {
          const r = await deps.runs.getById(runId)
          return r && TERMINAL.has(r.status) ? r : undefined
        },
        30_000,
      )
      expect(run.status, run.error_message).toBe('succeeded')
      expect(run).toMatchObject({ params: { greeting: 'bonjour' }, tags: ['console', 'smoke'], created_by: ann.user.id })
      await page.reload()
      await expect(text(page, '#run-status')).resolves.toBe('Succeeded')
      const timeline = await text(page, '#timeline')
      for (const label of ['Created', 'Started', 'Finished', 'Duration']) expect(timeline).toContain(label)
      expect(timeline).not.toContain('not yet')
      await expect(text(page, '#params')).resolves.toContain('bonjour')
      await expect(page.locator('main[data-refresh]').count()).resolves.toBe(0)
      await checkPage(page, 'run-succeeded')
      // The end of its log, and the whole log a click away.
      await expect(text(page, '#log')).resolves.toContain(`hello-local: wrote`)
      await page.click('#whole-log')
      await expect(text(page, 'h1')).resolves.toBe(`Log of run ${run.name}`)
      await expect(text(page, '#log')).resolves.toMatch(/stdout\s+hello-local: wrote \S+hello\.txt/)
      await checkPage(page, 'run-log')
      await page.goBack()

      // The output's link answers with a signed address of the storage, which serves the file.
      const link = page.locator('#outputs a', { hasText: 'hello.txt' })
      const answer = await context.request.get((await link.getAttribute('href'))!, { maxRedirects: 0 })
      expect(answer.status()).toBe(303)
      const signed = answer.headers().location!
      expect(signed.startsWith(files.storageUrl)).toBe(true)
      expect(signed).toContain('X-Goog-Signature=')
      const file = await fetch(signed)
      expect(await file.text()).toBe(`bonjour from run ${runId}\n`)
      expect(await events(`gs://${project.bucket_name}/runs/${runId}/hello.txt`, 'file.download_url_issued')).toHaveLength(1)
    } finally {
      await context.close()
    }
  })

  it(
    'resumes a failed run from its page: the new run reuses the steps the first completed, and each page links the other',
    { timeout: 90_000 },
    async () => {
      const first = await failedStepsRun()
      expect(first.status).toBe('failed')
      const { context, page } = await signedInPage(browser, ann, `${base}/runs/${first.id}`)
      try {
        await expect(page.locator('#resume').count()).resolves.toBe(1)
        await checkPage(page, 'run-failed-resumable')
        await page.click('#resume')
        await page.waitForURL(new RegExp(`^${base}/runs/[0-9a-f-]{36}$`))
        await expect(text(page, '#notice')).resolves.toBe(
          `Run ${(await deps.runs.getById(page.url().split('/').at(-1)!))!.name} resumes run ${first.name}.`,
        )
        const resumedId = page.url().split('/').at(-1)!
        await expect(text(page, '#relaunched-from')).resolves.toBe(`${first.name} (resumed)`)
        const resumed = await ended(resumedId)
        expect(resumed.status, resumed.error_message).toBe('failed')
        // Step 3 still fails (fail_at is unchanged): steps 1 and 2 were reused, not run again.
        const steps = await objects.read(project.bucket_name, `runs/${resumedId}/steps.txt`)
        expect(steps?.toString('utf8')).toBe('1 reused\n2 reused\n')
        expect(await events(first.id, 'run.relaunched')).toEqual([expect.objectContaining({ actor: expect.objectContaining({ id: ann.user.id }) })])
        await page.goto(`${base}/runs/${first.id}`)
        await expect(text(page, '#relaunches')).resolves.toBe(resumedId)
        await page.click('#relaunch')
        await page.waitForURL(new RegExp(`^${base}/runs/[0-9a-f-]{36}$`))
        await expect(text(page, '#notice')).resolves.toMatch(new RegExp(`relaunches run ${first.name}\\.$`))
        await checkPage(page, 'run-relaunched')
      } finally {
        await context.close()
      }
    },
  )

  it('cancels a run only once the person confirms: in a dialog with JavaScript, on a confirmation page without', { timeout: 60_000 }, async () => {
    const kept = await queuedRun()
    const withScript = await signedInPage(browser, ann, `${base}/runs/${kept.id}`)
    try {
      const { page } = withScript
      await checkPage(page, 'run-queued')
      page.once('dialog', (dialog) => void dialog.dismiss())
      await page.click('#cancel')
      await expect(text(page, '#run-status')).resolves.toBe('Queued')
      expect((await deps.runs.getById(kept.id))!.status).toBe('queued')
      page.once('dialog', (dialog) => {
        expect(dialog.message()).toContain(`Cancel run ${kept.name}?`)
        void dialog.accept()
      })
      await page.click('#cancel')
      await page.waitForSelector('#notice')
      await expect(text(page, '#notice')).resolves.toBe(`Run ${kept.name} cancelled.`)
      await expect(text(page, '#run-status')).resolves.toBe('Cancelled')
      expect(await events(kept.id, 'run.cancelled')).toEqual([expect.objectContaining({ actor: expect.objectContaining({ id: ann.user.id }) })])
    } finally {
      await withScript.context.close()
    }

    const other = await queuedRun()
    const noScript = await signedInPage(browser, ann, `${base}/runs/${other.id}`, { javaScript: false })
    try {
      const { page } = noScript
      await page.click('#cancel')
      await expect(text(page, '#question')).resolves.toContain(`Cancel run ${other.name}?`)
      expect((await deps.runs.getById(other.id))!.status).toBe('queued')
      await page.click('#confirm')
      await page.waitForURL(`${base}/runs/${other.id}`)
      await expect(text(page, '#run-status')).resolves.toBe('Cancelled')
    } finally {
      await noScript.context.close()
    }

    // The confirmation page, checked where axe can run (JavaScript on): the form posted as a browser without the script posts it.
    const third = await queuedRun()
    const checked = await signedInPage(browser, ann, `${base}/runs/${third.id}`)
    try {
      const { page } = checked
      await page.locator('form[data-confirm]').evaluate((form) => form.removeAttribute('data-confirm'))
      await page.click('#cancel')
      await page.waitForSelector('#question')
      await checkPage(page, 'run-cancel-confirm')
    } finally {
      await checked.context.close()
    }
  })

  it('brings the launch form back with each problem next to its field, and a summary linking to them', { timeout: 60_000 }, async () => {
    const trio = pipelineId(PLATFORM_SCOPE, 'trio-local', '1.0.0')
    const { context, page } = await signedInPage(browser, ann, `${base}/pipelines/${trio}/launch`)
    try {
      await expect(page.inputValue('#f-param-records')).resolves.toBe('300')
      await page.fill('#f-param-samplesheet', `gs://${project.bucket_name}/samplesheets/none.csv`)
      await page.fill('#f-param-records', 'lots')
      await page.click('#submit')
      await expect(text(page, '#f-param-records-error')).resolves.toBe('expected an integer')
      await expect(page.locator('#f-param-records').getAttribute('aria-describedby')).resolves.toContain('f-param-records-error')
      await expect(page.inputValue('#f-param-samplesheet')).resolves.toBe(`gs://${project.bucket_name}/samplesheets/none.csv`)
      await expect(page.locator('#form-errors a[href="#f-param-records"]').count()).resolves.toBe(1)
      await checkPage(page, 'launch-refused')
    } finally {
      await context.close()
    }
  })

  it('filters the list by status and by order, newest first, refreshing only while a listed run is active', { timeout: 60_000 }, async () => {
    const accession = `ORD-2026-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`
    const forOrder = await queuedRun({ order_id: accession })
    const done = await queuedRun()
    await deps.runs.applyJobState(done.id, { status: 'succeeded', at: new Date(), source: 'test' })
    const { context, page } = await signedInPage(browser, ann, `${base}/runs`)
    try {
      await expect(page.locator('main[data-refresh]').count()).resolves.toBe(1)
      await page.selectOption('#status', 'succeeded')
      await page.click('form[role=search] button[type=submit]')
      expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded')
      const statuses = await page.locator('#runs tbody tr td:nth-child(3)').allInnerTexts()
      expect(statuses.length).toBeGreaterThan(0)
      expect(new Set(statuses)).toEqual(new Set(['Succeeded']))
      await expect(text(page, '#runs')).resolves.toContain(done.name)
      await expect(page.locator('main[data-refresh]').count()).resolves.toBe(0)
      await checkPage(page, 'runs-filtered')

      await page.goto(`${base}/runs?${new URLSearchParams({ order: accession })}`)
      const names = await page.locator('#runs tbody tr td:first-child').allInnerTexts()
      expect(names).toEqual([forOrder.name])
      await expect(text(page, '#runs caption')).resolves.toContain(`for order ${accession}`)
    } finally {
      await context.close()
    }
  })

  describe('without a browser: permissions, forms, tenancy', () => {
    async function sessionOf(userId: string) {
      const { tokens } = world.world.deps
      const { value } = await tokens.createSession({ userId, ttlSeconds: 3600, now: new Date(), effectiveRoles: {} })
      return { cookie: `platform_session=${value}`, csrf: csrfToken({ key: tokens.sessionKey(value) }) }
    }
    const origin = new URL(world.urls.compute!).origin
    const get = async (url: string, s: { cookie: string }) => {
      const res = await fetch(url, { headers: { cookie: s.cookie }, redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), body: await res.text() }
    }
    const post = async (
      url: string,
      s: { cookie: string; csrf: string },
      fields: Record<string, string>,
      opts: { origin?: string; csrf?: string } = {},
    ) => {
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: s.cookie, origin: opts.origin ?? origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf_token: opts.csrf ?? s.csrf, ...fields }).toString(),
      })
      return { status: res.status, location: res.headers.get('location'), body: await res.text() }
    }

    it('lets a viewer read runs and pipelines but neither launch nor cancel (403 pages naming the role, access.denied)', async () => {
      const s = await sessionOf(vic.user.id)
      const run = await queuedRun()
      const page = await get(`${base}/runs/${run.id}`, s)
      expect(page.status).toBe(200)
      expect(page.body).not.toContain('id="cancel"')
      const pipeline = await get(`${base}/pipelines/${hello}`, s)
      expect(pipeline.status).toBe(200)
      expect(pipeline.body).not.toContain('id="launch"')
      const launch = await get(`${base}/pipelines/${hello}/launch`, s)
      expect(launch.status).toBe(403)
      expect(launch.body).toContain('This page needs the role analyst')
      const posted = await post(`${base}/pipelines/${hello}/launch`, s, { 'param.greeting': 'x', idempotency_key: rand() })
      expect(posted.status).toBe(403)
      const cancel = await post(`${base}/runs/${run.id}/cancel`, s, { confirmed: 'yes' })
      expect(cancel.status).toBe(403)
      expect((await deps.runs.getById(run.id))!.status).toBe('queued')
      const denied = (await events(project.id, 'access.denied')).filter((e) => e.actor.id === vic.user.id)
      expect(denied.map((e) => e.change.reason)).toEqual(expect.arrayContaining(['missing permission run.submit', 'missing permission run.cancel']))
    })

    it('refuses a cancel posted without the session’s token or from another origin, and changes nothing', async () => {
      const s = await sessionOf(ann.user.id)
      const run = await queuedRun()
      expect((await post(`${base}/runs/${run.id}/cancel`, s, { confirmed: 'yes' }, { csrf: 'forged' })).status).toBe(403)
      expect((await post(`${base}/runs/${run.id}/cancel`, s, { confirmed: 'yes' }, { origin: 'https://evil.example' })).status).toBe(403)
      expect((await deps.runs.getById(run.id))!.status).toBe('queued')
      const ok = await post(`${base}/runs/${run.id}/cancel`, s, { confirmed: 'yes' })
      expect(ok).toMatchObject({ status: 303, location: `${base}/runs/${run.id}` })
      // A finished run is the API's 409, as a page that says why.
      const failed = await queuedRun()
      await deps.runs.applyJobState(failed.id, { status: 'failed', at: new Date(), source: 'test' })
      const again = await post(`${base}/runs/${failed.id}/cancel`, s, { confirmed: 'yes' })
      expect(again.status).toBe(409)
      expect(again.body).toContain('only a queued or running run can be cancelled')
    })

    it('shows each refusal of the launch form next to its field, in the API’s words, and submits nothing', async () => {
      const s = await sessionOf(ann.user.id)
      const trio = pipelineId(PLATFORM_SCOPE, 'trio-local', '1.0.0')
      const before = (await deps.runs.list(project.id, {}, {})).items.length
      const res = await post(`${base}/pipelines/${trio}/launch`, s, {
        'param.samplesheet': 'gs://someone-elses-bucket/sheet.csv',
        'param.records': 'lots',
        idempotency_key: rand(),
      })
      expect(res.status).toBe(400)
      expect(res.body).toMatch(/id="f-param-samplesheet-error">gs:\/\/someone-elses-bucket is not this project&#39;s bucket/)
      expect(res.body).toMatch(/id="f-param-records-error">expected an integer/)
      // The form comes back as it was posted.
      expect(res.body).toContain('value="lots"')
      expect((await deps.runs.list(project.id, {}, {})).items.length).toBe(before)
    })

    it("links the run to the order named in the form, and shows an order's refusal on the form in the API's words", async () => {
      const s = await sessionOf(ann.user.id)
      const order = await makeTrioOrder(world.world.deps, project)
      const launched = await post(`${base}/pipelines/${hello}/launch`, s, { order_id: order.accession, idempotency_key: rand() })
      expect(launched.status).toBe(303)
      const runId = launched.location!.split('/').at(-1)!
      expect(await deps.runs.getById(runId)).toMatchObject({ order_id: order.id, order_accession: order.accession })
      const listed = await get(`${base}/runs?${new URLSearchParams({ order: order.accession })}`, s)
      expect(listed.body).toContain(`/runs/${runId}"`)

      await moveOrder(world.world.deps, project, order.id, 'on_hold')
      const before = (await deps.runs.list(project.id, { order_id: order.id }, {})).items.length
      const refused = await post(`${base}/pipelines/${hello}/launch`, s, { order_id: order.accession, idempotency_key: rand() })
      expect(refused.status).toBe(409)
      expect(refused.body).toMatch(/id="form-summary">[^<]*on_hold/)
      expect(refused.body).toContain(`value="${order.accession}"`)
      expect((await deps.runs.list(project.id, { order_id: order.id }, {})).items.length).toBe(before)
    })

    it('makes one run of a form sent twice (its idempotency key), and answers the second with the first run', async () => {
      const s = await sessionOf(ann.user.id)
      const key = rand()
      const fields = { 'param.greeting': 'twice', idempotency_key: key }
      const first = await post(`${base}/pipelines/${hello}/launch`, s, fields)
      const second = await post(`${base}/pipelines/${hello}/launch`, s, fields)
      expect(first.status).toBe(303)
      expect(second).toMatchObject({ status: 303, location: first.location })
    })

    it("never shows or changes another project's run, and a project the person is not in is absent", async () => {
      const s = await sessionOf(ann.user.id)
      const { project: other } = await world.world.otherProject()
      const run = await queuedRun()
      const elsewhere = `${world.urls.compute}/console/p/${other.id}`
      expect((await get(`${elsewhere}/runs`, s)).status).toBe(404)
      expect((await get(`${elsewhere}/runs/${run.id}`, s)).status).toBe(404)
      // The other project's admin opens this project's run under their own project: absent.
      const owner = await sessionOf(world.world.owner.user.id)
      expect((await get(`${elsewhere}/runs/${run.id}`, owner)).status).toBe(404)
      expect((await post(`${elsewhere}/runs/${run.id}/cancel`, owner, { confirmed: 'yes' })).status).toBe(404)
      expect((await deps.runs.getById(run.id))!.status).toBe('queued')
      // A download names only the run's own outputs.
      const done = await queuedRun()
      await deps.runs.applyJobState(done.id, { status: 'succeeded', at: new Date(), source: 'test' })
      const outside = await get(`${base}/runs/${done.id}/download?${new URLSearchParams({ path: 'samplesheets/secret.csv' })}`, s)
      expect(outside.status).toBe(404)
    })

    it("opens the person's project's runs from the console's root, and a project by its slug", async () => {
      const s = await sessionOf(ann.user.id)
      expect(await get(`${world.urls.compute}/console`, s)).toMatchObject({ status: 302, location: `${base}/runs` })
      expect(await get(`${world.urls.compute}/console/p/${project.slug}`, s)).toMatchObject({
        status: 302,
        location: `${world.urls.compute}/console/p/${project.slug}/runs`,
      })
      const bySlug = await get(`${world.urls.compute}/console/p/${project.slug}/runs`, s)
      expect(bySlug.status).toBe(200)
      // The page's own links name the project by its id, whichever way the address named it.
      expect(bySlug.body).toContain(`href="${base}/pipelines"`)
    })

    it('sends a person without a session to the platform login, and back to the page', async () => {
      const res = await fetch(`${base}/runs?status=queued`, { redirect: 'manual' })
      expect(res.status).toBe(302)
      const login = new URL(res.headers.get('location')!)
      expect(login.origin).toBe(new URL(world.urls.admin!).origin)
      expect(login.searchParams.get('return_to')).toBe(`${base}/runs?status=queued`)
    })
  })
})
