import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { type Browser } from 'playwright-core'
import { launchChromium, signIn } from '../support/browser.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.js'
import { freeBasePort, spawnLocalSuite, type SpawnedSuite } from '../support/suite.js'

/**
 * The whole clinical path on the local suite, as a laboratory walks it, through the public HTTP
 * API, the CLI and a browser only: a family and its samples, their FASTQ files uploaded through
 * signed addresses, a trio order signed and its samplesheet, the trio-local pipeline run for the
 * order with the CLI and its VCF ingested into the order's variant cache, a draft report with the
 * proband's de novo variant and a second one classified, a review comment resolved by a second
 * person, a snapshot, the reviewer's signature in the browser (with a fresh authentication at the
 * identity provider), the printable report, and the audit log of the order and the report, every
 * event there and every hash link verified.
 */

describe('the whole clinical path, end to end on the local suite', () => {
  let suite: SpawnedSuite
  let dataDir: string
  let home: string
  let browser: Browser

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'clinical-path-suite-'))
    home = await mkdtemp(join(tmpdir(), 'clinical-path-home-'))
    ;[suite, browser] = await Promise.all([
      spawnLocalSuite({ dataDir, basePort: await freeBasePort(), clean: true, timeoutMs: 150_000 }),
      launchChromium(),
    ])
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    if (suite) {
      const stopped = await suite.stop('SIGINT')
      if (stopped.code !== 0) suite.kill()
    }
    await rm(dataDir, { recursive: true, force: true })
    await rm(home, { recursive: true, force: true })
  }, 90_000)

  it('goes from a family to a signed report, every step in the audit log', { timeout: 120_000 }, async () => {
    const s = suite.suite
    const project = s.project_id
    const url = (service: string, path: string) => `${s.services[service]}/api/v1${path}`
    const api = async (service: string, method: string, path: string, body?: unknown, token = s.token) => {
      const res = await fetch(url(service, path), {
        method,
        headers: { authorization: `Bearer ${token}`, 'x-project-id': project, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      const parsed = res.headers.get('content-type')?.includes('json') && text ? JSON.parse(text) : text
      expect(res.status, `${method} ${service} ${path}: ${text.slice(0, 500)}`).toBeLessThan(300)
      return parsed
    }
    const tag = Date.now().toString(36).toUpperCase()

    // 1. The family: a proband and both parents, a blood sample each, FASTQ names in the project bucket.
    const mother = await api('clinical', 'POST', '/subjects', {
      external_id: `M-${tag}`,
      sex: 'female',
      affected_status: 'unaffected',
      family_id: `FAM-${tag}`,
    })
    const father = await api('clinical', 'POST', '/subjects', {
      external_id: `F-${tag}`,
      sex: 'male',
      affected_status: 'unaffected',
      family_id: `FAM-${tag}`,
    })
    const proband = await api('clinical', 'POST', '/subjects', {
      external_id: `P-${tag}`,
      display_name: 'Doe, Jamie',
      sex: 'male',
      birth_date: '2019-04-02',
      affected_status: 'affected',
      phenotypes: ['HP:0001250', 'HP:0001263'],
      family_id: `FAM-${tag}`,
      mother_id: mother.id,
      father_id: father.id,
    })
    const people = [
      { subject: proband, role: 'proband' },
      { subject: mother, role: 'mother' },
      { subject: father, role: 'father' },
    ]
    const samples = []
    for (const { subject, role } of people) {
      const external_id = `S-${tag}-${role.toUpperCase()}`
      const fastq = [1, 2].map((r) => `gs://${s.bucket_name}/e2e/${external_id}_R${r}.fastq.gz`)
      samples.push({ ...(await api('clinical', 'POST', '/samples', { external_id, subject_id: subject.id, type: 'blood', fastq })), role })
    }

    // 2. Their FASTQ files, uploaded through signed addresses (no Authorization header on the PUT).
    for (const sample of samples) {
      for (const r of [1, 2]) {
        const path = `e2e/${sample.external_id}_R${r}.fastq.gz`
        const signed = await api('files', 'POST', '/files/upload-url', { path, content_type: 'application/gzip' })
        const reads = Array.from(
          { length: 50 },
          (_, i) => `@${sample.external_id}:1:FC:1:1101:${1000 + i}:${r}\n${'ACGT'.repeat(25)}\n+\n${'F'.repeat(100)}\n`,
        ).join('')
        // The headers the address was signed with: its Content-Type, and x-goog-if-generation-match: 0 (a new file).
        const put = await fetch(signed.url, { method: 'PUT', headers: signed.headers, body: gzipSync(reads) })
        expect(put.status, `PUT ${path}`).toBe(200)
      }
    }
    const listed = await api('files', 'GET', '/files?path=e2e/')
    expect(listed.map((f: { name: string }) => f.name)).toHaveLength(6)

    // 3. The trio order, signed, and its samplesheet.
    const order = await api('clinical', 'POST', '/orders', {
      test_code: 'WGS-trio',
      priority: 'urgent',
      indication: 'Epileptic encephalopathy',
      requester: { name: 'Dr. Ada Lovelace', organization: 'Children’s Hospital' },
      samples: samples.map((x) => ({ sample_id: x.id, role: x.role })),
    })
    expect((await api('clinical', 'POST', `/orders/${order.accession}/transition`, { to: 'signed' })).status).toBe('signed')
    const sheet: string = await api('clinical', 'GET', `/orders/${order.accession}/samplesheet`)
    const rows = sheet.trim().split('\n')
    expect(rows).toHaveLength(4)
    expect(rows[1]).toContain(`S-${tag}-PROBAND,1,gs://${s.bucket_name}/e2e/S-${tag}-PROBAND_R1.fastq.gz`)

    // 4. The samplesheet into the bucket and trio-local for the order, both with the CLI (logged in as
    //    the seeded admin); the run's success ingests its VCF into the order's variant cache.
    const cli = (args: string[], input?: string) => runCli(args, { configDir: home, input, timeoutMs: 60_000 })
    for (const service of ['admin', 'compute', 'files']) expect((await cli(['config', 'set', `${service}_url`, s.services[service]!])).code).toBe(0)
    const login = await cli(['login', '--email', s.user.email, '--password-stdin'], s.user.password)
    expect(login.code, login.stderr).toBe(0)
    const sheetFile = join(home, `${order.accession}.csv`)
    await writeFile(sheetFile, sheet)
    const upload = await cli(['files', 'upload', sheetFile, `samplesheets/${order.accession}.csv`])
    expect(upload.code, upload.stderr).toBe(0)
    const run = await cli([
      'runs',
      'submit',
      'trio-local',
      '--order',
      order.accession,
      '--param',
      `samplesheet=gs://${s.bucket_name}/samplesheets/${order.accession}.csv`,
      '--watch',
      '--interval',
      '0.5',
    ])
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.stdout).toMatch(/succeeded/i)
    const runs = await api('compute', 'GET', `/runs?order_id=${order.accession}`)
    expect(runs.map((r: { status: string }) => r.status)).toEqual(['succeeded'])
    let cache: any
    for (const deadline = Date.now() + 45_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      cache = await api('variant_cache', 'GET', `/orders/${order.accession}/status`)
      if (['ready', 'failed'].includes(cache.status)) break
    }
    expect(cache).toMatchObject({ status: 'ready', ingestion: { trigger: 'run', run_id: runs[0].id, sample_mismatch: null } })
    // The proband's de novo call (het, both parents hom_ref), and a second variant the proband carries in a gene.
    const [denovo] = await api(
      'variant_cache',
      'GET',
      `/orders/${order.accession}/variants?gene=SCN2A&zygosity=proband:het,mother:hom_ref,father:hom_ref`,
    )
    expect(denovo.calls.map((c: { role: string; sample: string; genotype: string }) => `${c.role}:${c.sample}:${c.genotype}`)).toEqual([
      `proband:S-${tag}-PROBAND:0/1`,
      `mother:S-${tag}-MOTHER:0/0`,
      `father:S-${tag}-FATHER:0/0`,
    ])
    const carried = await api('variant_cache', 'GET', `/orders/${order.accession}/variants?zygosity=proband:alt&filter=PASS&page_size=50`)
    const second = carried.find((v: { id: string; genes: string[] }) => v.id !== denovo.id && v.genes.length > 0)
    expect(second).toBeDefined()

    // 5. A draft report for the order with both variants classified; then to review.
    const report = await api('reports', 'POST', '/reports', {
      order_id: order.accession,
      summary: 'Trio genome sequencing for epileptic encephalopathy.',
      conclusion: 'Positive: a de novo pathogenic variant in SCN2A explains the phenotype.',
    })
    expect(report).toMatchObject({ status: 'draft', order_id: order.id, available_transitions: expect.arrayContaining(['in_review']) })
    const added = await api('reports', 'POST', `/reports/${report.id}/variants`, {
      variant_id: denovo.id,
      acmg_classification: 'pathogenic',
      acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'],
      inheritance: 'de_novo',
      interpretation: 'De novo missense in SCN2A, consistent with the phenotype.',
    })
    expect(added).toMatchObject({ variant_id: denovo.id, in_cache: true, variant: { genes: ['SCN2A'] } })
    await api('reports', 'POST', `/reports/${report.id}/variants`, {
      variant_id: second.id,
      acmg_classification: 'uncertain_significance',
      include_in_report: false,
    })
    expect((await api('reports', 'GET', `/reports/${report.id}/variants`)).map((v: { variant_id: string }) => v.variant_id).sort()).toEqual(
      [denovo.id, second.id].sort(),
    )
    await api('reports', 'POST', `/reports/${report.id}/transition`, { to: 'in_review' })

    // 7. The reviewer (a second person) asks in a review comment, which blocks signing, and resolves it.
    const reviewerLogin = await fetch(url('admin', '/auth/password'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(s.reviewer),
    })
    expect(reviewerLogin.status).toBe(200)
    const reviewerToken = ((await reviewerLogin.json()) as { access_token: string }).access_token
    const comment = await api(
      'reports',
      'POST',
      `/reports/${report.id}/comments`,
      { type: 'review', comment: 'Was the de novo status confirmed by the trio data?' },
      reviewerToken,
    )
    expect((await api('reports', 'GET', `/reports/${report.id}`, undefined, reviewerToken)).sign_off.blockers).toEqual([
      '1 review comment is still open: resolve it before signing',
    ])
    await api('reports', 'PATCH', `/reports/${report.id}/comments/${comment.id}`, { resolved: true }, reviewerToken)

    // 8. A snapshot: the content and its hash.
    const snapshot = await api('reports', 'POST', `/reports/${report.id}/snapshots`)

    // 9. The reviewer signs in the browser: the page shows that snapshot, the provider asks for the password again.
    const context = await browser.newContext({ javaScriptEnabled: false })
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient'),
    )
    const page = await context.newPage()
    const signoff = `${s.services.reports}/${report.id}/signoff/`
    await page.goto(signoff)
    await signIn(page, s.reviewer, signoff)
    expect((await page.locator('#sha256').innerText()).trim()).toBe(snapshot.sha256)
    // What will be signed: the included variant with its classification; the excluded one is counted, not shown.
    const shown = await page.locator('body').innerText()
    expect(shown).toContain('SCN2A')
    expect(shown).toMatch(/pathogenic/i)
    await page.check('input[name=confirm]')
    await page.click('#sign')
    await signIn(page, s.reviewer, `${s.services.reports}/${report.id}/signoff/signed`)
    expect(await page.locator('#status').innerText()).toContain('Signed')
    await page.click('#print')
    const printed = await page.locator('body').innerText()
    expect(printed).toContain(snapshot.sha256)
    expect(printed).toContain('SCN2A')
    await context.close()
    const signed = await api('reports', 'GET', `/reports/${report.id}`)
    expect(signed).toMatchObject({
      status: 'signed',
      signatures: [{ signer: { email: s.reviewer.email }, meaning: 'approved', snapshot_id: snapshot.id, sha256: snapshot.sha256 }],
    })

    // 10. The audit log: the order's and the report's history, every event there, every chain link verified.
    const history = async (entity: string) => {
      const events = await api('audit', 'GET', `/events?entity=${entity}&page_size=1000`)
      for (const e of events) expect((await api('audit', 'GET', `/events/${e.id}`)).chain_verified, `${e.action} ${e.id}`).toBe(true)
      return events.map((e: { action: string }) => e.action).reverse()
    }
    expect(await history(`order:${order.id}`)).toEqual(expect.arrayContaining(['order.created', 'order.transitioned']))
    expect(await history(`report:${report.id}`)).toEqual([
      'report.created',
      'report.variant_added',
      'report.variant_added',
      'report.transitioned',
      'report.comment_added',
      'report.comment_resolved',
      'report.snapshot_taken',
      'report.signoff_started',
      'report.signed',
    ])
  })
})
