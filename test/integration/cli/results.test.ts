import { afterAll, describe, expect, it } from 'vitest'
import type { Comment, OrderVariant, Report } from '../../../cli/client.js'
import { SettingsStore } from '../../../cli/settings.js'
import { createKernel } from '../../../lib/kernel.js'
import { adminDeps } from '../../../functions/admin/deps.js'
import { auditDeps } from '../../../functions/audit/deps.js'
import { createAuditApp } from '../../../functions/audit/service.js'
import { createAdminApp } from '../../../functions/admin/service.js'
import { reportsDeps } from '../../../functions/reports/deps.js'
import { createReportsApp } from '../../../functions/reports/service.js'
import { configHome, parseJson, removeConfigHomes, runCli, startCliOnTerminal } from '../../support/cli.js'
import { listen } from '../../support/oidc.js'
import { makeVariantWorld } from '../../support/variants.js'

interface Listing<T> {
  items: T[]
  next_page_token: string | null
}

/**
 * `platform variants`, `reports` and `api` as a user runs them: the binary as a child process
 * against the admin, clinical-data, variant-cache and report services on real local ports, on the
 * emulators, with a signed trio order whose variant cache was built from a synthetic VCF.
 */
describe('platform variants, reports and api', async () => {
  const w = await makeVariantWorld()
  const servers = await Promise.all([listen(), listen(), listen(), listen(), listen()])
  const [admin, clinical, variantCache, reports, audit] = servers
  const adminSide = adminDeps(createKernel(w.deps.config, 'admin', { firestore: w.deps.db.firestore }))
  admin!.serve(createAdminApp(adminSide))
  audit!.serve(createAuditApp(auditDeps(adminSide)))
  clinical!.serve(w.clinicalApp)
  variantCache!.serve(w.app)
  reports!.serve(createReportsApp(reportsDeps(createKernel(w.deps.config, 'reports', { firestore: w.deps.db.firestore }))))
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await w.close()
    await removeConfigHomes()
  })

  const analyst = await w.caller(['analyst'])
  const home = await configHome({ adminUrl: admin!.url, computeUrl: admin!.url }, w.project.id)
  const settings = new SettingsStore(home)
  settings.set('local', 'clinical_url', clinical!.url)
  settings.set('local', 'variant_cache_url', variantCache!.url)
  settings.set('local', 'reports_url', reports!.url)
  settings.set('local', 'audit_url', audit!.url)
  settings.saveCredentials('local', { method: 'personal_token', access_token: analyst.token, saved_at: new Date().toISOString() })
  const cli = (args: string[], input?: string) => runCli(args, { configDir: home, input })

  /** A signed trio whose variant cache is ready: 40 records of the synthetic VCF, the planted de novo SCN2A variant among them. */
  async function orderWithCache() {
    const t = await w.signedTrio()
    const ingestion = await w.request(t.order.id, await w.putTrio(t.names, { records: 40, seed: 7 }))
    expect(await w.run(ingestion.id)).toBe('ready')
    return t.order
  }
  const order = await orderWithCache()
  const all = parseJson<Listing<OrderVariant>>(await cli(['variants', 'list', order.accession, '--all', '--json'])).items

  describe('variants', () => {
    it("lists an order's variants by its accession, in genome order, as a table with each role's zygosity", async () => {
      expect(all.length).toBeGreaterThan(10)
      const res = await cli(['variants', 'list', order.accession, '--limit', '5'])
      expect(res.code, res.stderr).toBe(0)
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^ID\s+POSITION\s+CHANGE\s+GENES\s+CONSEQUENCE\s+HGVS\s+QUAL\s+ZYGOSITY$/)
      expect(lines).toHaveLength(6)
      expect(lines[1]).toContain(all[0]!.id)
      expect(lines[1]).toMatch(/proband \S+, mother \S+, father \S+/)
    })

    it('says how to get the next page, and that command continues where the listing stopped', async () => {
      const first = await cli(['variants', 'list', order.accession, '--limit', '3', '--format', 'csv(id)'])
      const next = /More variants exist: platform (.*?) {2}\(or --all/.exec(first.stderr)?.[1]
      expect(next, first.stderr).toMatch(/^variants list ORD-\S+ --limit 3 --page-token \S+$/)
      const second = await cli([...next!.split(' '), '--format', 'csv(id)'])
      expect(second.code, second.stderr).toBe(0)
      expect(second.stdout.trim().split('\n').slice(1)).toEqual(all.slice(3, 6).map((v) => v.id))
    })

    it("passes the cache's filters: gene, zygosity per role, PASS", async () => {
      const scn2a = parseJson<Listing<OrderVariant>>(await cli(['variants', 'list', order.accession, '--gene', 'SCN2A', '--all', '--json'])).items
      expect(scn2a.length).toBeGreaterThan(0)
      expect(scn2a.every((v) => v.genes.includes('SCN2A'))).toBe(true)
      const deNovo = parseJson<Listing<OrderVariant>>(
        await cli(['variants', 'list', order.accession, '--zygosity', 'proband:het,mother:hom_ref,father:hom_ref', '--pass', '--all', '--json']),
      ).items
      expect(deNovo.length).toBeGreaterThan(0)
      for (const v of deNovo) {
        expect(v.filter).toEqual(['PASS'])
        expect(Object.fromEntries(v.calls.map((c) => [c.role, c.zygosity]))).toMatchObject({ proband: 'het', mother: 'hom_ref', father: 'hom_ref' })
      }
    })

    it("shows one variant with each sample's call (--order), and in the catalogue with the orders observing it", async () => {
      const v = all[0]!
      const inOrder = await cli(['variants', 'show', v.id, '--order', order.accession])
      expect(inOrder.code, inOrder.stderr).toBe(0)
      expect(inOrder.stdout).toMatch(new RegExp(`position\\s+${v.chrom}:${v.pos}`))
      expect(inOrder.stdout).toMatch(/CALLS\nROLE\s+SAMPLE\s+GENOTYPE\s+ZYGOSITY\s+DEPTH\s+GQ\s+AF\nproband/)
      const catalogue = await cli(['variants', 'show', v.id])
      expect(catalogue.code, catalogue.stderr).toBe(0)
      expect(catalogue.stdout).toMatch(/observed\s+1 orders, \d+ samples/)
      expect(catalogue.stdout).toContain(order.accession)
    })

    it("exits 6 with the service's detail for an order without a ready cache, and 3 for a bad filter value", async () => {
      const t = await w.signedTrio()
      const none = await cli(['variants', 'list', t.order.accession])
      expect(none.code).toBe(6)
      expect(none.stderr).toMatch(/^platform: not found: a ready variant cache of order ORD-\S+ \(see GET \/orders\/ORD-\S+\/status\)/)
      const bad = await cli(['variants', 'list', order.accession, '--min-qual', 'high'])
      expect(bad.code).toBe(3)
      expect(bad.stderr).toMatch(/--min-qual.*expected a number/)
    })
  })

  describe('reports', () => {
    const reportOf = (res: Awaited<ReturnType<typeof cli>>) => parseJson<Report>(res)
    let report: Report

    it("creates a draft report for an order named by accession, and lists it among the order's reports", async () => {
      const created = await cli(['reports', 'create', order.accession, '--summary', 'Trio exome for epileptic encephalopathy.'])
      expect(created.code, created.stderr).toBe(0)
      expect(created.stdout).toMatch(/^Created draft report \S+ of order ORD-/)
      report = reportOf(await cli(['reports', 'show', order.accession, '--json']))
      expect(report).toMatchObject({ status: 'draft', order_accession: order.accession, summary: 'Trio exome for epileptic encephalopathy.' })
      const listed = parseJson<Listing<Report>>(await cli(['reports', 'list', '--order', order.accession, '--json'])).items
      expect(listed.map((r) => r.id)).toEqual([report.id])
    })

    it('adds a classified variant, comments, and sends the report to review once it has a conclusion', async () => {
      const v = all[0]!
      const added = await cli([
        'reports',
        'add-variant',
        order.accession,
        v.id,
        '--classification',
        'likely_pathogenic',
        '--criteria',
        'PS2,PM2_Supporting',
      ])
      expect(added.code, added.stderr).toBe(0)
      expect(added.stdout).toBe(`Added ${v.id} to report ${report.id} (likely_pathogenic).\n`)

      const early = await cli(['reports', 'transition', order.accession, 'in_review'])
      expect(early.code).toBe(7)
      expect(early.stderr).toMatch(/no conclusion/)

      const edited = await cli(['reports', 'edit', report.id, '--conclusion', 'Positive: a likely pathogenic de novo variant.'])
      expect(edited.code, edited.stderr).toBe(0)
      const commented = await cli(['reports', 'comment', order.accession, 'Sanger confirmation ordered.', '--json'])
      expect(parseJson<Comment>(commented)).toMatchObject({ type: 'general', comment: 'Sanger confirmation ordered.' })

      const moved = await cli(['reports', 'transition', order.accession, 'in_review'])
      expect(moved.code, moved.stderr).toBe(0)
      expect(moved.stdout).toMatch(/^Report \S+ is now in_review\./)
      // Signing is the browser's: show points there, and says why this caller may not sign.
      const shown = await cli(['reports', 'show', order.accession, '--variants'])
      expect(shown.stdout).toMatch(/sign-off\s+\S+\/signoff\/ \(in a browser: signing asks you to log in again\)/)
      expect(shown.stdout).toMatch(/not yet\s+\S/)
      expect(shown.stdout).toMatch(new RegExp(`VARIANTS\\nVARIANT\\s+GENES\\s+HGVS\\s+CLASSIFICATION\\s+IN REPORT\\n${v.id.replace(/\./g, '\\.')}`))
    })

    it('refuses to sign from the terminal (no such move), and a cancellation the analyst may not make with exit 5', async () => {
      const sign = await cli(['reports', 'transition', order.accession, 'signed'])
      expect(sign.code).toBe(3)
      expect(sign.stderr).toMatch(/Allowed choices are draft, in_review, cancelled, entered_in_error/)
      const cancel = await cli(['reports', 'transition', order.accession, 'cancelled'])
      expect(cancel.code).toBe(5)
      expect(cancel.stderr).toMatch(/^platform: permission denied: /)
    })

    it('lists the comments in order, with open review comments marked', async () => {
      const review = await cli(['reports', 'comment', report.id, 'Please add the segregation result.', '--type', 'review'])
      expect(review.code, review.stderr).toBe(0)
      const res = await cli(['reports', 'comments', order.accession])
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^ID\s+TYPE\s+AUTHOR\s+CREATED\s+RESOLVED\s+COMMENT$/)
      expect(lines[1]).toMatch(/general\s+.*Sanger confirmation ordered\.$/)
      expect(lines[2]).toMatch(/review\s+.*\sopen\s+Please add the segregation result\.$/)
      const reviews = parseJson<Listing<Comment>>(await cli(['reports', 'comments', order.accession, '--type', 'review', '--json'])).items
      expect(reviews.map((c) => c.comment)).toEqual(['Please add the segregation result.'])
    })

    it("names the candidates when an order's accession names two current reports, and exits 6 for an order without one", async () => {
      const second = await cli(['reports', 'create', order.accession, '--template', 'secondary_findings', '--json'])
      expect(second.code, second.stderr).toBe(0)
      const ambiguous = await cli(['reports', 'show', order.accession])
      expect(ambiguous.code).toBe(3)
      expect(ambiguous.stderr).toMatch(
        new RegExp(`has 2 current reports: .*${reportOf(second).id} \\(secondary_findings, draft\\).*; pass the report's id`),
      )
      const none = await cli(['reports', 'show', 'ORD-1999-000000'])
      expect(none.code).toBe(6)
      expect(none.stderr).toMatch(/order ORD-1999-000000 has no current report/)
    })
  })

  describe('api', () => {
    it("GETs a path of the admin service with the profile's token, printing the JSON on one line through a pipe", async () => {
      const res = await cli(['api', '/users/me'])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout.trim().split('\n')).toHaveLength(1)
      expect(JSON.parse(res.stdout)).toMatchObject({ id: analyst.user.id })
    })

    it('indents the JSON on a terminal', async () => {
      const term = startCliOnTerminal(['api', '/users/me'], { configDir: home })
      const res = await term.exited
      expect(res.code).toBe(0)
      expect(res.stdout).toMatch(/^\{\r?\n {2}"id": /)
    })

    it("sends the project where an operation takes it, also an optional one (a project's audit events), and none with -H 'X-Project-ID:'", async () => {
      const asOwner = (args: string[]) => runCli(args, { configDir: home, env: { PLATFORM_TOKEN: w.owner.token } })
      const events = await asOwner(['api', '/events', '-F', 'action=report.*', '--paginate'])
      expect(events.code, events.stderr).toBe(0)
      const list = parseJson<Array<{ project_id: string; entity: { type: string } }>>(events)
      expect(list.length).toBeGreaterThan(0)
      expect(list.every((e) => e.project_id === w.project.id && e.entity.type === 'report')).toBe(true)
      const unscoped = await asOwner(['api', '/events', '-H', 'X-Project-ID:'])
      expect(unscoped.code).toBe(7)
      expect(unscoped.stderr).toMatch(/send X-Project-ID \(or project_id\) for a project's events/)
      const paged = await cli(['api', 'POST', '/reports', '--paginate'])
      expect(paged.code).toBe(3)
      expect(paged.stderr).toMatch(/--paginate follows the pages of a GET/)
    })

    it('puts GET fields into the query and joins every page with --paginate', async () => {
      const res = await cli(['api', 'GET', `/orders/${order.accession}/variants`, '-F', 'page_size=4', '--paginate'])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<OrderVariant[]>(res).map((v) => v.id)).toEqual(all.map((v) => v.id))
      const one = await cli(['api', 'GET', `/orders/${order.accession}/variants?page_size=4`, '-F', 'gene=SCN2A'])
      const page = parseJson<OrderVariant[]>(one)
      expect(page.length).toBeGreaterThan(0)
      expect(page.every((v) => v.genes.includes('SCN2A'))).toBe(true)
      // Fields without a method make a POST, as gh api's do: the service says it has no such route.
      const posted = await cli(['api', `/orders/${order.accession}/variants`, '-F', 'gene=SCN2A'])
      expect(posted.code).toBe(6)
      expect(posted.stderr).toMatch(/no route for POST \/api\/v1\/orders\/ORD-\S+\/variants/)
    })

    it('POSTs typed fields as a JSON body to the service that owns the path, with the project', async () => {
      const created = await cli(
        ['api', 'POST', '/reports', '-f', `order_id=${order.accession}`, '-f', 'template_type=carrier', '-F', 'summary=@-'],
        'From stdin.',
      )
      expect(created.code, created.stderr).toBe(0)
      expect(parseJson<Report>(created)).toMatchObject({ template_type: 'carrier', summary: 'From stdin.', status: 'draft' })
      const patched = await cli(
        ['api', 'PATCH', `/reports/${parseJson<Report>(created).id}`, '--input', '-'],
        JSON.stringify({ notes: 'By --input.' }),
      )
      expect(parseJson<Report>(patched)).toMatchObject({ notes: 'By --input.' })
      const twice = await cli(['api', 'PATCH', '/reports/x', '--input', '-', '-F', 'notes=@-'], '{}')
      expect(twice.code).toBe(3)
      expect(twice.stderr).toMatch(/standard input is read once/)
      const missing = await cli(['api', 'POST', '/reports', '-F', 'summary=@/nonexistent/summary.txt'])
      expect(missing.code).toBe(3)
      expect(missing.stderr).toMatch(/cannot read \/nonexistent\/summary\.txt: ENOENT/)
    })

    it('prints a non-JSON answer as it came (the samplesheet as CSV)', async () => {
      const res = await cli(['api', `/orders/${order.accession}/samplesheet`, '-H', 'Accept: text/csv'])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout.split('\n')[0]).toBe('sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id')
    })

    it("prints the service's detail on stderr with the CLI's exit codes", async () => {
      const missing = await cli(['api', '/orders/ORD-1999-000000'])
      expect(missing.code).toBe(6)
      expect(missing.stdout).toBe('')
      expect(missing.stderr).toBe('platform: not found: order not found\n')
      const bad = await cli(['api', 'POST', '/reports', '-F', 'order_id=1'])
      expect(bad.code).toBe(7)
    })

    it('asks for --service for a path no document has, and sends it to the service named', async () => {
      const unknown = await cli(['api', '/openapi.json'])
      expect(unknown.code).toBe(3)
      expect(unknown.stderr).toMatch(/no service documents the path \/openapi\.json: pass --service/)
      const doc = await cli(['api', '/openapi.json', '--service', 'clinical'])
      expect(doc.code, doc.stderr).toBe(0)
      expect(JSON.parse(doc.stdout)).toMatchObject({ info: { title: expect.stringMatching(/clinical/i) } })
    })
  })
})
